package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesRequest is the part of an OpenAI Responses request the script reads.
type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Tools  []json.RawMessage `json:"tools"`
	Input  json.RawMessage   `json:"input"`
}

// responses answers POST /v1/responses (Codex 0.169; it asks for SSE only).
func (s *Server) responses(w http.ResponseWriter, path string, body []byte) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, err)
		return
	}
	var items []struct {
		Type   string          `json:"type"`
		Output json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(req.Input, &items) // a plain string input has no tool results
	var results []string
	for _, it := range items {
		// function_call_output, custom_tool_call_output, …
		if strings.HasSuffix(it.Type, "call_output") {
			results = append(results, textOf(it.Output))
		}
	}
	r := Request{Path: path, API: "responses", Stream: req.Stream, ToolResults: len(results), Tools: len(req.Tools), Model: req.Model}
	step, _ := s.pick(r, results)
	n := s.next()
	respID := fmt.Sprintf("resp_scripted_%d", n)
	var item map[string]any
	if step.Tool != "" {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d", n),
			"call_id": fmt.Sprintf("call_scripted_%d", n), "name": step.Tool, "arguments": args(step), "status": "completed"}
		if step.Namespace != "" {
			item["namespace"] = step.Namespace
		}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
	response := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": req.Model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, response("completed", []any{item}))
		return
	}
	e := startSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": response("in_progress", []any{})})
	added := map[string]any{}
	for k, v := range item {
		added[k] = v
	}
	added["status"] = "in_progress"
	if step.Tool != "" {
		added["arguments"] = ""
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": 0, "delta": args(step)})
		ev("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": 0, "arguments": args(step)})
	} else {
		added["content"] = []any{}
		ev("response.output_item.added", map[string]any{"output_index": 0, "item": added})
		ev("response.content_part.added", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": step.Text})
		ev("response.output_text.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0, "text": step.Text})
		ev("response.content_part.done", map[string]any{"item_id": item["id"], "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}})
	}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	ev("response.completed", map[string]any{"response": response("completed", []any{item})})
}

// chatRequest is the part of an OpenAI chat-completions request the script reads.
type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// chat answers POST /v1/chat/completions (Codex 0.42 / 0.57), streamed or not.
func (s *Server) chat(w http.ResponseWriter, path string, body []byte) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, err)
		return
	}
	var results []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results = append(results, textOf(m.Content))
		}
	}
	r := Request{Path: path, API: "chat", Stream: req.Stream, ToolResults: len(results), Tools: len(req.Tools), Model: req.Model}
	step, _ := s.pick(r, results)
	n := s.next()
	id := fmt.Sprintf("chatcmpl-scripted-%d", n)
	created := time.Now().Unix()
	callID := fmt.Sprintf("call_scripted_%d", n)
	finish := "stop"
	if step.Tool != "" {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": step.Text}
		if step.Tool != "" {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": callID, "type": "function",
				"function": map[string]any{"name": step.Tool, "arguments": args(step)}}}
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	e := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if step.Tool != "" {
		e.event("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": callID, "type": "function", "function": map[string]any{"name": step.Tool, "arguments": ""}}}}, nil))
		e.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "function": map[string]any{"arguments": args(step)}}}}, nil))
	} else {
		e.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		e.event("", chunk(map[string]any{"content": step.Text}, nil))
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	e.event("", last)
	e.event("", "[DONE]")
}
