package hook

// The real runtimes, driven offline against a scripted model server, with the hooks installed by
// `shield hook install` in front of a real appliance (`shield serve`). Run by `make test-clients`
// (deploy/test-clients/hooks.sh installs the pinned npm packages and sets the variables below).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/internal/scripted"
)

// runtimeEnv names the binaries: SHIELD_TEST_BIN (the shield binary), SHIELD_TEST_CLAUDE (the
// claude CLI), SHIELD_TEST_CODEX (the codex CLI).
type runtimeEnv struct{ shield, claude, codex string }

func needRuntimes(t *testing.T) runtimeEnv {
	t.Helper()
	e := runtimeEnv{os.Getenv("SHIELD_TEST_BIN"), os.Getenv("SHIELD_TEST_CLAUDE"), os.Getenv("SHIELD_TEST_CODEX")}
	if e.shield == "" {
		t.Skip("SHIELD_TEST_BIN is not set: the real-runtime tests run under `make test-clients`, which installs Claude Code and Codex from npm")
	}
	return e
}

// appliance is a `shield serve` process: the hooks reach it on loopback TCP with an agent token;
// approvers use its unix socket (this process's uid, a different identity).
type appliance struct {
	t      testing.TB
	bin    string
	cfg    string
	socket string
	addr   string
	token  string
	cmd    *exec.Cmd
	log    bytes.Buffer
}

func startAppliance(t testing.TB, bin, root, workspace string) *appliance {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &appliance{t: t, bin: bin, addr: l.Addr().String(), token: "hook-runtime-token-0123456789abcdef"}
	l.Close()
	state := filepath.Join(root, "state")
	a.socket = filepath.Join(state, "shield.sock")
	tokens := filepath.Join(root, "tokens")
	if err := os.WriteFile(tokens, []byte(a.token+" agent runtime-hook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.cfg = filepath.Join(root, "shield.yaml")
	cfg := fmt.Sprintf("state_dir: %q\nlisten: [%q]\npolicy:\n  workspace: %q\n  home: %q\nauth:\n  tokens_file: %q\nlog:\n  level: warn\n",
		state, a.addr, workspace, filepath.Join(root, "home"), tokens)
	if err := os.WriteFile(a.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a.start()
	t.Cleanup(a.stop)
	return a
}

func (a *appliance) start() {
	a.t.Helper()
	a.cmd = exec.Command(a.bin, "serve", "--config", a.cfg)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	conn := a.approverConn()
	defer conn.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := shieldv1.NewShieldServiceClient(conn).Health(ctx, &shieldv1.HealthRequest{})
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the appliance did not come up: %v\n%s", err, a.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (a *appliance) stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
	a.cmd = nil
}

func (a *appliance) approverConn() *grpc.ClientConn {
	conn, err := grpc.NewClient("unix://"+a.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		a.t.Fatal(err)
	}
	return conn
}

// approveNext waits for a pending approval requested by the hook's identity and approves it as
// the approver; it returns the approval id, or "" when ctx ends first.
func (a *appliance) approveNext(ctx context.Context) (string, error) { return a.resolveNext(ctx, true) }

// resolveNext is approveNext approving or denying.
func (a *appliance) resolveNext(ctx context.Context, approve bool) (string, error) {
	conn := a.approverConn()
	defer conn.Close()
	ap := shieldv1.NewApprovalServiceClient(conn)
	for {
		pend, err := ap.ListPending(ctx, &shieldv1.ListPendingApprovalsRequest{})
		if err != nil {
			return "", err
		}
		for _, p := range pend.GetApprovals() {
			if p.GetCaller() == "token:runtime-hook" {
				_, err := ap.Resolve(ctx, &shieldv1.ResolveApprovalRequest{Id: p.GetId(), Approve: approve, Comment: "resolved by the test's approver"})
				return p.GetId(), err
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scenario is one runtime run proposing one shell command.
type scenario struct {
	name    string
	command string
	approve bool // approve the escalation the command raises
	down    bool // the appliance is stopped first
	check   func(t *testing.T, work, root string)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func scenarios() []scenario {
	return []scenario{
		{name: "destructive call stopped", command: "rm ../precious.txt && echo deleted", check: func(t *testing.T, work, root string) {
			if !fileExists(filepath.Join(root, "precious.txt")) {
				t.Error("../precious.txt was deleted: the destructive call ran")
			}
		}},
		{name: "harmless call runs", command: "touch created.txt", check: func(t *testing.T, work, root string) {
			if !fileExists(filepath.Join(work, "created.txt")) {
				t.Error("created.txt is missing: the harmless call did not run")
			}
		}},
		{name: "escalation approved by another identity runs", command: "printenv > approved.txt", approve: true, check: func(t *testing.T, work, root string) {
			if !fileExists(filepath.Join(work, "approved.txt")) {
				t.Error("approved.txt is missing: the approved call did not run")
			}
		}},
		{name: "appliance down, nothing runs", command: "touch while-down.txt", down: true, check: func(t *testing.T, work, root string) {
			if fileExists(filepath.Join(work, "while-down.txt")) {
				t.Error("while-down.txt exists: a call ran while the appliance was down")
			}
		}},
	}
}

// runtimeCase knows how to install the hook for one runtime and run it once.
type runtimeCase struct {
	name    string
	envName string // the variable naming bin
	bin     string
	version string
	step    func(command string) scripted.Step
	setup   func(t *testing.T, e runtimeEnv, a *appliance, root, work, modelURL string, hooked bool) []string // returns env
	run     func(ctx context.Context, bin, work string, env []string) *exec.Cmd
	blocked string // what the runtime reports to the model for a blocked call
}

func TestRealRuntimesWithHooks(t *testing.T) {
	e := needRuntimes(t)
	cases := []runtimeCase{
		claudeCase(e, false),
		claudeCase(e, true),
		{
			// The http hook: Claude Code POSTs the hook input to HTTPHandler, which asks the
			// appliance as a token-authenticated agent.
			name: "claude-code-http", envName: "SHIELD_TEST_CLAUDE", bin: e.claude, blocked: "Shield: BLOCK",
			step: func(c string) scripted.Step { return scripted.Call("Bash", map[string]string{"command": c}) },
			setup: func(t *testing.T, e runtimeEnv, a *appliance, root, work, modelURL string, hooked bool) []string {
				home := filepath.Join(root, "claude-home")
				os.MkdirAll(home, 0o700)
				if hooked {
					c, err := client.New(client.Options{Addr: a.addr, Token: a.token, Runtime: string(ClaudeCode)})
					if err != nil {
						t.Fatal(err)
					}
					srv := httptest.NewServer(&HTTPHandler{Decider: c, Hold: 80 * time.Second})
					t.Cleanup(func() { srv.Close(); c.Close() })
					settings := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":".*","hooks":[{"type":"http","url":%q,"timeout":90}]}]}}`, srv.URL+HTTPPath)
					if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				return []string{"CLAUDE_CONFIG_DIR=" + home, "ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=dummy",
					"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
			},
			run: func(ctx context.Context, bin, work string, env []string) *exec.Cmd {
				return exec.CommandContext(ctx, bin, "-p", "do the task", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
			},
		},
		codexCase(e, false),
		codexCase(e, true),
	}
	for _, rc := range cases {
		t.Run(rc.name, func(t *testing.T) {
			if rc.bin == "" {
				t.Skipf("%s is not set (npm could not install the runtime)", rc.envName)
			}
			root := t.TempDir()
			work := filepath.Join(root, "work")
			for _, d := range []string{work, filepath.Join(root, "home")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "precious.txt"), []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			model, err := scripted.Start(nil, "done")
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			a := startAppliance(t, e.shield, root, work)

			// Control: without the hook the runtime does run the destructive call, so a file that
			// survives below survives because of Shield.
			t.Run("control without the hook, the destructive call runs", func(t *testing.T) {
				croot := filepath.Join(root, "control")
				cwork := filepath.Join(croot, "work")
				os.MkdirAll(cwork, 0o755)
				os.WriteFile(filepath.Join(croot, "precious.txt"), []byte("decoy\n"), 0o644)
				env := append(os.Environ(), rc.setup(t, e, a, croot, cwork, model.URL, false)...)
				env = append(env, "HOME="+filepath.Join(root, "home"))
				model.SetScript([]scripted.Step{rc.step("rm ../precious.txt && echo deleted")}, "done")
				ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
				defer cancel()
				cmd := rc.run(ctx, rc.bin, cwork, env)
				cmd.Dir, cmd.Env, cmd.WaitDelay = cwork, env, 5*time.Second
				out, _ := cmd.CombinedOutput()
				if fileExists(filepath.Join(croot, "precious.txt")) {
					t.Errorf("without the hook the destructive call did not run either: the test cannot tell what stopped it\n%s", tail(string(out)))
				}
			})

			env := append(os.Environ(), rc.setup(t, e, a, root, work, model.URL, true)...)
			env = append(env, "HOME="+filepath.Join(root, "home"), "SHIELD_TEST_HOOK_TOKEN="+a.token)
			for _, sc := range scenarios() {
				t.Run(sc.name, func(t *testing.T) {
					if sc.down {
						a.stop()
					}
					model.SetScript([]scripted.Step{rc.step(sc.command)}, "done")
					model.Reset()
					ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
					defer cancel()
					approved := make(chan string, 1)
					if sc.approve {
						go func() {
							id, err := a.approveNext(ctx)
							if err != nil {
								t.Errorf("approving: %v", err)
							}
							approved <- id
						}()
					}
					cmd := rc.run(ctx, rc.bin, work, env)
					cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					start := time.Now()
					err := cmd.Run()
					t.Logf("%s ran %.1fs (exit %v)", rc.name, time.Since(start).Seconds(), err)
					if ctx.Err() != nil {
						t.Fatalf("the runtime did not finish in time:\n%s", tail(out.String()))
					}
					if sc.approve {
						if id := <-approved; id == "" {
							t.Error("no approval was requested")
						}
					}
					sc.check(t, work, root)
					if n := len(model.Results()); n != 1 {
						t.Errorf("the model saw %d tool results, want 1 (requests %+v)\n%s", n, model.Requests(), tail(out.String()))
					}
					if !sc.approve && !sc.down && strings.Contains(sc.name, "destructive") {
						if r := model.Results(); len(r) == 0 || !strings.Contains(r[0], rc.blocked) || !strings.Contains(r[0], "cel:") {
							t.Errorf("the model was not told the rule that blocked it: %q", r)
						}
					}
					t.Logf("the model was told: %q", model.Results())
					if t.Failed() {
						t.Logf("runtime output:\n%s", tail(out.String()))
					}
				})
			}
			a.stop()
			checkAudit(t, e.shield, filepath.Join(root, "state"), rc.runtime())
		})
	}
}

// runtime is the runtime name the hook sends for this case.
func (rc runtimeCase) runtime() string {
	if strings.HasPrefix(rc.name, "codex") {
		return string(Codex)
	}
	return string(ClaudeCode)
}

// checkAudit reads the appliance's audit trail: it verifies, and the hook's decisions are in it
// with the runtime named: the destructive call blocked, the harmless one allowed, the escalated
// one allowed by a human (tier 3) after its approval.
func checkAudit(t *testing.T, shield, state, runtime string) {
	t.Helper()
	dir := filepath.Join(state, "audit")
	if out, err := exec.Command(shield, "audit", "verify", "--state-dir", state, "--pubkey", filepath.Join(state, "keys", "audit.key.pub")).CombinedOutput(); err != nil {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
	out, err := exec.Command(shield, "audit", "query", "--dir", dir, "--json", "--limit", "10000").Output()
	if err != nil {
		t.Fatalf("audit query: %v", err)
	}
	type payload struct {
		Runtime   string `json:"runtime"`
		Decision  string `json:"decision"`
		Tier      int    `json:"tier"`
		Tool      string `json:"tool"`
		Arguments struct {
			Command string `json:"command"`
		} `json:"arguments"`
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec struct {
			Type    string  `json:"type"`
			Payload payload `json:"payload"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "decision" || rec.Payload.Runtime != runtime {
			continue
		}
		p := rec.Payload
		seen[fmt.Sprintf("%s %s tier%d", p.Arguments.Command, p.Decision, p.Tier)] = true
		seen[fmt.Sprintf("%s %s", p.Arguments.Command, p.Decision)] = true
	}
	for _, want := range []string{"rm ../precious.txt && echo deleted BLOCK", "touch created.txt ALLOW",
		"printenv > approved.txt ESCALATE", "printenv > approved.txt ALLOW tier3"} {
		if !seen[want] {
			t.Errorf("no audit record %q with runtime %s", want, runtime)
		}
	}
}

// claudeCase installs the command hook with `shield hook install claude-code`, for the user
// ($CLAUDE_CONFIG_DIR/settings.json) or with --project (work/.claude/settings.json).
func claudeCase(e runtimeEnv, project bool) runtimeCase {
	name := "claude-code"
	if project {
		name += "-project"
	}
	return runtimeCase{
		name: name, envName: "SHIELD_TEST_CLAUDE", bin: e.claude, blocked: "Shield: BLOCK",
		step: func(c string) scripted.Step { return scripted.Call("Bash", map[string]string{"command": c}) },
		setup: func(t *testing.T, e runtimeEnv, a *appliance, root, work, modelURL string, hooked bool) []string {
			home := filepath.Join(root, "claude-home")
			os.MkdirAll(home, 0o700)
			if hooked {
				args := []string{"claude-code", "--addr", a.addr, "--token-env", "SHIELD_TEST_HOOK_TOKEN", "--timeout", "90"}
				if project {
					args = append(args, "--project", work)
				}
				install(t, e.shield, []string{"CLAUDE_CONFIG_DIR=" + home}, args...)
			}
			return []string{"CLAUDE_CONFIG_DIR=" + home, "ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=dummy",
				"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
		},
		// Bash is pre-allowed: Claude's own permission check would otherwise refuse the calls and
		// hide whether the hook stopped them.
		run: func(ctx context.Context, bin, work string, env []string) *exec.Cmd {
			return exec.CommandContext(ctx, bin, "-p", "do the task", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
		},
	}
}

// codexCase installs the command hook with `shield hook install codex`, for the user
// ($CODEX_HOME/hooks.json) or with --project (work/.codex/hooks.json; the install then also marks
// the project trusted, which the base config here does not).
func codexCase(e runtimeEnv, project bool) runtimeCase {
	name := "codex"
	if project {
		name += "-project"
	}
	return runtimeCase{
		name: name, envName: "SHIELD_TEST_CODEX", bin: e.codex, blocked: "Command blocked by PreToolUse hook",
		step: func(c string) scripted.Step { return scripted.Call("exec_command", map[string]string{"cmd": c}) },
		setup: func(t *testing.T, e runtimeEnv, a *appliance, root, work, modelURL string, hooked bool) []string {
			home := filepath.Join(root, "codex-home")
			os.MkdirAll(home, 0o700)
			// No sandbox: only the hook stands between the model and the shell.
			base := fmt.Sprintf("model = \"fake-model\"\nmodel_provider = \"scripted\"\napproval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\n"+
				"[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n", modelURL+"/v1")
			if !project {
				base += fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", work)
			}
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(base), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"CODEX_HOME=" + home, "OPENAI_API_KEY=dummy"}
			if !hooked {
				return env
			}
			// --codex-bin: the install asks this Codex whether it trusts the hook.
			args := []string{"codex", "--codex-home", home, "--addr", a.addr, "--token-env", "SHIELD_TEST_HOOK_TOKEN", "--timeout", "90", "--codex-bin", e.codex}
			if project {
				args = append(args, "--project", work)
			}
			install(t, e.shield, nil, args...)
			return env
		},
		run: func(ctx context.Context, bin, work string, env []string) *exec.Cmd {
			return exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "do the task")
		},
	}
}

// install runs `shield hook install` twice (the second must change nothing the test depends on).
func install(t *testing.T, shield string, env []string, args ...string) {
	t.Helper()
	for i := 0; i < 2; i++ {
		cmd := exec.Command(shield, append([]string{"hook", "install"}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("shield hook install %v: %v\n%s", args, err, out)
		}
		if i == 0 {
			t.Logf("%s", out)
		}
	}
}

func tail(s string) string {
	if len(s) > 6000 {
		return "…" + s[len(s)-6000:]
	}
	return s
}

// MCP tools go through the same hooks: the call reaches the appliance as mcp__fs__write_file,
// which the default bundle does not know, so it escalates; approved by the approver it runs (the
// MCP server writes the file), denied it never reaches the server.
func TestRealRuntimesMCPThroughHooks(t *testing.T) {
	e := needRuntimes(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type mcpCase struct {
		rc     runtimeCase
		step   func(path string) scripted.Step
		config func(t *testing.T, root string, env []string) ([]string, []string) // env, extra args
	}
	cases := []mcpCase{
		{
			rc: claudeCase(e, false),
			step: func(path string) scripted.Step {
				return scripted.Call("mcp__fs__write_file", map[string]string{"path": path, "content": "via mcp"})
			},
			config: func(t *testing.T, root string, env []string) ([]string, []string) {
				cfg := filepath.Join(root, "mcp.json")
				b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": map[string]any{"type": "stdio", "command": self,
					"args": []string{}, "env": map[string]string{"SHIELD_TEST_MCP_SERVER": "1"}}}})
				os.WriteFile(cfg, b, 0o600)
				// MCP tools in the tool list itself, not behind ToolSearch: the scripted model calls them directly.
				// The tool is pre-allowed like Bash: Claude's own rules would otherwise refuse it
				// after Shield's silent ALLOW.
				return append(env, "ENABLE_TOOL_SEARCH=false"), []string{"--mcp-config", cfg, "--allowedTools", "mcp__fs__write_file"}
			},
		},
		{
			rc: codexCase(e, false),
			step: func(path string) scripted.Step {
				b, _ := json.Marshal(map[string]string{"path": path, "content": "via mcp"})
				return scripted.Step{Tool: "write_file", Namespace: "mcp__fs", Args: b}
			},
			config: func(t *testing.T, root string, env []string) ([]string, []string) {
				home := filepath.Join(root, "codex-home", "config.toml")
				f, err := os.OpenFile(home, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				old, _ := io.ReadAll(f)
				// The MCP server table goes after the top-level keys (a TOML table runs to the next header).
				table := fmt.Sprintf("[mcp_servers.fs]\ncommand = %q\nargs = []\nenv = { SHIELD_TEST_MCP_SERVER = \"1\" }\n\n", self)
				updated := strings.Replace(string(old), "[model_providers.scripted]", table+"[model_providers.scripted]", 1)
				f.Truncate(0)
				f.WriteAt([]byte(updated), 0)
				return env, nil
			},
		},
	}
	for _, mc := range cases {
		rc := mc.rc
		t.Run(rc.name, func(t *testing.T) {
			if rc.bin == "" {
				t.Skipf("%s is not set (npm could not install the runtime)", rc.envName)
			}
			root := t.TempDir()
			work := filepath.Join(root, "work")
			os.MkdirAll(work, 0o755)
			os.MkdirAll(filepath.Join(root, "home"), 0o755)
			model, err := scripted.Start(nil, "done")
			if err != nil {
				t.Fatal(err)
			}
			defer model.Close()
			a := startAppliance(t, e.shield, root, work)
			env := append(os.Environ(), rc.setup(t, e, a, root, work, model.URL, true)...)
			env = append(env, "HOME="+filepath.Join(root, "home"), "SHIELD_TEST_HOOK_TOKEN="+a.token)
			env, extra := mc.config(t, root, env)
			for _, approve := range []bool{true, false} {
				name := map[bool]string{true: "approved MCP call runs", false: "denied MCP call never reaches the server"}[approve]
				t.Run(name, func(t *testing.T) {
					target := filepath.Join(work, fmt.Sprintf("mcp-%v.txt", approve))
					model.SetScript([]scripted.Step{mc.step(target)}, "done")
					model.Reset()
					ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
					defer cancel()
					resolved := make(chan string, 1)
					go func() {
						id, err := a.resolveNext(ctx, approve)
						if err != nil {
							t.Errorf("resolving: %v", err)
						}
						resolved <- id
					}()
					cmd := rc.run(ctx, rc.bin, work, env)
					cmd.Args = append(cmd.Args, extra...)
					cmd.Dir, cmd.Env, cmd.WaitDelay = work, env, 5*time.Second
					out, _ := cmd.CombinedOutput()
					if ctx.Err() != nil {
						t.Fatalf("the runtime did not finish in time:\n%s", tail(string(out)))
					}
					if id := <-resolved; id == "" {
						t.Fatalf("no approval was requested for the MCP call (results %q)\n%s", model.Results(), tail(string(out)))
					}
					if fileExists(target) != approve {
						t.Errorf("%s exists: %v, want %v (results %q)\n%s", target, fileExists(target), approve, model.Results(), tail(string(out)))
					}
					t.Logf("the model was told: %q", model.Results())
				})
			}
		})
	}
}
