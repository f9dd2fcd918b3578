package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProxyMCPServerHelper is the MCP server the proxy test launches (the test binary itself):
// it answers tools/list and tools/call on stdio and notes each call it executes on stderr.
func TestProxyMCPServerHelper(t *testing.T) {
	if os.Getenv("SHIELD_TEST_MCP_SERVER") != "1" {
		t.Skip("helper process for TestProxyMCPCommand")
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil || m["id"] == nil {
			continue
		}
		var result any = map[string]any{}
		switch m["method"] {
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "write_file", "annotations": map[string]any{"destructiveHint": true}}}}
		case "tools/call":
			p := m["params"].(map[string]any)
			fmt.Fprintf(os.Stderr, "EXECUTED %v %v\n", p["name"], p["arguments"])
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran"}}}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
	os.Exit(0)
}

// TestProxyMCPCommand: `shield proxy mcp -- SERVER` against the real service: a write to a
// system file is answered isError naming the rule and never executed; a write in the workspace
// is executed; the server's exit status is the proxy's.
func TestProxyMCPCommand(t *testing.T) {
	cfg := &Config{}
	startServe(t, cfg)
	t.Setenv("SHIELD_TEST_MCP_SERVER", "1")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd","content":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/user/project/notes.txt","content":"x"}}}`,
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := runMain(ctx, &cmdEnv{stdin: strings.NewReader(in), stdout: &out, stderr: &errb},
		[]string{"proxy", "mcp", "--socket", cfg.Socket, "--workspace", "/home/user/project", "--server", "fs", "--", os.Args[0], "-test.run=^TestProxyMCPServerHelper$"})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	answers := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("client got %q", line)
		}
		if id, ok := m["id"].(float64); ok {
			answers[id] = m
		}
	}
	blocked, _ := answers[2]["result"].(map[string]any)
	if blocked["isError"] != true || !strings.Contains(fmt.Sprint(blocked["content"]), "cel:files.write-system") {
		t.Errorf("blocked call answered %v", answers[2])
	}
	if allowed, _ := answers[3]["result"].(map[string]any); fmt.Sprint(allowed["content"]) != "[map[text:ran type:text]]" {
		t.Errorf("allowed call answered %v\n%s", answers[3], errb.String())
	}
	if strings.Contains(errb.String(), "EXECUTED write_file map[content:x path:/etc/passwd]") || !strings.Contains(errb.String(), "EXECUTED write_file map[content:x path:/home/user/project/notes.txt]") {
		t.Errorf("what the server executed:\n%s", errb.String())
	}
}

func TestProxyUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy"}, "Usage: shield proxy"},
		{[]string{"proxy", "nope"}, "unknown runtime"},
		{[]string{"proxy", "mcp"}, "give the command to run after --"},
		{[]string{"proxy", "codex"}, "give the command to run after --"},
		{[]string{"proxy", "mcp", "--listen", "0.0.0.0:9000", "--upstream", "http://127.0.0.1:1/mcp"}, "loopback"},
		{[]string{"proxy", "roz", "--upstream", "10.0.0.1:8080"}, "not a loopback address"},
	} {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
