package hook

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// The test binary doubles as a minimal MCP stdio server (SHIELD_TEST_MCP_SERVER=1) offering one
// tool, write_file {path, content}, which really writes: a real runtime launches it through its
// MCP config, and a file that appears proves a call ran.
func TestMain(m *testing.M) {
	if os.Getenv("SHIELD_TEST_MCP_SERVER") == "1" {
		serveMCP()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveMCP() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 8<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Arguments       struct {
					Path    string `json:"path"`
					Content string `json:"content"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue // a notification or a response
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "initialize":
			v := req.Params.ProtocolVersion
			if v == "" {
				v = "2025-06-18"
			}
			reply["result"] = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "shield-test-fs", "version": "0"}}
		case "ping":
			reply["result"] = map[string]any{}
		case "tools/list":
			reply["result"] = map[string]any{"tools": []any{map[string]any{"name": "write_file", "description": "write a file",
				"inputSchema": map[string]any{"type": "object", "required": []string{"path", "content"},
					"properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}}}}}}
		case "tools/call":
			text, isErr := "wrote "+req.Params.Arguments.Path, false
			if req.Params.Name != "write_file" {
				text, isErr = "unknown tool "+req.Params.Name, true
			} else if err := os.WriteFile(req.Params.Arguments.Path, []byte(req.Params.Arguments.Content), 0o644); err != nil {
				text, isErr = err.Error(), true
			}
			reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isErr}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": fmt.Sprintf("method not found: %s", req.Method)}
		}
		out.Encode(reply)
	}
}
