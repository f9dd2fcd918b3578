package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const cmdClaude = "/usr/bin/shield hook claude-code --timeout 4m50s --socket /var/lib/shield/shield.sock"
const cmdCodex = "/usr/bin/shield hook codex --timeout 4m50s --socket /var/lib/shield/shield.sock"

func TestMergeClaudeSettingsKeepsOthersAndIsIdempotent(t *testing.T) {
	t.Parallel()
	existing := `{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh <x> & y"}]}]
  }
}`
	once, err := MergeClaudeSettings([]byte(existing), cmdClaude, 300)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := MergeClaudeSettings(once, cmdClaude, 300)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) {
		t.Errorf("second install changed the file:\n%s\n---\n%s", once, twice)
	}
	var got map[string]any
	if err := json.Unmarshal(once, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":       "opus",
		"permissions": map[string]any{"allow": []any{"Bash(ls:*)"}},
		"hooks": map[string]any{
			"PostToolUse": []any{map[string]any{"matcher": "Write", "hooks": []any{map[string]any{"type": "command", "command": "fmt.sh"}}}},
			"PreToolUse": []any{
				map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "audit.sh <x> & y"}}},
				map[string]any{"matcher": ".*", "hooks": []any{map[string]any{"type": "command", "command": cmdClaude, "timeout": 300.0}}},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(once), "{\n  \"model\"") {
		t.Errorf("member order not kept:\n%s", once)
	}
	// A new timeout or socket replaces the Shield entry in place.
	updated, err := MergeClaudeSettings(once, strings.Replace(cmdClaude, "4m50s", "50s", 1), 60)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(updated), "hook claude-code"); n != 1 || !strings.Contains(string(updated), `"timeout": 60`) {
		t.Errorf("update: %d Shield entries\n%s", n, updated)
	}
}

func TestMergeSettingsFromNothingAndRefusals(t *testing.T) {
	t.Parallel()
	out, err := MergeClaudeSettings(nil, cmdClaude, 300)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks struct {
			PreToolUse []hookGroup
		}
	}
	if err := json.Unmarshal(out, &s); err != nil || len(s.Hooks.PreToolUse) != 1 || s.Hooks.PreToolUse[0].Hooks[0].Command != cmdClaude {
		t.Fatalf("from nothing: %s (%v)", out, err)
	}
	for name, in := range map[string]string{
		"not json":              `{"hooks":`,
		"array":                 `[]`,
		"hooks not object":      `{"hooks":[]}`,
		"PreToolUse not a list": `{"hooks":{"PreToolUse":{}}}`,
		"duplicate key":         `{"a":1,"a":2}`,
		"two shield groups": `{"hooks":{"PreToolUse":[{"hooks":[{"command":"/x/shield hook claude-code"}]},` +
			`{"hooks":[{"command":"/y/shield hook claude-code"}]}]}}`,
	} {
		if _, err := MergeClaudeSettings([]byte(in), cmdClaude, 300); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The trust hash Codex 0.169 computed for a hook (app-server hooks/list, currentHash) is reproduced.
func TestCodexTrustHashMatchesCodex(t *testing.T) {
	t.Parallel()
	if got, want := CodexTrustHash("/tmp/hk/hook.sh", 30, ""), "sha256:cc2e4d1ffe50e76ad85722080219bded4387e2367fc9e54a2366bfdd76d36b6a"; got != want {
		t.Errorf("hash %s, want %s (observed from codex 0.169.0)", got, want)
	}
	if CodexTrustHash("a", 30, "") == CodexTrustHash("a", 31, "") || CodexTrustHash("a", 30, "") == CodexTrustHash("b", 30, "") ||
		CodexTrustHash("a", 30, "") == CodexTrustHash("a", 30, "Bash") {
		t.Error("the hash ignores the command, the timeout or the matcher")
	}
}

func TestMergeCodexHooksIndex(t *testing.T) {
	t.Parallel()
	existing := `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"other.sh"}]}]}}`
	out, idx, err := MergeCodexHooks([]byte(existing), cmdCodex, 300)
	if err != nil || idx != 1 {
		t.Fatalf("idx %d err %v", idx, err)
	}
	again, idx2, err := MergeCodexHooks(out, cmdCodex, 300)
	if err != nil || idx2 != 1 || string(again) != string(out) {
		t.Fatalf("second install: idx %d err %v\n%s\n---\n%s", idx2, err, out, again)
	}
	if strings.Contains(string(out), "matcher") {
		t.Errorf("Codex hook has a matcher (it must see every tool):\n%s", out)
	}
	if CodexTrustKey("/h/hooks.json", idx) != "/h/hooks.json:pre_tool_use:1:0" {
		t.Error(CodexTrustKey("/h/hooks.json", idx))
	}
}

func TestMergeCodexConfig(t *testing.T) {
	t.Parallel()
	existing := "model = \"gpt\"\n\n[projects.\"/already\"]\ntrust_level = \"trusted\"\n\n[hooks.state.\"/other:pre_tool_use:0:0\"]\nenabled = false\n"
	trust := CodexTrust{Hooks: map[string]string{`/h/"q"/hooks.json:pre_tool_use:0:0`: "sha256:aa"}, Projects: []string{"/proj", "/already"}}
	once, err := MergeCodexConfig([]byte(existing), trust)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := MergeCodexConfig(once, trust)
	if err != nil || string(twice) != string(once) {
		t.Fatalf("second install changed the file (%v):\n%s\n---\n%s", err, once, twice)
	}
	want := existing + "\n" + tomlBegin + "\n" +
		"[projects.\"/proj\"]\ntrust_level = \"trusted\"\n" +
		"[hooks.state.\"/h/\\\"q\\\"/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:aa\"\n" + tomlEnd + "\n"
	if diff := cmp.Diff(want, string(once)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	// A second hook (the project's) joins the block; a changed hash replaces the old one.
	more, err := MergeCodexConfig(once, CodexTrust{Hooks: map[string]string{"/p/.codex/hooks.json:pre_tool_use:0:0": "sha256:bb",
		`/h/"q"/hooks.json:pre_tool_use:0:0`: "sha256:cc"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(more), "trusted_hash") != 2 || strings.Contains(string(more), "sha256:aa") || strings.Count(string(more), tomlBegin) != 1 {
		t.Errorf("merged block:\n%s", more)
	}
	for name, in := range map[string]string{
		"state outside the block": "[hooks.state.\"/h/\\\"q\\\"/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"x\"\n",
		"hooks inline":            "hooks = { PreToolUse = [] }\n",
		"unterminated block":      tomlBegin + "\n",
	} {
		if _, err := MergeCodexConfig([]byte(in), trust); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTomlQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "/a b/c", `q"uo\te`, "tab\tnl\n\x01\x7f", "ünï"} {
		if got := tomlUnquote(tomlQuote(s)); got != s {
			t.Errorf("%q → %s → %q", s, tomlQuote(s), got)
		}
	}
}
