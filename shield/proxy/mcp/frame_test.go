package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield/proxy/client"
)

func TestLineReaderBoundsAndStaysInStep(t *testing.T) {
	in := "short\n" + strings.Repeat("x", 100) + "\n\r\n\nnext\r\nlast"
	lr := NewLineReader(strings.NewReader(in), 20)
	want := []struct {
		line string
		err  error
	}{{"short", nil}, {"", ErrTooLong}, {"next", nil}, {"last", nil}, {"", io.EOF}}
	for i, w := range want {
		got, err := lr.Next()
		if !errors.Is(err, w.err) || string(got) != w.line {
			t.Fatalf("line %d: got %q, %v; want %q, %v", i, got, err, w.line, w.err)
		}
	}
}

func TestParseKinds(t *testing.T) {
	for _, tc := range []struct {
		line, kind, id string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, "request", "1"},
		{`{"id":"a b","method":"x"}`, "request", `"a b"`},
		{`{"method":"initialized"}`, "notification", ""},
		{`{"id":0,"result":{"decision":"accept"}}`, "response", "0"},
		{`{"id":null,"error":{"code":-32700}}`, "error", ""},
		{`{"id":true,"method":"x"}`, "malformed", ""},
		{`{"id":{},"method":"x"}`, "malformed", ""},
		{`{"method":1}`, "malformed", ""},
		{`{"method":""}`, "malformed", ""},
		{`{"a":1}`, "malformed", ""},
		{`[]`, "malformed", ""},
		{`"x"`, "malformed", ""},
		{`{"a":{"b":1,"b":2},"method":"x"}`, "malformed", ""},
		{`{"a":[{"b":1},{"b":2}],"method":"x"}`, "request-less", ""},
		{strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70), "malformed", ""},
		{`{"method":"x"}]`, "malformed", ""},
	} {
		m, err := Parse([]byte(tc.line))
		kind := "malformed"
		if err == nil {
			switch {
			case m.IsRequest():
				kind = "request"
			case m.IsNotification():
				kind = "notification"
			case m.IsResponse():
				kind = "response"
			default:
				kind = "error"
			}
		}
		if tc.kind == "request-less" { // nested objects may repeat names across siblings
			if err != nil {
				t.Errorf("%s: %v", tc.line, err)
			}
			continue
		}
		if kind != tc.kind || (err == nil && m.ID != tc.id) {
			t.Errorf("%.60s: kind %s id %q (err %v), want %s %q", tc.line, kind, idOrEmpty(m), err, tc.kind, tc.id)
		}
	}
}

func idOrEmpty(m *Message) string {
	if m == nil {
		return ""
	}
	return m.ID
}

// FuzzParse: no input panics; an accepted message re-decodes to the same top-level members
// with the standard decoder, and its method and id are what Parse reported.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd"}}}`,
		`{"id":0,"result":{"roots":[{"uri":"file:///etc"}]}}`,
		`{"method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"a":{"b":1,"b":2}}`, `[{"id":1}]`, `{"id":1e400,"method":"x"}`, "{\"m\":\"\xff\"}", `{"method":"x"} 1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			t.Fatalf("accepted %q that the standard decoder refuses: %v", b, err)
		}
		var method string
		_ = json.Unmarshal(top["method"], &method)
		if method != m.Method || len(top) != len(m.Fields) {
			t.Fatalf("method %q vs %q", method, m.Method)
		}
	})
}

// FuzzRelayClientLine: whatever one client line is, a relay whose appliance refuses everything
// never lets a tools/call reach the server, and always answers or forwards without panicking.
func FuzzRelayClientLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":null,"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"roots":[{"uri":"file:///"}]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write_file","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsAny(b, "\n") {
			return
		}
		r, _ := NewRelay(Options{Decider: &fakeDecider{verdict: map[string]client.Decision{}}, Workspace: "/w", MaxMessage: 1 << 16})
		var toServer, toClient bytes.Buffer
		r.toServer = &lockedWriter{w: &toServer}
		r.toClient = &lockedWriter{w: &toClient}
		r.clientMessage(context.Background(), b)
		r.wg.Wait()
		for _, line := range bytes.Split(toServer.Bytes(), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			m, err := Parse(line)
			if err != nil {
				t.Fatalf("forwarded a message that does not parse: %q", line)
			}
			if m.Method == "tools/call" {
				t.Fatalf("a refused tools/call reached the server: %q", line)
			}
		}
	})
}
