package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/sandbox"
)

// A secret of the engine's environment must not reach the agent; the model key the agent is told
// to read, the allow-listed basics and the agent's own variables must.
func TestAgentEnvironment(t *testing.T) {
	t.Setenv("SHIELD_TEST_ENGINE_SECRET", "engine-secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("SHIELD_TEST_MODEL_KEY", "model-key")
	t.Setenv("LC_TIME", "C")
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("SHIELD_AGENT_TOKEN", "inherited-token")
	s := &Supervisor{ShieldBin: "/usr/bin/env", AgentArgs: []string{"--llm-provider", "openai", "--llm-api-key-env", "SHIELD_TEST_MODEL_KEY"}}
	cmd, err := s.agentCommand(context.Background(), sandbox.Profile{}, nil, "SHIELD_AGENT_TOKEN=tok", "SHIELD_AGENT_ID=a1")
	if err != nil {
		t.Fatal(err)
	}
	// Run env(1) with exactly the environment the agent would get.
	cmd.Path, cmd.Args, cmd.ExtraFiles = "/usr/bin/env", []string{"env"}, nil
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, secret := range []string{"engine-secret", "aws-secret", "inherited-token"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("the agent's environment holds %q:\n%s", secret, out.String())
		}
	}
	for _, want := range []string{"SHIELD_TEST_MODEL_KEY=model-key", "LC_TIME=C", "PATH=/usr/bin:/bin", "SHIELD_AGENT_TOKEN=tok", "SHIELD_AGENT_ID=a1"} {
		if !slices.Contains(got, want) {
			t.Errorf("the agent's environment lacks %s:\n%s", want, out.String())
		}
	}
}

func TestAgentEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		set     []string
		want    []string
	}{
		{name: "allow-list only",
			environ: []string{"PATH=/p", "HOME=/h", "OPENAI_API_KEY=k", "SHIELD_WEBHOOK_SECRET=s", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TMPDIR=/t", "LD_PRELOAD=/evil.so"},
			want:    []string{"PATH=/p", "HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TMPDIR=/t"}},
		{name: "the named API key variable",
			environ: []string{"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=a"}, args: []string{"--llm-api-key-env=OPENAI_API_KEY"},
			want: []string{"OPENAI_API_KEY=k", "PATH=" + defaultAgentPath}},
		{name: "set wins over inherited",
			environ: []string{"PATH=/p", "SHIELD_AGENT_ID=old"}, args: []string{"--llm-api-key-env", "SHIELD_AGENT_ID"}, set: []string{"SHIELD_AGENT_ID=new"},
			want: []string{"PATH=/p", "SHIELD_AGENT_ID=new"}},
		{name: "empty key flag passes nothing",
			environ: []string{"=x", "PATH=/p"}, args: []string{"--llm-api-key-env", ""},
			want: []string{"PATH=/p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, agentEnv(tc.environ, tc.args, tc.set...)); diff != "" {
				t.Errorf("agentEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAgentProfileExcludesStateDir: the agent's profile never grants the state directory, and a
// workspace holding it is refused rather than confined with it.
func TestAgentProfileExcludesStateDir(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "project")
	os.Mkdir(ws, 0o755)
	s := &Supervisor{ShieldBin: os.Args[0], Workspace: ws, Protected: []string{filepath.Join(base, "state")}}
	if _, err := s.AgentProfile(); err != nil {
		t.Fatalf("state dir beside the workspace: %v", err)
	}
	s.Protected = []string{filepath.Join(ws, "var")}
	if _, err := s.AgentProfile(); err == nil || !strings.Contains(err.Error(), "protected") {
		t.Errorf("state dir inside the workspace: AgentProfile = %v, want a refusal", err)
	}
}

// TestSupervisorCleanExitIsNotACrash: agents that exit with status 0 are restarted without
// spending the crash budget; failures still spend it.
func TestSupervisorCleanExitIsNotACrash(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	s := &Supervisor{MaxCrashes: 2, Backoff: time.Millisecond, runAgent: func(context.Context) error {
		runs++
		if runs == 6 {
			cancel()
		}
		return nil
	}}
	if err := s.Run(ctx); err != nil {
		t.Fatalf("Run after %d clean exits: %v", runs, err)
	}
	runs = 0
	s.runAgent = func(context.Context) error { runs++; return errors.New("exit status 1") }
	if err := s.Run(context.Background()); !errors.Is(err, ErrCrashBudget) || runs != 2 {
		t.Errorf("Run with failing agents: %v after %d runs, want the crash budget after 2", err, runs)
	}
}
