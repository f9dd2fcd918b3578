package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
)

// heldTier holds every call until release is closed, then allows it.
type heldTier struct {
	entered chan struct{}
	release chan struct{}
}

func (heldTier) Level() int   { return shield.TierCEL }
func (heldTier) Name() string { return "cel" }
func (h heldTier) Evaluate(ctx context.Context, _ *shield.Input) (shield.Result, error) {
	h.entered <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
		return shield.Result{}, ctx.Err()
	}
	return shield.Result{Findings: []shield.Finding{{Decision: shield.Allow, Rule: "cel:held", Reason: "held"}}}, nil
}

type failingDecisions struct{}

func (failingDecisions) RecordDecision(context.Context, *shield.DecisionRecord) (shield.AuditPosition, error) {
	return shield.AuditPosition{}, errors.New("disk full")
}

func serveHTTPPipeline(t *testing.T, cfg shield.Config, tier shield.Tier, l Limits) *httpFixture {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte(tokHTTPAgent+" agent agent-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuth(AuthConfig{TokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	p, err := shield.New(cfg, &shield.Policy{Revision: "r1", Digest: "sha256:d", Normalizer: execNormalizer{},
		Tiers: []shield.Tier{tier}, Defaults: map[string]shield.Decision{"exec": shield.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	ss := NewShieldService(p, nil, "test")
	ss.Identity = Identity
	api, err := NewHTTP(HTTPOptions{Auth: auth, Shield: ss, Shedder: NewShedder(l, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := api.Server(time.Minute)
	go api.Serve(srv, lis)
	t.Cleanup(func() { srv.Close() })
	return &httpFixture{url: "http://" + lis.Addr().String(), api: api}
}

// TestHTTPShedsOverLimit: an evaluate over the concurrency cap is refused with 429
// RESOURCE_EXHAUSTED naming the limit, never queued without bound and never ALLOWed.
func TestHTTPShedsOverLimit(t *testing.T) {
	held := heldTier{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := serveHTTPPipeline(t, shield.Config{CacheSize: -1, Timeout: time.Minute}, held,
		Limits{MaxEvaluate: 1, MaxEvaluatePerPeer: 1, QueueWait: time.Millisecond})
	first := make(chan int, 1)
	go func() {
		c, _ := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash", "arguments": {"command": "a"}}}`)
		first <- c
	}()
	<-held.entered // the first call holds the only slot
	code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash", "arguments": {"command": "b"}}}`)
	if code != http.StatusTooManyRequests || !strings.Contains(string(b), "RESOURCE_EXHAUSTED") || !strings.Contains(string(b), "limits.max_evaluate") {
		t.Errorf("over the cap: %d %s, want 429 naming the limit", code, b)
	}
	close(held.release)
	if c := <-first; c != 200 {
		t.Errorf("the admitted call: %d", c)
	}
}

// TestHTTPAuditFailureBlocks: a decision the audit log cannot take is answered BLOCK over HTTP.
func TestHTTPAuditFailureBlocks(t *testing.T) {
	allow := heldTier{entered: make(chan struct{}, 8), release: make(chan struct{})}
	close(allow.release) // the tier allows at once: only the audit failure can block
	f := serveHTTPPipeline(t, shield.Config{Recorder: failingDecisions{}}, allow, Limits{})
	code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash", "arguments": {"command": "ls"}}}`)
	if code != 200 {
		t.Fatalf("evaluate: %d %s", code, b)
	}
	if v := decodeJSON(t, b)["verdict"].(map[string]any); v["decision"] != "DECISION_BLOCK" {
		t.Fatalf("verdict with a failing audit log: %v, want BLOCK", v)
	}
}
