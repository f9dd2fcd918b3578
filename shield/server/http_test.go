package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

const (
	tokHTTPAgent    = "tok-http-agent-0123456789"
	tokHTTPApprover = "tok-http-approver-0123456789"
	tokHTTPAuditor  = "tok-http-auditor-0123456789"
	tokHTTPAdmin    = "tok-http-admin-0123456789"
	// tokHTTPSec approves and audits (the console's usual user), without admin.
	tokHTTPSec = "tok-http-secops-0123456789"
)

// effectNormalizer classifies every call as exec and reports the command's effect.
type effectNormalizer struct{}

func (effectNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	cmd, _ := args["command"].(string)
	return &normalize.Action{Tool: tool, Class: "exec", Known: true, Args: args, Cwd: cwd, Command: cmd,
		Effects: []normalize.Effect{{Kind: "exec", Target: cmd, Program: strings.Fields(cmd + " x")[0]}}}
}

// logRecorder writes decisions to a real audit log, as cmd/shield's recorder does.
type logRecorder struct{ l *audit.Log }

func (r logRecorder) RecordDecision(ctx context.Context, rec *shield.DecisionRecord) (shield.AuditPosition, error) {
	v := rec.Verdict
	d := &audit.Decision{ActionHash: v.ActionHash, ActionClass: v.ActionClass, Decision: v.Decision.String(), Tier: v.Tier,
		Rules: v.Rules, Reason: v.Reason, DecisionID: v.DecisionID, EscalationID: v.EscalationID, Judge: v.Judge, Error: rec.Error}
	if c := rec.Call; c != nil {
		d.CallID, d.Tool, d.Arguments = c.ID, c.Tool, c.Arguments
		d.SessionID, d.AgentID, d.Runtime, d.Caller = c.Context.SessionID, c.Context.AgentID, c.Context.Runtime, c.Context.Caller
	}
	pos, err := r.l.Append(ctx, audit.TypeDecision, d)
	return shield.AuditPosition{Seq: pos.Seq, Hash: pos.Hash}, err
}

type approvalLogRecorder struct{ l *audit.Log }

func (r approvalLogRecorder) Record(ctx context.Context, ev approval.Event, payload *approval.Approval) error {
	_, err := r.l.Append(ctx, ev.Type(), payload)
	return err
}

// httpFixture is an appliance behind the HTTP API on 127.0.0.1: a pipeline whose tier 0
// escalates every call to the approval tier, a real audit log and approval store, and bearer
// tokens for each role.
type httpFixture struct {
	url   string
	log   *audit.Log
	store *approval.Service
	api   *HTTP
}

func newHTTPFixture(t testing.TB, tweak func(*HTTPOptions)) *httpFixture {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	body := tokHTTPAgent + " agent agent-a\n" + tokHTTPApprover + " approver ops\n" + tokHTTPAuditor + " auditor sec\n" + tokHTTPAdmin + " admin root\n" + tokHTTPSec + " approver,auditor secops\n"
	if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuth(AuthConfig{TokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(audit.Config{Dir: filepath.Join(dir, "audit"), CheckpointEvery: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	store, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db"), Timeout: time.Minute,
		Recorder: approvalLogRecorder{l}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := shield.New(shield.Config{Recorder: logRecorder{l}, Escalation: []shield.Tier{store.Tier()}},
		&shield.Policy{Revision: "r1", Digest: "sha256:d", Normalizer: effectNormalizer{}, Tiers: []shield.Tier{escalatingTier{}},
			RuleCounts: map[string]int{"cel": 1}})
	if err != nil {
		t.Fatal(err)
	}
	ss := NewShieldService(p, nil, "test")
	ss.Identity = Identity
	o := HTTPOptions{Auth: auth, Shield: ss, Approvals: NewApprovalService(store, Identity), ApprovalStore: store,
		AuditLog: l, Shedder: NewShedder(Limits{}, nil, nil), MaxArgumentBytes: 4096, Console: true}
	if tweak != nil {
		tweak(&o)
	}
	api, err := NewHTTP(o)
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
	return &httpFixture{url: "http://" + lis.Addr().String(), log: l, store: store, api: api}
}

// do sends a request with a bearer token (none when tok is "") and returns the status and body.
func (f *httpFixture) do(t testing.TB, method, path, tok, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return m
}

const httpEvalBody = `{"call": {"call_id": "c1", "tool": "Bash", "arguments": {"command": "reboot", "password": "hunter2-secret"}},
  "context": {"session_id": "s1", "runtime": "claude-code", "cwd": "/work"}}`

// TestHTTPEscalateApproveFlow: an evaluate over HTTP escalates, the approver sees it (list,
// event stream, effects), approves it; the agent's await returns, the re-evaluation is ALLOW,
// and the audit trail over HTTP holds both decisions with a verifiable inclusion proof.
func TestHTTPEscalateApproveFlow(t *testing.T) {
	f := newHTTPFixture(t, nil)

	// The event stream, opened first, must deliver the new request.
	evReq, _ := http.NewRequest(http.MethodGet, f.url+"/v1/approvals/events", nil)
	evReq.Header.Set("Authorization", "Bearer "+tokHTTPApprover)
	evResp, err := http.DefaultClient.Do(evReq)
	if err != nil {
		t.Fatal(err)
	}
	defer evResp.Body.Close()
	if ct := evResp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events content type %q", ct)
	}

	code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody)
	if code != 200 {
		t.Fatalf("evaluate: %d %s", code, b)
	}
	v := decodeJSON(t, b)["verdict"].(map[string]any)
	if v["decision"] != "DECISION_ESCALATE" || !strings.HasPrefix(v["escalation_id"].(string), "apr_") {
		t.Fatalf("verdict %v, want ESCALATE with an escalation id", v)
	}
	id := v["escalation_id"].(string)

	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 64<<10)
		var acc string
		for {
			n, err := evResp.Body.Read(buf)
			acc += string(buf[:n])
			if strings.Contains(acc, id) || err != nil {
				got <- acc
				return
			}
		}
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, "event: approval\ndata: ") || !strings.Contains(s, id) {
			t.Fatalf("event stream: %q", s)
		}
		if strings.Contains(s, "hunter2-secret") {
			t.Fatal("event stream carries the unredacted password")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the new request")
	}

	// The agent may not list; the approver may.
	if code, _ := f.do(t, "GET", "/v1/approvals", tokHTTPAgent, ""); code != http.StatusForbidden {
		t.Errorf("agent lists approvals: %d, want 403", code)
	}
	code, b = f.do(t, "GET", "/v1/approvals", tokHTTPApprover, "")
	if code != 200 || !strings.Contains(string(b), id) {
		t.Fatalf("list: %d %s", code, b)
	}
	code, b = f.do(t, "GET", "/v1/approvals/"+id+"/effects", tokHTTPApprover, "")
	if code != 200 {
		t.Fatalf("effects: %d %s", code, b)
	}
	if e := decodeJSON(t, b); e["action_class"] != "exec" || !strings.Contains(string(b), `"target":"reboot"`) {
		t.Errorf("effects %s", b)
	}

	// The agent waits for the decision while the approver approves.
	awaited := make(chan [2]any, 1)
	go func() {
		c, b := f.do(t, "POST", "/v1/approvals/"+id+"/await?timeout=20s", tokHTTPAgent, "")
		awaited <- [2]any{c, b}
	}()
	code, b = f.do(t, "POST", "/v1/approvals/"+id+"/resolve", tokHTTPApprover, `{"approve": true, "comment": "ok"}`)
	if code != 200 || decodeJSON(t, b)["state"] != "approved" {
		t.Fatalf("resolve: %d %s", code, b)
	}
	select {
	case r := <-awaited:
		if r[0].(int) != 200 || decodeJSON(t, r[1].([]byte))["state"] != "approved" {
			t.Fatalf("await: %v %s", r[0], r[1])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("await never returned")
	}
	code, b = f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody)
	if code != 200 || decodeJSON(t, b)["verdict"].(map[string]any)["decision"] != "DECISION_ALLOW" {
		t.Fatalf("re-evaluate after approval: %d %s", code, b)
	}

	// Audit over HTTP: both decisions, filtered; the agent may not read the trail.
	if code, _ := f.do(t, "GET", "/v1/audit/records", tokHTTPAgent, ""); code != http.StatusForbidden {
		t.Errorf("agent reads the audit trail: %d, want 403", code)
	}
	code, b = f.do(t, "GET", "/v1/audit/records?type=decision&tool=Bash", tokHTTPAuditor, "")
	if code != 200 {
		t.Fatalf("audit query: %d %s", code, b)
	}
	recs := decodeJSON(t, b)["records"].([]any)
	var decisions []string
	for _, r := range recs {
		var p map[string]any
		_ = json.Unmarshal([]byte(r.(map[string]any)["payload_json"].(string)), &p)
		decisions = append(decisions, p["decision"].(string))
	}
	if strings.Join(decisions, ",") != "ESCALATE,ALLOW" {
		t.Fatalf("audited decisions %v, want ESCALATE,ALLOW", decisions)
	}
	last := recs[len(recs)-1].(map[string]any)
	seq := last["seq"].(string)
	// Against the tree that ends with it (the checkpoint file may lag the log by a batch).
	var seqN uint64
	fmt.Sscan(seq, &seqN)
	code, b = f.do(t, "GET", fmt.Sprintf("/v1/audit/records/%s/proof?tree_size=%d", seq, seqN+1), tokHTTPAuditor, "")
	if code != 200 {
		t.Fatalf("proof: %d %s", code, b)
	}
	var proof struct {
		Seq      string   `json:"seq"`
		TreeSize string   `json:"tree_size"`
		LeafHash []byte   `json:"leaf_hash"`
		Hashes   [][]byte `json:"hashes"`
		RootHash []byte   `json:"root_hash"`
	}
	if err := json.Unmarshal(b, &proof); err != nil {
		t.Fatal(err)
	}
	var s, n uint64
	fmt.Sscan(proof.Seq, &s)
	fmt.Sscan(proof.TreeSize, &n)
	if err := audit.VerifyInclusion(s, n, proof.LeafHash, proof.Hashes, proof.RootHash); err != nil {
		t.Fatalf("inclusion proof does not verify: %v", err)
	}
	code, b = f.do(t, "POST", "/v1/audit/verify", tokHTTPAuditor, "")
	if code != 200 {
		t.Fatalf("verify: %d %s", code, b)
	}
	if res := decodeJSON(t, b); res["ok"] != true {
		t.Fatalf("verify result %s", b)
	}
	code, b = f.do(t, "GET", "/v1/audit/verify", tokHTTPAuditor, "")
	if code != 200 || decodeJSON(t, b)["last"] == nil {
		t.Fatalf("verify status %d %s", code, b)
	}
	if code, b := f.do(t, "GET", "/v1/audit/checkpoint", tokHTTPAuditor, ""); code != 200 || !strings.Contains(string(b), "signed_note") {
		t.Fatalf("checkpoint: %d %s", code, b)
	}
}

func TestHTTPRevoke(t *testing.T) {
	f := newHTTPFixture(t, nil)
	_, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody)
	id := decodeJSON(t, b)["verdict"].(map[string]any)["escalation_id"].(string)
	if code, b := f.do(t, "POST", "/v1/approvals/"+id+"/revoke", tokHTTPApprover, `{}`); code != http.StatusPreconditionFailed {
		t.Errorf("revoke pending: %d %s, want 412", code, b)
	}
	if code, b := f.do(t, "POST", "/v1/approvals/"+id+"/resolve", tokHTTPApprover, `{"approve": true, "grant_seconds": 3600}`); code != 200 {
		t.Fatalf("grant: %d %s", code, b)
	}
	if _, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody); decodeJSON(t, b)["verdict"].(map[string]any)["decision"] != "DECISION_ALLOW" {
		t.Fatalf("under the grant: %s", b)
	}
	if code, _ := f.do(t, "POST", "/v1/approvals/"+id+"/revoke", tokHTTPAgent, `{}`); code != http.StatusForbidden {
		t.Errorf("agent revokes: %d, want 403", code)
	}
	code, b := f.do(t, "POST", "/v1/approvals/"+id+"/revoke", tokHTTPApprover, `{"comment": "done"}`)
	if code != 200 || decodeJSON(t, b)["state"] != "revoked" {
		t.Fatalf("revoke: %d %s", code, b)
	}
	if _, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody); decodeJSON(t, b)["verdict"].(map[string]any)["decision"] != "DECISION_ESCALATE" {
		t.Fatalf("after revoke: %s, want ESCALATE", b)
	}
}

// TestHTTPBadRequests: malformed, over-limit and unauthenticated requests get an actionable
// 4xx, and no malformed evaluate yields ALLOW.
func TestHTTPBadRequests(t *testing.T) {
	f := newHTTPFixture(t, nil)
	big := `{"call": {"tool": "Bash", "arguments": {"command": "` + strings.Repeat("a", 80<<10) + `"}}}`
	for _, tc := range []struct {
		name, method, path, tok, body string
		ct                            string
		code                          int
		msg                           string
	}{
		{"no token", "POST", "/v1/evaluate", "", httpEvalBody, "", 401, "authenticate"},
		{"bad token", "POST", "/v1/evaluate", "tok-wrong-0123456789abc", httpEvalBody, "", 401, "authenticate"},
		{"auditor evaluates", "POST", "/v1/evaluate", tokHTTPAuditor, httpEvalBody, "", 403, "lacks the role"},
		{"arguments as string", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash", "arguments": "{\"command\":\"ls\"}"}}`, "", 400, "must be a JSON object"},
		{"unknown field", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash", "args": {}}}`, "", 400, `unknown field "args"`},
		{"wrong type", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": 7}}`, "", 400, `field "call.tool": want string`},
		{"no call", "POST", "/v1/evaluate", tokHTTPAgent, `{}`, "", 400, "call is required"},
		{"no tool", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"arguments": {}}}`, "", 400, "call.tool is required"},
		{"trailing data", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash"}} {}`, "", 400, "found more after it"},
		{"syntax", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash",}}`, "", 400, "not valid JSON at byte"},
		{"too big", "POST", "/v1/evaluate", tokHTTPAgent, big, "", 413, "larger than"},
		{"form post", "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody, "application/x-www-form-urlencoded", 400, "Content-Type must be application/json"},
		{"max_tier by agent", "POST", "/v1/evaluate", tokHTTPAgent, `{"call": {"tool": "Bash"}, "max_tier": 0}`, "", 403, "only the admin role"},
		{"bad page size", "GET", "/v1/approvals?page_size=9999", tokHTTPApprover, "", "", 400, "page_size"},
		{"bad decision filter", "GET", "/v1/audit/records?decision=maybe", tokHTTPAuditor, "", "", 400, "want one of ALLOW, BLOCK, ESCALATE"},
		{"bad tier filter", "GET", "/v1/audit/records?tier=7", tokHTTPAuditor, "", "", 400, "tier \"7\": want 0..3"},
		{"unknown type filter", "GET", "/v1/audit/records?type=decisions", tokHTTPAuditor, "", "", 400, "want one of decision, bundle_activated"},
		{"backwards range", "GET", "/v1/audit/records?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", tokHTTPAuditor, "", "", 400, "want a time at or after since"},
		{"bad since", "GET", "/v1/audit/records?since=yesterday", tokHTTPAuditor, "", "", 400, "RFC 3339"},
		{"bad seq", "GET", "/v1/audit/records/x1", tokHTTPAuditor, "", "", 400, "sequence number"},
		{"no record", "GET", "/v1/audit/records/99999", tokHTTPAuditor, "", "", 404, "no such audit record"},
		{"resolve unknown field", "POST", "/v1/approvals/apr_x/resolve", tokHTTPApprover, `{"approved": true}`, "", 400, `unknown field "approved"`},
		{"resolve unknown id", "POST", "/v1/approvals/apr_x/resolve", tokHTTPApprover, `{"approve": true}`, "", 404, "no such approval"},
		{"await bad timeout", "POST", "/v1/approvals/apr_x/await?timeout=1h", tokHTTPApprover, "", "", 400, "timeout"},
		{"no route", "GET", "/v1/nothing", tokHTTPAdmin, "", "", 404, "openapi.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.url+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				ct := tc.ct
				if ct == "" {
					ct = "application/json"
				}
				req.Header.Set("Content-Type", ct)
			}
			if tc.tok != "" {
				req.Header.Set("Authorization", "Bearer "+tc.tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var e httpError
			_ = json.Unmarshal(b, &e)
			if resp.StatusCode != tc.code || !strings.Contains(e.Message, tc.msg) || e.Code == "" {
				t.Errorf("%d %s, want %d with %q", resp.StatusCode, b, tc.code, tc.msg)
			}
			if strings.Contains(string(b), "DECISION_ALLOW") {
				t.Errorf("a bad request was answered ALLOW: %s", b)
			}
		})
	}
}

// TestHTTPCrossOrigin: a browser's cross-site POST is refused before any handler, whatever
// credentials the browser attaches (client certificates are sent on their own).
func TestHTTPCrossOrigin(t *testing.T) {
	f := newHTTPFixture(t, nil)
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
	} {
		req, _ := http.NewRequest("POST", f.url+"/v1/approvals/apr_x/resolve", strings.NewReader(`{"approve": true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokHTTPApprover)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin POST with %v: %d, want 403", h, resp.StatusCode)
		}
	}
}

func TestHTTPHealthAndStatus(t *testing.T) {
	f := newHTTPFixture(t, nil)
	code, b := f.do(t, "GET", "/v1/health", "", "")
	if code != 200 || decodeJSON(t, b)["status"] != "SERVING" {
		t.Fatalf("health: %d %s", code, b)
	}
	if code, _ := f.do(t, "GET", "/v1/status", tokHTTPAgent, ""); code != 403 {
		t.Errorf("agent status: %d, want 403", code)
	}
	code, b = f.do(t, "GET", "/v1/status", tokHTTPAdmin, "")
	if code != 200 || decodeJSON(t, b)["bundle_revision"] != "r1" {
		t.Fatalf("status: %d %s", code, b)
	}
	code, b = f.do(t, "GET", "/v1/whoami", tokHTTPApprover, "")
	if code != 200 || decodeJSON(t, b)["identity"] != "token:ops" {
		t.Fatalf("whoami: %d %s", code, b)
	}
	if code, _ := f.do(t, "GET", "/v1/whoami", "", ""); code != 401 {
		t.Errorf("anonymous whoami: %d, want 401", code)
	}
}

// TestHTTPExtraRoutes: an extra route is authenticated and authorised as its method.
func TestHTTPExtraRoutes(t *testing.T) {
	f := newHTTPFixture(t, func(o *HTTPOptions) {
		o.Routes = []HTTPRoute{{Pattern: "POST /v1/hooks/test", Method: "/shield.v1.ShieldService/Evaluate", Summary: "test hook",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, Identity(r.Context())) })}}
	})
	if code, b := f.do(t, "POST", "/v1/hooks/test", tokHTTPAgent, `{}`); code != 200 || string(b) != "token:agent-a" {
		t.Errorf("hook as agent: %d %q", code, b)
	}
	if code, _ := f.do(t, "POST", "/v1/hooks/test", tokHTTPAuditor, `{}`); code != 403 {
		t.Errorf("hook as auditor: %d, want 403", code)
	}
	_, b := f.do(t, "GET", "/v1/openapi.json", "", "")
	if !bytes.Contains(b, []byte(`"/v1/hooks/test"`)) {
		t.Error("extra route missing from the OpenAPI document")
	}
}

func TestHTTPExtraRouteNeedsMethod(t *testing.T) {
	auth, _ := NewAuth(AuthConfig{})
	_, err := NewHTTP(HTTPOptions{Auth: auth, Shield: minimalShield(t), Routes: []HTTPRoute{{Pattern: "POST /v1/hooks/x",
		Handler: http.NotFoundHandler()}}})
	if err == nil {
		t.Fatal("an extra route without a method was mounted (it would be open to everyone)")
	}
}

func TestCheckHTTPListen(t *testing.T) {
	for _, tc := range []struct {
		addr string
		cfg  AuthConfig
		dev  bool
		ok   bool
	}{
		{"127.0.0.1:8443", AuthConfig{TokensFile: "/t"}, false, true},
		{"127.0.0.1:8443", AuthConfig{}, false, false},
		{"127.0.0.1:8443", AuthConfig{}, true, true},
		{"0.0.0.0:8443", AuthConfig{TokensFile: "/t"}, false, false},
		{"0.0.0.0:8443", AuthConfig{TLS: TLSConfig{CertFile: "c", KeyFile: "k", ClientCA: "ca"}}, false, true},
		{"unix:/run/shield/http.sock", AuthConfig{}, false, true},
		{"unix:relative.sock", AuthConfig{}, false, false},
		{"8443", AuthConfig{TokensFile: "/t"}, false, false},
	} {
		if err := CheckHTTPListen(tc.addr, tc.cfg, tc.dev); (err == nil) != tc.ok {
			t.Errorf("%s %+v dev=%v: %v, want ok=%v", tc.addr, tc.cfg, tc.dev, err, tc.ok)
		}
	}
}

// TestHTTPVerifyDetectsTampering: the verify endpoint fails, naming the record, once a stored
// record is altered.
func TestHTTPVerifyDetectsTampering(t *testing.T) {
	f := newHTTPFixture(t, nil)
	if code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody); code != 200 {
		t.Fatalf("evaluate: %d %s", code, b)
	}
	if code, b := f.do(t, "POST", "/v1/audit/verify", tokHTTPAuditor, ""); code != 200 || decodeJSON(t, b)["ok"] != true {
		t.Fatalf("verify before tampering: %d %s", code, b)
	}
	segs, _ := filepath.Glob(filepath.Join(f.log.Dir(), "*.jsonl"))
	tampered := false
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		if i := bytes.Index(b, []byte(`"tool":"Bash"`)); i >= 0 {
			copy(b[i:], `"tool":"Bish"`)
			if err := os.WriteFile(s, b, 0o600); err != nil {
				t.Fatal(err)
			}
			tampered = true
			break
		}
	}
	if !tampered {
		t.Fatalf("no decision record found in %v", segs)
	}
	code, b := f.do(t, "POST", "/v1/audit/verify", tokHTTPAuditor, "")
	if code != 200 {
		t.Fatalf("verify: %d %s", code, b)
	}
	res := decodeJSON(t, b)
	if res["ok"] != false || !strings.Contains(res["error"].(string), "seq ") {
		t.Fatalf("verify after tampering: %s, want a failure naming the record", b)
	}
	if code, b := f.do(t, "GET", "/v1/audit/verify", tokHTTPAgent, ""); code != http.StatusForbidden {
		t.Errorf("agent reads verify status: %d %s, want 403", code, b)
	}
}

// TestHTTPAuditTail: the tail stream sends the records from from_seq, then each new one.
func TestHTTPAuditTail(t *testing.T) {
	f := newHTTPFixture(t, nil)
	if code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, httpEvalBody); code != 200 {
		t.Fatalf("evaluate: %d %s", code, b)
	}
	req, _ := http.NewRequest("GET", f.url+"/v1/audit/tail?from_seq=0", nil)
	req.Header.Set("Authorization", "Bearer "+tokHTTPAuditor)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("tail: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	seen := make(chan []string, 1)
	go func() {
		var seqs []string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var rec struct {
					Seq  string `json:"seq"`
					Type string `json:"type"`
				}
				_ = json.Unmarshal([]byte(d), &rec)
				seqs = append(seqs, rec.Seq+":"+rec.Type)
				if rec.Type == "approval_resolved" {
					break
				}
			}
		}
		seen <- seqs
	}()
	// A new record (a denial) after the stream opened arrives too.
	_, b := f.do(t, "GET", "/v1/approvals", tokHTTPApprover, "")
	id := decodeJSON(t, b)["approvals"].([]any)[0].(map[string]any)["id"].(string)
	if code, b := f.do(t, "POST", "/v1/approvals/"+id+"/resolve", tokHTTPApprover, `{"approve": false}`); code != 200 {
		t.Fatalf("deny: %d %s", code, b)
	}
	select {
	case seqs := <-seen:
		if len(seqs) < 4 || seqs[0] != "0:approval_requested" || !strings.HasSuffix(seqs[len(seqs)-1], ":approval_resolved") {
			t.Fatalf("tail sent %v", seqs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tail did not send the new record")
	}
	if code, _ := f.do(t, "GET", "/v1/audit/tail?from_seq=x", tokHTTPAuditor, ""); code != 400 {
		t.Errorf("bad from_seq: %d, want 400", code)
	}
}
