package appliance

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/shadow"
)

// SIGHUP's shadow reload: an unchanged candidate is left alone, a broken one is refused and the
// previous candidate stays, a changed one replaces it.
func TestReloadShadow(t *testing.T) {
	cand := filepath.Join(t.TempDir(), "cand")
	if err := os.CopyFS(cand, os.DirFS("../../../policies/default")); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policy: PolicyConfig{Shadow: cand}}
	pol, err := loadShadow(cfg, policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := shadow.New(shadow.Config{Candidate: pol, Live: func() *shield.Policy { return pol }})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if err := reloadShadow(cfg, e, log, "SIGHUP"); err != nil || e.Candidate() != pol {
		t.Fatalf("unchanged bundle: %v, candidate replaced: %v", err, e.Candidate() != pol)
	}
	broken := filepath.Join(cand, "rules", "zz.yaml")
	os.WriteFile(broken, []byte("rules:\n  - id: x\n    when: tool ==\n    decision: block\n    message: m\n"), 0o644)
	if err := reloadShadow(cfg, e, log, "SIGHUP"); err == nil || !strings.Contains(err.Error(), "zz.yaml") || e.Candidate() != pol {
		t.Fatalf("broken bundle: %v", err)
	}
	os.WriteFile(broken, []byte("rules:\n  - id: test.frob\n    when: tool == 'frob'\n    decision: block\n    message: m\n    examples:\n      match: [{tool: frob, arguments: {}}]\n"), 0o644)
	if err := reloadShadow(cfg, e, log, "SIGHUP"); err != nil || e.Candidate() == pol || e.Candidate().Digest == pol.Digest {
		t.Fatalf("changed bundle: %v", err)
	}
	if err := reloadShadow(cfg, nil, log, "SIGHUP"); err != nil {
		t.Errorf("shadow mode off: %v", err)
	}
}
