package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// fakeDecider answers with a fixed decision, or waits for ctx, or panics; it records the calls.
type fakeDecider struct {
	mu    sync.Mutex
	calls []client.Call
	holds []bool
	d     client.Decision
	wait  bool // block until ctx ends, then refuse as the client does
	panic bool
}

func (f *fakeDecider) Decide(ctx context.Context, c client.Call, hold bool) client.Decision {
	f.mu.Lock()
	f.calls, f.holds = append(f.calls, c), append(f.holds, hold)
	f.mu.Unlock()
	if f.panic {
		panic("decider exploded")
	}
	if f.wait {
		<-ctx.Done()
		return client.Decision{Verdict: client.Block, Reason: "waiting ended: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	return f.d
}

var (
	allow    = client.Decision{Verdict: client.Allow, Allowed: true}
	block    = client.Decision{Verdict: client.Block, Rules: []string{"cel:destructive.rm-outside-workspace"}, Reason: "deletes files outside the workspace"}
	escalate = client.Decision{Verdict: client.Escalate, ApprovalID: "apr_1", Reason: "needs a human"}
	failed   = client.Decision{Verdict: client.Block, Reason: "the Shield appliance could not decide", Err: errors.New("connection refused")}
)

func seed(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "input", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRuntimeInputs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		want client.Call
	}{
		{"claude-bash.json", client.Call{CallID: "toolu_2", Tool: "Bash", Session: "431b0ceb", Cwd: "/work/proj",
			Arguments: json.RawMessage(`{"command":"touch pwned.txt && echo created"}`)}},
		{"claude-mcp.json", client.Call{CallID: "toolu_7", Tool: "mcp__fs__read_text_file", Session: "431b0ceb", Cwd: "/work/proj",
			Arguments: json.RawMessage(`{"path":"/work/proj/notes.txt"}`), Labels: map[string]string{"mcp.server": "fs", "mcp.tool": "read_text_file"}}},
		{"codex-bash.json", client.Call{CallID: "call_8", Tool: "Bash", Session: "01a2017d", Cwd: "/work/proj",
			Arguments: json.RawMessage(`{"command":"touch pwned.txt && echo created"}`)}},
		{"codex-mcp.json", client.Call{CallID: "call_9", Tool: "mcp__fs__write_file", Session: "01a2017d", Cwd: "/work/proj",
			Arguments: json.RawMessage(`{"path":"/work/proj/a","content":"x"}`), Labels: map[string]string{"mcp.server": "fs", "mcp.tool": "write_file"}}},
		{"no-tool-input.json", client.Call{CallID: "t", Tool: "TodoWrite", Session: "s", Arguments: json.RawMessage(`{}`)}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			in, err := Decode(seed(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			got := in.Call()
			var compact bytes.Buffer
			json.Compact(&compact, got.Arguments)
			got.Arguments = compact.Bytes()
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRefusesMalformedInput(t *testing.T) {
	t.Parallel()
	ok := `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`
	cases := map[string]string{
		"empty":           ``,
		"not json":        `hello`,
		"array":           `[` + ok + `]`,
		"trailing":        ok + `{}`,
		"trailing junk":   ok + ` x`,
		"truncated":       ok[:len(ok)-3],
		"duplicate key":   `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_name":"Bash","tool_input":{}}`,
		"dup nested":      `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf /"}}`,
		"wrong event":     strings.Replace(ok, "PreToolUse", "PostToolUse", 1),
		"no event":        `{"tool_name":"Bash","tool_input":{}}`,
		"no tool":         `{"hook_event_name":"PreToolUse","tool_input":{}}`,
		"blank tool":      `{"hook_event_name":"PreToolUse","tool_name":"  ","tool_input":{}}`,
		"input string":    `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"rm -rf /"}`,
		"input array":     `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":["rm"]}`,
		"tool not string": `{"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{}}`,
		"invalid utf8":    "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"\xff\"}}",
		"deep":            `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"a":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}}`,
		"long field":      `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"` + strings.Repeat("a", maxField+1) + `","tool_input":{}}`,
		"over size":       `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("a", MaxInput) + `"}}`,
	}
	if _, err := Decode([]byte(ok)); err != nil {
		t.Fatalf("the well-formed input is refused: %v", err)
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(in)); !errors.Is(err, ErrInput) {
				t.Errorf("Decode accepted it (err %v)", err)
			}
		})
	}
}

func TestAnswerForEveryVerdict(t *testing.T) {
	t.Parallel()
	if a := AnswerFor(allow); a.Deny {
		t.Errorf("ALLOW denied: %+v", a)
	}
	for name, d := range map[string]client.Decision{
		"block": block, "escalate": escalate, "error": failed,
		"allow with an error":    {Verdict: client.Allow, Allowed: true, Err: errors.New("x")},
		"allowed flag only":      {Allowed: true},
		"verdict ALLOW, no flag": {Verdict: client.Allow},
		"zero":                   {},
	} {
		if a := AnswerFor(d); !a.Deny || !strings.HasPrefix(a.Reason, "Shield: ") {
			t.Errorf("%s: %+v, want a deny", name, a)
		}
	}
	if a := AnswerFor(block); !strings.Contains(a.Reason, "cel:destructive.rm-outside-workspace") {
		t.Errorf("the deny reason does not name the rule: %q", a.Reason)
	}
}

// The deny JSON is the exact shape both runtimes were seen to honour (RUNTIMES.md).
func TestDenyJSONShape(t *testing.T) {
	t.Parallel()
	var got map[string]map[string]string
	if err := json.Unmarshal(DenyJSON(`R "quoted" <b>`), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": `R "quoted" <b>`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestCommandAnswers(t *testing.T) {
	t.Parallel()
	input := string(seed(t, "claude-bash.json"))
	cases := []struct {
		name     string
		d        *fakeDecider
		stdin    io.Reader
		timeout  time.Duration
		wantDeny bool
		reason   string
	}{
		{"allow says nothing", &fakeDecider{d: allow}, strings.NewReader(input), time.Minute, false, ""},
		{"block", &fakeDecider{d: block}, strings.NewReader(input), time.Minute, true, "cel:destructive.rm-outside-workspace"},
		{"escalate not resolved", &fakeDecider{d: escalate}, strings.NewReader(input), time.Minute, true, "ESCALATE"},
		{"appliance unreachable", &fakeDecider{d: failed}, strings.NewReader(input), time.Minute, true, "could not decide"},
		{"malformed stdin", &fakeDecider{d: allow}, strings.NewReader(`{"tool_name":`), time.Minute, true, "malformed hook input"},
		{"empty stdin", &fakeDecider{d: allow}, strings.NewReader(``), time.Minute, true, "malformed hook input"},
		{"oversized stdin", &fakeDecider{d: allow}, io.MultiReader(strings.NewReader(`{"a":"`), bytes.NewReader(bytes.Repeat([]byte("a"), MaxInput+10))), time.Minute, true, "over the"},
		{"decider holds past the deadline", &fakeDecider{d: allow, wait: true}, strings.NewReader(input), 50 * time.Millisecond, true, "waiting ended"},
		{"stdin never closes", &fakeDecider{d: allow}, blockingReader{}, 50 * time.Millisecond, true, "no decision within"},
		{"decider panics", &fakeDecider{panic: true}, strings.NewReader(input), time.Minute, true, "decider exploded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Command(context.Background(), ClaudeCode, c.d, c.stdin, c.timeout)
			if !c.wantDeny {
				if r.Exit != 0 || len(r.Stdout) != 0 || r.Stderr != "" {
					t.Fatalf("ALLOW must exit 0 with no output; got exit %d stdout %q stderr %q", r.Exit, r.Stdout, r.Stderr)
				}
				return
			}
			if r.Exit != 2 || !r.Answer.Deny {
				t.Fatalf("exit %d (%+v), want 2 and a deny", r.Exit, r.Answer)
			}
			if !strings.Contains(r.Stderr, c.reason) {
				t.Errorf("stderr %q does not say %q", r.Stderr, c.reason)
			}
			var out struct {
				HookSpecificOutput struct {
					PermissionDecision string `json:"permissionDecision"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(r.Stdout, &out); err != nil || out.HookSpecificOutput.PermissionDecision != "deny" {
				t.Errorf("stdout %q is not the deny JSON (%v)", r.Stdout, err)
			}
		})
	}
}

// The hook holds an ESCALATE: the call reaches the decider with hold set.
func TestCommandHoldsEscalations(t *testing.T) {
	t.Parallel()
	d := &fakeDecider{d: allow}
	Command(context.Background(), Codex, d, strings.NewReader(string(seed(t, "codex-bash.json"))), time.Minute)
	if len(d.holds) != 1 || !d.holds[0] {
		t.Fatalf("holds %v, want one call with hold", d.holds)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestHTTPHandler(t *testing.T) {
	t.Parallel()
	input := string(seed(t, "claude-bash.json"))
	type resp struct {
		status int
		deny   bool
		body   string
	}
	post := func(t *testing.T, h http.Handler, method, ctype string, body io.Reader) resp {
		t.Helper()
		srv := httptest.NewServer(h) // 127.0.0.1
		defer srv.Close()
		req, _ := http.NewRequest(method, srv.URL+HTTPPath, body)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		r, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var out struct {
			HookSpecificOutput struct {
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal(b, &out)
		return resp{r.StatusCode, out.HookSpecificOutput.PermissionDecision == "deny", string(b)}
	}
	cases := []struct {
		name   string
		h      *HTTPHandler
		method string
		ctype  string
		body   io.Reader
		want   resp
	}{
		{"allow is no opinion", NewHTTPHandler(&fakeDecider{d: allow}), "POST", "application/json", strings.NewReader(input), resp{200, false, "{}"}},
		{"block", NewHTTPHandler(&fakeDecider{d: block}), "POST", "application/json", strings.NewReader(input), resp{200, true, ""}},
		{"escalate unresolved", NewHTTPHandler(&fakeDecider{d: escalate}), "POST", "application/json; charset=utf-8", strings.NewReader(input), resp{200, true, ""}},
		{"appliance failed", NewHTTPHandler(&fakeDecider{d: failed}), "POST", "application/json", strings.NewReader(input), resp{200, true, ""}},
		{"malformed", NewHTTPHandler(&fakeDecider{d: allow}), "POST", "application/json", strings.NewReader(`{"tool_name":"Bash"`), resp{200, true, ""}},
		{"over the bound", NewHTTPHandler(&fakeDecider{d: allow}), "POST", "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), MaxInput+2)), resp{200, true, ""}},
		{"hold ends", &HTTPHandler{Decider: &fakeDecider{wait: true}, Hold: 50 * time.Millisecond}, "POST", "application/json", strings.NewReader(input), resp{200, true, ""}},
		{"decider panics", NewHTTPHandler(&fakeDecider{panic: true}), "POST", "application/json", strings.NewReader(input), resp{200, true, ""}},
		{"no decider", &HTTPHandler{}, "POST", "application/json", strings.NewReader(input), resp{200, true, ""}},
		{"GET", NewHTTPHandler(&fakeDecider{d: allow}), "GET", "", nil, resp{405, false, ""}},
		{"form post", NewHTTPHandler(&fakeDecider{d: allow}), "POST", "application/x-www-form-urlencoded", strings.NewReader("a=b"), resp{415, false, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := post(t, c.h, c.method, c.ctype, c.body)
			if got.status != c.want.status || got.deny != c.want.deny || (c.want.body != "" && got.body != c.want.body) {
				t.Errorf("got %d deny=%v %q, want %d deny=%v %q", got.status, got.deny, got.body, c.want.status, c.want.deny, c.want.body)
			}
		})
	}
}
