package codex

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/mcp"
)

// AppServer relays `codex app-server` JSON-RPC (one object per line, no "jsonrpc" member)
// between a client (an IDE) and the runtime.
//
// Runtime → client: item/commandExecution/requestApproval, item/fileChange/requestApproval,
// the v1 execCommandApproval and applyPatchApproval, MCP tool-call elicitations and dynamic
// item/tool/call requests are decided; item/permissions/requestApproval is refused (Shield
// grants no standing permissions). Client → runtime: command/exec, thread/shellCommand,
// fs/writeFile, fs/remove, fs/copy, fs/createDirectory and mcpServer/tool/call are decided
// before the runtime sees them; configuration, plugin and approval-routing requests are
// refused unless allowed; thread/turn requests are made to ask for every command. A client may
// answer only what it was asked, and never with a session-wide or policy-amending grant.
type AppServer struct {
	opts Options
	dec  decider

	toClient, toServer *writer

	mu       sync.Mutex
	changes  map[string][]json.RawMessage // fileChange item id → its changes (from item/started)
	deferred map[string]string            // runtime request id forwarded to the client → its method
}

// NewAppServer prepares the relay.
func NewAppServer(o Options) (*AppServer, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	a := &AppServer{opts: o, changes: map[string][]json.RawMessage{}, deferred: map[string]string{}}
	a.dec.opts = &a.opts
	return a, nil
}

// Run relays until the runtime's output ends.
func (a *AppServer) Run(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error {
	a.toClient, a.toServer = &writer{w: clientOut}, &writer{w: serverIn}
	return run(ctx, &a.opts, &a.dec, clientIn, serverIn, serverOut, a.fromClient, a.fromServer,
		func() {
			a.toClient.json(rpcError("null", -32600, fmt.Sprintf("Shield: message over %d bytes, not relayed", a.opts.MaxMessage)))
		},
		func() { a.opts.Log("dropped a runtime message over %d bytes", a.opts.MaxServerMessage) })
}

func rpcError(id string, code int, msg string) map[string]any {
	if id == "" {
		id = "null"
	}
	return map[string]any{"id": json.RawMessage(id), "error": map[string]any{"code": code, "message": msg}}
}

func rpcResult(id string, result any) map[string]any {
	return map[string]any{"id": json.RawMessage(id), "result": result}
}

// configMethods change what Codex will do later (its config, plugins, MCP servers, skills,
// where approvals go): refused unless AllowConfigWrites.
var configMethods = map[string]bool{
	"config/value/write": true, "config/batchWrite": true, "modelProvider/config/write": true,
	"skills/config/write": true, "skills/extraRoots/set": true, "plugin/install": true, "plugin/uninstall": true,
	"marketplace/add": true, "marketplace/remove": true, "marketplace/upgrade": true, "plugin/reconcile": true,
	"externalAgentConfig/import": true, "config/mcpServer/reload": true, "experimentalFeature/enablement/set": true,
	"thread/approveGuardianDeniedAction": true, "plugin/share/checkout": true,
}

// approvalKeys are the members of thread/turn params and their config that change who approves.
var approvalConfigKeys = []string{"approval_policy", "approvals_reviewer", "hooks", "mcp_servers", "sandbox_mode", "features"}

func (a *AppServer) fromClient(ctx context.Context, line []byte) {
	m, err := mcp.Parse(line)
	if err != nil {
		a.opts.Log("refused a client message: %v", err)
		a.toClient.json(rpcError("null", -32600, "Shield: "+err.Error()+"; not relayed"))
		return
	}
	if m.IsResponse() {
		a.clientAnswer(m)
		return
	}
	if !m.IsRequest() {
		a.toServer.line(m.Raw)
		return
	}
	p := obj(m.Params())
	refuse := func(why string) { a.toClient.json(rpcError(m.ID, -32001, why)) }
	var call *client.Call
	switch m.Method {
	case "command/exec":
		argv, ok := strList(p["command"])
		if !ok || len(argv) == 0 {
			refuse("Shield: command/exec without a command; not relayed")
			return
		}
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin(argv)}), Cwd: str(p["cwd"])}
	case "thread/shellCommand":
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": str(p["command"])})}
	case "fs/writeFile":
		data, err := base64.StdEncoding.DecodeString(str(p["dataBase64"]))
		if err != nil {
			refuse("Shield: fs/writeFile with data that is not base64; not relayed")
			return
		}
		call = &client.Call{Tool: "write_file", Arguments: mustJSON(map[string]string{"path": str(p["path"]), "content": string(data)})}
	case "fs/remove":
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin([]string{"rm", "-rf", "--", str(p["path"])})})}
	case "fs/copy":
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin([]string{"cp", "-r", "--", str(p["sourcePath"]), str(p["destinationPath"])})})}
	case "fs/createDirectory":
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin([]string{"mkdir", "-p", "--", str(p["path"])})})}
	case "mcpServer/tool/call":
		args := p["arguments"]
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if args[0] != '{' || str(p["tool"]) == "" {
			refuse("Shield: mcpServer/tool/call without a tool and an arguments object; not relayed")
			return
		}
		call = &client.Call{Tool: str(p["tool"]), Arguments: args, Labels: map[string]string{"mcp.server": str(p["server"])}}
	case "thread/start", "thread/resume", "thread/fork", "turn/start":
		if !a.opts.KeepApprovalPolicy {
			a.toServer.line(a.askEveryTime(m, p))
			return
		}
	default:
		if configMethods[m.Method] && !a.opts.AllowConfigWrites {
			refuse("Shield: " + m.Method + " changes Codex's configuration; refused by the proxy")
			return
		}
	}
	if call == nil {
		a.toServer.line(m.Raw)
		return
	}
	call.CallID = m.Method + ":" + strings.Trim(m.ID, `"`)
	if !a.dec.start(ctx, m.Method, *call, func(d client.Decision) {
		if d.Allowed {
			a.toServer.line(m.Raw)
			return
		}
		a.toClient.json(rpcError(m.ID, -32001, "Blocked by "+d.Message()))
	}) {
		refuse("Shield: too many calls under decision; not relayed")
	}
}

// askEveryTime rewrites thread/turn params so that Codex asks before every command and routes
// approvals to the client (that is, through this proxy).
func (a *AppServer) askEveryTime(m *mcp.Message, p map[string]json.RawMessage) []byte {
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	if m.Method != "turn/start" || p["approvalPolicy"] != nil {
		p["approvalPolicy"] = json.RawMessage(`"untrusted"`)
	}
	delete(p, "approvalsReviewer")
	if cfg := obj(p["config"]); cfg != nil {
		for _, k := range approvalConfigKeys {
			delete(cfg, k)
		}
		p["config"] = mustJSON(cfg)
	}
	m.Fields["params"] = mustJSON(p)
	return mustJSON(m.Fields)
}

// clientAnswer passes on the client's answer to a request it was asked, narrowed to a one-shot
// decision; answers to anything else are dropped.
func (a *AppServer) clientAnswer(m *mcp.Message) {
	a.mu.Lock()
	method, asked := a.deferred[m.ID]
	delete(a.deferred, m.ID)
	a.mu.Unlock()
	if !asked {
		a.opts.Log("dropped a client answer to request %s, which it was not asked", m.ID)
		return
	}
	res := obj(m.Result())
	switch method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		d := "decline"
		if m.Result() != nil {
			switch dec := res["decision"]; {
			case str(dec) == "cancel":
				d = "cancel"
			case str(dec) == "accept", str(dec) == "acceptForSession", obj(dec)["acceptWithExecpolicyAmendment"] != nil:
				d = "accept" // a grant for the session or an amendment is narrowed to this one call
			}
		}
		a.toServer.json(rpcResult(m.ID, map[string]string{"decision": d}))
	case "execCommandApproval", "applyPatchApproval":
		d := "denied"
		switch str(res["decision"]) {
		case "approved", "approved_for_session":
			d = "approved"
		case "abort":
			d = "abort"
		}
		a.toServer.json(rpcResult(m.ID, map[string]string{"decision": d}))
	case "mcpServer/elicitation/request:approval":
		if str(res["action"]) == "accept" {
			a.toServer.json(rpcResult(m.ID, map[string]any{"action": "accept", "content": map[string]any{}}))
		} else {
			a.toServer.json(rpcResult(m.ID, map[string]any{"action": "decline", "content": nil}))
		}
	default:
		a.toServer.line(m.Raw)
	}
}

func (a *AppServer) fromServer(ctx context.Context, line []byte) {
	m, err := mcp.Parse(line)
	if err != nil {
		a.opts.Log("dropped a runtime message: %v", err)
		return
	}
	if m.IsNotification() && m.Method == "item/started" {
		a.learnItem(m)
	}
	if !m.IsRequest() {
		a.toClient.line(m.Raw)
		return
	}
	p := obj(m.Params())
	var call *client.Call
	var answer func(allowed bool) any // what Shield answers itself
	method := m.Method
	switch m.Method {
	case "item/commandExecution/requestApproval":
		cmd := str(p["command"])
		if cmd == "" {
			a.toServer.json(rpcResult(m.ID, map[string]string{"decision": "decline"}))
			return
		}
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": cmd}), Cwd: str(p["cwd"]), CallID: str(p["itemId"])}
		answer = func(ok bool) any { return map[string]string{"decision": pick(ok, "accept", "decline")} }
	case "item/fileChange/requestApproval":
		a.mu.Lock()
		changes, known := a.changes[str(p["itemId"])]
		delete(a.changes, str(p["itemId"]))
		a.mu.Unlock()
		if !known || outside(str(p["grantRoot"]), a.opts.Workspace) {
			a.opts.Log("declined a file change Shield could not see (item %s, grant root %q)", str(p["itemId"]), str(p["grantRoot"]))
			a.toServer.json(rpcResult(m.ID, map[string]string{"decision": "decline"}))
			return
		}
		call = &client.Call{Tool: "apply_patch", Arguments: mustJSON(map[string]string{"input": patchFromChanges(changes)}), CallID: str(p["itemId"])}
		answer = func(ok bool) any { return map[string]string{"decision": pick(ok, "accept", "decline")} }
	case "execCommandApproval":
		argv, ok := strList(p["command"])
		if !ok || len(argv) == 0 {
			a.toServer.json(rpcResult(m.ID, map[string]string{"decision": "denied"}))
			return
		}
		call = &client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin(argv)}), Cwd: str(p["cwd"]), CallID: str(p["callId"])}
		answer = func(ok bool) any { return map[string]string{"decision": pick(ok, "approved", "denied")} }
	case "applyPatchApproval":
		call = &client.Call{Tool: "apply_patch", Arguments: mustJSON(map[string]string{"input": patchFromV1(p["fileChanges"])}), CallID: str(p["callId"])}
		answer = func(ok bool) any { return map[string]string{"decision": pick(ok, "approved", "denied")} }
	case "mcpServer/elicitation/request":
		meta := obj(p["_meta"])
		if str(meta["codex_approval_kind"]) != "mcp_tool_call" {
			break // a server asking the user for input: the client's business
		}
		args := meta["tool_params"]
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if args[0] != '{' || str(meta["tool_name"]) == "" {
			a.toServer.json(rpcResult(m.ID, map[string]any{"action": "decline", "content": nil}))
			return
		}
		labels := map[string]string{"mcp.server": str(p["serverName"])}
		ann := obj(meta["tool_annotations"])
		for _, n := range []string{"readOnlyHint", "destructiveHint", "openWorldHint", "idempotentHint"} {
			var b bool
			if raw, ok := ann[n]; ok && json.Unmarshal(raw, &b) == nil {
				labels["mcp."+n] = pick(b, "true", "false")
			}
		}
		call = &client.Call{Tool: str(meta["tool_name"]), Arguments: args, Labels: labels}
		method = "mcpServer/elicitation/request:approval"
		answer = func(ok bool) any {
			if ok {
				return map[string]any{"action": "accept", "content": map[string]any{}}
			}
			return map[string]any{"action": "decline", "content": nil}
		}
	case "item/tool/call":
		args := p["arguments"]
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		call = &client.Call{Tool: str(p["tool"]), Arguments: args, CallID: str(p["callId"])}
		if call.Tool == "" || args[0] != '{' {
			a.toServer.json(rpcResult(m.ID, map[string]any{"success": false, "contentItems": []any{map[string]any{"type": "inputText", "text": "Blocked by Shield: a tool call without a name and an arguments object"}}}))
			return
		}
		answer = nil // allowed: the client runs it
	case "item/permissions/requestApproval":
		a.toServer.json(rpcError(m.ID, -32001, "Shield: standing permissions are not granted through the proxy"))
		return
	}
	if call == nil {
		a.forward(m, m.Method)
		return
	}
	msg := m
	ans := answer
	if !a.dec.start(ctx, method, *call, func(d client.Decision) {
		switch {
		case d.Allowed && (ans == nil || a.opts.DeferAllowed):
			a.forward(msg, method)
		case ans != nil:
			a.toServer.json(rpcResult(msg.ID, ans(d.Allowed)))
		default: // a dynamic tool call refused
			a.toServer.json(rpcResult(msg.ID, map[string]any{"success": false,
				"contentItems": []any{map[string]any{"type": "inputText", "text": "Blocked by " + d.Message()}}}))
		}
	}) {
		a.toServer.json(rpcError(m.ID, -32001, "Shield: too many calls under decision"))
	}
}

// forward passes a runtime request to the client and remembers that the client was asked.
func (a *AppServer) forward(m *mcp.Message, method string) {
	a.mu.Lock()
	if len(a.deferred) >= 4096 {
		a.mu.Unlock()
		a.toServer.json(rpcError(m.ID, -32001, "Shield: too many requests waiting for the client"))
		return
	}
	a.deferred[m.ID] = method
	a.mu.Unlock()
	a.toClient.line(m.Raw)
}

// learnItem records the changes of a fileChange item, which its approval request does not carry.
func (a *AppServer) learnItem(m *mcp.Message) {
	item := obj(obj(m.Params())["item"])
	if str(item["type"]) != "fileChange" {
		return
	}
	var changes []json.RawMessage
	if json.Unmarshal(item["changes"], &changes) != nil {
		return
	}
	a.mu.Lock()
	if len(a.changes) < 1024 {
		a.changes[str(item["id"])] = changes
	}
	a.mu.Unlock()
}

func pick(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// outside: a grant root that is not the workspace or below it.
func outside(root, ws string) bool {
	if root == "" {
		return false
	}
	if ws == "" {
		return true
	}
	r := strings.TrimRight(root, "/")
	return r != ws && !strings.HasPrefix(r+"/", strings.TrimRight(ws, "/")+"/")
}

// patchFromChanges writes app-server v2 file changes ({path, kind:{type, move_path}, diff}) as
// an apply_patch document, which the normaliser reads into write/delete effects.
func patchFromChanges(changes []json.RawMessage) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, raw := range changes {
		c := obj(raw)
		kind := obj(c["kind"])
		writeOp(&b, str(kind["type"]), str(c["path"]), str(kind["move_path"]), str(c["diff"]))
	}
	b.WriteString("*** End Patch")
	return b.String()
}

// patchFromV1 does the same for v1 fileChanges {path: {add:{content}} | {delete:{}} | {update:{unified_diff, move_path}}}.
func patchFromV1(raw json.RawMessage) string {
	changes := obj(raw)
	paths := make([]string, 0, len(changes))
	for p := range changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, p := range paths {
		c := obj(changes[p])
		switch {
		case c["add"] != nil:
			writeOp(&b, "add", p, "", str(obj(c["add"])["content"]))
		case c["delete"] != nil:
			writeOp(&b, "delete", p, "", "")
		default:
			u := obj(c["update"])
			writeOp(&b, "update", p, str(u["move_path"]), str(u["unified_diff"]))
		}
	}
	b.WriteString("*** End Patch")
	return b.String()
}

func writeOp(b *strings.Builder, kind, path, moveTo, body string) {
	path = strings.ReplaceAll(path, "\n", " ")
	switch kind {
	case "add":
		b.WriteString("*** Add File: " + path + "\n")
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
	case "delete":
		b.WriteString("*** Delete File: " + path + "\n")
	default: // update, or anything unknown: a write of the file at least
		b.WriteString("*** Update File: " + path + "\n")
		if moveTo != "" {
			b.WriteString("*** Move to: " + strings.ReplaceAll(moveTo, "\n", " ") + "\n")
		}
		b.WriteString("@@\n")
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") || strings.HasPrefix(l, " ") {
				if !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
					b.WriteString(l + "\n")
				}
			}
		}
	}
}

// shellJoin quotes argv for a POSIX shell, the form the normaliser reads commands in.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		if s != "" && strings.IndexFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			q[i] = s
			continue
		}
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
