package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Installing a hook edits a runtime's settings in place: existing settings and other hooks are
// kept, the one Shield entry is added or replaced (found by its command, which names
// `hook claude-code` or `hook codex`), and running an install twice changes nothing the second
// time. These functions work on the file contents; the CLI reads and writes the files.

// MaxSettings bounds a settings file an install reads.
const MaxSettings = 4 << 20

// IsShieldCommand reports whether a hook command is one Shield installed for runtime rt.
func IsShieldCommand(command string, rt Runtime) bool {
	return strings.Contains(command, " hook "+string(rt)) && strings.Contains(command, "shield")
}

// member is one key of a JSON object, kept in file order.
type member struct {
	Key   string
	Value json.RawMessage
}

// object is a JSON object whose member order is kept.
type object []member

func (o object) get(k string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.Key == k {
			return m.Value, true
		}
	}
	return nil, false
}

func (o *object) set(k string, v json.RawMessage) {
	for i, m := range *o {
		if m.Key == k {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, member{k, v})
}

func decodeObject(b []byte, what string) (object, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return object{}, nil
	}
	if err := checkJSON(b); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '{', checked above
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var o object
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		o = append(o, member{k, v})
	}
	return o, nil
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshalNoEscape(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func indent(v any) ([]byte, error) {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// hookGroup is one PreToolUse matcher group, as both runtimes write it.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

type hookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// mergePreToolUse puts group into settings["hooks"]["PreToolUse"], replacing the group that holds
// a Shield command for rt, else appending. It returns the new settings and the group's index.
func mergePreToolUse(settings []byte, what string, rt Runtime, group hookGroup) ([]byte, int, error) {
	if len(settings) > MaxSettings {
		return nil, 0, fmt.Errorf("%s: over %d bytes", what, MaxSettings)
	}
	top, err := decodeObject(settings, what)
	if err != nil {
		return nil, 0, err
	}
	hooks := object{}
	if raw, ok := top.get("hooks"); ok && string(raw) != "null" {
		if hooks, err = decodeObject(raw, what+": hooks"); err != nil {
			return nil, 0, err
		}
	}
	var groups []json.RawMessage
	if raw, ok := hooks.get("PreToolUse"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, 0, fmt.Errorf("%s: hooks.PreToolUse is not a list: %w", what, err)
		}
	}
	g, err := marshalNoEscape(group)
	if err != nil {
		return nil, 0, err
	}
	idx := -1
	for i, raw := range groups {
		var existing struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(raw, &existing) != nil {
			continue
		}
		for _, h := range existing.Hooks {
			if IsShieldCommand(h.Command, rt) {
				if idx >= 0 {
					return nil, 0, fmt.Errorf("%s: more than one PreToolUse group runs `shield hook %s`; keep one", what, rt)
				}
				idx = i
			}
		}
	}
	if idx >= 0 {
		groups[idx] = g
	} else {
		groups = append(groups, g)
		idx = len(groups) - 1
	}
	list, err := marshalNoEscape(groups)
	if err != nil {
		return nil, 0, err
	}
	hooks.set("PreToolUse", list)
	hb, _ := hooks.MarshalJSON()
	top.set("hooks", hb)
	out, err := indent(top)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", what, err)
	}
	return out, idx, nil
}

// MergeClaudeSettings adds (or updates) the Shield PreToolUse command hook in a Claude Code
// settings.json: matcher ".*" (every tool, MCP tools included), the given command and timeout in
// seconds. Everything else in the file is kept, in order.
func MergeClaudeSettings(settings []byte, command string, timeoutSec int) ([]byte, error) {
	out, _, err := mergePreToolUse(settings, "Claude Code settings", ClaudeCode,
		hookGroup{Matcher: ".*", Hooks: []hookHandler{{Type: "command", Command: command, Timeout: timeoutSec}}})
	return out, err
}

// MergeCodexHooks adds (or updates) the Shield PreToolUse command hook in a Codex hooks.json
// (no matcher: every tool, shell and MCP). It returns the new file and the group's index, which
// is part of the key Codex trusts the hook under (CodexTrustKey).
func MergeCodexHooks(hooksJSON []byte, command string, timeoutSec int) ([]byte, int, error) {
	return mergePreToolUse(hooksJSON, "Codex hooks.json", Codex,
		hookGroup{Hooks: []hookHandler{{Type: "command", Command: command, Timeout: timeoutSec}}})
}

// CodexTrustKey is the key of a hook's entry in Codex's [hooks.state] table: the file that
// declares it, the event, the group and the handler index (Codex 0.169).
func CodexTrustKey(sourcePath string, group int) string {
	return fmt.Sprintf("%s:pre_tool_use:%d:0", sourcePath, group)
}

// CodexTrustHash is the hash Codex 0.169 trusts a PreToolUse command hook under: SHA-256 of the
// hook's normalised identity as compact JSON with sorted keys. Codex skips an untrusted hook
// silently (and runs the tool), so the install writes it; the hash covers the command and the
// timeout, and a changed command is untrusted again.
func CodexTrustHash(command string, timeoutSec int, matcher string) string {
	id := map[string]any{"event_name": "pre_tool_use",
		"hooks": []any{map[string]any{"async": false, "command": command, "timeout": timeoutSec, "type": "command"}}}
	if matcher != "" {
		id["matcher"] = matcher
	}
	b, _ := marshalNoEscape(id) // map keys are sorted; no HTML escaping, as serde_json
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Markers delimiting the block an install manages in Codex's config.toml.
const (
	tomlBegin = "# >>> shield hook install: managed block, rewritten by `shield hook install codex` >>>"
	tomlEnd   = "# <<< shield hook install <<<"
)

// CodexTrust is what the install writes into Codex's user config.toml.
type CodexTrust struct {
	// Hooks maps hook keys (CodexTrustKey) to trusted hashes.
	Hooks map[string]string
	// Projects lists project directories to mark trusted (a project's .codex/ hooks load only then).
	Projects []string
}

// MergeCodexConfig writes trust into the managed block of a Codex config.toml, keeping what the
// block held before for other keys and leaving everything outside it untouched (the block moves
// to the end of the file). It refuses a file that already declares one of the same tables outside
// the block, or defines hooks inline, where an appended table would break the file.
func MergeCodexConfig(config []byte, trust CodexTrust) ([]byte, error) {
	if len(config) > MaxSettings {
		return nil, fmt.Errorf("Codex config.toml: over %d bytes", MaxSettings)
	}
	for k, v := range trust.Hooks {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("Codex config.toml: hook key %q is empty or not UTF-8 (TOML cannot hold it)", k)
		}
	}
	for _, p := range trust.Projects {
		if p == "" || !utf8.ValidString(p) {
			return nil, fmt.Errorf("Codex config.toml: project %q is empty or not UTF-8 (TOML cannot hold it)", p)
		}
	}
	outside, block, err := splitManaged(string(config))
	if err != nil {
		return nil, err
	}
	prevHooks, prevProjects := parseManaged(block)
	for k, v := range trust.Hooks {
		prevHooks[k] = v
	}
	for _, p := range trust.Projects {
		prevProjects[p] = true
	}
	for _, line := range strings.Split(outside, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "hooks") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, "hooks")), "=") {
			return nil, errors.New("Codex config.toml defines hooks inline (hooks = {...}); add the trust entry by hand")
		}
		for k := range prevHooks {
			if l == "[hooks.state."+tomlQuote(k)+"]" {
				return nil, fmt.Errorf("Codex config.toml already has [hooks.state.%s] outside Shield's block; remove it and install again", tomlQuote(k))
			}
		}
		for p := range prevProjects {
			if l == "[projects."+tomlQuote(p)+"]" {
				delete(prevProjects, p) // the user's own entry stands
			}
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(outside, "\n"))
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(tomlBegin + "\n")
	for _, p := range sortedKeys(prevProjects) {
		fmt.Fprintf(&b, "[projects.%s]\ntrust_level = \"trusted\"\n", tomlQuote(p))
	}
	for _, k := range sortedKeys(prevHooks) {
		fmt.Fprintf(&b, "[hooks.state.%s]\ntrusted_hash = %s\n", tomlQuote(k), tomlQuote(prevHooks[k]))
	}
	b.WriteString(tomlEnd + "\n")
	return []byte(b.String()), nil
}

// splitManaged returns the file without the managed block, and the block's lines.
func splitManaged(s string) (outside, block string, err error) {
	i := strings.Index(s, tomlBegin)
	if e := strings.Index(s, tomlEnd); e >= 0 && (i < 0 || e < i) {
		return "", "", errors.New("Codex config.toml: a Shield end marker without its begin marker; fix the file by hand")
	}
	if i < 0 {
		return s, "", nil
	}
	j := strings.Index(s[i:], tomlEnd)
	if j < 0 {
		return "", "", errors.New("Codex config.toml: Shield's managed block has no end marker; fix the file by hand")
	}
	j += i + len(tomlEnd)
	if strings.Contains(s[j:], tomlBegin) || strings.Contains(s[j:], tomlEnd) {
		return "", "", errors.New("Codex config.toml: more than one Shield managed block; keep one")
	}
	return s[:i] + strings.TrimLeft(s[j:], "\n"), s[i+len(tomlBegin) : j-len(tomlEnd)], nil
}

// parseManaged reads back the block this package wrote (and nothing more general).
func parseManaged(block string) (map[string]string, map[string]bool) {
	hooks, projects := map[string]string{}, map[string]bool{}
	var key, project string
	for _, line := range strings.Split(block, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "[hooks.state.") && strings.HasSuffix(l, "]"):
			key, project = tomlUnquote(strings.TrimSuffix(strings.TrimPrefix(l, "[hooks.state."), "]")), ""
		case strings.HasPrefix(l, "[projects.") && strings.HasSuffix(l, "]"):
			project, key = tomlUnquote(strings.TrimSuffix(strings.TrimPrefix(l, "[projects."), "]")), ""
			if project != "" {
				projects[project] = true
			}
		case strings.HasPrefix(l, "trusted_hash") && key != "":
			if _, v, ok := strings.Cut(l, "="); ok {
				hooks[key] = tomlUnquote(strings.TrimSpace(v))
			}
		}
	}
	return hooks, projects
}

// tomlQuote writes a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlUnquote reads back what tomlQuote wrote; anything else yields "".
func tomlUnquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return ""
	}
	var b strings.Builder
	in := s[1 : len(s)-1]
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(in) {
			return ""
		}
		i++
		switch in[i] {
		case '"', '\\':
			b.WriteByte(in[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 >= len(in) {
				return ""
			}
			var r rune
			if _, err := fmt.Sscanf(in[i+1:i+5], "%04X", &r); err != nil {
				return ""
			}
			b.WriteRune(r)
			i += 4
		default:
			return ""
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
