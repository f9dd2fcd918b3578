package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Wrapping rewrites a host's MCP configuration so that every stdio server is launched as
// `SELF proxy mcp --server NAME [FLAGS] -- COMMAND ARGS…`. A server Shield cannot put itself in
// front of this way (an HTTP server, a form the rewriter does not read) is an error naming it:
// a configuration is never returned with a server left unguarded.

// WrapJSON rewrites an mcpServers JSON document (Claude Code's .mcp.json / --mcp-config).
func WrapJSON(data []byte, self string, flags []string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(doc["mcpServers"], &servers); err != nil || servers == nil {
		return nil, fmt.Errorf("no mcpServers object")
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var unguarded []string
	for _, name := range names {
		s := servers[name]
		var typ, cmd string
		_ = json.Unmarshal(s["type"], &typ)
		if json.Unmarshal(s["command"], &cmd) != nil || cmd == "" || (typ != "" && typ != "stdio") {
			unguarded = append(unguarded, name)
			continue
		}
		var args []string
		if raw, ok := s["args"]; ok && json.Unmarshal(raw, &args) != nil {
			return nil, fmt.Errorf("server %s: args is not a list of strings", name)
		}
		if cmd == self && len(args) > 1 && args[0] == "proxy" {
			continue // already wrapped
		}
		s["command"], _ = json.Marshal(self)
		s["args"], _ = json.Marshal(wrappedArgs(name, flags, cmd, args))
	}
	if len(unguarded) > 0 {
		return nil, fmt.Errorf("servers %s are not stdio commands and cannot be wrapped; remove them or put them behind `shield proxy mcp --listen`", strings.Join(unguarded, ", "))
	}
	doc["mcpServers"], _ = json.Marshal(servers)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func wrappedArgs(name string, flags []string, cmd string, args []string) []string {
	out := append([]string{"proxy", "mcp", "--server", name}, flags...)
	return append(append(out, "--", cmd), args...)
}

// WrapCodexTOML rewrites the [mcp_servers.NAME] tables of a Codex config.toml, line by line
// (everything else is kept byte for byte). It reads `command = "…"` and a one-line
// `args = [ … ]` of strings; a server given any other way (url, dotted keys, a multi-line
// array, an inline table) is an error.
func WrapCodexTOML(data []byte, self string, flags []string) ([]byte, error) {
	lines := strings.SplitAfter(string(data), "\n")
	type server struct {
		name             string
		cmdLine, argLine int
		cmd              string
		args             []string
		unguarded        string
	}
	var servers []*server
	var cur *server
	for i, line := range lines {
		t := strings.TrimSpace(stripComment(line))
		if strings.HasPrefix(t, "[") {
			cur = nil
			h := strings.Trim(t, "[] \t")
			if rest, ok := strings.CutPrefix(h, "mcp_servers."); ok {
				name, sub, err := tomlKey(rest)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
				if !sub {
					cur = &server{name: name, cmdLine: -1, argLine: -1}
					servers = append(servers, cur)
				}
			} else if h == "mcp_servers" {
				return nil, fmt.Errorf("line %d: a [mcp_servers] table with dotted keys is not rewritten; use [mcp_servers.NAME] tables", i+1)
			}
			continue
		}
		key, val, ok := strings.Cut(t, "=")
		key = strings.TrimSpace(key)
		if !ok || t == "" {
			continue
		}
		if cur == nil {
			if strings.Contains(key, "mcp_servers") {
				return nil, fmt.Errorf("line %d: MCP servers given as dotted keys or an inline table are not rewritten", i+1)
			}
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "command":
			s, err := tomlString(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: server %s: command: %v", i+1, cur.name, err)
			}
			cur.cmd, cur.cmdLine = s, i
		case "args":
			a, err := tomlStrings(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: server %s: args: %v", i+1, cur.name, err)
			}
			cur.args, cur.argLine = a, i
		case "url":
			cur.unguarded = "an HTTP server"
		}
	}
	var unguarded []string
	for _, s := range servers {
		switch {
		case s.unguarded != "" || s.cmdLine < 0:
			unguarded = append(unguarded, s.name)
		case s.cmd == self && len(s.args) > 1 && s.args[0] == "proxy":
			// already wrapped
		default:
			indent := lines[s.cmdLine][:len(lines[s.cmdLine])-len(strings.TrimLeft(lines[s.cmdLine], " \t"))]
			lines[s.cmdLine] = indent + "command = " + tomlQuote(self) + "\n"
			argLine := indent + "args = " + tomlArray(wrappedArgs(s.name, flags, s.cmd, s.args)) + "\n"
			if s.argLine >= 0 {
				lines[s.argLine] = argLine
			} else {
				lines[s.cmdLine] += argLine
			}
		}
	}
	if len(unguarded) > 0 {
		return nil, fmt.Errorf("servers %s are not stdio commands and cannot be wrapped; remove them or put them behind `shield proxy mcp --listen`", strings.Join(unguarded, ", "))
	}
	return []byte(strings.Join(lines, "")), nil
}

// stripComment drops a # comment that is not inside a string.
func stripComment(line string) string {
	var q byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q != 0 && c == '\\' && q == '"':
			i++
		case q != 0 && c == q:
			q = 0
		case q == 0 && c == '#':
			return line[:i]
		}
	}
	return line
}

// tomlKey reads the NAME of [mcp_servers.NAME]; sub reports a deeper table ([mcp_servers.NAME.env]).
func tomlKey(s string) (name string, sub bool, err error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "'") {
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", false, fmt.Errorf("unterminated quoted key")
		}
		name, err = tomlString(s[:end+2])
		return name, strings.TrimSpace(s[end+2:]) != "", err
	}
	name, rest, dotted := strings.Cut(s, ".")
	return strings.TrimSpace(name), dotted && rest != "", nil
}

// tomlString reads one basic ("…", JSON-compatible escapes) or literal ('…') string.
func tomlString(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' && !strings.Contains(v[1:len(v)-1], "'"):
		return v[1 : len(v)-1], nil
	case len(v) >= 2 && v[0] == '"' && !strings.HasPrefix(v, `"""`):
		var s string
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			return "", fmt.Errorf("%s is not a string this rewriter reads", v)
		}
		return s, nil
	}
	return "", fmt.Errorf("%s is not a one-line string", v)
}

// tomlStrings reads a one-line array of strings.
func tomlStrings(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("not a one-line array")
	}
	body := strings.TrimSpace(v[1 : len(v)-1])
	var out []string
	for body != "" {
		if body[0] != '"' && body[0] != '\'' {
			return nil, fmt.Errorf("an element is not a string")
		}
		end := 1
		for end < len(body) && body[end] != body[0] {
			if body[0] == '"' && body[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(body) {
			return nil, fmt.Errorf("unterminated string")
		}
		s, err := tomlString(body[:end+1])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		body = strings.TrimSpace(body[end+1:])
		if strings.HasPrefix(body, ",") {
			body = strings.TrimSpace(body[1:])
		} else if body != "" {
			return nil, fmt.Errorf("expected a comma")
		}
	}
	return out, nil
}

func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = tomlQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
