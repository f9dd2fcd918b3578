package modelguard

// Real runtimes (npm-installed: Codex CLI on the Responses API, Claude Code on the Messages API,
// both streamed) with their base URL pointed at `shield proxy model` (the real binary) in front
// of the scripted model server, deciding through a real appliance. The runtimes run without
// their own sandbox or approvals: only the guard stands between the model and the shell. Run by
// deploy/test-clients/guard.sh (make test-clients), which installs them and sets
// SHIELD_TEST_CODEX, SHIELD_TEST_CLAUDE and SHIELD_BIN.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/internal/scripted"
)

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startGuardProcess runs `shield proxy model` and waits until it accepts connections.
func startGuardProcess(t *testing.T, bin, api, socket, work, upstream string) (string, *bytes.Buffer) {
	addr := freePort(t)
	var log bytes.Buffer
	cmd := exec.Command(bin, "proxy", "model", "--listen", addr, "--upstream", upstream, "--api", api,
		"--socket", socket, "--workspace", work, "--hold", "5s")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return "http://" + addr, &log
		}
		if i > 300 {
			t.Fatalf("shield proxy model did not come up: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// realRuntime is one npm-installed runtime and how to run it against a model URL.
type realRuntime struct {
	name, envName, api, tool string
	step                     func(cmd string) scripted.Step
	run                      func(ctx context.Context, bin, home, work, modelURL string) *exec.Cmd
}

var realRuntimes = []realRuntime{
	{name: "codex", envName: "SHIELD_TEST_CODEX", api: OpenAIResponses, tool: "exec_command",
		step: func(c string) scripted.Step { return scripted.Call("exec_command", map[string]string{"cmd": c}) },
		run: func(ctx context.Context, bin, home, work, modelURL string) *exec.Cmd {
			cfg := fmt.Sprintf("model = \"fake-model\"\nmodel_provider = \"guarded\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n"+
				"[model_providers.guarded]\nname = \"guarded\"\nbase_url = %q\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\n[projects.%q]\ntrust_level = \"trusted\"\n",
				modelURL+"/v1", work)
			os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
			cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "do the task")
			cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "OPENAI_API_KEY=dummy")
			return cmd
		}},
	{name: "claude-code", envName: "SHIELD_TEST_CLAUDE", api: Anthropic, tool: "Bash",
		step: func(c string) scripted.Step { return scripted.Call("Bash", map[string]string{"command": c}) },
		run: func(ctx context.Context, bin, home, work, modelURL string) *exec.Cmd {
			cmd := exec.CommandContext(ctx, bin, "-p", "do the task", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
			cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+home, "ANTHROPIC_BASE_URL="+modelURL, "ANTHROPIC_API_KEY=dummy",
				"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
			return cmd
		}},
}

func TestRealRuntimesBehindGuard(t *testing.T) {
	any := false
	for _, rt := range realRuntimes {
		if os.Getenv(rt.envName) != "" {
			any = true
		}
	}
	if !any {
		t.Skip("SHIELD_TEST_CODEX / SHIELD_TEST_CLAUDE are not set: deploy/test-clients/guard.sh (make test-clients) installs the runtimes from npm and sets them")
	}
	for _, rt := range realRuntimes {
		t.Run(rt.name, func(t *testing.T) {
			rbin := os.Getenv(rt.envName)
			if rbin == "" {
				t.Skip(rt.envName + " is not set: this runtime did not install")
			}
			testRuntimeBehindGuard(t, rt, rbin)
		})
	}
}

func testRuntimeBehindGuard(t *testing.T, rt realRuntime, rbin string) {
	bin := shieldBinary(t)
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(root, "precious.txt")
	os.WriteFile(precious, []byte("keep me\n"), 0o644)
	app := startRealAppliance(t, work)
	for _, sc := range []struct {
		name, cmd string
		down      bool
		check     func(t *testing.T, out string)
	}{
		{name: "destructive call stopped", cmd: "rm -f ../precious.txt && echo deleted", check: func(t *testing.T, out string) {
			if _, err := os.Stat(precious); err != nil {
				t.Error("../precious.txt was deleted: the destructive call ran")
			}
			if !strings.Contains(out, "Shield stopped the tool call "+rt.tool) || !strings.Contains(out, "cel:") {
				t.Errorf("the runtime did not show which call was stopped and why:\n%s", out)
			}
		}},
		{name: "harmless call runs", cmd: "touch created.txt", check: func(t *testing.T, out string) {
			if _, err := os.Stat(filepath.Join(work, "created.txt")); err != nil {
				t.Errorf("created.txt is missing: the harmless call did not run\n%s", out)
			}
		}},
		{name: "appliance down, nothing runs", cmd: "touch while-down.txt", down: true, check: func(t *testing.T, out string) {
			if _, err := os.Stat(filepath.Join(work, "while-down.txt")); err == nil {
				t.Error("while-down.txt exists: a call ran while the appliance was down")
			}
			if !strings.Contains(out, "could not decide") {
				t.Errorf("the runtime did not show why the call was stopped:\n%s", out)
			}
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			if sc.down {
				app.stop()
			}
			up, err := scripted.Start([]scripted.Step{rt.step(sc.cmd)}, "finished")
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			guard, glog := startGuardProcess(t, bin, rt.api, app.socket, work, up.URL)
			home := filepath.Join(t.TempDir(), "home")
			os.MkdirAll(home, 0o700)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := rt.run(ctx, rbin, home, work, guard)
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("%s did not finish: %s\nguard:\n%s", rt.name, out, glog.String())
			}
			if len(up.Requests()) == 0 {
				t.Fatalf("%s never reached the model through the guard (exit %v):\n%s\nguard:\n%s", rt.name, err, out, glog.String())
			}
			sc.check(t, string(out))
			if t.Failed() || os.Getenv("SHIELD_TEST_VERBOSE") != "" {
				t.Logf("%s (exit %v):\n%s\nguard:\n%s", rt.name, err, out, glog.String())
			}
		})
	}
}
