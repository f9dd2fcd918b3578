// Package llm talks to language models over their real HTTP APIs: OpenAI-compatible chat
// completions (OpenAI, vLLM, llama.cpp server, Ollama) and the Anthropic Messages API, both
// streamed (server-sent events), with tool calls and token usage.
//
// The agent (streamed turns with tools) and the judge (Completer: one bounded, non-streamed
// answer) both use it: one LLM client for the product.
package llm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config selects a provider (config keys llm.provider, llm.base_url, llm.model, llm.api_key_env).
type Config struct {
	Provider  string `yaml:"provider"`    // "openai" (any OpenAI-compatible server) or "anthropic"
	BaseURL   string `yaml:"base_url"`    // e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1
	Model     string `yaml:"model"`       // model name
	APIKeyEnv string `yaml:"api_key_env"` // environment variable holding the API key (never the key itself)
	// MaxRetries for 429, 5xx and connection errors before any output streamed. Default 3.
	MaxRetries int `yaml:"max_retries"`
	// Timeout bounds one request including its stream. Default 5 minutes.
	Timeout time.Duration `yaml:"timeout"`
}

// Message is one conversation message.
type Message struct {
	Role       string     // "system", "user", "assistant", "tool"
	Content    string     //
	ToolCallID string     // for role "tool": the call answered
	ToolCalls  []ToolCall // for role "assistant": the calls it made
}

// ToolCall is a call the model asks for.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Name        string
	Description string
	Parameters  string // JSON Schema text
}

// Request is one model turn.
type Request struct {
	System    string
	Messages  []Message
	Tools     []ToolDef
	MaxTokens int
}

// Usage counts tokens of one turn.
type Usage struct{ InputTokens, OutputTokens int64 }

// Response is a completed turn.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Provider streams one model turn, calling onText for each text delta, and returns the whole turn.
type Provider interface {
	Stream(ctx context.Context, req Request, onText func(string)) (*Response, error)
	Name() string
}

// New returns the provider a config names.
func New(cfg Config) (Provider, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("llm: base_url and model are required")
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Minute
	}
	h := &httpClient{cfg: cfg, key: key, client: &http.Client{}}
	switch cfg.Provider {
	case "openai", "":
		return &OpenAI{h: h}, nil
	case "anthropic":
		return &Anthropic{h: h}, nil
	}
	return nil, fmt.Errorf("llm: unknown provider %q (want openai or anthropic)", cfg.Provider)
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string { return fmt.Sprintf("llm: HTTP %d: %s", e.Code, e.Body) }

type httpClient struct {
	cfg    Config
	key    string
	client *http.Client
}

// post sends body and returns the response of a 2xx answer, retrying 429/5xx/connection errors
// with exponential backoff (honouring Retry-After) before any byte of the stream is read.
func (h *httpClient) post(ctx context.Context, url string, body []byte, headers map[string]string) (*http.Response, error) {
	backoff := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := h.client.Do(req)
		retry := err != nil
		if err == nil {
			if resp.StatusCode/100 == 2 {
				return resp, nil
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			err = &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(b))}
			retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 && s < 60 {
				backoff = time.Duration(s) * time.Second
			}
		}
		if !retry || attempt >= h.cfg.MaxRetries || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff *= 2
	}
}

// maxSSELine bounds one server-sent-event line.
const maxSSELine = 1 << 20

// sse calls fn with the event name and data of each server-sent event until fn returns stop.
func sse(r io.Reader, fn func(event, data string) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSSELine)
	event := ""
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				stop, err := fn(event, strings.Join(data, "\n"))
				if err != nil || stop {
					return err
				}
			}
			event, data = "", nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("llm: read stream: %w", err)
	}
	if len(data) > 0 {
		_, err := fn(event, strings.Join(data, "\n"))
		return err
	}
	return errors.New("llm: stream ended before completion")
}
