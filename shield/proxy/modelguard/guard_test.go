package modelguard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/internal/scripted"
)

// fakeDecider blocks calls whose arguments mention "rm " (rule fake:destructive), escalates
// those that mention "sudo" (held until the deadline: no human answers), and refuses everything
// when down, the way the fail-closed client does.
type fakeDecider struct {
	mu    sync.Mutex
	down  bool
	calls []client.Call
}

func (f *fakeDecider) Decide(ctx context.Context, c client.Call, hold bool) client.Decision {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	down := f.down
	f.mu.Unlock()
	switch {
	case down:
		err := errors.New("connection refused")
		return client.Decision{Verdict: client.Block, Reason: "the Shield appliance at unix:///nowhere could not decide: " + err.Error(), Err: err}
	case strings.Contains(string(c.Arguments), "rm "):
		return client.Decision{Verdict: client.Block, Rules: []string{"fake:destructive"}, Reason: "deletes files"}
	case strings.Contains(string(c.Arguments), "approve-me"):
		if !hold {
			return client.Decision{Verdict: client.Escalate, Rules: []string{"fake:ask"}}
		}
		return client.Decision{Verdict: client.Allow, Allowed: true, ApprovalID: "ap-1"} // a human approved while held
	case strings.Contains(string(c.Arguments), "sudo"):
		if !hold {
			return client.Decision{Verdict: client.Escalate, Rules: []string{"fake:privilege"}}
		}
		<-ctx.Done()
		return client.Decision{Verdict: client.Block, Rules: []string{"fake:privilege"}, Reason: "no human decision in time"}
	}
	return client.Decision{Verdict: client.Allow, Allowed: true}
}

func (f *fakeDecider) asked() []client.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]client.Call(nil), f.calls...)
}

func startGuard(t testing.TB, o Options) string {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL
}

func post(t testing.TB, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// apiCase is one API as a runtime calls it.
type apiCase struct {
	api, path, tool string
	body            func(stream bool) string
	step            func(cmd string) scripted.Step
	toolStop        string // the stop reason of an answer that calls a tool
	textStop        string
}

func sb(stream bool) string {
	if stream {
		return "true"
	}
	return "false"
}

var apiCases = []apiCase{
	{api: Anthropic, path: "/v1/messages?beta=true", tool: "Bash", toolStop: "tool_use", textStop: "end_turn",
		body: func(s bool) string {
			return `{"model":"m","stream":` + sb(s) + `,"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"go"}]}`
		},
		step: func(cmd string) scripted.Step { return scripted.Call("Bash", map[string]string{"command": cmd}) }},
	{api: OpenAIResponses, path: "/v1/responses", tool: "exec_command", toolStop: "tool_calls", textStop: "stop",
		body: func(s bool) string {
			return `{"model":"m","stream":` + sb(s) + `,"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`
		},
		step: func(cmd string) scripted.Step { return scripted.Call("exec_command", map[string]string{"cmd": cmd}) }},
	{api: OpenAIChat, path: "/v1/chat/completions", tool: "shell", toolStop: "tool_calls", textStop: "stop",
		body: func(s bool) string {
			return `{"model":"m","stream":` + sb(s) + `,"tools":[{"type":"function","function":{"name":"shell"}}],"messages":[{"role":"user","content":"go"}]}`
		},
		step: func(cmd string) scripted.Step {
			return scripted.Call("shell", map[string]any{"command": []string{"bash", "-lc", cmd}})
		}},
}

// The three APIs, streamed and not, through the guard in front of the scripted model server: a
// harmless call passes unchanged, a destructive one is replaced by text naming the rule with the
// stop reason adjusted, an escalation is held (approved: it passes; nobody answers in time: it is
// stopped), and with the appliance down no call reaches the client.
func TestGuardScriptedModel(t *testing.T) {
	for _, ac := range apiCases {
		for _, stream := range []bool{true, false} {
			for _, tc := range []struct {
				name, cmd string
				down      bool
				allowed   bool
				want      string // in the replacement text
			}{
				{name: "harmless", cmd: "ls -la", allowed: true},
				{name: "escalation approved while held", cmd: "echo approve-me", allowed: true},
				{name: "destructive", cmd: "rm -rf ../precious", want: "fake:destructive"},
				{name: "escalation unanswered", cmd: "sudo id", want: "no human decision in time"},
				{name: "appliance down", cmd: "ls -la", down: true, want: "could not decide"},
			} {
				t.Run(ac.api+"/stream="+sb(stream)+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					up, err := scripted.Start([]scripted.Step{ac.step(tc.cmd)}, "done")
					if err != nil {
						t.Fatal(err)
					}
					defer up.Close()
					dec := &fakeDecider{down: tc.down}
					url := startGuard(t, Options{Decider: dec, Upstream: up.URL, Workspace: "/w", Session: "s1", Hold: 200 * time.Millisecond})
					resp, body := post(t, url+ac.path, ac.body(stream))
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, body)
					}
					a, err := readAnswer(ac.api, stream, body)
					if err != nil {
						t.Fatalf("the runtime could not read the answer: %v\n%s", err, body)
					}
					if a.Err != "" {
						t.Fatalf("error in the answer: %s", a.Err)
					}
					asked := dec.asked()
					if len(asked) != 1 || asked[0].Tool != ac.tool || asked[0].Session != "s1" || asked[0].Cwd != "/w" {
						t.Fatalf("the appliance was asked %+v", asked)
					}
					if !strings.Contains(string(asked[0].Arguments), strings.Split(tc.cmd, " ")[0]) {
						t.Fatalf("the appliance was asked about %s", asked[0].Arguments)
					}
					if tc.allowed {
						if len(a.Calls) != 1 || a.Calls[0].Name != ac.tool || !strings.Contains(a.Calls[0].Args, tc.cmd) || a.Stop != ac.toolStop {
							t.Fatalf("the allowed call did not pass: %+v", a)
						}
						return
					}
					if len(a.Calls) != 0 {
						t.Fatalf("a stopped call reached the runtime: %+v\n%s", a.Calls, body)
					}
					if !strings.Contains(a.Text, "Shield stopped the tool call "+ac.tool) || !strings.Contains(a.Text, tc.want) {
						t.Fatalf("replacement text %q does not say which call was stopped and why (%q)", a.Text, tc.want)
					}
					if a.Stop != ac.textStop {
						t.Fatalf("stop reason %q, want %q (the runtime would wait for a tool result)", a.Stop, ac.textStop)
					}
				})
			}
		}
	}
}

// Text answers pass byte for byte, streamed or not, and no decision is asked for.
func TestGuardPassesTextByteForByte(t *testing.T) {
	for _, ac := range apiCases {
		for _, stream := range []bool{true, false} {
			body := ac.body(stream)
			up, err := scripted.Start(nil, "hello there")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { up.Close() })
			// The scripted answers carry a counter and a time: record one upstream answer and
			// replay it through the guard.
			_, want := post(t, up.URL+ac.path, body)
			fixed := fixedUpstream(t, want, map[bool]string{true: "text/event-stream", false: "application/json"}[stream])
			dec := &fakeDecider{}
			url := startGuard(t, Options{Decider: dec, Upstream: fixed})
			_, got := post(t, url+ac.path, body)
			if !bytes.Equal(got, want) {
				t.Errorf("%s stream=%v: the guard changed a text answer:\n got %q\nwant %q", ac.api, stream, got, want)
			}
			if n := len(dec.asked()); n != 0 {
				t.Errorf("%s: %d decisions for a text answer", ac.api, n)
			}
		}
	}
}

// fixedUpstream answers every request with body.
func fixedUpstream(t testing.TB, body []byte, ctype string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func httptestServer(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
