package deploy

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxExposure is the highest systemd-analyze exposure rating the unit may have (0 = fully
// confined, 10 = unconfined).
const maxExposure = 2.0

var exposureRE = regexp.MustCompile(`Overall exposure level for shield\.service: ([0-9]+\.[0-9]+)`)

func TestServiceExposure(t *testing.T) {
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed: install Debian's systemd package to rate the unit")
	}
	out, err := exec.Command(bin, "security", "--offline=true", "--no-pager", "systemd/shield.service").CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := exposureRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no overall exposure level in systemd-analyze output:\n%s", out)
	}
	got, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("parse exposure %q: %v", m[1], err)
	}
	t.Logf("exposure %.1f", got)
	if got > maxExposure {
		t.Errorf("shield.service exposure %.1f > %.1f; findings:\n%s", got, maxExposure, failing(out))
	}
}

// TestServiceSyscallsForSandbox checks the unit allows what the agent sandbox needs: a unit that
// rates well but kills Shield when it confines an agent is no use.
func TestServiceSyscallsForSandbox(t *testing.T) {
	unit := readUnit(t)
	allowed := map[string]bool{}
	for _, v := range unit["SystemCallFilter"] {
		if strings.HasPrefix(v, "~") {
			continue
		}
		for _, s := range strings.Fields(v) {
			allowed[s] = true
		}
	}
	for _, s := range []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp", "prctl"} {
		if !allowed[s] {
			t.Errorf("SystemCallFilter does not allow %s (the agent sandbox needs it)", s)
		}
	}
	want := map[string]string{
		"Type":                    "notify",
		"User":                    "shield",
		"NotifyAccess":            "main",
		"SystemCallErrorNumber":   "EPERM",
		"SystemCallArchitectures": "native",
		"CapabilityBoundingSet":   "",
		"UMask":                   "0077",
		"ExecStart":               "/usr/bin/shield serve --config /etc/shield/shield.yaml",
		"ExecReload":              "/bin/kill -HUP $MAINPID",
	}
	for k, v := range want {
		got := unit[k]
		if len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want exactly one %q", k, got, v)
		}
	}
}

// failing returns the findings systemd-analyze marks as not satisfied.
func failing(out []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "✗") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestDebPackage builds the .deb (bin/shield and nfpm, pinned) and runs deploy/deb/check.sh on
// it: files, modes, owners, conffiles, maintainer scripts, libraries, the packaged config and unit.
func TestDebPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building the .deb compiles the binary and nfpm")
	}
	for _, tool := range []string{"dpkg-deb", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: cannot build or inspect the package", tool)
		}
	}
	out := t.TempDir()
	if b, err := exec.Command("bash", "deb/build.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("built %v", debs)
	}
	b, err := exec.Command("bash", "deb/check.sh", debs[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "PASS") {
		t.Fatalf("check.sh: %v\n%s", err, b)
	}
}
