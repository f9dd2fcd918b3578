package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// A reload whose bundle misses its evaluation gate is refused with the category and figures,
// and the previous bundle keeps serving.
func TestServeReloadRefusesBundleMissingItsGate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command("cp", "-r", "../../policies/default", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy bundle: %v %s", err, out)
	}
	c, _, _ := startServe(t, &Config{Policy: PolicyConfig{Path: dir}})
	st0 := waitStatus(t, c, func(*shieldv1.GetStatusResponse) bool { return true })
	manifest := filepath.Join(dir, ".manifest")
	text, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	strict := strings.Replace(string(text), `"total": {"min_recall": 1.0, "max_fpr": 0.09}`, `"total": {"min_recall": 1.0, "max_fpr": 0.0}`, 1)
	if strict == string(text) {
		t.Fatal("the default manifest no longer has the total thresholds this test tightens")
	}
	if err := os.WriteFile(manifest, []byte(strict), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, c, func(s *shieldv1.GetStatusResponse) bool { return s.GetReloadFailures() >= 1 })
	if !strings.Contains(st.GetLastReloadError(), "evaluation gate: category TOTAL: FPR") || !strings.Contains(st.GetLastReloadError(), "above max_fpr 0.0%") {
		t.Errorf("reload error: %q", st.GetLastReloadError())
	}
	if st.GetBundleDigest() != st0.GetBundleDigest() {
		t.Errorf("a bundle that missed its gate was activated")
	}
}
