package codex

// Real Codex runtimes (npm-installed) through the real `shield proxy codex` and
// `shield proxy codex-proto` binaries, against a real appliance (`shield serve`) and a scripted
// model server on 127.0.0.1. Run by deploy/test-clients/proxies.sh (make test-clients), which
// installs the runtimes and sets SHIELD_TEST_CLIENTS_DIR and SHIELD_BIN.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/internal/scripted"
)

type realEnv struct {
	t         *testing.T
	bin       string // shield
	codex     string
	work, ws  string
	state     string
	addr      string
	token     string
	serve     *exec.Cmd
	configYML string
}

func newRealEnv(t *testing.T, codexVersion string) *realEnv {
	dir, bin := os.Getenv("SHIELD_TEST_CLIENTS_DIR"), os.Getenv("SHIELD_BIN")
	if dir == "" || bin == "" {
		t.Skip("needs npm-installed runtimes: SHIELD_TEST_CLIENTS_DIR and SHIELD_BIN are set by deploy/test-clients/proxies.sh (make test-clients)")
	}
	codex := filepath.Join(dir, "codex-"+codexVersion, "node_modules", ".bin", "codex")
	if _, err := os.Stat(codex); err != nil {
		t.Fatalf("codex %s not installed under %s: %v", codexVersion, dir, err)
	}
	work := t.TempDir()
	e := &realEnv{t: t, bin: bin, codex: codex, work: work, ws: filepath.Join(work, "ws"), state: filepath.Join(work, "state"),
		token: fmt.Sprintf("codex-proxy-token-%d", time.Now().UnixNano())}
	for _, d := range []string{filepath.Join(e.ws, ".git", "hooks"), e.state, filepath.Join(work, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = l.Addr().String()
	l.Close()
	os.WriteFile(filepath.Join(work, "tokens"), []byte(e.token+" agent codex-runtime\n"), 0o600)
	e.configYML = filepath.Join(work, "shield.yaml")
	os.WriteFile(e.configYML, []byte(fmt.Sprintf("state_dir: %s\nlisten: [%q]\npolicy:\n  workspace: %s\nauth:\n  tokens_file: %s\nlog:\n  format: text\n",
		e.state, e.addr, e.ws, filepath.Join(work, "tokens"))), 0o600)
	e.startAppliance()
	t.Cleanup(e.stopAppliance)
	return e
}

func (e *realEnv) startAppliance() {
	e.t.Helper()
	log, _ := os.OpenFile(filepath.Join(e.work, "serve.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	e.serve = exec.Command(e.bin, "serve", "--config", e.configYML)
	e.serve.Stderr, e.serve.Stdout = log, log
	if err := e.serve.Start(); err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		if exec.Command(e.bin, "approvals", "list", "--state-dir", e.state).Run() == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(e.work, "serve.log"))
	e.t.Fatalf("the appliance did not start:\n%s", b)
}

func (e *realEnv) stopAppliance() {
	if e.serve == nil || e.serve.Process == nil {
		return
	}
	e.serve.Process.Signal(syscall.SIGTERM)
	e.serve.Wait()
	e.serve = nil
}

// approveNext has root on the unix socket (an identity other than the proxy's token) approve
// the first pending request.
func (e *realEnv) approveNext(done <-chan struct{}) (string, error) {
	for i := 0; i < 1200; i++ {
		select {
		case <-done:
			return "", fmt.Errorf("the turn ended with no approval request")
		default:
		}
		out, _ := exec.Command(e.bin, "approvals", "list", "--json", "--state-dir", e.state).Output()
		var a struct {
			ID string `json:"id"`
		}
		for _, line := range strings.Split(string(out), "\n") {
			if json.Unmarshal([]byte(line), &a) == nil && strings.HasPrefix(a.ID, "apr_") {
				if b, err := exec.Command(e.bin, "approvals", "approve", a.ID, "--comment", "checked by the test", "--state-dir", e.state).CombinedOutput(); err != nil {
					return "", fmt.Errorf("approve %s: %v: %s", a.ID, err, b)
				}
				return a.ID, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("no approval request appeared")
}

func (e *realEnv) codexHome(model *scripted.Server, wire, policy string) string {
	home := filepath.Join(e.work, "codex-home-"+wire)
	os.MkdirAll(home, 0o700)
	cfg := fmt.Sprintf(`model = "fake-model"
model_provider = "fake"
approval_policy = %q
sandbox_mode = "workspace-write"
[model_providers.fake]
name = "local scripted"
base_url = "%s/v1"
env_key = "OPENAI_API_KEY"
wire_api = %q
[projects.%q]
trust_level = "trusted"
`, policy, model.URL, wire, e.ws)
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
	return home
}

// proxied runs `shield proxy RUNTIME -- codex SUB` and returns its stdin and a line channel.
type proxied struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out chan map[string]any
	mu  sync.Mutex
	log []string
}

func (e *realEnv) runProxy(runtime, home string, sub ...string) *proxied {
	e.t.Helper()
	args := append([]string{"proxy", runtime, "--addr", e.addr, "--workspace", e.ws, "--", e.codex}, sub...)
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), "SHIELD_TOKEN="+e.token, "CODEX_HOME="+home, "OPENAI_API_KEY=dummy", "HOME="+filepath.Join(e.work, "home"))
	logName := filepath.Join(e.work, fmt.Sprintf("%s-%d.stderr", runtime, time.Now().UnixNano()))
	stderr, _ := os.OpenFile(logName, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	cmd.Stderr = stderr
	in, _ := cmd.StdinPipe()
	outR, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &proxied{cmd: cmd, in: in, out: make(chan map[string]any, 1024)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.out <- m
			}
		}
		close(p.out)
	}()
	e.t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if e.t.Failed() || testing.Verbose() {
			b, _ := os.ReadFile(logName)
			e.t.Logf("proxy stderr (decisions):\n%s", tail(grepLines(string(b), "shield proxy"), 4000))
		}
	})
	return p
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (p *proxied) send(t *testing.T, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// until reads messages until match returns true (or 120 s pass), handing each to seen.
func (p *proxied) until(t *testing.T, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(120 * time.Second)
	for {
		select {
		case m, ok := <-p.out:
			if !ok {
				t.Fatal("the proxy's output ended")
			}
			if match(m) {
				return m
			}
		case <-deadline:
			t.Fatal("no matching message within 120 s")
		}
	}
}

// escalating runs code through an interpreter: outside the positive-security envelope of known
// effects, so the default bundle escalates it (rego:exec.outside-envelope). Node is there: the
// runtimes need it.
const escalating = `node -e "require('fs').writeFileSync('escalated.txt','approved')"`

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestRealCodexAppServer(t *testing.T) {
	e := newRealEnv(t, "0.169.0")
	os.WriteFile(filepath.Join(e.ws, "keep.txt"), []byte("keep\n"), 0o644)
	model, err := scripted.Start([]scripted.Step{
		scripted.Call("exec_command", map[string]any{"cmd": "rm -rf " + e.ws}),
		scripted.Call("exec_command", map[string]any{"cmd": "touch ok.txt"}),
		scripted.Call("exec_command", map[string]any{"cmd": escalating}),
	}, "done")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	home := e.codexHome(model, "responses", "on-request")
	p := e.runProxy("codex", home, "app-server")

	p.send(t, map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "shield-test", "version": "0"}, "capabilities": map[string]any{"experimentalApi": true}}})
	p.until(t, func(m map[string]any) bool { return m["id"] == 1.0 })
	p.send(t, map[string]any{"method": "initialized"})
	startThread := func(id int) string {
		p.send(t, map[string]any{"id": id, "method": "thread/start", "params": map[string]any{"cwd": e.ws, "approvalPolicy": "never", "sandbox": "workspace-write"}})
		r := p.until(t, func(m map[string]any) bool { return m["id"] == float64(id) })
		res, _ := r["result"].(map[string]any)
		th, _ := res["thread"].(map[string]any)
		if th == nil {
			t.Fatalf("thread/start answered %v", r)
		}
		return th["id"].(string)
	}
	turn := func(id int, thread string, approve bool) {
		p.send(t, map[string]any{"id": id, "method": "turn/start", "params": map[string]any{"threadId": thread, "input": []any{map[string]any{"type": "text", "text": "go"}}}})
		done := make(chan struct{})
		var approved string
		var aerr error
		var wg sync.WaitGroup
		if approve {
			wg.Add(1)
			go func() { defer wg.Done(); approved, aerr = e.approveNext(done) }()
		}
		p.until(t, func(m map[string]any) bool {
			if m["method"] != nil && strings.HasSuffix(m["method"].(string), "requestApproval") {
				t.Errorf("the client was asked %v; Shield answers approvals itself", m["method"])
			}
			return m["method"] == "turn/completed"
		})
		close(done)
		wg.Wait()
		if aerr != nil {
			t.Fatal(aerr)
		}
		if approve {
			t.Logf("escalation approved by root on the socket: %s", approved)
		}
	}
	// Turn 1: rm -rf of the workspace is declined (keep.txt survives), touch runs, code run by
	// an interpreter escalates and runs once approved. The client asked for approvalPolicy "never": the
	// proxy made it "untrusted", or Codex would have asked nobody.
	turn(3, startThread(2), true)
	if !exists(filepath.Join(e.ws, "keep.txt")) {
		t.Fatal("keep.txt is gone: the rm -rf ran")
	}
	if !exists(filepath.Join(e.ws, "ok.txt")) {
		t.Fatalf("the harmless touch did not run; the model was told %q", model.Results())
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "escalated.txt")); string(b) != "approved" {
		t.Fatalf("the approved escalation did not run (escalated.txt %q); the model was told %q", b, model.Results())
	}
	if r := model.Results(); len(r) < 1 || !strings.Contains(strings.ToLower(r[0]), "reject") {
		t.Errorf("the model was not told of the refusal: %q", r)
	}

	// A client-initiated command/exec (Codex runs those with no approval at all) is decided.
	p.send(t, map[string]any{"id": 10, "method": "command/exec", "params": map[string]any{"command": []string{"bash", "-c", "rm -rf " + e.ws}, "cwd": e.ws}})
	r := p.until(t, func(m map[string]any) bool { return m["id"] == 10.0 })
	if r["error"] == nil || !exists(filepath.Join(e.ws, "keep.txt")) {
		t.Fatalf("command/exec rm -rf answered %v", r)
	}
	p.send(t, map[string]any{"id": 11, "method": "command/exec", "params": map[string]any{"command": []string{"bash", "-c", "echo ran > cmdexec.txt"}, "cwd": e.ws}})
	if r := p.until(t, func(m map[string]any) bool { return m["id"] == 11.0 }); r["result"] == nil || !exists(filepath.Join(e.ws, "cmdexec.txt")) {
		t.Fatalf("harmless command/exec answered %v", r)
	}

	// The appliance down: nothing runs.
	e.stopAppliance()
	model.SetScript([]scripted.Step{scripted.Call("exec_command", map[string]any{"cmd": "touch down.txt"})}, "done")
	turn(13, startThread(12), false)
	if exists(filepath.Join(e.ws, "down.txt")) {
		t.Fatal("down.txt was created with the appliance down")
	}
	p.send(t, map[string]any{"id": 14, "method": "fs/writeFile", "params": map[string]any{"path": filepath.Join(e.ws, "down2.txt"), "dataBase64": "eA=="}})
	if r := p.until(t, func(m map[string]any) bool { return m["id"] == 14.0 }); r["error"] == nil || exists(filepath.Join(e.ws, "down2.txt")) {
		t.Fatalf("fs/writeFile with the appliance down answered %v", r)
	}
}

func TestRealCodexProto(t *testing.T) {
	e := newRealEnv(t, "0.42.0")
	os.WriteFile(filepath.Join(e.ws, "keep.txt"), []byte("keep\n"), 0o644)
	model, err := scripted.Start([]scripted.Step{
		scripted.Call("shell", map[string]any{"command": []string{"bash", "-lc", "rm -rf " + e.ws}}),
		scripted.Call("shell", map[string]any{"command": []string{"bash", "-lc", "touch ok.txt"}}),
		scripted.Call("shell", map[string]any{"command": []string{"bash", "-lc", escalating}}),
	}, "done")
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	home := e.codexHome(model, "chat", "untrusted")
	session := func(approve bool) {
		p := e.runProxy("codex-proto", home, "proto")
		p.until(t, func(m map[string]any) bool { return msgType(m) == "session_configured" })
		p.send(t, map[string]any{"id": "t-1", "op": map[string]any{"type": "user_input", "items": []any{map[string]any{"type": "text", "text": "go"}}}})
		done := make(chan struct{})
		var aerr error
		var wg sync.WaitGroup
		if approve {
			wg.Add(1)
			go func() { defer wg.Done(); _, aerr = e.approveNext(done) }()
		}
		p.until(t, func(m map[string]any) bool {
			if msgType(m) == "exec_approval_request" {
				t.Errorf("the client was shown an approval request; Shield answers them itself")
			}
			return msgType(m) == "task_complete" || msgType(m) == "turn_aborted"
		})
		close(done)
		wg.Wait()
		if aerr != nil {
			t.Fatal(aerr)
		}
		p.send(t, map[string]any{"id": "t-2", "op": map[string]any{"type": "shutdown"}})
	}
	session(true)
	if !exists(filepath.Join(e.ws, "keep.txt")) {
		t.Fatal("keep.txt is gone: the rm -rf ran")
	}
	if !exists(filepath.Join(e.ws, "ok.txt")) {
		t.Fatalf("the harmless touch did not run; the model was told %q", model.Results())
	}
	if b, _ := os.ReadFile(filepath.Join(e.ws, "escalated.txt")); string(b) != "approved" {
		t.Fatalf("the approved escalation did not run (escalated.txt %q); the model was told %q", b, model.Results())
	}
	e.stopAppliance()
	model.SetScript([]scripted.Step{scripted.Call("shell", map[string]any{"command": []string{"bash", "-lc", "touch down.txt"}})}, "done")
	session(false)
	if exists(filepath.Join(e.ws, "down.txt")) {
		t.Fatal("down.txt was created with the appliance down")
	}
}

func msgType(m map[string]any) string {
	msg, _ := m["msg"].(map[string]any)
	s, _ := msg["type"].(string)
	return s
}
