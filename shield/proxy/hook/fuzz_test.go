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
