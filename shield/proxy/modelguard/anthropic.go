package modelguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// anthropicStream guards an Anthropic Messages stream: tool_use content blocks.
type anthropicStream struct {
	s                *stream
	blocks           map[int]*pending // tool_use blocks by index
	seen             map[int]bool
	allowed, stopped int
}

func (a *anthropicStream) handle(ev *event) error {
	s := a.s
	top, err := strictObject(ev.Data)
	if err != nil {
		return err
	}
	typ := str(top, "type")
	if ev.Name != "" && ev.Name != typ {
		return fmt.Errorf("%w: event %q carries type %q", ErrMalformed, ev.Name, typ)
	}
	if a.seen == nil {
		a.seen = map[int]bool{}
	}
	// A call where the guard does not look for one fails the stream: a lenient runtime might.
	if cb := obj(top, "content_block"); typ != "content_block_start" && cb != nil {
		return fmt.Errorf("%w: a content block in a %s event", ErrMalformed, typ)
	}
	if c := obj(top, "message")["content"]; c != nil && !emptyArray(c) {
		return fmt.Errorf("%w: a %s event carries message content", ErrMalformed, typ)
	}
	switch typ {
	case "message_start":
		return s.emit(ev)
	case "content_block_start":
		idx, ok := num(top, "index")
		if !ok {
			return fmt.Errorf("%w: content_block_start without an index", ErrMalformed)
		}
		if a.seen[idx] {
			return fmt.Errorf("%w: content block %d started twice", ErrMalformed, idx)
		}
		a.seen[idx] = true
		cb := obj(top, "content_block")
		if str(cb, "type") == "" {
			return fmt.Errorf("%w: content_block_start without a typed content block", ErrMalformed)
		}
		if str(cb, "type") != "tool_use" {
			return s.emit(ev)
		}
		p := &pending{index: idx, start: cb, raw: []*event{ev}}
		p.ID, p.Name = str(cb, "id"), str(cb, "name")
		a.blocks[idx] = p
		return s.begin(p)
	case "content_block_delta", "content_block_stop":
		idx, ok := num(top, "index")
		if !ok {
			return fmt.Errorf("%w: %s without an index", ErrMalformed, typ)
		}
		p := a.blocks[idx]
		if p == nil {
			if !a.seen[idx] {
				return fmt.Errorf("%w: %s for content block %d that never started", ErrMalformed, typ, idx)
			}
			return s.emit(ev)
		}
		if p.done {
			return fmt.Errorf("%w: %s after content block %d stopped", ErrMalformed, typ, idx)
		}
		if err := s.absorb(p, ev); err != nil {
			return err
		}
		if typ == "content_block_delta" {
			d := obj(top, "delta")
			if t := str(d, "type"); t != "input_json_delta" {
				if p.Bad == "" {
					p.Bad = "a " + t + " delta inside a tool_use block"
				}
				return nil
			}
			s.appendArgs(p, str(d, "partial_json"))
			return nil
		}
		p.done = true
		a.finish(p)
		return s.flush()
	case "message_delta":
		if err := a.end(); err != nil {
			return err
		}
		if d := obj(top, "delta"); str(d, "stop_reason") == "tool_use" && a.stopped > 0 && a.allowed == 0 {
			nd, err := setField(top["delta"], "stop_reason", []byte(`"end_turn"`))
			if err != nil {
				return err
			}
			data, err := setField(ev.Data, "delta", nd)
			if err != nil {
				return err
			}
			ev = &event{Name: ev.Name, Data: data}
		}
		return s.emit(ev)
	case "message_stop":
		if err := a.end(); err != nil {
			return err
		}
		if err := s.emit(ev); err != nil {
			return err
		}
		s.done = true
		return nil
	case "ping", "error":
		return s.emit(ev)
	default:
		// A type the guard does not know could carry what a newer runtime reads as a call: it
		// is dropped, not passed.
		s.g.o.Log("anthropic: dropped an event of unknown type %q", typ)
		return nil
	}
}

func (a *anthropicStream) end() error {
	for _, p := range a.blocks {
		if !p.done {
			p.done = true
			if p.Bad == "" {
				p.Bad = "the answer ended before the call was complete"
			}
			a.finish(p)
		}
	}
	return a.s.flush()
}

// finish decides a complete tool_use block.
func (a *anthropicStream) finish(p *pending) {
	p.Tool = p.Name
	input := p.start["input"]
	switch {
	case p.Bad != "":
	case len(p.args) > 0 && input != nil && !emptyObject(input):
		p.Bad = "its input is given both in the block start and in deltas"
	case len(p.args) > 0:
		p.Args, p.Bad = validArgs(p.args)
	case input != nil:
		p.Args, p.Bad = validArgs(input)
	default:
		p.Args = json.RawMessage(`{}`)
	}
	a.s.g.decide(a.s.ctx, Anthropic, &p.call)
	p.decided = true
	if p.Allowed {
		a.allowed++
		p.out = p.raw
		return
	}
	a.stopped++
	p.out = []*event{
		{Name: "content_block_start", Data: mustJSON(map[string]any{"type": "content_block_start", "index": p.index,
			"content_block": map[string]any{"type": "text", "text": ""}})},
		{Name: "content_block_delta", Data: mustJSON(map[string]any{"type": "content_block_delta", "index": p.index,
			"delta": map[string]any{"type": "text_delta", "text": p.Message}})},
		{Name: "content_block_stop", Data: mustJSON(map[string]any{"type": "content_block_stop", "index": p.index})},
	}
}

func validArgs(b []byte) (json.RawMessage, string) {
	a, err := argsObject(b)
	if err != nil {
		return nil, "its arguments are not one JSON object (" + err.Error() + ")"
	}
	return a, ""
}

func emptyArray(b []byte) bool {
	var v []json.RawMessage
	return json.Unmarshal(b, &v) == nil && len(v) == 0
}

func emptyObject(b []byte) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(b, &v) == nil && len(v) == 0
}

// anthropicJSON guards a non-streamed Messages answer.
func (g *Guard) anthropicJSON(ctx context.Context, b []byte, top map[string]json.RawMessage) ([]byte, error) {
	var content []json.RawMessage
	if c, ok := top["content"]; ok {
		if err := json.Unmarshal(c, &content); err != nil {
			return nil, fmt.Errorf("%w: content is not a list", ErrMalformed)
		}
	}
	changed, left, calls := false, 0, 0
	for i, raw := range content {
		blk, err := strictObject(raw)
		if err != nil {
			return nil, err
		}
		if str(blk, "type") != "tool_use" {
			continue
		}
		if calls++; calls > g.o.MaxCalls {
			return nil, fmt.Errorf("%w: more than %d tool calls in one answer", ErrTooLarge, g.o.MaxCalls)
		}
		c := &call{ID: str(blk, "id"), Name: str(blk, "name")}
		c.Tool = c.Name
		if in, ok := blk["input"]; ok {
			c.Args, c.Bad = validArgs(in)
		} else {
			c.Args = json.RawMessage(`{}`)
		}
		g.decide(ctx, Anthropic, c)
		if c.Allowed {
			left++
			continue
		}
		content[i], changed = mustJSON(map[string]any{"type": "text", "text": c.Message}), true
	}
	if !changed {
		return b, nil
	}
	out, err := setField(b, "content", mustJSON(content))
	if err != nil {
		return nil, err
	}
	if left == 0 && bytes.Equal(bytes.TrimSpace(top["stop_reason"]), []byte(`"tool_use"`)) {
		return setField(out, "stop_reason", []byte(`"end_turn"`))
	}
	return out, nil
}
