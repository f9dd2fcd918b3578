// Package hook puts a running Shield appliance in front of Claude Code and Codex through their
// PreToolUse hooks: it maps the hook input both runtimes send (JSON on a command hook's stdin, or
// the body of Claude Code's http hook) to a client.Call, and a client.Decision back to the answer
// each runtime honours.
//
// Both runtimes let a tool run when a hook crashes, times out, prints nothing they understand or
// (http) answers an error status. So every path here that is not an ALLOW from the appliance —
// malformed or over-long input, an unreachable appliance, a timeout, a denied or expired human
// approval — answers deny, and Run answers within its own deadline whatever the appliance does.
// An ALLOW answers nothing at all: a hook "allow" would skip the runtime's own permission checks.
// An ESCALATE is held (AwaitDecision) until a human decides or the deadline passes.
//
// The CLI (cmd/shield hook …) and the appliance's HTTP listener import this package; it imports
// the shared fail-closed client (shield/proxy/client) and no wire types.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// Runtime names a runtime whose hooks this package speaks; it is the runtime name sent with every
// call.
type Runtime string

const (
	ClaudeCode Runtime = "claude-code"
	Codex      Runtime = "codex"
)

// ParseRuntime accepts "claude-code" (or "claude") and "codex".
func ParseRuntime(s string) (Runtime, error) {
	switch s {
	case "claude-code", "claude":
		return ClaudeCode, nil
	case "codex":
		return Codex, nil
	}
	return "", fmt.Errorf("unknown runtime %q (want claude-code or codex)", s)
}

// Bounds on the hook input, checked before and while it is parsed.
const (
	// MaxInput bounds the whole hook input. The appliance bounds a call's arguments at 1 MiB; the
	// rest of the input is a few hundred bytes of ids and paths.
	MaxInput = 2 << 20
	// MaxDepth bounds JSON nesting.
	MaxDepth = 64
	// maxField bounds each string field other than tool_input.
	maxField = 4096
)

// Decider is what answers a call: a *client.Client, or the appliance itself behind its HTTP
// listener. Decide must fail closed (never Allowed on an error) and hold an ESCALATE until ctx
// ends when hold is true.
type Decider interface {
	Decide(ctx context.Context, call client.Call, hold bool) client.Decision
}

var _ Decider = (*client.Client)(nil)

// Input is a PreToolUse hook input as Claude Code 2.1 and Codex 0.169 send it. Fields the
// runtimes add later are ignored.
type Input struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id,omitempty"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	Model          string          `json:"model,omitempty"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	MCPServer      *struct {
		Name string `json:"name"`
	} `json:"mcp_server,omitempty"`
}

// ErrInput is wrapped by every error Decode returns.
var ErrInput = errors.New("malformed hook input")

func inputErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInput, fmt.Sprintf(format, a...))
}

// Decode parses and checks a PreToolUse hook input: at most MaxInput bytes, valid UTF-8, one JSON
// object nested at most MaxDepth deep with no duplicate keys, hook_event_name "PreToolUse", a
// tool_name, and tool_input a JSON object (absent or null means {}).
func Decode(b []byte) (Input, error) {
	var in Input
	if len(b) > MaxInput {
		return in, inputErr("%d bytes, over the %d-byte bound", len(b), MaxInput)
	}
	if !utf8.Valid(b) {
		return in, inputErr("not valid UTF-8")
	}
	if err := checkJSON(b); err != nil {
		return in, inputErr("%v", err)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, inputErr("%v", err)
	}
	if in.HookEventName != "PreToolUse" {
		return in, inputErr("hook_event_name %q, want PreToolUse (install this hook for PreToolUse only)", clip(in.HookEventName))
	}
	if strings.TrimSpace(in.ToolName) == "" {
		return in, inputErr("no tool_name")
	}
	for name, v := range map[string]string{"session_id": in.SessionID, "turn_id": in.TurnID, "transcript_path": in.TranscriptPath,
		"cwd": in.Cwd, "permission_mode": in.PermissionMode, "model": in.Model, "tool_name": in.ToolName, "tool_use_id": in.ToolUseID} {
		if len(v) > maxField {
			return in, inputErr("%s is %d bytes, over the %d-byte bound", name, len(v), maxField)
		}
	}
	if in.MCPServer != nil && len(in.MCPServer.Name) > maxField {
		return in, inputErr("mcp_server.name over the %d-byte bound", maxField)
	}
	t := bytes.TrimSpace(in.ToolInput)
	switch {
	case len(t) == 0 || string(t) == "null":
		in.ToolInput = json.RawMessage("{}")
	case t[0] != '{':
		return in, inputErr("tool_input is not a JSON object")
	default:
		in.ToolInput = t
	}
	return in, nil
}

// checkJSON walks b once with the tokenizer: a single value, nesting at most MaxDepth, no
// duplicate key in any object. The appliance checks the arguments again; this keeps a hostile
// input from reaching json.Unmarshal's recursion and makes "which duplicate wins" moot here.
func checkJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]struct{}
	}
	var stack []frame
	first := true
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) && len(stack) == 0 && !first {
				return nil
			}
			if len(stack) == 0 && !first {
				return fmt.Errorf("trailing data after the JSON value")
			}
			return err
		}
		if len(stack) == 0 && !first {
			return fmt.Errorf("trailing data after the JSON value")
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return fmt.Errorf("not a JSON object")
			}
		}
		first = false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.obj && top.wantKey {
				if k, ok := tok.(string); ok {
					if _, dup := top.keys[k]; dup {
						return fmt.Errorf("duplicate key %q", clip(k))
					}
					top.keys[k] = struct{}{}
					top.wantKey = false
					continue
				}
			} else if top.obj {
				top.wantKey = true
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return fmt.Errorf("nested more than %d levels", MaxDepth)
				}
				stack = append(stack, frame{obj: d == '{', wantKey: d == '{', keys: map[string]struct{}{}})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].wantKey = true
				}
			}
		}
	}
}

func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}

// Call maps a hook input to the call the appliance evaluates: the tool name and input as the
// runtime gave them (MCP tools keep their mcp__SERVER__TOOL name, so a bundle must name them to
// allow them; the server and bare tool name are labels), the session, cwd and tool-use id.
func (in Input) Call() client.Call {
	c := client.Call{CallID: in.ToolUseID, Tool: in.ToolName, Arguments: in.ToolInput, Session: in.SessionID, Cwd: in.Cwd}
	if server, tool, ok := splitMCP(in.ToolName); ok {
		c.Labels = map[string]string{"mcp.server": server, "mcp.tool": tool}
	}
	if in.MCPServer != nil && in.MCPServer.Name != "" {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels["mcp.server"] = in.MCPServer.Name
	}
	return c
}

// splitMCP splits "mcp__SERVER__TOOL".
func splitMCP(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok && server != "" && tool != ""
}

// Answer is what a hook says for one decision.
type Answer struct {
	// Deny is false only for an ALLOW from the appliance.
	Deny bool
	// Reason is shown to the model and the user when Deny is set.
	Reason string
}

// AnswerFor maps a decision: ALLOW → no opinion (the runtime's own rules still apply); anything
// else → deny, naming the verdict, the rules and the reason.
func AnswerFor(d client.Decision) Answer {
	if d.Allowed && d.Verdict == client.Allow && d.Err == nil {
		return Answer{}
	}
	return Answer{Deny: true, Reason: d.Message()}
}

// Denied is a deny answer for a failure before or instead of a decision.
func Denied(why string) Answer {
	return Answer{Deny: true, Reason: "Shield: BLOCK: " + why}
}

// DenyJSON is the PreToolUse answer both runtimes honour as a block.
func DenyJSON(reason string) []byte {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
	return b
}
