package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// waitStatus polls GetStatus until ok returns true (bounded).
func waitStatus(t *testing.T, c shieldv1.ShieldServiceClient, ok func(*shieldv1.GetStatusResponse) bool) *shieldv1.GetStatusResponse {
	t.Helper()
	// Generous: a reload compiles the bundle and runs its tests and labelled cases, which takes
	// tens of seconds on a loaded 2-core machine. Not a timing assertion, a bound on a hang.
	deadline := time.Now().Add(120 * time.Second)
	for {
		st, err := c.GetStatus(context.Background(), &shieldv1.GetStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never reached the expected state: %v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestServeHotReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command("cp", "-r", "../../policies/default", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy bundle: %v %s", err, out)
	}
	c, _, _ := startServe(t, &Config{Policy: PolicyConfig{Path: dir}})
	st0 := waitStatus(t, c, func(*shieldv1.GetStatusResponse) bool { return true })
	eval := func(tool string) *shieldv1.Verdict {
		resp, err := c.Evaluate(context.Background(), &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: tool, ArgumentsJson: `{}`}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetVerdict()
	}
	if d := eval("frobnicate").GetDecision(); d != shieldv1.Decision_DECISION_ESCALATE {
		t.Fatalf("before reload: %s", d)
	}

	// A broken bundle is rejected with file:line; the old one keeps serving.
	bad := "rules:\n  - id: broken\n    when: tool ==\n    decision: block\n    message: x\n"
	if err := os.WriteFile(filepath.Join(dir, "rules", "zz-broken.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, c, func(s *shieldv1.GetStatusResponse) bool { return s.GetReloadFailures() >= 1 })
	if !strings.Contains(st.GetLastReloadError(), "zz-broken.yaml:") {
		t.Errorf("reload error lacks file:line: %q", st.GetLastReloadError())
	}
	if st.GetBundleDigest() != st0.GetBundleDigest() {
		t.Errorf("broken bundle activated")
	}
	if v := eval("frobnicate"); v.GetBundleDigest() != st0.GetBundleDigest() || v.GetDecision() != shieldv1.Decision_DECISION_ESCALATE {
		t.Errorf("old bundle not serving: %v", v)
	}

	// A good change is activated and clears the cache.
	good := "rules:\n  - id: test.frobnicate\n    description: test rule\n    when: tool == 'frobnicate'\n    decision: block\n    message: frobnication is forbidden\n" +
		"    examples:\n      match:\n        - {tool: frobnicate, arguments: {}}\n"
	if err := os.WriteFile(filepath.Join(dir, "rules", "zz-broken.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	st = waitStatus(t, c, func(s *shieldv1.GetStatusResponse) bool { return s.GetReloads() >= 1 })
	if st.GetBundleDigest() == st0.GetBundleDigest() || st.GetLastReloadError() != "" {
		t.Errorf("after good reload: %v", st)
	}
	v := eval("frobnicate")
	if v.GetDecision() != shieldv1.Decision_DECISION_BLOCK || v.GetCached() || v.GetRules()[0] != "cel:test.frobnicate" {
		t.Errorf("new rule not in force: %v", v)
	}
}
