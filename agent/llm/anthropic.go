package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Anthropic speaks the Messages API with streaming and tool use.
type Anthropic struct{ h *httpClient }

// Name implements Provider.
func (a *Anthropic) Name() string { return "anthropic/" + a.h.cfg.Model }

// Stream implements Provider.
func (a *Anthropic) Stream(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, a.h.cfg.Timeout)
	defer cancel()
	var msgs []map[string]any
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			msgs = append(msgs, map[string]any{"role": "user", "content": []any{map[string]any{
				"type": "tool_result", "tool_use_id": m.ToolCallID, "content": m.Content}}})
		case "assistant":
			var blocks []any
			if m.Content != "" {
				blocks = append(blocks, map[string]any{"type": "text", "text": m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": json.RawMessage(tc.Arguments)})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": blocks})
		default:
			msgs = append(msgs, map[string]any{"role": "user", "content": m.Content})
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	body := map[string]any{"model": a.h.cfg.Model, "messages": msgs, "stream": true, "max_tokens": maxTokens}
	if req.System != "" {
		body["system"] = req.System
	}
	if len(req.Tools) > 0 {
		var tools []any
		for _, t := range req.Tools {
			tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": json.RawMessage(t.Parameters)})
		}
		body["tools"] = tools
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	headers := map[string]string{"anthropic-version": "2023-06-01"}
	if a.h.key != "" {
		headers["x-api-key"] = a.h.key
	}
	resp, err := a.h.post(ctx, strings.TrimSuffix(a.h.cfg.BaseURL, "/")+"/v1/messages", raw, headers)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{}
	var text strings.Builder
	type block struct {
		kind, id, name string
		input          strings.Builder
	}
	blocks := map[int]*block{}
	var order []int
	stopped := false
	err = sse(resp.Body, func(event, data string) (bool, error) {
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
				Text string `json:"text"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
			Message struct {
				Usage struct {
					InputTokens  int64 `json:"input_tokens"`
					OutputTokens int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
			Usage struct {
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return false, fmt.Errorf("llm: bad stream event: %w", err)
		}
		switch ev.Type {
		case "message_start":
			out.Usage.InputTokens = ev.Message.Usage.InputTokens
			out.Usage.OutputTokens = ev.Message.Usage.OutputTokens
		case "content_block_start":
			b := &block{kind: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			blocks[ev.Index] = b
			order = append(order, ev.Index)
			if ev.ContentBlock.Text != "" {
				text.WriteString(ev.ContentBlock.Text)
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return false, fmt.Errorf("llm: delta for unknown block %d", ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				text.WriteString(ev.Delta.Text)
				if onText != nil {
					onText(ev.Delta.Text)
				}
			case "input_json_delta":
				b.input.WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			if ev.Usage.OutputTokens > 0 {
				out.Usage.OutputTokens = ev.Usage.OutputTokens
			}
		case "message_stop":
			stopped = true
			return true, nil
		case "error":
			return false, fmt.Errorf("llm: model error: %s", ev.Error.Message)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !stopped {
		return nil, errors.New("llm: stream ended without message_stop")
	}
	out.Text = text.String()
	for _, i := range order {
		b := blocks[i]
		if b.kind != "tool_use" {
			continue
		}
		args := b.input.String()
		if args == "" {
			args = "{}"
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: args})
	}
	return out, nil
}
