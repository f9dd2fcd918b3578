package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Errors of a non-streamed completion. Callers that show errors to an agent (the judge) map them
// to their own words; none of them carries the endpoint or the key.
var (
	// ErrOversize: the answer is larger than MaxAnswerBytes.
	ErrOversize = errors.New("llm: the model API answer is larger than 1 MiB")
	// ErrMalformed: the answer is not the API's JSON shape.
	ErrMalformed = errors.New("llm: the model API answer is malformed")
	// ErrRefusal: the model refused (Anthropic stop_reason "refusal", OpenAI message.refusal).
	ErrRefusal = errors.New("llm: the model refused")
	// ErrRead: the answer could not be read to its end.
	ErrRead = errors.New("llm: the model API answer could not be read")
)

// MaxAnswerBytes bounds a non-streamed answer.
const MaxAnswerBytes = 1 << 20

// CompleteOptions adjust one non-streamed completion.
type CompleteOptions struct {
	// JSONObject asks an OpenAI-compatible server for a JSON object (response_format).
	JSONObject bool
	// ZeroTemperature asks for temperature 0 (OpenAI-compatible servers).
	ZeroTemperature bool
}

// Completer asks a model for one whole, non-streamed answer: the judge's path. Unlike Stream it
// never retries (the caller's deadline is the bound), never follows a redirect (that would resend
// the prompt, and for 307/308 the key, wherever the answer points) and reads at most
// MaxAnswerBytes. It speaks the same two APIs, with the same headers and key handling, as the
// streaming providers.
type Completer struct{ h *httpClient }

// NewCompleter returns a completer for cfg. client nil: a client that follows no redirect and has
// no timeout of its own (the context bounds each request). A key named by cfg.APIKeyEnv must be
// set.
func NewCompleter(cfg Config, client *http.Client) (*Completer, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("llm: base_url and model are required")
	}
	switch cfg.Provider {
	case "openai", "anthropic":
	default:
		return nil, fmt.Errorf("llm: unknown provider %q (want openai or anthropic)", cfg.Provider)
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		if key = os.Getenv(cfg.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("llm: environment variable %s is empty or unset", cfg.APIKeyEnv)
		}
	}
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Completer{h: &httpClient{cfg: cfg, key: key, client: client}}, nil
}

// Name is provider/model.
func (c *Completer) Name() string { return c.h.cfg.Provider + "/" + c.h.cfg.Model }

// Complete sends req (system prompt and text messages; tools are not offered) and returns the
// answer's text and usage. On ErrRefusal the returned Response still carries the usage.
func (c *Completer) Complete(ctx context.Context, req Request, o CompleteOptions) (*Response, error) {
	cfg := c.h.cfg
	var endpoint string
	var body map[string]any
	headers := map[string]string{"Content-Type": "application/json"}
	if cfg.Provider == "anthropic" {
		endpoint = strings.TrimSuffix(cfg.BaseURL, "/") + "/v1/messages"
		var msgs []any
		for _, m := range req.Messages {
			role := m.Role
			if role != "assistant" {
				role = "user"
			}
			msgs = append(msgs, map[string]any{"role": role, "content": m.Content})
		}
		maxTokens := req.MaxTokens
		if maxTokens <= 0 {
			maxTokens = 4096
		}
		body = map[string]any{"model": cfg.Model, "max_tokens": maxTokens, "messages": msgs}
		if req.System != "" {
			body["system"] = req.System
		}
		headers["anthropic-version"] = "2023-06-01"
		if c.h.key != "" {
			headers["x-api-key"] = c.h.key
		}
	} else {
		endpoint = strings.TrimSuffix(cfg.BaseURL, "/") + "/chat/completions"
		var msgs []any
		if req.System != "" {
			msgs = append(msgs, map[string]any{"role": "system", "content": req.System})
		}
		for _, m := range req.Messages {
			msgs = append(msgs, map[string]any{"role": m.Role, "content": m.Content})
		}
		body = map[string]any{"model": cfg.Model, "messages": msgs}
		if req.MaxTokens > 0 {
			body["max_tokens"] = req.MaxTokens
		}
		if o.ZeroTemperature {
			body["temperature"] = 0
		}
		if o.JSONObject {
			body["response_format"] = map[string]any{"type": "json_object"}
		}
		if c.h.key != "" {
			headers["Authorization"] = "Bearer " + c.h.key
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		hreq.Header.Set(k, v)
	}
	resp, err := c.h.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("llm: request failed: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, ErrRead
	}
	if len(b) > MaxAnswerBytes {
		return nil, ErrOversize
	}
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(b[:min(len(b), 4096)]))}
	}
	if cfg.Provider == "anthropic" {
		return parseAnthropicAnswer(b)
	}
	return parseOpenAIAnswer(b)
}

func parseAnthropicAnswer(b []byte) (*Response, error) {
	var a struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, ErrMalformed
	}
	out := &Response{Usage: Usage{InputTokens: a.Usage.InputTokens, OutputTokens: a.Usage.OutputTokens}}
	if a.StopReason == "refusal" {
		return out, ErrRefusal
	}
	var text strings.Builder
	for _, c := range a.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	out.Text = text.String()
	return out, nil
}

func parseOpenAIAnswer(b []byte) (*Response, error) {
	var o struct {
		Choices []struct {
			Message struct {
				Content string  `json:"content"`
				Refusal *string `json:"refusal"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &o); err != nil || len(o.Choices) == 0 {
		return nil, ErrMalformed
	}
	out := &Response{Usage: Usage{InputTokens: o.Usage.PromptTokens, OutputTokens: o.Usage.CompletionTokens}}
	if r := o.Choices[0].Message.Refusal; r != nil && *r != "" {
		return out, ErrRefusal
	}
	out.Text = o.Choices[0].Message.Content
	return out, nil
}
