package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// byCommand decides by a substring of the arguments; anything unmatched is BLOCKed.
type byCommand struct {
	mu    sync.Mutex
	rules []struct{ sub, verdict string }
	calls []client.Call
}

func (b *byCommand) Decide(_ context.Context, c client.Call, _ bool) client.Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, c)
	for _, r := range b.rules {
		if strings.Contains(string(c.Arguments), r.sub) || c.Tool == r.sub {
			if r.verdict == client.Allow {
				return client.Decision{Verdict: client.Allow, Allowed: true}
			}
			return client.Decision{Verdict: r.verdict, Rules: []string{"test:rule"}, Reason: "refused by the test"}
		}
	}
	return client.Decision{Verdict: client.Block, Rules: []string{"test:default"}, Reason: "unmatched"}
}

func (b *byCommand) asked() []client.Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]client.Call(nil), b.calls...)
}

func rulesDecider(rules ...string) *byCommand {
	b := &byCommand{}
	for i := 0; i+1 < len(rules); i += 2 {
		b.rules = append(b.rules, struct{ sub, verdict string }{rules[i], rules[i+1]})
	}
	return b
}

type relay interface {
	Run(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error
}

// pipes connects a relay to the test, which plays both the client and the runtime.
type pipes struct {
	t                 *testing.T
	clientW, runtimeW io.WriteCloser
	clientR, runtimeR *lines
	done              chan error
}

type lines struct {
	ch chan map[string]any
}

func readLines(t *testing.T, r io.Reader) *lines {
	l := &lines{ch: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("invalid JSON line %q", sc.Text())
				continue
			}
			l.ch <- m
		}
		close(l.ch)
	}()
	return l
}

func (l *lines) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-l.ch:
		if !ok {
			t.Fatal("stream ended")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10 s")
	}
	return nil
}

// none asserts nothing more arrives before a marker round trip proves the relay caught up.
func (l *lines) empty(t *testing.T) {
	t.Helper()
	select {
	case m := <-l.ch:
		t.Fatalf("unexpected message %v", m)
	default:
	}
}

func startPipes(t *testing.T, r relay) *pipes {
	cr, cw := io.Pipe()
	rr, rw := io.Pipe()
	sr, sw := io.Pipe()
	or, ow := io.Pipe()
	p := &pipes{t: t, clientW: cw, runtimeW: ow, clientR: readLines(t, rr), runtimeR: readLines(t, sr), done: make(chan error, 1)}
	go func() { p.done <- r.Run(context.Background(), cr, rw, sw, or) }()
	t.Cleanup(func() {
		cw.Close()
		ow.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Error("relay did not end")
		}
	})
	return p
}

func (p *pipes) client(s string)  { p.clientW.Write([]byte(s + "\n")) }
func (p *pipes) runtime(s string) { p.runtimeW.Write([]byte(s + "\n")) }

func TestAppServerApprovals(t *testing.T) {
	d := rulesDecider("rm -rf", client.Block, "touch ok.txt", client.Allow, "mcp_written", client.Block, "notes.txt", client.Allow)
	a, _ := NewAppServer(Options{Decider: d, Workspace: "/w"})
	p := startPipes(t, a)

	p.runtime(`{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_1","command":"/bin/bash -lc 'rm -rf /w/src'","cwd":"/w","availableDecisions":["accept","cancel"]}}`)
	if got := p.runtimeR.next(t); got["id"] != 0.0 || got["result"].(map[string]any)["decision"] != "decline" {
		t.Fatalf("blocked command answered %v", got)
	}
	p.runtime(`{"method":"item/commandExecution/requestApproval","id":1,"params":{"itemId":"call_2","command":"touch ok.txt","cwd":"/w"}}`)
	if got := p.runtimeR.next(t); got["id"] != 1.0 || got["result"].(map[string]any)["decision"] != "accept" {
		t.Fatalf("allowed command answered %v", got)
	}
	// A file change: the request carries no content; the item/started before it does.
	p.runtime(`{"method":"item/started","params":{"item":{"type":"fileChange","id":"call_3","changes":[{"path":"/w/notes.txt","kind":{"type":"delete"},"diff":""}]}}}`)
	if got := p.clientR.next(t); got["method"] != "item/started" {
		t.Fatalf("client got %v", got)
	}
	p.runtime(`{"method":"item/fileChange/requestApproval","id":2,"params":{"itemId":"call_3","threadId":"t","turnId":"u"}}`)
	if got := p.runtimeR.next(t); got["result"].(map[string]any)["decision"] != "accept" {
		t.Fatalf("file change answered %v", got)
	}
	calls := d.asked()
	if last := calls[len(calls)-1]; last.Tool != "apply_patch" || !strings.Contains(string(last.Arguments), `*** Delete File: /w/notes.txt`) {
		t.Fatalf("file change evaluated as %+v", last)
	}
	// A file change Shield never saw the content of is declined without asking.
	p.runtime(`{"method":"item/fileChange/requestApproval","id":3,"params":{"itemId":"call_unknown","threadId":"t","turnId":"u"}}`)
	if got := p.runtimeR.next(t); got["result"].(map[string]any)["decision"] != "decline" {
		t.Fatalf("unseen file change answered %v", got)
	}
	// An MCP tool approval, with the tool's annotations as labels.
	p.runtime(`{"method":"mcpServer/elicitation/request","id":4,"params":{"serverName":"fs","mode":"form","_meta":{"codex_approval_kind":"mcp_tool_call","tool_name":"write_file","tool_annotations":{"destructiveHint":true},"tool_params":{"path":"/w/mcp_written.txt","content":"x"}},"message":"Allow?"}}`)
	got := p.runtimeR.next(t)
	if res := got["result"].(map[string]any); res["action"] != "decline" || res["content"] != nil {
		t.Fatalf("MCP approval answered %v", got)
	}
	calls = d.asked()
	if last := calls[len(calls)-1]; last.Tool != "write_file" || last.Labels["mcp.destructiveHint"] != "true" || last.Labels["mcp.server"] != "fs" {
		t.Fatalf("MCP approval evaluated as %+v", last)
	}
	// Standing permissions are never granted.
	p.runtime(`{"method":"item/permissions/requestApproval","id":5,"params":{}}`)
	if got := p.runtimeR.next(t); got["error"] == nil {
		t.Fatalf("permissions request answered %v", got)
	}
	p.clientR.empty(t)
}

func TestAppServerDeferredAnswersAreNarrowed(t *testing.T) {
	d := rulesDecider("touch", client.Allow)
	a, _ := NewAppServer(Options{Decider: d, Workspace: "/w", DeferAllowed: true})
	p := startPipes(t, a)
	p.runtime(`{"method":"item/commandExecution/requestApproval","id":7,"params":{"itemId":"c","command":"touch a","cwd":"/w"}}`)
	if got := p.clientR.next(t); got["id"] != 7.0 {
		t.Fatalf("client got %v", got)
	}
	// An answer to something the client was not asked is dropped; the real one is narrowed.
	p.client(`{"id":99,"result":{"decision":"accept"}}`)
	p.client(`{"id":7,"result":{"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["touch"]}}}}`)
	got := p.runtimeR.next(t)
	if got["id"] != 7.0 || got["result"].(map[string]any)["decision"] != "accept" {
		t.Fatalf("runtime got %v, want a plain accept for 7", got)
	}
	p.runtime(`{"method":"item/commandExecution/requestApproval","id":8,"params":{"itemId":"c2","command":"touch b","cwd":"/w"}}`)
	p.clientR.next(t)
	p.client(`{"id":8,"result":{"decision":"acceptForSession"}}`)
	if got := p.runtimeR.next(t); got["result"].(map[string]any)["decision"] != "accept" {
		t.Fatalf("acceptForSession passed as %v", got)
	}
	p.client(`{"id":8,"result":{"decision":"accept"}}`) // a second answer: dropped
	p.client(`{"id":3,"method":"model/list"}`)
	if got := p.runtimeR.next(t); got["method"] != "model/list" {
		t.Fatalf("after a duplicate answer the runtime got %v", got)
	}
}

func TestAppServerGatesClientActions(t *testing.T) {
	d := rulesDecider("cmdexec.txt", client.Block, "echo hi", client.Allow)
	a, _ := NewAppServer(Options{Decider: d, Workspace: "/w"})
	p := startPipes(t, a)
	p.client(`{"id":3,"method":"command/exec","params":{"command":["bash","-c","id -un > cmdexec.txt"],"cwd":"/w"}}`)
	if got := p.clientR.next(t); got["id"] != 3.0 || !strings.Contains(got["error"].(map[string]any)["message"].(string), "test:rule") {
		t.Fatalf("blocked command/exec answered %v", got)
	}
	p.client(`{"id":4,"method":"fs/writeFile","params":{"path":"/w/x","dataBase64":"aGk="}}`)
	if got := p.clientR.next(t); got["id"] != 4.0 || got["error"] == nil {
		t.Fatalf("fs/writeFile answered %v", got)
	}
	p.client(`{"id":5,"method":"config/value/write","params":{"keyPath":"approval_policy","value":"never"}}`)
	if got := p.clientR.next(t); got["id"] != 5.0 || got["error"] == nil {
		t.Fatalf("config write answered %v", got)
	}
	p.client(`{"id":6,"method":"command/exec","params":{"command":["echo","hi"],"cwd":"/w"}}`)
	if got := p.runtimeR.next(t); got["id"] != 6.0 || got["method"] != "command/exec" {
		t.Fatalf("allowed command/exec: runtime got %v", got)
	}
	p.client(`{"id":7,"method":"thread/start","params":{"cwd":"/w","approvalPolicy":"never","approvalsReviewer":"guardian","config":{"approval_policy":"never","model":"m"}}}`)
	got := p.runtimeR.next(t)
	params := got["params"].(map[string]any)
	if params["approvalPolicy"] != "untrusted" || params["approvalsReviewer"] != nil || params["config"].(map[string]any)["approval_policy"] != nil || params["config"].(map[string]any)["model"] != "m" {
		t.Fatalf("thread/start passed as %v", params)
	}
	calls := d.asked()
	if len(calls) != 3 || calls[0].Tool != "Bash" || !strings.Contains(string(calls[0].Arguments), `bash -c 'id -un \u003e cmdexec.txt'`) && !strings.Contains(string(calls[0].Arguments), `bash -c 'id -un > cmdexec.txt'`) {
		t.Fatalf("calls %+v", calls)
	}
	if calls[1].Tool != "write_file" || !strings.Contains(string(calls[1].Arguments), `"content":"hi"`) {
		t.Fatalf("fs/writeFile evaluated as %+v", calls[1])
	}
}

func TestProtoApprovalsKeyedByEventID(t *testing.T) {
	d := rulesDecider("pwned", client.Block, "ok.txt", client.Allow)
	pr, _ := NewProto(Options{Decider: d, Workspace: "/w"})
	p := startPipes(t, pr)
	p.runtime(`{"id":"sub-1","msg":{"type":"exec_approval_request","call_id":"call_1","command":["bash","-lc","touch pwned.txt"],"cwd":"/w"}}`)
	got := p.runtimeR.next(t)
	op := got["op"].(map[string]any)
	if op["type"] != "exec_approval" || op["id"] != "sub-1" || op["decision"] != "denied" {
		t.Fatalf("blocked exec answered %v", got)
	}
	if ev := p.clientR.next(t); ev["msg"].(map[string]any)["type"] != "background_event" {
		t.Fatalf("client told %v", ev)
	}
	p.runtime(`{"id":"sub-2","msg":{"type":"exec_approval_request","call_id":"call_2","command":["touch","ok.txt"],"cwd":"/w"}}`)
	op = p.runtimeR.next(t)["op"].(map[string]any)
	if op["id"] != "sub-2" || op["decision"] != "approved" {
		t.Fatalf("allowed exec answered %v", op)
	}
	p.runtime(`{"id":"sub-3","msg":{"type":"apply_patch_approval_request","call_id":"call_3","changes":{"/w/pwned.txt":{"add":{"content":"x"}}}}}`)
	op = p.runtimeR.next(t)["op"].(map[string]any)
	if op["type"] != "patch_approval" || op["id"] != "sub-3" || op["decision"] != "denied" {
		t.Fatalf("patch answered %v", op)
	}
	p.runtime(`{"id":"sub-4","msg":{"type":"apply_patch_approval_request","call_id":"call_4","changes":{"/w/ok.txt":{"add":{"content":"x"}}},"grant_root":"/"}}`)
	op = p.runtimeR.next(t)["op"].(map[string]any)
	if op["decision"] != "denied" {
		t.Fatalf("grant_root outside the workspace answered %v", op)
	}
	// The client cannot answer what it was not shown; turns are made to ask every time.
	p.client(`{"id":"c-1","op":{"type":"exec_approval","id":"sub-1","decision":"approved"}}`)
	p.client(`{"id":"c-2","op":{"type":"user_turn","items":[],"approval_policy":"never","cwd":"/w"}}`)
	got = p.runtimeR.next(t)
	if got["id"] != "c-2" || got["op"].(map[string]any)["approval_policy"] != "untrusted" {
		t.Fatalf("runtime got %v, want the rewritten user_turn (and not the unsolicited approval)", got)
	}
}

func TestProtoDeferredNarrowed(t *testing.T) {
	d := rulesDecider("ok.txt", client.Allow)
	pr, _ := NewProto(Options{Decider: d, Workspace: "/w", DeferAllowed: true})
	p := startPipes(t, pr)
	p.runtime(`{"id":"sub-1","msg":{"type":"exec_approval_request","call_id":"call_1","command":["touch","ok.txt"],"cwd":"/w"}}`)
	if ev := p.clientR.next(t); ev["id"] != "sub-1" {
		t.Fatalf("client got %v", ev)
	}
	p.client(`{"id":"c-1","op":{"type":"exec_approval","id":"sub-1","decision":"approved_for_session"}}`)
	op := p.runtimeR.next(t)["op"].(map[string]any)
	if op["id"] != "sub-1" || op["decision"] != "approved" {
		t.Fatalf("runtime got %v", op)
	}
}

// No appliance: every approval is refused in the runtime's own terms.
func TestFailClosedWithoutAppliance(t *testing.T) {
	c, err := client.New(client.Options{Socket: filepath.Join(t.TempDir(), "none.sock"), Runtime: "codex", EvalTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, _ := NewAppServer(Options{Decider: c, Workspace: "/w", DeferAllowed: true})
	p := startPipes(t, a)
	p.runtime(`{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"c","command":"ls","cwd":"/w"}}`)
	if got := p.runtimeR.next(t); got["result"].(map[string]any)["decision"] != "decline" {
		t.Fatalf("app-server answered %v", got)
	}
	pr, _ := NewProto(Options{Decider: c, Workspace: "/w", DeferAllowed: true})
	q := startPipes(t, pr)
	q.runtime(`{"id":"s","msg":{"type":"exec_approval_request","call_id":"c","command":["ls"],"cwd":"/w"}}`)
	if op := q.runtimeR.next(t)["op"].(map[string]any); op["decision"] != "denied" || op["id"] != "s" {
		t.Fatalf("proto answered %v", op)
	}
}
