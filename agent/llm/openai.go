package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// OpenAI speaks the chat completions API with streaming and tools.
type OpenAI struct{ h *httpClient }

// Name implements Provider.
func (o *OpenAI) Name() string { return "openai/" + o.h.cfg.Model }

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
	} `json:"function"`
}

// Stream implements Provider.
func (o *OpenAI) Stream(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, o.h.cfg.Timeout)
	defer cancel()
	var msgs []oaMessage
	if req.System != "" {
		s := req.System
		msgs = append(msgs, oaMessage{Role: "system", Content: &s})
	}
	for _, m := range req.Messages {
		c := m.Content
		om := oaMessage{Role: m.Role, Content: &c, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			var t oaToolCall
			t.ID, t.Type = tc.ID, "function"
			t.Function.Name, t.Function.Arguments = tc.Name, tc.Arguments
			om.ToolCalls = append(om.ToolCalls, t)
		}
		if m.Role == "assistant" && c == "" && len(om.ToolCalls) > 0 {
			om.Content = nil
		}
		msgs = append(msgs, om)
	}
	body := map[string]any{
		"model": o.h.cfg.Model, "messages": msgs, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if req.MaxTokens > 0 {
		body["max_tokens"] = req.MaxTokens
	}
	if len(req.Tools) > 0 {
		var tools []any
		for _, t := range req.Tools {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
				"name": t.Name, "description": t.Description, "parameters": json.RawMessage(t.Parameters)}})
		}
		body["tools"] = tools
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	headers := map[string]string{}
	if o.h.key != "" {
		headers["Authorization"] = "Bearer " + o.h.key
	}
	resp, err := o.h.post(ctx, strings.TrimSuffix(o.h.cfg.BaseURL, "/")+"/chat/completions", raw, headers)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{}
	var text strings.Builder
	calls := map[int]*ToolCall{}
	done := false
	err = sse(resp.Body, func(_, data string) (bool, error) {
		if data == "[DONE]" {
			done = true
			return true, nil
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string       `json:"content"`
					ToolCalls []oaToolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return false, fmt.Errorf("llm: bad stream chunk: %w", err)
		}
		if chunk.Error != nil {
			return false, fmt.Errorf("llm: model error: %s", chunk.Error.Message)
		}
		if chunk.Usage != nil {
			out.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				if onText != nil {
					onText(ch.Delta.Content)
				}
			}
			for _, tc := range ch.Delta.ToolCalls {
				i := 0
				if tc.Index != nil {
					i = *tc.Index
				}
				c := calls[i]
				if c == nil {
					c = &ToolCall{}
					calls[i] = c
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if tc.Function.Name != "" {
					c.Name = tc.Function.Name
				}
				c.Arguments += tc.Function.Arguments
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, errors.New("llm: stream ended without [DONE]")
	}
	out.Text = text.String()
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		c := calls[i]
		if c.Name == "" {
			return nil, fmt.Errorf("llm: tool call %d has no name", i)
		}
		if c.Arguments == "" {
			c.Arguments = "{}"
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, *c)
	}
	return out, nil
}
