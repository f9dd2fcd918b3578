package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The servers below are test doubles for models: they speak each API's streaming protocol on
// 127.0.0.1 with scripted replies.

func sseWrite(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, l := range lines {
		fmt.Fprint(w, l)
	}
}

func newProvider(t *testing.T, provider, url string) Provider {
	t.Helper()
	t.Setenv("TEST_LLM_KEY", "k-123")
	p, err := New(Config{Provider: provider, BaseURL: url, Model: "m", APIKeyEnv: "TEST_LLM_KEY", MaxRetries: 2, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenAIStreamTextAndToolCalls(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k-123" {
			http.Error(w, "bad request line or key", 400)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		sseWrite(w,
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me "}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":"look."}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"list_directory","arguments":"{}"}}]}}]}`+"\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n",
			`data: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":7}}`+"\n\n",
			"data: [DONE]\n\n")
	}))
	defer srv.Close()
	p := newProvider(t, "openai", srv.URL+"/v1")
	var streamed strings.Builder
	resp, err := p.Stream(context.Background(), Request{System: "sys", Messages: []Message{{Role: "user", Content: "hi"}},
		Tools: []ToolDef{{Name: "read_file", Description: "d", Parameters: `{"type":"object"}`}}}, func(s string) { streamed.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{Text: "Let me look.", Usage: Usage{11, 7}, ToolCalls: []ToolCall{
		{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "list_directory", Arguments: "{}"}}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if streamed.String() != "Let me look." {
		t.Errorf("streamed %q", streamed.String())
	}
	if got["stream"] != true || got["model"] != "m" || len(got["tools"].([]any)) != 1 {
		t.Errorf("request body: %v", got)
	}
}

func TestAnthropicStreamTextAndToolUse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "k-123" || r.Header.Get("anthropic-version") != "2023-06-01" {
			http.Error(w, "bad request line or headers", 400)
			return
		}
		sseWrite(w,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Reading.\"}}\n\n",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"tu1\",\"name\":\"read_file\",\"input\":{}}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\"}}\n\n",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a\\\"}\"}}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer srv.Close()
	p := newProvider(t, "anthropic", srv.URL)
	resp, err := p.Stream(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Response{Text: "Reading.", Usage: Usage{20, 9}, ToolCalls: []ToolCall{{ID: "tu1", Name: "read_file", Arguments: `{"path":"a"}`}}}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestRetriesAndFailures(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch strings.TrimPrefix(r.URL.Path, "/") {
		case "flaky/chat/completions":
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			sseWrite(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}`+"\n\n", "data: [DONE]\n\n")
		case "down/chat/completions":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "denied/chat/completions":
			http.Error(w, "bad key", http.StatusUnauthorized)
		case "garbage/chat/completions":
			sseWrite(w, "data: {not json\n\n")
		case "truncated/chat/completions":
			sseWrite(w, `data: {"choices":[{"index":0,"delta":{"content":"par"}}]}`+"\n\n")
		case "huge/chat/completions":
			sseWrite(w, "data: "+strings.Repeat("x", maxSSELine+10)+"\n\n")
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	req := Request{Messages: []Message{{Role: "user", Content: "hi"}}}

	resp, err := newProvider(t, "openai", srv.URL+"/flaky").Stream(ctx, req, nil)
	if err != nil || resp.Text != "ok" || n.Load() != 2 {
		t.Errorf("429 then success: %v %v after %d requests", resp, err, n.Load())
	}
	for _, c := range []struct{ path, want string }{
		{"down", "HTTP 500"}, {"denied", "HTTP 401"}, {"garbage", "bad stream chunk"},
		{"truncated", "stream ended"}, {"huge", "read stream"},
	} {
		_, err := newProvider(t, "openai", srv.URL+"/"+c.path).Stream(ctx, req, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.path, err, c.want)
		}
	}
	if _, err := New(Config{Provider: "nope", BaseURL: "http://x", Model: "m"}); err == nil {
		t.Error("unknown provider accepted")
	}
}
