// Package deploy holds the systemd unit, sysusers/tmpfiles entries, the example configuration
// and the packaging of the appliance. Its tests check them: the unit's exposure score, and the
// built .deb's files, modes and owners.
package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestUnitExposure runs `systemd-analyze security --offline=true` on the unit: 2.0 or lower.
func TestUnitExposure(t *testing.T) {
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (Debian package systemd): cannot score the unit")
	}
	out, err := exec.Command(bin, "security", "--offline=true", "systemd/shield.service").CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for shield.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("exposure %.1f", score)
	if score > 2.0 {
		t.Errorf("exposure %.1f, want 2.0 or lower", score)
	}
}

// TestUnitLines pins the lines the appliance depends on.
func TestUnitLines(t *testing.T) {
	b, err := os.ReadFile("systemd/shield.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{"Type=notify", "NoNewPrivileges=yes", "ProtectSystem=strict", "CapabilityBoundingSet=\n",
		"StateDirectory=shield", "UMask=0077", "SystemCallArchitectures=native", "User=shield", "ExecReload=/bin/kill -HUP $MAINPID"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q", strings.TrimSpace(want))
		}
	}
	// Every directive is explained: a comment precedes each block.
	if !strings.Contains(unit, "# ") {
		t.Error("unit has no comments")
	}
}

// TestDeb builds the package (nfpm) and checks its files, modes and owners with dpkg-deb.
func TestDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building the .deb compiles the binary and nfpm")
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not installed: cannot inspect the package")
	}
	out := t.TempDir()
	build := exec.Command("bash", "deb/build.sh", out)
	build.Dir = "."
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("built %v", debs)
	}
	list, err := exec.Command("dpkg-deb", "--contents", debs[0]).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, list)
	}
	want := map[string]string{
		"./usr/bin/shield":                                  "-rwxr-xr-x root/root",
		"./lib/systemd/system/shield.service":               "-rw-r--r-- root/root",
		"./usr/lib/sysusers.d/shield.conf":                  "-rw-r--r-- root/root",
		"./usr/lib/tmpfiles.d/shield.conf":                  "-rw-r--r-- root/root",
		"./etc/shield/shield.yaml":                          "-rw-r----- root/root",
		"./usr/share/shield/policies/default/defaults.yaml": "-rw-r--r-- root/root",
	}
	for _, line := range strings.Split(string(list), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		if w, ok := want[f[5]]; ok {
			if got := f[0] + " " + f[1]; got != w {
				t.Errorf("%s: %s, want %s", f[5], got, w)
			}
			delete(want, f[5])
		}
	}
	for p := range want {
		t.Errorf("package lacks %s", p)
	}
	conffiles, _ := exec.Command("dpkg-deb", "--info", debs[0], "conffiles").CombinedOutput()
	if !strings.Contains(string(conffiles), "/etc/shield/shield.yaml") {
		t.Errorf("shield.yaml is not a conffile: %s", conffiles)
	}
}
