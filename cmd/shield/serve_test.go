package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/judge"
)

// startServe runs the real service on a unix socket in a temp state dir and returns a client.
func startServe(t *testing.T, cfg *Config) (shieldv1.ShieldServiceClient, context.CancelFunc, <-chan error) {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	cfg.Policy.Workspace = "/home/user/project"
	cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	done := make(chan struct{}) // closed when serve has returned, whoever reads errc
	go func() {
		errc <- serve(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(cfg.Socket); err == nil {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("serve exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("socket never appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	// Stop the service and wait for it, so that its files are closed before TempDir is removed.
	t.Cleanup(func() {
		conn.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not return 30 s after cancel")
		}
	})
	client := shieldv1.NewShieldServiceClient(conn)
	// The socket file exists before Serve accepts: wait until Health answers.
	for {
		hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := client.Health(hctx, &shieldv1.HealthRequest{})
		hcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service never answered Health: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return client, cancel, errc
}

func TestServeEvaluateOverUnixSocket(t *testing.T) {
	cfg := &Config{}
	c, cancel, errc := startServe(t, cfg)
	ctx, done := context.WithTimeout(context.Background(), 20*time.Second)
	defer done()

	tests := []struct {
		name, tool, args string
		want             shieldv1.Decision
		rule             string
	}{
		{"benign build", "Bash", `{"command":"go vet ./..."}`, shieldv1.Decision_DECISION_ALLOW, "rego:exec.known-effects"},
		{"wipe root", "Bash", `{"command":"rm -rf /"}`, shieldv1.Decision_DECISION_BLOCK, "cel:destructive.rm-outside-workspace"},
		{"metadata SSRF", "http_request", `{"url":"http://169.254.169.254/latest/meta-data/"}`, shieldv1.Decision_DECISION_BLOCK, "cel:net.cloud-metadata"},
		{"unknown tool", "frobnicate", `{"level":"max"}`, shieldv1.Decision_DECISION_ESCALATE, "default:unknown"},
	}
	var lastSeq uint64
	first := true
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Evaluate(ctx, &shieldv1.EvaluateRequest{
				Call:    &shieldv1.ToolCall{CallId: "id-" + tc.tool, Tool: tc.tool, ArgumentsJson: tc.args},
				Context: &shieldv1.CallContext{SessionId: "s1"},
			})
			if err != nil {
				t.Fatal(err)
			}
			v := resp.GetVerdict()
			if v.GetDecision() != tc.want {
				t.Errorf("decision = %s, want %s (rules %v)", v.GetDecision(), tc.want, v.GetRules())
			}
			if !contains(v.GetRules(), tc.rule) {
				t.Errorf("rules = %v, want %s", v.GetRules(), tc.rule)
			}
			if (!first && v.GetAuditSeq() <= lastSeq) || v.GetAuditRecordHash() == "" {
				t.Errorf("audit position %d %q not after %d", v.GetAuditSeq(), v.GetAuditRecordHash(), lastSeq)
			}
			lastSeq, first = v.GetAuditSeq(), false
			if len(v.GetActionHash()) != 64 || v.GetDecisionId() == "" || v.GetBundleDigest() == "" {
				t.Errorf("verdict metadata missing: %v", v)
			}
		})
	}

	// Malformed requests: INVALID_ARGUMENT with a message a person can act on.
	bad := []struct{ name, tool, args, want string }{
		{"no call", "", "", "call is required"},
		{"not JSON", "Bash", `{"command":`, "arguments"},
		{"array", "Bash", `[1]`, "arguments"},
		{"empty tool", "", `{}`, "tool name is empty"},
	}
	for _, b := range bad {
		t.Run("invalid/"+b.name, func(t *testing.T) {
			req := &shieldv1.EvaluateRequest{}
			if b.name != "no call" {
				req.Call = &shieldv1.ToolCall{Tool: b.tool, ArgumentsJson: b.args}
			}
			_, err := c.Evaluate(ctx, req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), b.want) {
				t.Errorf("err = %v, want INVALID_ARGUMENT mentioning %q", err, b.want)
			}
		})
	}
	mt := int32(7)
	if _, err := c.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: "{}"}, MaxTier: &mt}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("max_tier 7: %v", err)
	}

	h, err := c.Health(ctx, &shieldv1.HealthRequest{})
	if err != nil || h.GetStatus() != shieldv1.HealthResponse_SERVING {
		t.Fatalf("health = %v %v", h, err)
	}
	st, err := c.GetStatus(ctx, &shieldv1.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetRulesPerTier()["cel"] == 0 || st.GetRulesPerTier()["rego"] == 0 || st.GetDecisions()["BLOCK"] < 2 {
		t.Errorf("status = %v", st)
	}

	// Shut down, then prove every answered decision is in an intact audit trail.
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("serve: %v", err)
	}
	l, err := audit.Open(audit.Config{Dir: filepath.Join(cfg.StateDir, "audit"), KeyFile: cfg.Audit.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	types := map[audit.Type]int{}
	for seq := uint64(0); seq < l.Size(); seq++ {
		r, err := l.Get(seq)
		if err != nil {
			t.Fatalf("record %d: %v", seq, err)
		}
		types[r.Type]++
	}
	// Every answered call has its decision record (the request without a call never reached the pipeline).
	if l.Size() <= lastSeq || types[audit.TypeDecision] != len(tests)+len(bad)-1 || types[audit.TypeServiceStart] != 1 || types[audit.TypeServiceStop] != 1 {
		t.Errorf("audit log size %d, record types %v", l.Size(), types)
	}
}

func TestServeRefusesSecondInstance(t *testing.T) {
	cfg := &Config{}
	startServe(t, cfg)
	cfg2 := &Config{StateDir: cfg.StateDir}
	cfg2.WithDefaults()
	err := serve(context.Background(), cfg2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second instance: err = %v, want socket in use", err)
	}
}

func TestConfigStrict(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("state_dir: /x\nlisten_all: true\n"), 0o600)
	if _, err := loadConfig(p); err == nil || !strings.Contains(err.Error(), "listen_all") {
		t.Errorf("unknown key accepted: %v", err)
	}
	c := &Config{Listen: []string{"0.0.0.0:7000"}, MetricsListen: "10.0.0.1:9"}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "metrics") {
		t.Errorf("non-loopback listeners accepted: %v", err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestServeWithJudge: a call tiers 0–1 escalate goes to the tier-2 judge (a local model double
// speaking the OpenAI API), whose block is the verdict; an unreachable judge falls back to
// ESCALATE, never ALLOW.
func TestServeWithJudge(t *testing.T) {
	double := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m := regexp.MustCompile(`\\"nonce\\": \\"([0-9a-f]+)\\"`).FindSubmatch(b)
		if m == nil {
			http.Error(w, "no nonce", 400)
			return
		}
		content := `{"decision":"block","confidence":0.9,"reasoning":"pipes a remote script into a shell","nonce":"` + string(m[1]) + `"}`
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": content}}}})
	}))
	defer double.Close()
	for _, tc := range []struct {
		name, url string
		want      shieldv1.Decision
		tier      int32
	}{
		{"judge blocks", double.URL + "/v1", shieldv1.Decision_DECISION_BLOCK, 2},
		// The judge's fallback escalates, so the call goes on to tier 3: a human approval request.
		{"judge unreachable", "http://127.0.0.1:1/v1", shieldv1.Decision_DECISION_ESCALATE, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := startServe(t, &Config{Judge: &judge.Config{Provider: "openai", BaseURL: tc.url, Model: "m", Timeout: 5 * time.Second}})
			resp, err := c.Evaluate(context.Background(), &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{
				Tool: "send_email", ArgumentsJson: `{"to":"someone@external.example","subject":"q","body":"numbers attached"}`}})
			if err != nil {
				t.Fatal(err)
			}
			v := resp.GetVerdict()
			if v.GetDecision() != tc.want || v.GetTier() != tc.tier || v.GetJudge() != "openai/m" ||
				(tc.tier == 3 && (v.GetEscalationId() == "" || !contains(v.GetRules(), "judge:fallback"))) {
				t.Errorf("verdict %v, want %s from tier %d", v, tc.want, tc.tier)
			}
		})
	}
}

// TestServeRefusesOpenStateDir: a state directory its group or others may write is refused at
// start, the same rule config check applies.
func TestServeRefusesOpenStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{StateDir: dir}
	cfg.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := serve(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("serve with a 0770 state dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "audit")); err == nil {
		t.Error("serve created the audit trail in a state dir it refused")
	}
}
