package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/sandbox"
)

// modelDouble is a test double for an LLM: a server on 127.0.0.1 speaking the OpenAI chat
// completions protocol (SSE streaming) with scripted replies. Its script: first a harmless tool
// call, then a destructive one, then a text answer; which step it is on is read from how many
// tool results the request carries.
func modelDouble(t *testing.T, destructive string) (*httptest.Server, *[]int) {
	var mu sync.Mutex
	var toolCounts []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Stream bool `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || !req.Stream {
			http.Error(w, "want a streaming JSON request", http.StatusBadRequest)
			return
		}
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		mu.Lock()
		toolCounts = append(toolCounts, tools)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(v any) {
			b, _ := json.Marshal(v)
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		toolCall := func(id, name, args string) {
			send(map[string]any{"id": "c", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0,
				"delta": map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": id, "type": "function",
					"function": map[string]any{"name": name, "arguments": args}}}}}}})
			send(map[string]any{"id": "c", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "tool_calls"}}})
		}
		switch tools {
		case 0:
			toolCall("call_1", "read_file", `{"path":"notes.txt"}`)
		case 1:
			args, _ := json.Marshal(map[string]string{"command": destructive})
			toolCall("call_2", "execute_command", string(args))
		default:
			for _, piece := range []string{"All ", "done."} {
				send(map[string]any{"id": "c", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}}}})
			}
			send(map[string]any{"id": "c", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
		}
		send(map[string]any{"id": "c", "choices": []any{}, "usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &toolCounts
}

// TestEndToEnd runs the real binaries: shield start (process manager → engine → sandboxed agent),
// a model double on 127.0.0.1, and shield chat. The agent proposes reading a file and deleting
// the workspace; the read runs, the delete is blocked and never executed.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end test builds and runs the real binaries")
	}
	if sandbox.LandlockABI() < 1 {
		t.Skip("kernel without Landlock: the engine refuses to start an unsandboxed agent")
	}
	if _, ok := commands["internal-agent"]; !ok {
		t.Fatal("internal-agent is not registered")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "shield")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("remember the milk\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644)
	state := filepath.Join(dir, "state")

	srv, calls := modelDouble(t, "rm -rf "+ws)
	cfg := fmt.Sprintf("llm:\n  provider: openai\n  base_url: %s/v1\n  model: test-model\n  api_key_env: SHIELD_TEST_LLM_KEY\n", srv.URL)
	cfgPath := filepath.Join(dir, "engine.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o600)

	start := exec.Command(bin, "start", "--workspace", ws, "--config", cfgPath, "--state-dir", state)
	start.Env = append(os.Environ(), "SHIELD_TEST_LLM_KEY=test-key")
	stdout, _ := start.StdoutPipe()
	var stderr strings.Builder
	start.Stderr = &stderr
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		start.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { start.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			start.Process.Kill()
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "engine ready") {
				ready <- sc.Text()
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("engine not ready; stderr:\n%s", stderr.String())
	}

	// One instance per workspace.
	second := exec.Command(bin, "start", "--workspace", ws, "--config", cfgPath, "--state-dir", state)
	if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "another shield start is running") {
		t.Errorf("second start for the same workspace: %v %s", err, out)
	}

	// The agent connects after its canary run; chat retries while no agent is connected.
	var out []byte
	var err error
	for deadline := time.Now().Add(60 * time.Second); ; {
		chat := exec.Command(bin, "chat", "--workspace", ws, "--state-dir", state, "--json", "tidy the workspace")
		out, err = chat.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "no agent is connected") || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("chat: %v\n%s\nengine stderr:\n%s", err, out, stderr.String())
	}
	var seq []string
	verdicts := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var ev struct {
			Type, Tool, Decision, CallID string
			Rules                        []string
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		if ev.Type == "LLM_TOKEN" && len(seq) > 0 && seq[len(seq)-1] == "LLM_TOKEN" {
			continue
		}
		seq = append(seq, ev.Type)
		if ev.Type == "SHIELD_VERDICT" {
			verdicts[ev.Tool] = ev.Decision
		}
	}
	want := "ACTION_STARTED SHIELD_VERDICT ACTION_COMPLETED ACTION_STARTED SHIELD_VERDICT LLM_TOKEN RESPONSE_COMPLETE"
	if got := strings.Join(seq, " "); !strings.HasSuffix(got, want) {
		t.Errorf("event order:\n got %s\nwant …%s", got, want)
	}
	if verdicts["read_file"] != "ALLOW" || verdicts["execute_command"] != "BLOCK" {
		t.Errorf("verdicts = %v, want read_file ALLOW, execute_command BLOCK", verdicts)
	}
	for _, f := range []string{"notes.txt", "src/main.go"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s is gone: the blocked delete ran", f)
		}
	}
	if len(*calls) != 3 {
		t.Errorf("model requests = %v, want 3 (one per step)", *calls)
	}

	// The audit trail holds both decisions and the canary report, and verifies.
	q := exec.Command(bin, "audit", "query", "--dir", filepath.Join(state, "audit"), "--json")
	qout, err := q.CombinedOutput()
	if err != nil {
		t.Fatalf("audit query: %v\n%s", err, qout)
	}
	for _, wantRec := range []string{`"sandbox_canary_result"`, `"agent_started"`, `"agent_ready"`, `"read_file"`, `"execute_command"`, `"BLOCK"`} {
		if !strings.Contains(string(qout), wantRec) {
			t.Errorf("audit lacks %s", wantRec)
		}
	}
}
