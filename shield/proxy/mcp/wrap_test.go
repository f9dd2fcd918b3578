package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWrapCodexTOML(t *testing.T) {
	in := `model = "m"  # keep me
[mcp_servers.fs]
command = "npx" # the launcher
args = ["-y", '@modelcontextprotocol/server-filesystem', "/home/u/p # not a comment"]
[mcp_servers.fs.env]
KEY = "v"

[mcp_servers."git.server"]
  command = 'uvx'

[projects."/w"]
trust_level = "trusted"
`
	out, err := WrapCodexTOML([]byte(in), "/usr/bin/shield", []string{"--socket", "/run/shield.sock"})
	if err != nil {
		t.Fatal(err)
	}
	want := `model = "m"  # keep me
[mcp_servers.fs]
command = "/usr/bin/shield"
args = ["proxy", "mcp", "--server", "fs", "--socket", "/run/shield.sock", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/u/p # not a comment"]
[mcp_servers.fs.env]
KEY = "v"

[mcp_servers."git.server"]
  command = "/usr/bin/shield"
  args = ["proxy", "mcp", "--server", "git.server", "--socket", "/run/shield.sock", "--", "uvx"]

[projects."/w"]
trust_level = "trusted"
`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Wrapping twice changes nothing.
	again, err := WrapCodexTOML(out, "/usr/bin/shield", []string{"--socket", "/run/shield.sock"})
	if err != nil || string(again) != want {
		t.Fatalf("second wrap: %v\n%s", err, again)
	}
}

func TestWrapRefusesWhatItCannotGuard(t *testing.T) {
	for name, in := range map[string]string{
		"http server":     "[mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\n",
		"no command":      "[mcp_servers.x]\nenv = { A = \"b\" }\n",
		"dotted keys":     "mcp_servers.fs.command = \"npx\"\n",
		"inline table":    "mcp_servers = { fs = { command = \"npx\" } }\n",
		"multi-line args": "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\n  \"a\",\n]\n",
		"table of tables": "[mcp_servers]\nfs.command = \"npx\"\n",
	} {
		if _, err := WrapCodexTOML([]byte(in), "/usr/bin/shield", nil); err == nil {
			t.Errorf("%s: wrapped", name)
		}
	}
	if _, err := WrapJSON([]byte(`{"mcpServers":{"a":{"command":"x"},"b":{"type":"http","url":"http://h/mcp"}}}`), "/s", nil); err == nil || !strings.Contains(err.Error(), "b") {
		t.Errorf("JSON with an HTTP server: %v", err)
	}
}

func TestWrapJSON(t *testing.T) {
	out, err := WrapJSON([]byte(`{"other":1,"mcpServers":{"fs":{"type":"stdio","command":"node","args":["srv.js","/w"],"env":{"A":"b"}}}}`), "/s", []string{"--addr", "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Other      int
		McpServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	fs := doc.McpServers["fs"]
	if doc.Other != 1 || fs.Command != "/s" || strings.Join(fs.Args, " ") != "proxy mcp --server fs --addr 127.0.0.1:1 -- node srv.js /w" || fs.Env["A"] != "b" {
		t.Fatalf("wrapped %s", out)
	}
}
