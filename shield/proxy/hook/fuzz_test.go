package hook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "input", "*.json"))
	if len(files) == 0 {
		f.Fatal("no seeds in testdata/input")
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"rm"}}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"mcp____x","tool_input":null}`))
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"a":[[[[{}]]]]}} {}`))
}

// FuzzDecode: no input crashes the decoder, and what it accepts maps to a call the appliance can
// take: a tool name and arguments that are one JSON object.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Decode(b)
		if err != nil {
			return
		}
		c := in.Call()
		if strings.TrimSpace(c.Tool) == "" {
			t.Fatalf("accepted without a tool: %q", b)
		}
		var args map[string]json.RawMessage
		if err := json.Unmarshal(c.Arguments, &args); err != nil || args == nil {
			t.Fatalf("arguments %q are not a JSON object (%v) for %q", c.Arguments, err, b)
		}
		if in.HookEventName != "PreToolUse" {
			t.Fatalf("accepted event %q", in.HookEventName)
		}
	})
}

// FuzzMergeClaudeSettings: whatever settings file the install finds, it either refuses it or
// writes a JSON object holding exactly one Shield entry, keeps every other top-level member, and
// a second install changes nothing.
func FuzzMergeClaudeSettings(f *testing.F) {
	f.Add([]byte(``))
	f.Add([]byte(`{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"a"}]}]}}`))
	f.Add([]byte(`{"hooks":null,"env":{"A":"<b>&"}}`))
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"hooks":[{"command":"/x/shield hook claude-code --timeout 1s"}]}, 7]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := MergeClaudeSettings(b, cmdClaude, 300)
		if err != nil {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(out, &top); err != nil {
			t.Fatalf("wrote invalid JSON %q from %q: %v", out, b, err)
		}
		if n := strings.Count(string(out), cmdClaude); n != 1 {
			t.Fatalf("%d Shield entries in %q", n, out)
		}
		var before map[string]json.RawMessage
		if json.Unmarshal(b, &before) == nil {
			for k, v := range before {
				if k == "hooks" {
					continue
				}
				var a, c bytes.Buffer
				json.Compact(&a, v)
				json.Compact(&c, top[k])
				if a.String() != c.String() {
					t.Fatalf("member %q changed: %s → %s", k, v, top[k])
				}
			}
		}
		again, err := MergeClaudeSettings(out, cmdClaude, 300)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second install differs (%v):\n%s\n---\n%s", err, out, again)
		}
	})
}

// FuzzMergeCodexConfig: whatever config.toml the install finds, it either refuses it or keeps
// every line outside its block, writes exactly one block holding the trust entry, and a second
// install changes nothing.
func FuzzMergeCodexConfig(f *testing.F) {
	f.Add([]byte(""), "/h/hooks.json:pre_tool_use:0:0")
	f.Add([]byte("model = \"x\"\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n"), `/a "b"/hooks.json:pre_tool_use:1:0`)
	f.Add([]byte(tomlBegin+"\n[hooks.state.\"/k\"]\ntrusted_hash = \"sha256:1\"\n"+tomlEnd+"\nmodel = \"y\"\n"), "/k")
	f.Add([]byte("[hooks.state.\"/k\"]\n"), "/k")
	f.Fuzz(func(t *testing.T, config []byte, key string) {
		trust := CodexTrust{Hooks: map[string]string{key: "sha256:ab"}, Projects: []string{"/proj"}}
		out, err := MergeCodexConfig(config, trust)
		if err != nil {
			return
		}
		s := string(out)
		if strings.Count(s, tomlBegin) != 1 || strings.Count(s, tomlEnd) != 1 {
			t.Fatalf("markers in %q", s)
		}
		if !strings.Contains(s, "[hooks.state."+tomlQuote(key)+"]\ntrusted_hash = \"sha256:ab\"\n") {
			t.Fatalf("trust entry missing in %q", s)
		}
		if !strings.Contains(string(config), tomlBegin) {
			for _, line := range strings.Split(string(config), "\n") {
				if !strings.Contains(s, line) {
					t.Fatalf("line %q lost", line)
				}
			}
		}
		again, err := MergeCodexConfig(out, trust)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second install differs (%v):\n%q\n---\n%q", err, out, again)
		}
	})
}
