package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTrampolineArgs(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantProg string
		wantArgv []string
		wantErr  string
	}{
		{name: "ok", args: []string{"--profile", "{}", "--", "/bin/cat", "x"}, wantProg: "/bin/cat", wantArgv: []string{"/bin/cat", "x"}},
		{name: "equals form", args: []string{"--profile={}", "--", "cat"}, wantProg: "cat", wantArgv: []string{"cat"}},
		{name: "program args look like flags", args: []string{"--profile", "{}", "--", "ls", "--profile", "--"}, wantProg: "ls", wantArgv: []string{"ls", "--profile", "--"}},
		{name: "no profile", args: []string{"--", "cat"}, wantErr: "missing --profile"},
		{name: "profile without value", args: []string{"--profile"}, wantErr: "needs a value"},
		{name: "no program", args: []string{"--profile", "{}", "--"}, wantErr: "missing program"},
		{name: "no separator", args: []string{"--profile", "{}", "cat"}, wantErr: "unexpected argument"},
		{name: "bad profile", args: []string{"--profile", `{"spawn":"yes"}`, "--", "cat"}, wantErr: "decoding profile"},
		{name: "invalid profile", args: []string{"--profile", `{"exec":["bin"]}`, "--", "cat"}, wantErr: "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, prog, argv, err := ParseTrampolineArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if prog != tt.wantProg {
				t.Errorf("prog %q, want %q", prog, tt.wantProg)
			}
			if diff := cmp.Diff(tt.wantArgv, argv); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseTrampolineArgs(f *testing.F) {
	f.Add("--profile\x00{}\x00--\x00/bin/cat\x00x")
	f.Add("--profile={\"spawn\":true}\x00--\x00a")
	f.Add("--\x00--profile")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		p, prog, argv, err := ParseTrampolineArgs(args)
		if err != nil {
			return
		}
		if prog == "" && len(argv) == 0 || argv[0] != prog {
			t.Fatalf("prog %q argv %q", prog, argv)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid profile: %v", err)
		}
	})
}

// trampoline runs the test binary as the trampoline and returns its combined output.
func trampoline(t *testing.T, p Profile, prog string, args ...string) (string, error) {
	t.Helper()
	targs, err := TrampolineArgs(p, prog, args)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], targs...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

func TestTrampoline(t *testing.T) {
	requireLandlock(t, 1)
	allowed, denied := t.TempDir(), t.TempDir()
	for _, d := range []string{allowed, denied} {
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("content of "+filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Profile{ReadOnly: []string{allowed}}.WithProgram("/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("allowed read", func(t *testing.T) {
		out, err := trampoline(t, p, "/bin/cat", filepath.Join(allowed, "f"))
		if err != nil || !strings.Contains(out, "content of") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
	t.Run("denied read", func(t *testing.T) {
		out, err := trampoline(t, p, "/bin/cat", filepath.Join(denied, "f"))
		if err == nil || !strings.Contains(out, "Permission denied") || strings.Contains(out, "content of") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
	t.Run("program not an exec path", func(t *testing.T) {
		out, err := trampoline(t, p, "/bin/echo", "hello")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(out, "not beneath any exec path") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
	t.Run("missing path", func(t *testing.T) {
		q := p
		q.ReadOnly = append(q.ReadOnly, filepath.Join(denied, "missing"))
		out, err := trampoline(t, q, "/bin/cat", filepath.Join(allowed, "f"))
		if err == nil || !strings.Contains(out, "read-only path") || !strings.Contains(out, "no such file") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
	t.Run("script", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "s.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho script ran\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		q, err := Profile{}.WithProgram(script)
		if err != nil {
			t.Fatal(err)
		}
		out, err := trampoline(t, q, script)
		if err != nil || !strings.Contains(out, "script ran") {
			t.Fatalf("err %v, output %q", err, out)
		}
	})
}
