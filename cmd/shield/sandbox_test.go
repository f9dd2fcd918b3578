package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestSandboxUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no subcommand", []string{"sandbox"}, 2, "missing subcommand"},
		{"unknown subcommand", []string{"sandbox", "jail"}, 2, `unknown subcommand "jail"`},
		{"exec without command", []string{"sandbox", "exec", "--ro", "/usr"}, 2, "missing command"},
		{"exec bad port", []string{"sandbox", "exec", "--connect", "http", "--", "/bin/true"}, 2, `--connect "http": not a port number`},
		{"exec port out of range", []string{"sandbox", "exec", "--bind", "70000", "--", "/bin/true"}, 2, "not a port number"},
		{"exec missing program", []string{"sandbox", "exec", "--", "/no/such/program"}, 1, "no/such/program"},
		{"probe extra args", []string{"sandbox", "probe", "now"}, 2, "unexpected arguments"},
		{"init without profile", []string{"internal-sandbox-init", "--", "/bin/true"}, 126, "missing --profile"},
		{"canary with args", []string{"internal-sandbox-canary", "x"}, 2, "takes no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}, tt.args)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

func TestSandboxHidden(t *testing.T) {
	var out bytes.Buffer
	printHelp(&out)
	if !strings.Contains(out.String(), "sandbox") || strings.Contains(out.String(), "internal-sandbox") {
		t.Errorf("help output %q", out.String())
	}
}
