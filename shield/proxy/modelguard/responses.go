package modelguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// serverSide are Responses output items the vendor executes itself, or that are not calls.
var serverSide = map[string]bool{"web_search_call": true, "file_search_call": true, "code_interpreter_call": true,
	"image_generation_call": true, "mcp_call": true, "mcp_list_tools": true, "mcp_approval_request": true}

// responsesCall reads a Responses output item: whether the runtime would execute it, and as
// which tool with which arguments. An item type the guard does not know that ends in "_call" is
// a call (asked about as a tool of that name, so the appliance refuses what it does not know).
func responsesCall(item map[string]json.RawMessage) (*call, bool) {
	typ := str(item, "type")
	c := &call{ID: str(item, "call_id"), Name: str(item, "name")}
	if c.ID == "" {
		c.ID = str(item, "id")
	}
	switch {
	case typ == "function_call":
		c.Tool = c.Name
		if ns := str(item, "namespace"); ns != "" {
			c.Tool = strings.TrimSuffix(ns, "__") + "__" + c.Name
			c.Name = c.Tool
		}
		var args string
		if err := json.Unmarshal(item["arguments"], &args); err != nil {
			c.Bad = "its arguments are not a string"
		} else {
			c.Args, c.Bad = validArgs([]byte(args))
		}
	case typ == "custom_tool_call":
		var in string
		if err := json.Unmarshal(item["input"], &in); err != nil {
			c.Bad = "its input is not a string"
		}
		c.Tool, c.Args = c.Name, mustJSON(map[string]string{"input": in})
	case typ == "local_shell_call":
		c.Name, c.Tool = "local_shell", "local_shell"
		c.Args, c.Bad = validArgs(item["action"])
	case typ == "shell_call":
		c.Name, c.Tool = "shell", "shell"
		var a struct {
			Commands []string `json:"commands"`
		}
		if err := json.Unmarshal(item["action"], &a); err != nil || len(a.Commands) == 0 {
			c.Bad = "its action has no commands"
		}
		c.Args = mustJSON(map[string]string{"command": strings.Join(a.Commands, "\n")})
	case typ == "computer_call":
		c.Name, c.Tool = "computer", "computer"
		c.Args, c.Bad = validArgs(item["action"])
	case strings.HasSuffix(typ, "_call") && !serverSide[typ]:
		if c.Name == "" {
			c.Name = typ
		}
		c.Tool = typ
		c.Args = mustJSON(item)
	default:
		return nil, false
	}
	return c, true
}

// itemArgs is the argument string an item's deltas must add up to.
func itemArgs(item map[string]json.RawMessage) string {
	if s := str(item, "arguments"); s != "" {
		return s
	}
	return str(item, "input")
}

// responsesStream guards an OpenAI Responses stream: client-executed output items.
type responsesStream struct {
	s       *stream
	byIndex map[int]*pending
	byItem  map[string]*pending
	decided map[string]*pending // by item id and call id
}

func (r *responsesStream) handle(ev *event) error {
	s := r.s
	top, err := strictObject(ev.Data)
	if err != nil {
		return err
	}
	typ := str(top, "type")
	if ev.Name != "" && ev.Name != typ {
		return fmt.Errorf("%w: event %q carries type %q", ErrMalformed, ev.Name, typ)
	}
	if raw, ok := top["item"]; ok && typ != "response.output_item.added" && typ != "response.output_item.done" {
		item, err := strictObject(raw)
		if err != nil {
			return err
		}
		if _, isCall := responsesCall(item); isCall {
			return fmt.Errorf("%w: a call item in a %s event", ErrMalformed, typ)
		}
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		ev, err = r.sanitizeEvent(ev, top)
		if err != nil {
			return err
		}
		return s.emit(ev)
	case "response.completed", "response.failed", "response.incomplete":
		if err := r.end(); err != nil {
			return err
		}
		ev, err = r.sanitizeEvent(ev, top)
		if err != nil {
			return err
		}
		if err := s.emit(ev); err != nil {
			return err
		}
		s.done = true
		return nil
	case "response.output_item.added", "response.output_item.done":
		idx, ok := num(top, "output_index")
		if !ok {
			return fmt.Errorf("%w: %s without an output_index", ErrMalformed, typ)
		}
		item, err := strictObject(top["item"])
		if err != nil {
			return err
		}
		p := r.byIndex[idx]
		if typ == "response.output_item.added" {
			if p != nil {
				return fmt.Errorf("%w: output item %d added twice", ErrMalformed, idx)
			}
			if _, isCall := responsesCall(item); !isCall {
				return s.emit(ev)
			}
			p = &pending{index: idx, start: item, raw: []*event{ev}}
			r.byIndex[idx] = p
			if id := str(item, "id"); id != "" {
				r.byItem[id] = p
			}
			return s.begin(p)
		}
		if p == nil { // done without added
			if _, isCall := responsesCall(item); !isCall {
				return s.emit(ev)
			}
			p = &pending{index: idx, start: item, raw: []*event{ev}}
			r.byIndex[idx] = p
			if err := s.begin(p); err != nil {
				return err
			}
		} else {
			if p.done {
				return fmt.Errorf("%w: output item %d done twice", ErrMalformed, idx)
			}
			if err := s.absorb(p, ev); err != nil {
				return err
			}
		}
		p.final, p.done = item, true
		r.finish(p)
		return s.flush()
	case "error":
		return s.emit(ev)
	}
	if !strings.HasPrefix(typ, "response.") {
		s.g.o.Log("responses: dropped an event of unknown type %q", typ)
		return nil
	}
	if _, ok := top["response"]; ok {
		if ev, err = r.sanitizeEvent(ev, top); err != nil {
			return err
		}
	}
	// An event of one item: its deltas are held with it.
	var p *pending
	if id := str(top, "item_id"); id != "" {
		p = r.byItem[id]
	} else if idx, ok := num(top, "output_index"); ok {
		p = r.byIndex[idx]
	}
	if p == nil {
		if strings.Contains(typ, "_call_arguments.") || strings.Contains(typ, "_call_input.") {
			return fmt.Errorf("%w: %s for no call the guard holds", ErrMalformed, typ)
		}
		return s.emit(ev)
	}
	if p.done {
		return fmt.Errorf("%w: %s after its item was done", ErrMalformed, typ)
	}
	if err := s.absorb(p, ev); err != nil {
		return err
	}
	switch {
	case strings.HasSuffix(typ, ".delta"):
		s.appendArgs(p, str(top, "delta"))
	case strings.HasSuffix(typ, "_call_arguments.done"):
		a := str(top, "arguments")
		p.doneArg = &a
	case strings.HasSuffix(typ, "_call_input.done"):
		a := str(top, "input")
		p.doneArg = &a
	}
	return nil
}

func (r *responsesStream) end() error {
	for _, p := range r.byIndex {
		if !p.done {
			p.done = true
			p.Bad = "the answer ended before the call was complete"
			p.final = p.start
			r.finish(p)
		}
	}
	return r.s.flush()
}

// finish decides a complete item.
func (r *responsesStream) finish(p *pending) {
	c, isCall := responsesCall(p.final)
	bad := p.Bad
	if !isCall { // announced as a call, done as something else
		c = &call{ID: str(p.start, "call_id"), Name: str(p.start, "name")}
		if bad == "" {
			bad = "the item changed between its announcement and its end"
		}
	}
	p.call = *c
	switch {
	case bad != "":
		p.Bad = bad
	case str(p.start, "type") != str(p.final, "type") || str(p.start, "name") != str(p.final, "name") ||
		str(p.start, "call_id") != str(p.final, "call_id") || str(p.start, "namespace") != str(p.final, "namespace"):
		p.Bad = "the item changed between its announcement and its end"
	case len(p.args) > 0 && string(p.args) != itemArgs(p.final):
		p.Bad = "its argument deltas differ from the final item"
	case p.doneArg != nil && *p.doneArg != itemArgs(p.final):
		p.Bad = "its arguments differ between the done event and the final item"
	}
	r.s.g.decide(r.s.ctx, OpenAIResponses, &p.call)
	p.decided = true
	for _, k := range []string{str(p.final, "id"), str(p.final, "call_id")} {
		if k != "" {
			r.decided[k] = p
		}
	}
	if p.Allowed {
		p.out = p.raw
		return
	}
	id := "msg_shield_" + str(p.final, "id")
	part := map[string]any{"type": "output_text", "text": p.Message, "annotations": []any{}}
	ev := func(typ string, f map[string]any) *event {
		f["type"], f["sequence_number"] = typ, 0
		return &event{Name: typ, Data: mustJSON(f)}
	}
	p.out = []*event{
		ev("response.output_item.added", map[string]any{"output_index": p.index, "item": map[string]any{
			"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}}),
		ev("response.content_part.added", map[string]any{"item_id": id, "output_index": p.index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}),
		ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": p.index, "content_index": 0, "delta": p.Message}),
		ev("response.output_text.done", map[string]any{"item_id": id, "output_index": p.index, "content_index": 0, "text": p.Message}),
		ev("response.content_part.done", map[string]any{"item_id": id, "output_index": p.index, "content_index": 0, "part": part}),
		ev("response.output_item.done", map[string]any{"output_index": p.index, "item": messageItem(id, p.Message)}),
	}
}

func messageItem(id, text string) map[string]any {
	return map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// sanitizeEvent rewrites the response object an event carries: a call item passes only when it
// was decided ALLOW in the stream as the same call.
func (r *responsesStream) sanitizeEvent(ev *event, top map[string]json.RawMessage) (*event, error) {
	resp, ok := top["response"]
	if !ok {
		return ev, nil
	}
	nr, changed, err := sanitizeOutput(resp, func(c *call, item map[string]json.RawMessage) *call {
		p := r.decided[str(item, "id")]
		if p == nil {
			p = r.decided[str(item, "call_id")]
		}
		if p != nil && p.Allowed && p.Tool == c.Tool && p.ID == c.ID && bytes.Equal(p.Args, c.Args) && c.Bad == "" {
			return &p.call
		}
		if p != nil && !p.Allowed {
			return &p.call
		}
		c.Allowed = false
		c.Message = fmt.Sprintf("[Shield stopped the tool call %s (%s): it differs from the call decided in the stream; it was not run]", c.Name, c.ID)
		return c
	})
	if err != nil || !changed {
		return ev, err
	}
	data, err := setField(ev.Data, "response", nr)
	if err != nil {
		return nil, err
	}
	return &event{Name: ev.Name, Data: data}, nil
}

// sanitizeOutput replaces every call item of resp.output that verdict does not allow by a
// message item.
func sanitizeOutput(resp []byte, verdict func(c *call, item map[string]json.RawMessage) *call) ([]byte, bool, error) {
	o, err := strictObject(resp)
	if err != nil {
		return nil, false, err
	}
	raw, ok := o["output"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return resp, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, fmt.Errorf("%w: output is not a list", ErrMalformed)
	}
	changed := false
	for i, it := range items {
		item, err := strictObject(it)
		if err != nil {
			return nil, false, err
		}
		c, isCall := responsesCall(item)
		if !isCall {
			continue
		}
		if d := verdict(c, item); !d.Allowed {
			items[i], changed = mustJSON(messageItem("msg_shield_"+str(item, "id"), d.Message)), true
		}
	}
	if !changed {
		return resp, false, nil
	}
	out, err := setField(resp, "output", mustJSON(items))
	return out, true, err
}

// responsesJSON guards a non-streamed Responses answer.
func (g *Guard) responsesJSON(ctx context.Context, b []byte, top map[string]json.RawMessage) ([]byte, error) {
	calls := 0
	var overErr error
	out, _, err := sanitizeOutput(b, func(c *call, _ map[string]json.RawMessage) *call {
		if calls++; calls > g.o.MaxCalls {
			overErr = fmt.Errorf("%w: more than %d tool calls in one answer", ErrTooLarge, g.o.MaxCalls)
			c.Bad = "too many calls"
		}
		g.decide(ctx, OpenAIResponses, c)
		return c
	})
	if overErr != nil {
		return nil, overErr
	}
	return out, err
}
