package modelguard

// The real Codex CLI (npm @openai/codex, Responses API over SSE) with its base URL pointed at
// `shield proxy model` (the real binary) in front of the scripted model server, deciding through
// a real appliance. Codex runs without its own sandbox or approvals: only the guard stands
// between the model and the shell. Run by deploy/test-clients/guard.sh (make test-clients),
// which installs Codex and sets SHIELD_TEST_CODEX and SHIELD_BIN.

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
func startGuardProcess(t *testing.T, bin, socket, work, upstream string) (string, *bytes.Buffer) {
	addr := freePort(t)
	var log bytes.Buffer
	cmd := exec.Command(bin, "proxy", "model", "--listen", addr, "--upstream", upstream, "--api", OpenAIResponses,
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

func TestRealCodexBehindGuard(t *testing.T) {
	codex := os.Getenv("SHIELD_TEST_CODEX")
	if codex == "" {
		t.Skip("SHIELD_TEST_CODEX is not set: deploy/test-clients/guard.sh (make test-clients) installs Codex from npm and sets it")
	}
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
			if !strings.Contains(out, "Shield stopped the tool call exec_command") || !strings.Contains(out, "cel:") {
				t.Errorf("Codex did not show which call was stopped and why:\n%s", out)
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
				t.Errorf("Codex did not show why the call was stopped:\n%s", out)
			}
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			if sc.down {
				app.stop()
			}
			up, err := scripted.Start([]scripted.Step{scripted.Call("exec_command", map[string]string{"cmd": sc.cmd})}, "finished")
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			guard, glog := startGuardProcess(t, bin, app.socket, work, up.URL)
			home := filepath.Join(t.TempDir(), "codex-home")
			os.MkdirAll(home, 0o700)
			cfg := fmt.Sprintf("model = \"fake-model\"\nmodel_provider = \"guarded\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n"+
				"[model_providers.guarded]\nname = \"guarded\"\nbase_url = %q\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\n[projects.%q]\ntrust_level = \"trusted\"\n",
				guard+"/v1", work)
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, codex, "exec", "--skip-git-repo-check", "do the task")
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "OPENAI_API_KEY=dummy")
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("codex did not finish: %s\nguard:\n%s", out, glog.String())
			}
			if len(up.Requests()) == 0 {
				t.Fatalf("codex never reached the model through the guard (exit %v):\n%s\nguard:\n%s", err, out, glog.String())
			}
			sc.check(t, string(out))
			if t.Failed() || os.Getenv("SHIELD_TEST_VERBOSE") != "" {
				t.Logf("codex (exit %v):\n%s\nguard:\n%s", err, out, glog.String())
			}
		})
	}
}
