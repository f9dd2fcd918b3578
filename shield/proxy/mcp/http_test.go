package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// upstreamDouble is a Streamable HTTP MCP server: it answers POSTs with SSE (progress first for
// tools/call), keeps a GET stream on which the test can push server→client requests, and
// records every message it receives.
type upstreamDouble struct {
	mu       sync.Mutex
	received []map[string]any
	push     chan string
}

func (u *upstreamDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "sess-1")
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-u.push:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	u.mu.Lock()
	u.received = append(u.received, m)
	u.mu.Unlock()
	if m["method"] == nil || m["id"] == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	id, _ := json.Marshal(m["id"])
	fmt.Fprint(w, "id: prime\ndata: \n\n")
	var result any = map[string]any{}
	switch m["method"] {
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "wipe", "annotations": map[string]any{"destructiveHint": true, "readOnlyHint": false}}}}
	case "tools/call":
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran " + strings.Repeat("x", 100_000)}}}
	}
	res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "result": result})
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", res)
}

func (u *upstreamDouble) saw(method string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, m := range u.received {
		if m["method"] == method {
			n++
		}
	}
	return n
}

func post(t *testing.T, url, body string) (*http.Response, []map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "sess-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msgs []map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					msgs = append(msgs, m)
				}
			}
		}
	} else {
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		msgs = append(msgs, m)
	}
	return resp, msgs
}

func TestHTTPProxy(t *testing.T) {
	up := &upstreamDouble{push: make(chan string, 4)}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	f := &fakeDecider{verdict: map[string]client.Decision{"read": allow}}
	ws := t.TempDir()
	p, err := NewHTTPProxy(Options{Decider: f, Workspace: ws, Server: "everything", MaxMessage: 8192}, upSrv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()

	resp, msgs := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if resp.Header.Get("Mcp-Session-Id") != "sess-1" || len(msgs) != 1 || msgs[0]["result"] == nil {
		t.Fatalf("tools/list through the proxy: %v %v", resp.Header, msgs)
	}
	// A refused call is answered by the proxy; the server never sees it.
	_, msgs = post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe","arguments":{}}}`)
	if len(msgs) != 1 || msgs[0]["result"].(map[string]any)["isError"] != true || up.saw("tools/call") != 0 {
		t.Fatalf("blocked call: %v (server saw %d calls)", msgs, up.saw("tools/call"))
	}
	if c := f.asked()[0]; c.Labels["mcp.destructiveHint"] != "true" || c.Labels["mcp.server"] != "everything" || !strings.HasSuffix(c.Session, ":sess-1") {
		t.Fatalf("the call was decided as %+v", c)
	}
	// An allowed one is forwarded; progress and a large result stream through.
	_, msgs = post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{},"_meta":{"progressToken":1}}}`)
	if len(msgs) != 2 || msgs[0]["method"] != "notifications/progress" || msgs[1]["id"] != 3.0 {
		t.Fatalf("allowed call stream: %d messages %v", len(msgs), msgs)
	}
	// Over the bound and ambiguous: refused, not forwarded.
	if resp, _ := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read","arguments":{"x":"`+strings.Repeat("a", 9000)+`"}}}`); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("over-limit POST: %d", resp.StatusCode)
	}
	if resp, _ := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read","name":"wipe","arguments":{}}}`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("duplicate member POST: %d", resp.StatusCode)
	}
	if n := up.saw("tools/call"); n != 1 {
		t.Fatalf("the server saw %d calls, want 1", n)
	}
	// The GET stream passes a server→client roots/list; the client's answer is narrowed.
	req, _ := http.NewRequest("GET", srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "sess-1")
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	up.push <- `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`
	sc := bufio.NewScanner(get.Body)
	got := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				got <- sc.Text()
				return
			}
		}
	}()
	select {
	case line := <-got:
		if !strings.Contains(line, "roots/list") {
			t.Fatalf("GET stream carried %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the roots/list request never came through the GET stream")
	}
	if resp, _ := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///"}]}}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("roots answer: %d", resp.StatusCode)
	}
	up.mu.Lock()
	last := up.received[len(up.received)-1]
	up.mu.Unlock()
	roots := last["result"].(map[string]any)["roots"].([]any)
	if len(roots) != 1 || roots[0].(map[string]any)["uri"] != "file://"+ws {
		t.Fatalf("the server got roots %v, want only the workspace", roots)
	}
}
