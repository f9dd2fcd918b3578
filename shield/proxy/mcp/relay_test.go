package mcp

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

// fakeDecider answers by tool name and records what it was asked. Tools not listed are BLOCKed.
type fakeDecider struct {
	mu      sync.Mutex
	verdict map[string]client.Decision
	calls   []client.Call
	gate    chan struct{} // when non-nil, Decide waits for it (or ctx) before answering
}

func (f *fakeDecider) Decide(ctx context.Context, c client.Call, hold bool) client.Decision {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	d, ok := f.verdict[c.Tool]
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return client.Decision{Verdict: client.Block, Reason: "no human decision in time", Err: ctx.Err()}
		}
	}
	if !ok {
		return client.Decision{Verdict: client.Block, Rules: []string{"test:unknown"}, Reason: "not listed"}
	}
	return d
}

func (f *fakeDecider) asked() []client.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]client.Call(nil), f.calls...)
}

var (
	allow = client.Decision{Verdict: client.Allow, Allowed: true}
	block = client.Decision{Verdict: client.Block, Rules: []string{"cel:files.write-system"}, Reason: "writes a file that controls access"}
)

// harness runs a relay between pipes: the test plays the client and a scripted server that
// records every message it receives and answers requests from a table.
type harness struct {
	t        *testing.T
	clientW  io.WriteCloser
	clientR  *bufio.Scanner
	serverMu sync.Mutex
	received []map[string]any
	serverW  io.WriteCloser // the server's stdout (what the relay reads)
	done     chan error
}

func startRelay(t *testing.T, opts Options, answer func(m map[string]any) any) *harness {
	t.Helper()
	cr, cw := io.Pipe() // client → relay
	rr, rw := io.Pipe() // relay → client
	sr, sw := io.Pipe() // relay → server
	or, ow := io.Pipe() // server → relay
	h := &harness{t: t, clientW: cw, clientR: bufio.NewScanner(rr), serverW: ow, done: make(chan error, 1)}
	h.clientR.Buffer(make([]byte, 1<<20), 1<<20)
	r, err := NewRelay(opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- r.Run(context.Background(), cr, rw, sw, or) }()
	go func() { // the server
		sc := bufio.NewScanner(sr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("server got invalid JSON %q", sc.Text())
				continue
			}
			h.serverMu.Lock()
			h.received = append(h.received, m)
			h.serverMu.Unlock()
			if _, isReq := m["method"]; isReq && m["id"] != nil && answer != nil {
				if res := answer(m); res != nil {
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": res})
					ow.Write(append(b, '\n'))
				}
			}
		}
		ow.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("relay did not end after the client closed")
		}
	})
	return h
}

func (h *harness) send(s string) {
	h.t.Helper()
	if _, err := h.clientW.Write([]byte(s + "\n")); err != nil {
		h.t.Fatal(err)
	}
}

// next reads the next message the client receives.
func (h *harness) next() map[string]any {
	h.t.Helper()
	if !h.clientR.Scan() {
		h.t.Fatalf("client stream ended: %v", h.clientR.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(h.clientR.Bytes(), &m); err != nil {
		h.t.Fatalf("client got invalid JSON %q", h.clientR.Text())
	}
	return m
}

func (h *harness) serverSaw(method string) []map[string]any {
	h.serverMu.Lock()
	defer h.serverMu.Unlock()
	var out []map[string]any
	for _, m := range h.received {
		if m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

func toolsServer(m map[string]any) any {
	switch m["method"] {
	case "tools/list":
		return map[string]any{"tools": []any{
			map[string]any{"name": "write_file", "annotations": map[string]any{"readOnlyHint": false, "destructiveHint": true}},
			map[string]any{"name": "read_text_file", "annotations": map[string]any{"readOnlyHint": true, "openWorldHint": false}},
		}}
	case "tools/call":
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran"}}}
	}
	return map[string]any{}
}

func TestRelayDecidesToolCalls(t *testing.T) {
	f := &fakeDecider{verdict: map[string]client.Decision{"read_text_file": allow, "write_file": block}}
	h := startRelay(t, Options{Decider: f, Server: "fs", Workspace: "/work/ws", Session: "s1"}, toolsServer)

	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := h.next(); got["id"] != 1.0 || got["result"] == nil {
		t.Fatalf("tools/list answer: %v", got)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd","content":"x"}}}`)
	got := h.next()
	res, _ := got["result"].(map[string]any)
	if got["id"] != 2.0 || res["isError"] != true || !strings.Contains(textOf(res), "cel:files.write-system") {
		t.Fatalf("blocked call answer: %v", got)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/work/ws/a"},"_meta":{"claudecode/toolUseId":"toolu_9"}}}`)
	got = h.next()
	if got["id"] != 3.0 || textOf(got["result"].(map[string]any)) != "ran" {
		t.Fatalf("allowed call answer: %v", got)
	}
	calls := h.serverSaw("tools/call")
	if len(calls) != 1 || calls[0]["params"].(map[string]any)["name"] != "read_text_file" {
		t.Fatalf("the server saw %v, want only the allowed call", calls)
	}
	asked := f.asked()
	if len(asked) != 2 {
		t.Fatalf("asked %d times", len(asked))
	}
	w, r := asked[0], asked[1]
	if w.Labels["mcp.destructiveHint"] != "true" || w.Labels["mcp.readOnlyHint"] != "false" || w.Labels["mcp.server"] != "fs" {
		t.Errorf("write_file labels %v", w.Labels)
	}
	if r.Labels["mcp.readOnlyHint"] != "true" || r.Labels["mcp.openWorldHint"] != "false" || r.CallID != "toolu_9" {
		t.Errorf("read_text_file call %+v", r)
	}
	if r.Session != "s1" || r.Cwd != "/work/ws" || string(r.Arguments) != `{"path":"/work/ws/a"}` {
		t.Errorf("call context %+v", r)
	}
}

func textOf(res map[string]any) string {
	c, _ := res["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	m, _ := c[0].(map[string]any)
	s, _ := m["text"].(string)
	return s
}

// What a second JSON parser could read differently is refused, never forwarded.
func TestRelayRefusesAmbiguousMessages(t *testing.T) {
	f := &fakeDecider{verdict: map[string]client.Decision{"read_text_file": allow}}
	h := startRelay(t, Options{Decider: f, Workspace: "/w", MaxMessage: 4096}, toolsServer)
	for _, tc := range []struct{ name, line string }{
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","name":"write_file","arguments":{}}}`},
		{"duplicate argument", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a","path":"/etc/shadow"}}}`},
		{"duplicate method", `{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/call","params":{"name":"x"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{}}}]`},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"\xff\"}}}"},
		{"over the bound", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_text_file","arguments":{"p":"` + strings.Repeat("a", 5000) + `"}}}`},
		{"trailing data", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_text_file","arguments":{}}} {"x":1}`},
		{"arguments not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_text_file","arguments":["/etc/shadow"]}}`},
		{"case-folded name", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"Name":"read_text_file","name":"write_file","arguments":{}}}`},
	} {
		h.send(tc.line)
		got := h.next()
		if got["error"] == nil && got["result"].(map[string]any)["isError"] != true {
			t.Errorf("%s: answer %v, want an error", tc.name, got)
		}
	}
	// Still in step: a good call goes through afterwards.
	h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a"}}}`)
	if got := h.next(); got["id"] != 10.0 || got["result"] == nil {
		t.Fatalf("good call after refusals: %v", got)
	}
	for _, c := range h.serverSaw("tools/call") {
		if c["id"] != 10.0 {
			t.Errorf("the server saw a refused call: %v", c)
		}
	}
}

// An appliance that cannot be reached refuses every call: nothing reaches the server.
func TestRelayFailsClosedWithoutAppliance(t *testing.T) {
	c, err := client.New(client.Options{Socket: filepath.Join(t.TempDir(), "none.sock"), Runtime: "mcp", EvalTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := startRelay(t, Options{Decider: c, Workspace: "/w"}, toolsServer)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/w/a"}}}`)
	got := h.next()
	res, _ := got["result"].(map[string]any)
	if res["isError"] != true || !strings.Contains(textOf(res), "could not decide") {
		t.Fatalf("answer %v", got)
	}
	if n := len(h.serverSaw("tools/call")); n != 0 {
		t.Fatalf("server saw %d calls", n)
	}
}

// A held ESCALATE that runs out of time is refused; one the client cancels is neither
// forwarded nor answered.
func TestRelayHoldEndsRefused(t *testing.T) {
	f := &fakeDecider{verdict: map[string]client.Decision{"frob": allow}, gate: make(chan struct{})}
	h := startRelay(t, Options{Decider: f, Workspace: "/w", Hold: 200 * time.Millisecond}, toolsServer)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"frob","arguments":{}}}`)
	got := h.next()
	if res, _ := got["result"].(map[string]any); res["isError"] != true || got["id"] != 1.0 {
		t.Fatalf("timed-out hold: %v", got)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"frob","arguments":{}}}`)
	for len(f.asked()) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := h.next(); got["id"] != 3.0 {
		t.Fatalf("after a cancelled hold the client got %v, want the ping answer", got)
	}
	if n := len(h.serverSaw("tools/call")); n != 0 {
		t.Fatalf("server saw %d calls", n)
	}
	if n := len(h.serverSaw("notifications/cancelled")); n != 0 {
		t.Fatalf("the cancellation of a held call reached the server")
	}
}

// The client's roots/list answer may not widen the server's reach beyond the workspace.
func TestRelayNarrowsRoots(t *testing.T) {
	ws := t.TempDir()
	f := &fakeDecider{}
	h := startRelay(t, Options{Decider: f, Workspace: ws}, nil)
	for i, tc := range []struct {
		answer string
		want   []string
	}{
		{`{"roots":[{"uri":"file:///etc","name":"etc"}]}`, []string{"file://" + ws}},
		{`{"roots":[{"uri":"file://` + ws + `/sub"},{"uri":"file:///"}]}`, []string{"file://" + ws + "/sub"}},
		{`{"roots":[{"uri":"file://` + ws + `/../.."}]}`, []string{"file://" + ws}},
		{`{"roots":[{"uri":"https://example.com/"}]}`, []string{"file://" + ws}},
		{`{"roots":"everything"}`, []string{"file://" + ws}},
		{`{"roots":[{"uri":"file://` + ws + `"}]}`, []string{"file://" + ws}},
		{`{"roots":[]}`, nil},
	} {
		id := i + 100
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "roots/list"})
		h.serverW.Write(append(b, '\n'))
		if got := h.next(); got["method"] != "roots/list" {
			t.Fatalf("client got %v", got)
		}
		h.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"result":` + tc.answer + `}`)
		var answer map[string]any
		for deadline := time.Now().Add(5 * time.Second); answer == nil; {
			h.serverMu.Lock()
			for _, m := range h.received {
				if m["id"] == float64(id) {
					answer = m
				}
			}
			h.serverMu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("%s: the server never got the answer", tc.answer)
			}
			time.Sleep(5 * time.Millisecond)
		}
		var got []string
		for _, r := range answer["result"].(map[string]any)["roots"].([]any) {
			got = append(got, r.(map[string]any)["uri"].(string))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: server got roots %v, want %v", tc.answer, got, tc.want)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
