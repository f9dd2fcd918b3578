package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/mcp"
)

// Proto relays `codex proto` (Codex 0.42; the seed-004 submission/event queue): submissions
// {"id","op":{"type",…}} from the client, events {"id","msg":{"type",…}} from the runtime.
//
// exec_approval_request and apply_patch_approval_request events are decided and answered with
// an exec_approval / patch_approval op keyed by the event's id (the turn's submission id, not
// the call id: the runtime matches on it). The client's own approval ops pass only for a request
// it was shown, narrowed to a one-shot decision; turn settings are made to ask every time;
// run_user_shell_command is decided before the runtime sees it.
type Proto struct {
	opts Options
	dec  decider
	seq  atomic.Uint64

	toClient, toServer *writer

	mu      sync.Mutex
	pending map[string]string // event id shown to the client → "exec_approval" or "patch_approval"
}

// NewProto prepares the relay.
func NewProto(o Options) (*Proto, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	p := &Proto{opts: o, pending: map[string]string{}}
	p.dec.opts = &p.opts
	return p, nil
}

// Run relays until the runtime's output ends.
func (p *Proto) Run(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error {
	p.toClient, p.toServer = &writer{w: clientOut}, &writer{w: serverIn}
	return run(ctx, &p.opts, &p.dec, clientIn, serverIn, serverOut, p.fromClient, p.fromServer,
		func() {
			p.event("", "error", fmt.Sprintf("Shield: submission over %d bytes, not relayed", p.opts.MaxMessage))
		},
		func() { p.opts.Log("dropped a runtime event over %d bytes", p.opts.MaxServerMessage) })
}

// event sends the client an event of Shield's own.
func (p *Proto) event(id, typ, message string) {
	p.toClient.json(map[string]any{"id": id, "msg": map[string]any{"type": typ, "message": message}})
}

// submit sends the runtime an op of Shield's own.
func (p *Proto) submit(op map[string]any) {
	p.toServer.json(map[string]any{"id": fmt.Sprintf("shield-%d", p.seq.Add(1)), "op": op})
}

func (p *Proto) fromServer(ctx context.Context, line []byte) {
	m, err := mcp.Parse(line)
	if err != nil {
		p.opts.Log("dropped a runtime event: %v", err)
		return
	}
	var eventID string
	_ = json.Unmarshal(m.Fields["id"], &eventID)
	msg := obj(m.Fields["msg"])
	var call client.Call
	var opType string
	switch str(msg["type"]) {
	case "exec_approval_request":
		argv, ok := strList(msg["command"])
		if !ok || len(argv) == 0 {
			p.submit(map[string]any{"type": "exec_approval", "id": eventID, "decision": "denied"})
			return
		}
		call = client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": shellJoin(argv)}), Cwd: str(msg["cwd"]), CallID: str(msg["call_id"])}
		opType = "exec_approval"
	case "apply_patch_approval_request":
		if outside(str(msg["grant_root"]), p.opts.Workspace) {
			p.opts.Log("denied a patch asking for write access to %q", str(msg["grant_root"]))
			p.submit(map[string]any{"type": "patch_approval", "id": eventID, "decision": "denied"})
			return
		}
		call = client.Call{Tool: "apply_patch", Arguments: mustJSON(map[string]string{"input": patchFromV1(msg["changes"])}), CallID: str(msg["call_id"])}
		opType = "patch_approval"
	default:
		p.toClient.line(m.Raw)
		return
	}
	raw := m.Raw
	if !p.dec.start(ctx, opType, call, func(d client.Decision) {
		if d.Allowed && p.opts.DeferAllowed {
			p.mu.Lock()
			p.pending[eventID] = opType
			p.mu.Unlock()
			p.toClient.line(raw)
			return
		}
		p.submit(map[string]any{"type": opType, "id": eventID, "decision": pick(d.Allowed, "approved", "denied")})
		if !d.Allowed {
			p.event(eventID, "background_event", "Blocked by "+d.Message())
		}
	}) {
		p.submit(map[string]any{"type": opType, "id": eventID, "decision": "denied"})
	}
}

func (p *Proto) fromClient(ctx context.Context, line []byte) {
	m, err := mcp.Parse(line)
	if err != nil {
		p.opts.Log("refused a submission: %v", err)
		p.event("", "error", "Shield: "+err.Error()+"; not relayed")
		return
	}
	var subID string
	_ = json.Unmarshal(m.Fields["id"], &subID)
	op := obj(m.Fields["op"])
	if op == nil {
		p.event(subID, "error", "Shield: a submission without an op; not relayed")
		return
	}
	switch typ := str(op["type"]); typ {
	case "exec_approval", "patch_approval":
		target := str(op["id"])
		p.mu.Lock()
		shown := p.pending[target] == typ
		delete(p.pending, target)
		p.mu.Unlock()
		if !shown {
			p.opts.Log("dropped a client %s for %q, which it was not asked", typ, target)
			return
		}
		d := "denied"
		switch str(op["decision"]) {
		case "approved", "approved_for_session":
			d = "approved" // a session-wide grant is narrowed to this one call
		case "abort":
			d = "abort"
		}
		p.toServer.json(map[string]any{"id": subID, "op": map[string]any{"type": typ, "id": target, "decision": d}})
	case "user_turn", "override_turn_context":
		if !p.opts.KeepApprovalPolicy && op["approval_policy"] != nil {
			op["approval_policy"] = json.RawMessage(`"untrusted"`)
			m.Fields["op"] = mustJSON(op)
			p.toServer.line(mustJSON(m.Fields))
			return
		}
		p.toServer.line(m.Raw)
	case "run_user_shell_command":
		call := client.Call{Tool: "Bash", Arguments: mustJSON(map[string]string{"command": str(op["command"])}), CallID: "user-shell:" + subID}
		raw := m.Raw
		if !p.dec.start(ctx, typ, call, func(d client.Decision) {
			if d.Allowed {
				p.toServer.line(raw)
				return
			}
			p.event(subID, "error", "Blocked by "+d.Message())
		}) {
			p.event(subID, "error", "Shield: too many calls under decision; not relayed")
		}
	default:
		p.toServer.line(m.Raw)
	}
}
