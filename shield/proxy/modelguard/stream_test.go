package modelguard

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		if i := strings.Index(e, "|"); i >= 0 {
			b.WriteString("event: " + e[:i] + "\ndata: " + e[i+1:] + "\n\n")
		} else {
			b.WriteString("data: " + e + "\n\n")
		}
	}
	return b.String()
}

func anthropicTool(idx int, id, name, args string) []string {
	return []string{
		fmt.Sprintf(`content_block_start|{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, idx, id, name),
		fmt.Sprintf(`content_block_delta|{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, idx, args[:len(args)/2]),
		fmt.Sprintf(`content_block_delta|{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, idx, args[len(args)/2:]),
		fmt.Sprintf(`content_block_stop|{"type":"content_block_stop","index":%d}`, idx),
	}
}

func anthropicText(idx int, text string) []string {
	return []string{
		fmt.Sprintf(`content_block_start|{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, idx),
		fmt.Sprintf(`content_block_delta|{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, idx, text),
		fmt.Sprintf(`content_block_stop|{"type":"content_block_stop","index":%d}`, idx),
	}
}

func anthropicStreamOf(stop string, blocks ...[]string) string {
	evs := []string{`message_start|{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"stop_reason":null}}`}
	for _, b := range blocks {
		evs = append(evs, b...)
	}
	evs = append(evs, `message_delta|{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":5}}`, `message_stop|{"type":"message_stop"}`)
	return sse(evs...)
}

// guardBody runs body (as the upstream's answer) through a guard and returns what the runtime got.
func guardBody(t *testing.T, o Options, api string, stream bool, body string) []byte {
	t.Helper()
	ct := "application/json"
	if stream {
		ct = "text/event-stream"
	}
	o.Upstream = fixedUpstream(t, []byte(body), ct)
	if o.Decider == nil {
		o.Decider = &fakeDecider{}
	}
	path := map[string]string{Anthropic: "/v1/messages", OpenAIResponses: "/v1/responses", OpenAIChat: "/v1/chat/completions"}[api]
	_, got := post(t, startGuard(t, o)+path, `{}`)
	return got
}

// Several calls in one answer: each is decided on its own, text around them passes, indices and
// the stop reason stay consistent.
func TestAnthropicMixedAnswer(t *testing.T) {
	body := anthropicStreamOf("tool_use", anthropicText(0, "let me look"), anthropicTool(1, "t1", "Bash", `{"command":"ls"}`),
		anthropicTool(2, "t2", "Bash", `{"command":"rm -rf /"}`))
	a, err := readAnswer(Anthropic, true, guardBody(t, Options{}, Anthropic, true, body))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Calls) != 1 || a.Calls[0].Args != `{"command":"ls"}` || a.Stop != "tool_use" {
		t.Fatalf("answer %+v", a)
	}
	if !strings.HasPrefix(a.Text, "let me look[Shield stopped the tool call Bash (t2)") {
		t.Fatalf("text %q", a.Text)
	}
}

// Calls that cannot be decided as the runtime would read them are stopped without asking.
func TestUndecidableCallsStopped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block []string
		want  string
	}{
		{"duplicate member", anthropicTool(0, "t", "Bash", `{"command":"ls","command":"rm -rf /"}`), "duplicate member"},
		{"not an object", anthropicTool(0, "t", "Bash", `["ls"]`), "not one JSON object"},
		{"truncated", anthropicTool(0, "t", "Bash", `{"command":"rm -rf /"`), "not one JSON object"},
		{"input in start and deltas", []string{
			`content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{"command":"rm -rf /"}}}`,
			`content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}`,
			`content_block_stop|{"type":"content_block_stop","index":0}`}, "both in the block start and in deltas"},
		{"text delta in a tool block", []string{
			`content_block_start|{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}`,
			`content_block_delta|{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
			`content_block_stop|{"type":"content_block_stop","index":0}`}, "text_delta delta inside a tool_use block"},
		{"never stopped", anthropicTool(0, "t", "Bash", `{"command":"ls"}`)[:3], "ended before the call was complete"},
	} {
		dec := &fakeDecider{}
		got := guardBody(t, Options{Decider: dec}, Anthropic, true, anthropicStreamOf("tool_use", tc.block))
		a, err := readAnswer(Anthropic, true, got)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, got)
		}
		if len(a.Calls) != 0 || !strings.Contains(a.Text, tc.want) || a.Stop != "end_turn" {
			t.Errorf("%s: answer %+v", tc.name, a)
		}
		if n := len(dec.asked()); n != 0 {
			t.Errorf("%s: the appliance was asked %d times about an undecidable call", tc.name, n)
		}
	}
}

// A stream the guard cannot read is failed with the API's error event; nothing of the call, and
// nothing after the failure, reaches the runtime.
func TestUnreadableStreamsFailed(t *testing.T) {
	tool := anthropicTool(0, "t", "Bash", `{"command":"ls"}`)
	for _, tc := range []struct {
		name, body string
		o          Options
	}{
		{"event name disagrees with type", anthropicStreamOf("tool_use", []string{strings.Replace(tool[0], "content_block_start|", "ping|", 1)}, tool[1:]), Options{}},
		{"bare CR", strings.Replace(anthropicStreamOf("tool_use", tool), "\n\n", "\r\r", 2), Options{}},
		{"line over the bound", anthropicStreamOf("tool_use", anthropicTool(0, "t", "Bash", `{"command":"`+strings.Repeat("a", 3000)+`"}`)), Options{MaxLine: 1000}},
		{"held over the bound", anthropicStreamOf("tool_use", tool[:2], anthropicText(1, strings.Repeat("b", 3000)), tool[2:]), Options{MaxHeld: 2000}},
		{"too many calls", anthropicStreamOf("tool_use", anthropicTool(0, "a", "Bash", `{"command":"ls"}`)[:2], anthropicTool(1, "b", "Bash", `{"command":"ls"}`)), Options{MaxCalls: 1}},
		{"content in message_start", strings.Replace(anthropicStreamOf("tool_use", tool), `"content":[]`, `"content":[{"type":"tool_use","id":"x","name":"Bash","input":{"command":"rm -rf /"}}]`, 1), Options{}},
		{"not JSON", anthropicStreamOf("tool_use", []string{`content_block_start|{"type":"content_block_start",`}), Options{}},
	} {
		got := guardBody(t, tc.o, Anthropic, true, tc.body)
		evs, _ := readEvents(got)
		if len(evs) == 0 || evs[len(evs)-1].Name != "error" {
			t.Errorf("%s: the stream did not end with an error event:\n%s", tc.name, got)
			continue
		}
		for _, ev := range evs {
			if bytes.Contains(ev.Data, []byte(`"tool_use"`)) || bytes.Contains(ev.Data, []byte("input_json_delta")) {
				t.Errorf("%s: a tool call reached the runtime: %s", tc.name, ev.Data)
			}
		}
	}
}

// Arguments over the bound stop the call (the stream goes on).
func TestArgumentsOverBoundStopped(t *testing.T) {
	got := guardBody(t, Options{MaxArgs: 100}, Anthropic, true, anthropicStreamOf("tool_use", anthropicTool(0, "t", "Bash", `{"command":"`+strings.Repeat("a", 300)+`"}`)))
	a, err := readAnswer(Anthropic, true, got)
	if err != nil || len(a.Calls) != 0 || !strings.Contains(a.Text, "over the guard's bound") {
		t.Fatalf("answer %+v err %v", a, err)
	}
}

// blockingWriter records what the runtime has been sent at each point.
type recorder struct{ bytes.Buffer }

func (r *recorder) Header() http.Header { return http.Header{} }
func (r *recorder) WriteHeader(int)     {}

// Nothing of a tool call is released before the call is complete and decided: fed one event at
// a time, the runtime has the text before the call at once, and none of the call until its stop.
func TestCallHeldUntilComplete(t *testing.T) {
	g, err := New(Options{Decider: &fakeDecider{}, Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	w := &recorder{}
	s := &stream{g: g, ctx: context.Background(), api: Anthropic, w: w}
	f := &anthropicStream{s: s, blocks: map[int]*pending{}}
	evs, err := readEvents([]byte(anthropicStreamOf("tool_use", anthropicText(0, "before"), anthropicTool(1, "t", "Bash", `{"command":"ls"}`), anthropicText(2, "after"))))
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if err := f.handle(ev); err != nil {
			t.Fatal(err)
		}
		sent := w.String()
		switch {
		case i == 3 && !strings.Contains(sent, `"before"`):
			t.Fatalf("text before the call was held: %q", sent)
		case i >= 4 && i < 7 && strings.Contains(sent, "tool_use"):
			t.Fatalf("event %d: part of the call was released before it was complete: %q", i, sent)
		case i == 7 && !strings.Contains(sent, "input_json_delta"):
			t.Fatalf("the allowed call was not released at its stop")
		}
	}
}

// OpenAI Responses: deltas that disagree with the final item, a call that appears only in
// response.completed, and sequence numbers renumbered after a replacement.
func TestResponsesConsistency(t *testing.T) {
	item := func(id, args string) string {
		return fmt.Sprintf(`{"type":"function_call","id":%q,"call_id":"c_%s","name":"exec_command","arguments":%q,"status":"completed"}`, id, id, args)
	}
	body := sse(
		`response.created|{"type":"response.created","sequence_number":0,"response":{"id":"r","output":[]}}`,
		`response.output_item.added|{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"f1","call_id":"c_f1","name":"exec_command","arguments":""}}`,
		`response.function_call_arguments.delta|{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"f1","output_index":0,"delta":"{\"cmd\":\"ls\"}"}`,
		`response.output_item.done|{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":`+item("f1", `{"cmd":"rm -rf /"}`)+`}`,
		`response.output_item.added|{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"type":"function_call","id":"f2","call_id":"c_f2","name":"exec_command","arguments":""}}`,
		`response.function_call_arguments.delta|{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"f2","output_index":1,"delta":"{\"cmd\":\"ls\"}"}`,
		`response.output_item.done|{"type":"response.output_item.done","sequence_number":6,"output_index":1,"item":`+item("f2", `{"cmd":"ls"}`)+`}`,
		`response.completed|{"type":"response.completed","sequence_number":7,"response":{"id":"r","output":[`+item("f1", `{"cmd":"rm -rf /"}`)+`,`+item("f2", `{"cmd":"ls"}`)+`,`+item("f3", `{"cmd":"rm -rf /"}`)+`]}}`,
	)
	got := guardBody(t, Options{}, OpenAIResponses, true, body)
	evs, _ := readEvents(got)
	var completed map[string]any
	for _, ev := range evs {
		if ev.Name == "response.completed" {
			completed = decode(ev.Data)
		}
	}
	out := sl(mp(completed["response"])["output"])
	if len(out) != 3 || st(mp(out[0])["type"]) != "message" || st(mp(out[1])["type"]) != "function_call" || st(mp(out[2])["type"]) != "message" {
		t.Fatalf("completed output %v", out)
	}
	if !strings.Contains(fmt.Sprint(out[0]), "deltas differ from the final item") || !strings.Contains(fmt.Sprint(out[2]), "differs from the call decided in the stream") {
		t.Fatalf("completed output %v", out)
	}
	// The stream itself, without the extra item only response.completed carried, reads consistently.
	var seq []int
	for _, ev := range evs {
		seq = append(seq, in(decode(ev.Data)["sequence_number"]))
	}
	for i, n := range seq {
		if n != i {
			t.Fatalf("sequence numbers %v", seq)
		}
	}
}

// Chat: parallel calls, one stopped: the one left is renumbered index 0 and finish stays
// tool_calls; a call whose id changes mid-stream is stopped; calls of a stream that ends
// without finishing never reach the runtime.
func TestChatParallelCalls(t *testing.T) {
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `{"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
	}
	tcd := func(i int, extra string) string {
		return fmt.Sprintf(`{"tool_calls":[{"index":%d%s}]}`, i, extra)
	}
	body := sse(
		chunk(`{"role":"assistant","content":"hi "}`, ""),
		chunk(tcd(0, `,"id":"a","type":"function","function":{"name":"shell","arguments":"{\"command\":"}`), ""),
		chunk(tcd(1, `,"id":"b","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}`), ""),
		chunk(tcd(0, `,"function":{"arguments":"\"rm -rf /\"}"}`), ""),
		chunk(tcd(2, `,"id":"c","type":"function","function":{"name":"shell","arguments":"{\"command\":"}`), ""),
		chunk(tcd(2, `,"id":"d","function":{"arguments":"\"ls\"}"}`), ""),
		chunk(`{}`, "tool_calls"),
		"[DONE]",
	)
	a, err := readAnswer(OpenAIChat, true, guardBody(t, Options{}, OpenAIChat, true, body))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Calls) != 1 || a.Calls[0].Args != `{"command":"ls"}` || a.Stop != "tool_calls" {
		t.Fatalf("answer %+v", a)
	}
	if !strings.HasPrefix(a.Text, "hi ") || !strings.Contains(a.Text, "fake:destructive") || !strings.Contains(a.Text, "changed between deltas") {
		t.Fatalf("text %q", a.Text)
	}
	// Cut before the finish: the call is not released.
	cut := sse(chunk(tcd(0, `,"id":"a","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}`), ""))
	got := guardBody(t, Options{}, OpenAIChat, true, cut)
	if bytes.Contains(got, []byte("tool_calls")) {
		t.Fatalf("an unfinished call reached the runtime: %s", got)
	}
}

// Endpoints: only the model endpoints are guarded, listing models and counting tokens pass,
// anything else is refused, --api refuses the other APIs, and a compressed answer is refused.
func TestEndpoints(t *testing.T) {
	up := fixedUpstream(t, []byte(`{"data":[]}`), "application/json")
	g := startGuard(t, Options{Decider: &fakeDecider{}, Upstream: up, API: Anthropic})
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/models", 200},
		{"POST", "/v1/messages/count_tokens", 200},
		{"POST", "/v1/messages", 200},
		{"POST", "/v1/responses", 404},
		{"POST", "/v1/messages/batches", 404},
		{"GET", "/v1/responses/resp_1", 404},
	} {
		req, _ := http.NewRequest(tc.method, g+tc.path, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
	gz := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("the guard asked for %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("\x1f\x8b..."))
	})
	resp, body := post(t, startGuard(t, Options{Decider: &fakeDecider{}, Upstream: gz})+"/v1/messages", `{}`)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "Content-Encoding") {
		t.Errorf("compressed answer: %d %s", resp.StatusCode, body)
	}
}

// Argument events the guard cannot attribute to a call it holds fail the stream (a runtime that
// keeps a "current item" could append them to a call already released).
func TestResponsesUnattributedArguments(t *testing.T) {
	body := sse(
		`response.created|{"type":"response.created","sequence_number":0,"response":{"output":[]}}`,
		`response.function_call_arguments.delta|{"type":"response.function_call_arguments.delta","sequence_number":1,"delta":"{\"cmd\":\"rm -rf /\"}"}`,
	)
	evs, _ := readEvents(guardBody(t, Options{}, OpenAIResponses, true, body))
	if len(evs) != 2 || evs[1].Name != "error" {
		t.Fatalf("events %v", evs)
	}
}
