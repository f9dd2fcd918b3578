package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// messagesRequest is the part of an Anthropic Messages request the script reads.
type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// messages answers POST /v1/messages (Claude Code adds ?beta=true).
func (s *Server) messages(w http.ResponseWriter, path string, body []byte) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		badRequest(w, err)
		return
	}
	var results []string
	for _, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, textOf(b.Content))
			}
		}
	}
	r := Request{Path: path, API: "messages", Stream: req.Stream, ToolResults: len(results), Tools: len(req.Tools), Model: req.Model}
	step, _ := s.pick(r, results)
	n := s.next()
	msgID := fmt.Sprintf("msg_scripted_%d", n)
	model := req.Model
	if model == "" {
		model = "scripted"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	var block map[string]any
	stop := "end_turn"
	if step.Tool != "" {
		var input any
		if err := json.Unmarshal([]byte(args(step)), &input); err != nil {
			input = map[string]any{}
		}
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_scripted_%d", n), "name": step.Tool, "input": input}
		stop = "tool_use"
	} else {
		block = map[string]any{"type": "text", "text": step.Text}
	}
	if !req.Stream {
		writeJSON(w, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := startSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	if step.Tool != "" {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": step.Tool, "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": args(step)}})
	} else {
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": step.Text}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
