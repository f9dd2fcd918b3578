package modelguard

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// denyAll refuses every call, as the appliance does when it is down.
type denyAll struct{}

func (denyAll) Decide(context.Context, client.Call, bool) client.Decision {
	return client.Decision{Verdict: client.Block, Reason: "refused"}
}

type allowAll struct{}

func (allowAll) Decide(context.Context, client.Call, bool) client.Decision {
	return client.Decision{Verdict: client.Allow, Allowed: true}
}

func fuzzGuard(t *testing.T, d Decider) *Guard {
	g, err := New(Options{Decider: d, Upstream: "http://127.0.0.1:1", MaxLine: 4096, MaxEvent: 8192, MaxArgs: 2048, MaxHeld: 16384, MaxBody: 1 << 16, MaxCalls: 8})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func seedStreams() map[string][]string {
	tool := anthropicTool(0, "t", "Bash", `{"command":"rm -rf /"}`)
	return map[string][]string{
		Anthropic: {
			anthropicStreamOf("tool_use", anthropicText(0, "hi"), anthropicTool(1, "t", "Bash", `{"command":"ls"}`)),
			anthropicStreamOf("tool_use", tool[:2], anthropicText(1, "x"), tool[2:]),
			strings.ReplaceAll(anthropicStreamOf("tool_use", tool), "\n", "\r\n"),
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{\"command\":\"rm -rf /\"}}}\n\n",
		},
		OpenAIResponses: {
			sse(`response.created|{"type":"response.created","sequence_number":0,"response":{"output":[]}}`,
				`response.output_item.added|{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"f","call_id":"c","name":"exec_command","arguments":""}}`,
				`response.function_call_arguments.delta|{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"f","output_index":0,"delta":"{\"cmd\":\"ls\"}"}`,
				`response.output_item.done|{"type":"response.output_item.done","sequence_number":3,"output_index":0,"item":{"type":"function_call","id":"f","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}`,
				`response.completed|{"type":"response.completed","sequence_number":4,"response":{"output":[{"type":"function_call","id":"f","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}]}}`),
			sse(`response.output_item.done|{"type":"response.output_item.done","output_index":0,"item":{"type":"local_shell_call","id":"l","call_id":"c","action":{"type":"exec","command":["rm","-rf","/"]}}}`),
			sse(`response.output_item.done|{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"p","call_id":"c","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}}`),
		},
		OpenAIChat: {
			sse(`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"shell","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			sse(`{"choices":[{"index":0,"delta":{"function_call":{"name":"shell","arguments":"{}"}},"finish_reason":"function_call"}]}`, "[DONE]"),
			sse(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`, "[DONE]x", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"shell","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`),
		},
	}
}

// noCalls fails when anything in out would give the runtime a tool call.
func noCalls(t *testing.T, api string, out []byte) {
	t.Helper()
	evs, _ := readEvents(out)
	for _, ev := range evs {
		var m map[string]any
		if json.Unmarshal(ev.Data, &m) != nil {
			continue
		}
		if leaked(api, m) {
			t.Fatalf("a refused call reached the runtime: %s", ev.Data)
		}
	}
}

func leaked(api string, m map[string]any) bool {
	switch api {
	case Anthropic:
		// Runtimes build a call from a tool_use block start (input deltas only extend one).
		return st(mp(m["content_block"])["type"]) == "tool_use" ||
			strings.Contains(fmtJSON(mp(m["message"])["content"]), "tool_use")
	case OpenAIResponses:
		for _, it := range append([]any{m["item"]}, sl(mp(m["response"])["output"])...) {
			if _, isCall := responsesCallAny(it); isCall {
				return true
			}
		}
		return false
	default:
		for _, c := range append(sl(m["choices"]), m) {
			ch := mp(c)
			for _, part := range []map[string]any{mp(ch["delta"]), mp(ch["message"])} {
				if part["tool_calls"] != nil || part["function_call"] != nil {
					return true
				}
			}
		}
		return false
	}
}

func fmtJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func responsesCallAny(v any) (*call, bool) {
	if v == nil {
		return nil, false
	}
	b, _ := json.Marshal(v)
	var item map[string]json.RawMessage
	if json.Unmarshal(b, &item) != nil {
		return nil, false
	}
	return responsesCall(item)
}

func fuzzStream(f *testing.F, api string) {
	for _, s := range seedStreams()[api] {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var out bytes.Buffer
		fuzzGuard(t, denyAll{}).filterStream(context.Background(), api, bytes.NewReader(body), &out, nil)
		noCalls(t, api, out.Bytes())
		out.Reset()
		fuzzGuard(t, allowAll{}).filterStream(context.Background(), api, bytes.NewReader(body), &out, nil)
	})
}

// The per-API stream filters: whatever the upstream sends, with every call refused no tool call
// reaches the runtime, and nothing panics.
func FuzzAnthropicStream(f *testing.F) { fuzzStream(f, Anthropic) }
func FuzzResponsesStream(f *testing.F) { fuzzStream(f, OpenAIResponses) }
func FuzzChatStream(f *testing.F)      { fuzzStream(f, OpenAIChat) }

// FuzzJSONAnswers: the non-streamed decoders, same property.
func FuzzJSONAnswers(f *testing.F) {
	f.Add(uint8(0), []byte(`{"content":[{"type":"text","text":"a"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}],"stop_reason":"tool_use"}`))
	f.Add(uint8(1), []byte(`{"output":[{"type":"function_call","id":"f","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}]}`))
	f.Add(uint8(2), []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"shell","arguments":"{}"}}],"function_call":{"name":"x","arguments":"{}"}},"finish_reason":"tool_calls"}]}`))
	apis := []string{Anthropic, OpenAIResponses, OpenAIChat}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		api := apis[int(which)%3]
		out, err := fuzzGuard(t, denyAll{}).rewriteJSON(context.Background(), api, body)
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(out, &m) != nil {
			t.Fatalf("the rewritten answer is not JSON: %q", out)
		}
		if api == Anthropic {
			for _, c := range sl(m["content"]) {
				if st(mp(c)["type"]) == "tool_use" {
					t.Fatalf("a refused call reached the runtime: %s", out)
				}
			}
			return
		}
		if api == OpenAIResponses {
			for _, it := range sl(m["output"]) {
				if _, isCall := responsesCallAny(it); isCall {
					t.Fatalf("a refused call reached the runtime: %s", out)
				}
			}
			return
		}
		if leaked(api, m) {
			t.Fatalf("a refused call reached the runtime: %s", out)
		}
	})
}

// FuzzSSEReader: events are bounded, and an event written anew reads back the same.
func FuzzSSEReader(f *testing.F) {
	for _, ss := range seedStreams() {
		for _, s := range ss {
			f.Add([]byte(s))
		}
	}
	f.Add([]byte("\xef\xbb\xbfevent: a\ndata: 1\ndata: 2\nid: 3\n: c\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := newSSEReader(bytes.NewReader(body), 512, 1024)
		for {
			ev, err := r.next()
			if err != nil {
				return
			}
			if len(ev.Data) > 1024 {
				t.Fatalf("event of %d bytes over the bound", len(ev.Data))
			}
			back, err := newSSEReader(bytes.NewReader(ev.bytes()), 4096, 4096).next()
			if err != nil || back.Name != ev.Name || !bytes.Equal(back.Data, ev.Data) {
				t.Fatalf("event %q/%q wrote %q, read back %+v (%v)", ev.Name, ev.Data, ev.bytes(), back, err)
			}
		}
	})
}
