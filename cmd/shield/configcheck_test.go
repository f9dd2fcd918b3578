package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheck(t *testing.T) {
	if code, out, errs := runCmd(t, "", "config", "check", "../../deploy/shield.yaml"); code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("the shipped example config: %d %q %q", code, out, errs)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("pipeline:\n  timeout: 1s\n  tiemout: 2s\n"), 0o600)
	if code, _, errs := runCmd(t, "", "config", "check", bad); code != 1 || !strings.Contains(errs, "tiemout") {
		t.Errorf("unknown key: %d %q", code, errs)
	}
	invalid := filepath.Join(dir, "invalid.yaml")
	os.WriteFile(invalid, []byte("listen: [\"0.0.0.0:9000\"]\nlog:\n  level: loud\n"), 0o600)
	if code, _, errs := runCmd(t, "", "config", "check", invalid); code != 1 || !strings.Contains(errs, "loopback") || !strings.Contains(errs, "loud") {
		t.Errorf("invalid values: %d %q", code, errs)
	}
}
