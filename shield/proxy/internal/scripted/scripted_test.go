package scripted

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// events posts body to path and returns the SSE data payloads (event name → data list, in order).
func events(t *testing.T, s *Server, path, body string) (names []string, data []map[string]any) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("%s: content type %q", path, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			d := strings.TrimPrefix(line, "data: ")
			m := map[string]any{}
			if d != "[DONE]" {
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Fatalf("%s: data %q: %v", path, d, err)
				}
			} else {
				m["done"] = true
			}
			names, data = append(names, name), append(data, m)
			name = ""
		}
	}
	return names, data
}

func start(t *testing.T, steps ...Step) *Server {
	t.Helper()
	s, err := Start(steps, "all done")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMessagesScriptByToolResults(t *testing.T) {
	s := start(t, Call("Bash", map[string]string{"command": "touch a"}), Call("Bash", map[string]string{"command": "touch b"}))
	tools := `"tools":[{"name":"Bash","input_schema":{}}]`
	// Round 0: no tool results → the first call.
	names, data := events(t, s, "/v1/messages?beta=true", `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"hi"}]}`)
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", names, want)
	}
	if cb := data[1]["content_block"].(map[string]any); cb["type"] != "tool_use" || cb["name"] != "Bash" {
		t.Fatalf("block %v", cb)
	}
	if pj := data[2]["delta"].(map[string]any)["partial_json"]; pj != `{"command":"touch a"}` {
		t.Fatalf("partial_json %v", pj)
	}
	if sr := data[4]["delta"].(map[string]any)["stop_reason"]; sr != "tool_use" {
		t.Fatalf("stop_reason %v", sr)
	}
	// Round 1: one tool result → the second call; the result text is kept.
	hist := `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"blocked: R"}],"is_error":true}]}]`
	_, data = events(t, s, "/v1/messages", `{"model":"m","stream":true,`+tools+`,`+hist+`}`)
	if pj := data[2]["delta"].(map[string]any)["partial_json"]; pj != `{"command":"touch b"}` {
		t.Fatalf("round 1 partial_json %v", pj)
	}
	if r := s.Results(); len(r) != 1 || r[0] != "blocked: R" {
		t.Fatalf("results %q", r)
	}
	// A side query without tools gets the final text even in round 0.
	_, data = events(t, s, "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"title?"}]}`)
	if d := data[2]["delta"].(map[string]any); d["type"] != "text_delta" || d["text"] != "all done" {
		t.Fatalf("side query delta %v", d)
	}
	if rs := s.Requests(); len(rs) != 3 || rs[0].Step != 0 || rs[1].Step != 1 || rs[2].Step != -1 {
		t.Fatalf("requests %+v", rs)
	}
}

func TestResponsesFunctionCallAndText(t *testing.T) {
	s := start(t, Step{Tool: "read_text_file", Namespace: "mcp__fs", Args: json.RawMessage(`{"path":"/w/n"}`)})
	names, data := events(t, s, "/v1/responses", `{"model":"m","stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`)
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Fatalf("events %v", names)
	}
	var done map[string]any
	for i, n := range names {
		if n == "response.output_item.done" {
			done = data[i]["item"].(map[string]any)
		}
		if data[i]["type"] != n {
			t.Fatalf("event %s carries type %v", n, data[i]["type"])
		}
	}
	if done["type"] != "function_call" || done["name"] != "read_text_file" || done["namespace"] != "mcp__fs" || done["arguments"] != `{"path":"/w/n"}` {
		t.Fatalf("item %v", done)
	}
	// After one function_call_output: the final text.
	names, data = events(t, s, "/v1/responses", `{"model":"m","stream":true,"tools":[{}],"input":[{"type":"function_call","call_id":"c"},{"type":"function_call_output","call_id":"c","output":"Command blocked by PreToolUse hook"}]}`)
	text := ""
	for i, n := range names {
		if n == "response.output_text.delta" {
			text += data[i]["delta"].(string)
		}
	}
	if text != "all done" {
		t.Fatalf("text %q (events %v)", text, names)
	}
	if r := s.Results(); len(r) != 1 || r[0] != "Command blocked by PreToolUse hook" {
		t.Fatalf("results %q", r)
	}
}

func TestChatCompletionsToolCall(t *testing.T) {
	s := start(t, Call("shell", map[string]any{"command": []string{"bash", "-lc", "ls"}}))
	_, data := events(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"tools":[{"type":"function"}],"messages":[{"role":"user","content":"go"}]}`)
	if !data[len(data)-1]["done"].(bool) {
		t.Fatalf("no [DONE]: %v", data)
	}
	args := ""
	finish := ""
	for _, d := range data[:len(data)-1] {
		ch := d["choices"].([]any)[0].(map[string]any)
		if f, ok := ch["finish_reason"].(string); ok {
			finish = f
		}
		if tcs, ok := ch["delta"].(map[string]any)["tool_calls"].([]any); ok {
			args += tcs[0].(map[string]any)["function"].(map[string]any)["arguments"].(string)
		}
	}
	if finish != "tool_calls" || args != `{"command":["bash","-lc","ls"]}` {
		t.Fatalf("finish %q args %q", finish, args)
	}
}

func TestBoundsAndUnknownEndpoints(t *testing.T) {
	s := start(t)
	for _, c := range []struct {
		path, body string
		want       int
	}{
		{"/v1/messages", `{not json`, http.StatusBadRequest},
		{"/v1/elsewhere", `{}`, http.StatusNotFound},
		{"/v1/responses", strings.Repeat(" ", MaxBody+1), http.StatusRequestEntityTooLarge},
	} {
		resp, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.path, resp.StatusCode, c.want)
		}
	}
}
