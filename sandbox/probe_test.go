package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testProfile is the default agent profile for a fresh workspace, able to start the test binary
// (which plays the shield binary, see TestMain).
func testProfile(t *testing.T, opts AgentOptions) Profile {
	t.Helper()
	p, err := DefaultAgentProfile(t.TempDir(), opts).WithProgram(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runProbe(t *testing.T, p Profile) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := Probe(ctx, ProbeOptions{Shield: os.Args[0], Profile: p, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	t.Logf("report:\n%s", js)
	return r
}

func verdicts(r *Report) map[string]Verdict {
	m := map[string]Verdict{}
	for _, p := range r.Probes {
		m[p.Name] = p.Verdict
	}
	return m
}

// TestProbeDefaultAgentProfile runs the whole canary under the default agent profile: every probe
// must be blocked and the supervisor must see no_new_privs and one more seccomp filter.
func TestProbeDefaultAgentProfile(t *testing.T) {
	requireLandlock(t, 4)
	r := runProbe(t, testProfile(t, AgentOptions{LLMPort: 443}))
	want := map[string]Verdict{}
	for _, name := range ProbeNames {
		want[name] = VerdictBlocked
		if os.Geteuid() != 0 && name == probeMount {
			want[name] = VerdictHostDenied
		}
	}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if r.Status != StatusSandboxed {
		t.Errorf("status %s, want sandboxed; problems: %q", r.Status, r.Problems)
	}
	if r.Process == nil || !r.Process.OK || r.Process.NoNewPrivs != 1 || r.Process.SeccompMode != 2 {
		t.Errorf("process check %+v", r.Process)
	}
	if r.LandlockABI != LandlockABI() || r.Kernel == "" || len(r.SeccompSHA256) != 64 {
		t.Errorf("report header: kernel %q ABI %d seccomp %q", r.Kernel, r.LandlockABI, r.SeccompSHA256)
	}
	if err := Gate(r, false); err != nil {
		t.Errorf("Gate: %v", err)
	}
}

// TestProbeWeakProfile shows that the canary notices holes: a profile that allows spawning
// /bin/true and UDP must not be reported as sandboxed.
func TestProbeWeakProfile(t *testing.T) {
	requireLandlock(t, 4)
	p := testProfile(t, AgentOptions{LLMPort: 443, DNS: true})
	p.Spawn = true
	p, err := p.WithProgram("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	r := runProbe(t, p)
	got := verdicts(r)
	if got[probeExecve] != VerdictAllowed {
		t.Errorf("execve: %s, want allowed", got[probeExecve])
	}
	// Landlock restricts UDP ports from ABI 10; below, seccomp is all there is, and the profile
	// allowed UDP.
	wantUDP := VerdictAllowed
	if r.LandlockABI >= 10 {
		wantUDP = VerdictBlocked
	}
	if got[probeUDP] != wantUDP {
		t.Errorf("udp-send: %s, want %s", got[probeUDP], wantUDP)
	}
	if got[probeReadFile] != VerdictBlocked || got[probeTCP] != VerdictBlocked {
		t.Errorf("read-file %s, tcp-connect %s: want blocked", got[probeReadFile], got[probeTCP])
	}
	if r.Status != StatusPartial {
		t.Errorf("status %s, want partial", r.Status)
	}
	if err := Gate(r, true); !errors.Is(err, ErrNotSandboxed) {
		t.Errorf("Gate(partial, allowUnsandboxed) = %v, want ErrNotSandboxed", err)
	}
}

func TestNewCanaryRefusesAllowedDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewCanary(dir, Profile{ReadOnly: []string{dir}}); err == nil {
		t.Fatal("NewCanary accepted a directory the profile can read")
	}
}

// BenchmarkProbe measures a whole canary run (control child, confined child through the
// trampoline, supervisor checks): what the gate adds to an agent's start.
func BenchmarkProbe(b *testing.B) {
	if LandlockABI() < 4 {
		b.Skip("the kernel's Landlock ABI is below 4")
	}
	p, err := DefaultAgentProfile(b.TempDir(), AgentOptions{LLMPort: 443}).WithProgram(os.Args[0])
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for b.Loop() {
		r, err := Probe(context.Background(), ProbeOptions{Shield: os.Args[0], Profile: p, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if r.Status != StatusSandboxed {
			b.Fatalf("status %s", r.Status)
		}
	}
}
