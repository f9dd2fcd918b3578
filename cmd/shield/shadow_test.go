package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// Shadow mode end to end: serve answers with the live bundle while a candidate that escalates
// disk wipes instead of blocking them sees every decision; the difference lands in the audit
// trail as a shadow record, the summary at shutdown, and `policy shadow status` reports both.
func TestServeShadowMode(t *testing.T) {
	cand := candidateBundle(t)
	cfg := &Config{Policy: PolicyConfig{Shadow: cand}, Approvals: ApprovalsConfig{Disabled: true}}
	client, cancel, errc := startServe(t, cfg)
	ctx, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	for _, c := range []struct{ tool, args, want string }{
		// One worker takes the queue in order: once the wipe's shadow record exists, ls was
		// evaluated too.
		{"Bash", `{"command":"ls -la"}`, "ALLOW"},
		{"Bash", `{"command":"mkfs.ext4 /dev/sdb1"}`, "BLOCK"},
	} {
		resp, err := client.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: c.tool, ArgumentsJson: c.args},
			Context: &shieldv1.CallContext{Cwd: "/home/user/project"}})
		if err != nil {
			t.Fatal(err)
		}
		// The live bundle decides: the candidate never changes a verdict.
		if got := strings.TrimPrefix(resp.GetVerdict().GetDecision().String(), "DECISION_"); got != c.want {
			t.Errorf("%s: live verdict %s, want %s", c.args, got, c.want)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := readShadow(ctx, cfg.Audit.Dir, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if st.Records >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no shadow record appeared")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("serve: %v", err)
	}
	code, out, errOut := runCmd(t, "", "policy", "shadow", "status", "--audit", cfg.Audit.Dir)
	if code != 0 {
		t.Fatalf("shadow status exit %d: %s", code, errOut)
	}
	for _, want := range []string{"evaluated 2, agreed 1, differed 1, dropped 0", "BLOCK→ESCALATE", "cel:destructive.disk-wipe", "1 shadow decision records"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCmd(t, "", "policy", "shadow", "frobnicate"); code != 2 {
		t.Errorf("bad shadow subcommand exit %d, want 2", code)
	}
}

// A shadow bundle that does not load keeps serve from starting, loudly.
func TestServeShadowBundleMustLoad(t *testing.T) {
	cfg := &Config{StateDir: t.TempDir(), Policy: PolicyConfig{Shadow: "/nonexistent/bundle"}}
	cfg.WithDefaults()
	err := serve(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "shadow bundle") {
		t.Fatalf("serve with a missing shadow bundle: %v", err)
	}
}
