// Package scripted is a model server for tests: it speaks the Anthropic Messages API (Claude Code),
// the OpenAI Responses API (Codex 0.169) and OpenAI chat completions (Codex 0.42 / 0.57), streamed
// as server-sent events the way the real APIs stream them, and answers with a script instead of a
// model. Real agent runtimes run offline against it on 127.0.0.1.
//
// Turns are scripted by counting the tool results already in the request's history: a request with
// k tool results gets the k-th scripted step (a tool call), and once the steps are used up the
// final text. A request that offers no tools (a runtime's side query: titles, quota probes) gets the
// final text too. The server is stateless per request, so one script serves any number of runs.
//
// The tool results it sees are kept (Results) so a test can read what the runtime told the model,
// for instance the reason a hook gave for a block. Request bodies carry the vendors' system prompts:
// they are kept in memory only, never written anywhere.
//
// Only packages under shield/proxy (tests of the runtime adapters) import it.
package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxBody bounds a request body. The runtimes send their full system prompt and tool list with
// every turn (Claude Code: a few hundred KB).
const MaxBody = 32 << 20

// Step is one scripted model turn: a tool call (Tool set) or a text answer (Tool empty).
type Step struct {
	// Tool is the tool name as the runtime offered it: "Bash" (Claude Code), "exec_command"
	// (Codex 0.169), "shell" (Codex 0.42 / 0.57), "mcp__fs__read_text_file" (Claude Code MCP),
	// or the bare MCP tool name with Namespace set (Codex 0.169 MCP).
	Tool string
	// Namespace is the Responses API namespace of an MCP tool ("mcp__fs"); Codex only.
	Namespace string
	// Args is the call's arguments, a JSON object.
	Args json.RawMessage
	// Text is the answer of a text step.
	Text string
}

// Call returns a tool-call step with args marshalled to JSON (it panics on a value that cannot be
// marshalled: a bug in the test).
func Call(tool string, args any) Step {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("scripted.Call(%s): %v", tool, err))
	}
	return Step{Tool: tool, Args: b}
}

// Request is what the server noted about one request.
type Request struct {
	Path        string
	API         string // "messages", "responses", "chat", "count_tokens", "models"
	Stream      bool
	ToolResults int // tool results in the history
	Tools       int // tools offered
	Step        int // index of the step answered, -1 for the final text
	Model       string
}

// Server is a scripted model server on 127.0.0.1.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT (the runtimes append /v1/...).
	URL string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	steps    []Step
	final    string
	requests []Request
	results  []string
	seq      int
}

// Start serves steps on a fresh 127.0.0.1 port; final is the text answered once the steps are used
// up ("" means "done").
func Start(steps []Step, final string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted model server: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	s.SetScript(steps, final)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// SetScript replaces the script (and clears nothing else).
func (s *Server) SetScript(steps []Step, final string) {
	if final == "" {
		final = "done"
	}
	s.mu.Lock()
	s.steps, s.final = append([]Step(nil), steps...), final
	s.mu.Unlock()
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Requests returns what was asked so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Results returns the text of every distinct tool result seen in a history, in the order first
// seen: what the runtime reported back to the model for each call.
func (s *Server) Results() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}

// Reset forgets the requests and results seen.
func (s *Server) Reset() {
	s.mu.Lock()
	s.requests, s.results = nil, nil
	s.mu.Unlock()
}

func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

// pick returns the step for a request with n tool results and tools offered, or the final text.
func (s *Server) pick(r Request, results []string) (Step, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, x := range s.results {
		seen[x] = true
	}
	for _, x := range results {
		if !seen[x] {
			s.results = append(s.results, x)
			seen[x] = true
		}
	}
	idx := -1
	step := Step{Text: s.final}
	if r.Tools > 0 && r.ToolResults < len(s.steps) {
		idx, step = r.ToolResults, s.steps[r.ToolResults]
	}
	r.Step = idx
	s.requests = append(s.requests, r)
	return step, idx
}

func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := req.URL.Path
	if req.Method == http.MethodGet && strings.HasSuffix(path, "/models") {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: path, API: "models", Step: -1})
		s.mu.Unlock()
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		return
	}
	if req.Method != http.MethodPost {
		http.Error(w, "scripted model server: POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
	if err != nil || len(body) > MaxBody {
		http.Error(w, "scripted model server: body unreadable or over the bound", http.StatusRequestEntityTooLarge)
		return
	}
	switch {
	case strings.HasSuffix(path, "/messages/count_tokens"):
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: path, API: "count_tokens", Step: -1})
		s.mu.Unlock()
		writeJSON(w, map[string]any{"input_tokens": len(body) / 4})
	case strings.HasSuffix(path, "/messages"):
		s.messages(w, path, body)
	case strings.HasSuffix(path, "/responses"):
		s.responses(w, path, body)
	case strings.HasSuffix(path, "/chat/completions"):
		s.chat(w, path, body)
	default:
		http.Error(w, "scripted model server: unknown endpoint "+path, http.StatusNotFound)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func badRequest(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"type": "error",
		"error": map[string]any{"type": "invalid_request_error", "message": "scripted model server: " + err.Error()}})
}

// sse writes server-sent events and flushes each one, as the real APIs stream them.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes "event: name" (when name is set) and "data: JSON".
func (e *sse) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	if s, ok := data.(string); ok {
		fmt.Fprintf(&b, "data: %s\n\n", s)
	} else {
		j, _ := json.Marshal(data)
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	e.w.Write(b.Bytes())
	if e.f != nil {
		e.f.Flush()
	}
}

// textOf flattens a tool result's content (a string, or a list of blocks with "text").
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		parts := make([]string, 0, len(blocks))
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func args(st Step) string {
	if len(st.Args) == 0 {
		return "{}"
	}
	return string(st.Args)
}
