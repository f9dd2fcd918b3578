package exec

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/sandbox"
)

// TestMain lets the test binary act as the shield trampoline, so the shell executor's tests run
// commands under the real sandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.TrampolineCommand {
		if err := sandbox.Trampoline(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "trampoline:", err)
		}
		os.Exit(126)
	}
	if len(os.Args) > 1 && os.Args[1] == ReaperCommand {
		os.Exit(Reaper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func TestShellConfined(t *testing.T) {
	if sandbox.LandlockABI() < 4 {
		t.Skipf("Landlock ABI %d: the shell executor needs ABI 4 (TCP rules)", sandbox.LandlockABI())
	}
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, []byte("TOKEN-123"), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	s := &Shell{ShieldBin: os.Args[0], Workspace: ws, Timeout: 20 * time.Second, MaxOutput: 4096}
	ctx := context.Background()

	run := func(cmd string) Result {
		t.Helper()
		r, err := s.Run(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return r
	}
	if r := run("echo hello > out.txt && cat out.txt && ls"); r.ExitCode != 0 || !strings.Contains(r.Output, "hello") {
		t.Fatalf("work inside the workspace failed: %+v", r)
	}
	if r := run("cat " + secret); r.ExitCode == 0 || strings.Contains(r.Output, "TOKEN-123") {
		t.Errorf("read outside the workspace: %+v", r)
	}
	if r := run("echo x > " + filepath.Join(base, "planted")); r.ExitCode == 0 {
		t.Errorf("write outside the workspace: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(base, "planted")); err == nil {
		t.Error("file planted outside the workspace")
	}
	// bash's /dev/tcp is not available in sh; use a program that connects.
	if r := run(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d 2>&1 || python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", %d), 2)' 2>&1; echo rc=$?", port, port)); strings.Contains(r.Output, "rc=0") {
		t.Errorf("network connect succeeded: %+v", r)
	}
	select {
	case <-accepted:
		t.Error("listener received a connection from the confined shell")
	case <-time.After(100 * time.Millisecond):
	}
	if r := run("head -c 10000 /dev/zero | tr \"\\\\000\" a"); !r.Truncated || len(r.Output) != 4096 {
		t.Errorf("output cap: len %d truncated %v: %q", len(r.Output), r.Truncated, r.Output[:min(len(r.Output), 200)])
	}
	s.Timeout = 300 * time.Millisecond
	if r := run("sleep 5"); !r.TimedOut {
		t.Errorf("timeout not enforced: %+v", r)
	}
}

// TestShellCannotReachStateDir: a confined tool call cannot read the audit key of a state
// directory beside the workspace, nor delete it; a profile that would grant the state directory
// (here through an extra read-only path above it) is refused before anything runs.
func TestShellCannotReachStateDir(t *testing.T) {
	if sandbox.LandlockABI() < 4 {
		t.Skipf("Landlock ABI %d: the shell executor needs ABI 4 (TCP rules)", sandbox.LandlockABI())
	}
	base := t.TempDir()
	ws := filepath.Join(base, "project")
	state := filepath.Join(base, "state")
	key := filepath.Join(state, "keys", "audit.key")
	for _, d := range []string{ws, filepath.Dir(key)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(key, []byte("PRIVATE-KEY-MATERIAL"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Shell{ShieldBin: os.Args[0], Workspace: ws, Timeout: 20 * time.Second, Protected: []string{state}}
	r, err := s.Run(context.Background(), "cat "+key+"; rm -rf "+state+"; ls "+state)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Output, "PRIVATE-KEY-MATERIAL") {
		t.Errorf("the confined shell read the audit key: %q", r.Output)
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("the confined shell removed the audit key: %v", err)
	}
	s.ReadOnly = []string{base}
	if _, err := s.Run(context.Background(), "true"); err == nil || !strings.Contains(err.Error(), "protected") {
		t.Errorf("a profile granting the state dir ran: %v", err)
	}
}

// TestShellKillsDetachedChildren: whatever a call leaves running — a background job, a setsid
// child, a double fork, nohup — is gone when the call returns, and when it times out.
func TestShellKillsDetachedChildren(t *testing.T) {
	if sandbox.LandlockABI() < 4 {
		t.Skipf("Landlock ABI %d: the shell executor needs ABI 4 (TCP rules)", sandbox.LandlockABI())
	}
	ws := t.TempDir()
	s := &Shell{ShieldBin: os.Args[0], Workspace: ws, Timeout: 20 * time.Second}
	marker := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	living := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil {
				continue
			}
			st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if strings.Contains(string(b), marker) && !strings.Contains(string(st), ") Z") {
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
		return out
	}
	for _, tc := range []struct{ name, cmd string }{
		{"background", "sleep " + marker + " & echo started"},
		{"setsid", "setsid sleep " + marker + " & echo started"},
		{"double fork", "sh -c 'sh -c \"sleep " + marker + " </dev/null >/dev/null 2>&1 &\" &' ; echo started"},
		{"nohup setsid, output closed", "nohup setsid sleep " + marker + " </dev/null >/dev/null 2>&1 & echo started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.Run(context.Background(), tc.cmd)
			if err != nil || !strings.Contains(r.Output, "started") {
				t.Fatalf("run: %v %+v", err, r)
			}
			// SIGKILL is delivered asynchronously: a killed process may still be in the kernel's
			// exit path for a moment after the call returns. Anything the executor missed sleeps
			// for tens of minutes, so a short bounded wait tells the two apart.
			l := living()
			for i := 0; i < 40 && len(l) > 0; i++ {
				time.Sleep(50 * time.Millisecond)
				l = living()
			}
			if len(l) > 0 {
				t.Errorf("still running after the call: %v", l)
				for _, p := range l {
					pid, _, _ := strings.Cut(p, ":")
					n := 0
					fmt.Sscan(pid, &n)
					if n > 0 {
						syscall.Kill(n, syscall.SIGKILL)
					}
				}
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		s := *s
		s.Timeout = 500 * time.Millisecond
		r, err := s.Run(context.Background(), "setsid sleep "+marker+" </dev/null >/dev/null 2>&1 & sleep 30")
		if err != nil || !r.TimedOut {
			t.Fatalf("run: %v %+v", err, r)
		}
		if l := living(); len(l) > 0 {
			t.Errorf("still running after the timeout: %v", l)
		}
	})
}
