package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

// Decider is what the relay asks; *client.Client implements it (fail-closed).
type Decider interface {
	Decide(ctx context.Context, call client.Call, hold bool) client.Decision
}

var _ Decider = (*client.Client)(nil)

// Options configure a relay. Zero values are the safe ones.
type Options struct {
	Decider Decider
	// Server names the MCP server (label mcp.server); empty: "mcp".
	Server string
	// Workspace is the directory the client's roots must stay inside. Empty: roots answers are
	// rewritten to nothing outside "/" — so set it.
	Workspace string
	// Session identifies the relay's session to the appliance (approvals are bound to it).
	Session string
	// Hold bounds how long an ESCALATE is held for a human before the call is refused. Default
	// 50 s (below the usual 60 s client request timeout). Progress is sent while holding when
	// the call carried a progress token.
	Hold time.Duration
	// MaxMessage and MaxServerMessage bound one message from each side (defaults above).
	MaxMessage, MaxServerMessage int
	// Log receives one line per decision and per refused message; nil: discarded.
	Log func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Server == "" {
		o.Server = "mcp"
	}
	if o.Hold <= 0 {
		o.Hold = 50 * time.Second
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.MaxServerMessage <= 0 {
		o.MaxServerMessage = DefaultMaxServerMessage
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Workspace != "" {
		o.Workspace = filepath.Clean(o.Workspace)
	}
}

// state is what the relay learns from one session's traffic.
type state struct {
	mu sync.Mutex
	// hints holds the annotations the server gave each tool in tools/list answers.
	hints map[string]map[string]string
	// toolsList: ids of client tools/list requests in flight; rootsList: ids of server
	// roots/list requests in flight.
	toolsList map[string]bool
	rootsList map[string]bool
}

func newState() *state {
	return &state{hints: map[string]map[string]string{}, toolsList: map[string]bool{}, rootsList: map[string]bool{}}
}

// hintNames are the MCP tool annotations passed to the appliance as call labels mcp.<name>.
var hintNames = []string{"readOnlyHint", "destructiveHint", "openWorldHint", "idempotentHint"}

// learnTools records the annotations of a tools/list result.
func (s *state) learnTools(result json.RawMessage) {
	var tools []json.RawMessage
	if json.Unmarshal(Object(result)["tools"], &tools) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, raw := range tools {
		t := Object(raw)
		var name string
		if json.Unmarshal(t["name"], &name) != nil || name == "" || len(s.hints) >= 4096 {
			continue
		}
		ann := Object(t["annotations"])
		h := map[string]string{}
		for _, n := range hintNames {
			var b bool
			if raw, ok := ann[n]; ok && json.Unmarshal(raw, &b) == nil {
				h["mcp."+n] = boolString(b)
			}
		}
		s.hints[name] = h
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ToolCall is the part of a tools/call request the appliance sees.
type ToolCall struct {
	Name      string
	Arguments json.RawMessage
	CallID    string
	Progress  json.RawMessage // _meta.progressToken, nil when absent
}

// ParseToolCall reads tools/call params: name (non-empty string), arguments (an object or
// absent), _meta (call id from claudecode/toolUseId or callId; progressToken). Members are
// matched by their exact names, as the server reads them (never case-folded).
func ParseToolCall(params json.RawMessage) (ToolCall, bool) {
	p := Object(params)
	var name string
	if p == nil || json.Unmarshal(p["name"], &name) != nil || name == "" {
		return ToolCall{}, false
	}
	args := p["arguments"]
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return ToolCall{}, false
	}
	tc := ToolCall{Name: name, Arguments: args}
	if meta := Object(p["_meta"]); meta != nil {
		tc.Progress = meta["progressToken"]
		if json.Unmarshal(meta["claudecode/toolUseId"], &tc.CallID) != nil || tc.CallID == "" {
			_ = json.Unmarshal(meta["callId"], &tc.CallID)
		}
	}
	return tc, true
}

// Object decodes a JSON object by exact member names; nil when raw is not an object.
func Object(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// call builds the appliance's view of a tools/call.
func (o *Options) call(s *state, tc ToolCall, rpcID string) client.Call {
	labels := map[string]string{"mcp.server": o.Server}
	s.mu.Lock()
	for k, v := range s.hints[tc.Name] {
		labels[k] = v
	}
	s.mu.Unlock()
	id := tc.CallID
	if id == "" {
		id = "mcp-" + strings.Trim(rpcID, `"`)
	}
	return client.Call{CallID: id, Tool: tc.Name, Arguments: tc.Arguments, Session: o.Session, Cwd: o.Workspace, Labels: labels}
}

// blockedResult is the tools/call answer for a refused call: an isError result naming the rule.
func blockedResult(id string, d client.Decision) []byte {
	text := "Blocked by " + d.Message()
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": true}
	return response(id, res)
}

func response(id string, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "result": result})
	return b
}

func errorResponse(id string, code int, msg string) []byte {
	if id == "" {
		id = "null"
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id),
		"error": map[string]any{"code": code, "message": msg}})
	return b
}

// filterRoots rewrites a roots/list result so that no root lies outside the workspace: roots
// outside it (or not file: URIs) are dropped; if the client named roots and none is left, the
// workspace itself is the one root. It returns the new result and whether anything changed.
func (o *Options) filterRoots(result json.RawMessage) (json.RawMessage, bool) {
	var roots []map[string]json.RawMessage
	if json.Unmarshal(Object(result)["roots"], &roots) != nil {
		return o.workspaceRoots(), true
	}
	kept := make([]map[string]json.RawMessage, 0, len(roots))
	for _, root := range roots {
		var u string
		if json.Unmarshal(root["uri"], &u) == nil && o.insideWorkspace(u) {
			kept = append(kept, root)
		}
	}
	if len(kept) == len(roots) {
		return result, false
	}
	if len(kept) == 0 {
		return o.workspaceRoots(), true
	}
	b, _ := json.Marshal(map[string]any{"roots": kept})
	return b, true
}

func (o *Options) workspaceRoots() json.RawMessage {
	if o.Workspace == "" {
		return json.RawMessage(`{"roots":[]}`)
	}
	u := url.URL{Scheme: "file", Path: o.Workspace}
	b, _ := json.Marshal(map[string]any{"roots": []any{map[string]any{"uri": u.String(), "name": "workspace"}}})
	return b
}

// insideWorkspace: a file: URI whose cleaned path (symlinks resolved where they exist) is the
// workspace or below it.
func (o *Options) insideWorkspace(uri string) bool {
	if o.Workspace == "" {
		return false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
		return false
	}
	p := filepath.Clean(u.Path)
	if !filepath.IsAbs(p) {
		return false
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	ws := o.Workspace
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		ws = r
	}
	return p == ws || strings.HasPrefix(p, ws+string(filepath.Separator))
}
