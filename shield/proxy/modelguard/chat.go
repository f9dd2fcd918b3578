package modelguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
)

// chatStream guards an OpenAI chat-completions stream: tool_calls (and the legacy function_call)
// deltas are held per choice until the choice finishes; text passes as it comes.
type chatStream struct {
	s     *stream
	calls map[int]map[int]*pending // choice → tool call index (-1: legacy function_call)
	env   map[string]json.RawMessage
}

type chatDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	Custom *struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"`
}

func (c *chatStream) handle(ev *event) error {
	s := c.s
	if bytes.HasPrefix(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
		if err := c.end(); err != nil {
			return err
		}
		if err := s.write(&event{Data: []byte("[DONE]")}); err != nil {
			return err
		}
		s.done = true
		return nil
	}
	top, err := strictObject(ev.Data)
	if err != nil {
		return err
	}
	var choices []json.RawMessage
	if raw, ok := top["choices"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &choices); err != nil {
			return fmt.Errorf("%w: choices is not a list", ErrMalformed)
		}
	}
	type parsed struct {
		idx    int
		ch     map[string]json.RawMessage
		delta  map[string]json.RawMessage
		finish string
	}
	var ps []parsed
	toolish := false
	for _, raw := range choices {
		ch, _ := strictObject(raw)
		idx, ok := num(ch, "index")
		if !ok {
			return fmt.Errorf("%w: a choice without an index", ErrMalformed)
		}
		p := parsed{idx: idx, ch: ch, delta: obj(ch, "delta"), finish: str(ch, "finish_reason")}
		if _, ok := p.delta["tool_calls"]; ok {
			toolish = true
		}
		if _, ok := p.delta["function_call"]; ok {
			toolish = true
		}
		if p.finish != "" && len(c.calls[idx]) > 0 {
			toolish = true
		}
		if _, ok := obj(ch, "message")["tool_calls"]; ok {
			return fmt.Errorf("%w: a stream chunk carries a whole message", ErrMalformed)
		}
		ps = append(ps, p)
	}
	if !toolish {
		return s.write(ev)
	}
	env := map[string]json.RawMessage{}
	for k, v := range top {
		if k != "choices" && k != "usage" {
			env[k] = v
		}
	}
	c.env = env
	for _, p := range ps {
		if err := c.absorb(p.idx, p.delta); err != nil {
			return err
		}
		rest := map[string]json.RawMessage{}
		for k, v := range p.delta {
			if k != "tool_calls" && k != "function_call" {
				rest[k] = v
			}
		}
		if len(rest) > 0 {
			if err := c.chunk(p.idx, rest, nil); err != nil {
				return err
			}
		}
		if p.finish != "" {
			if err := c.finishChoice(p.idx, p.finish); err != nil {
				return err
			}
		}
	}
	if u, ok := top["usage"]; ok && !bytes.Equal(bytes.TrimSpace(u), []byte("null")) {
		m := map[string]json.RawMessage{"usage": u, "choices": json.RawMessage("[]")}
		for k, v := range env {
			m[k] = v
		}
		return s.write(&event{Data: mustJSON(m)})
	}
	return nil
}

// absorb adds a choice's tool call deltas to its pending calls.
func (c *chatStream) absorb(choice int, delta map[string]json.RawMessage) error {
	var tcs []chatDelta
	if raw, ok := delta["tool_calls"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &tcs); err != nil {
			return fmt.Errorf("%w: tool_calls is not a list of calls", ErrMalformed)
		}
	}
	if raw, ok := delta["function_call"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var fc struct{ Name, Arguments string }
		if err := json.Unmarshal(raw, &fc); err != nil {
			return fmt.Errorf("%w: function_call is not an object", ErrMalformed)
		}
		legacy := -1
		tcs = append(tcs, chatDelta{Index: &legacy, Type: "legacy", Function: &struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{fc.Name, fc.Arguments}})
	}
	if c.calls[choice] == nil {
		c.calls[choice] = map[int]*pending{}
	}
	for _, tc := range tcs {
		if tc.Index == nil {
			return fmt.Errorf("%w: a tool call delta without an index", ErrMalformed)
		}
		p := c.calls[choice][*tc.Index]
		if p == nil {
			p = &pending{choice: choice, index: *tc.Index, kind: "function"}
			if err := c.s.begin(p); err != nil {
				return err
			}
			c.s.queue = c.s.queue[:len(c.s.queue)-1] // chat calls are not queued: text passes
			c.calls[choice][*tc.Index] = p
		}
		if p.done {
			return fmt.Errorf("%w: a tool call delta after its choice finished", ErrMalformed)
		}
		name, args := "", ""
		switch {
		case tc.Function != nil:
			name, args = tc.Function.Name, tc.Function.Arguments
		case tc.Custom != nil:
			name, args = tc.Custom.Name, tc.Custom.Input
		}
		kind := p.kind
		if tc.Type == "custom" || tc.Custom != nil {
			kind = "custom"
		} else if tc.Type == "legacy" {
			kind = "legacy"
		}
		if (tc.ID != "" && p.ID != "" && tc.ID != p.ID) || (name != "" && p.Name != "" && name != p.Name) ||
			(p.ID != "" || p.Name != "") && kind != p.kind {
			if p.Bad == "" {
				p.Bad = "its id, name or type changed between deltas"
			}
		}
		p.kind = kind
		if tc.ID != "" {
			p.ID = tc.ID
		}
		if name != "" {
			p.Name = name
		}
		c.s.appendArgs(p, args)
	}
	return nil
}

// finishChoice decides a finished choice's calls and sends the allowed ones, the stopped ones'
// messages, then the finish reason (adjusted when no call is left).
func (c *chatStream) finishChoice(choice int, finish string) error {
	ps := c.calls[choice]
	idx := make([]int, 0, len(ps))
	for i := range ps {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	n := 0
	for _, i := range idx {
		p := ps[i]
		p.done = true
		p.Tool = p.Name
		if p.Bad == "" {
			if p.kind == "custom" {
				p.Args = mustJSON(map[string]string{"input": string(p.args)})
			} else if len(bytes.TrimSpace(p.args)) == 0 {
				p.Args = json.RawMessage(`{}`)
			} else {
				p.Args, p.Bad = validArgs(p.args)
			}
		}
		c.s.g.decide(c.s.ctx, OpenAIChat, &p.call)
		var d map[string]any
		switch {
		case !p.Allowed:
			d = map[string]any{"content": "\n" + p.Message + "\n"}
		case p.kind == "legacy":
			d = map[string]any{"function_call": map[string]any{"name": p.Name, "arguments": string(p.args)}}
		case p.kind == "custom":
			d = map[string]any{"tool_calls": []any{map[string]any{"index": n, "id": p.ID, "type": "custom",
				"custom": map[string]any{"name": p.Name, "input": string(p.args)}}}}
			n++
		default:
			d = map[string]any{"tool_calls": []any{map[string]any{"index": n, "id": p.ID, "type": "function",
				"function": map[string]any{"name": p.Name, "arguments": string(p.args)}}}}
			n++
		}
		if err := c.chunk(choice, rawMap(d), nil); err != nil {
			return err
		}
	}
	hadCalls := len(idx) > 0
	delete(c.calls, choice)
	if hadCalls && n == 0 && (finish == "tool_calls" || finish == "function_call") {
		finish = "stop"
	}
	return c.chunk(choice, map[string]json.RawMessage{}, &finish)
}

func rawMap(m map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = mustJSON(v)
	}
	return out
}

// chunk writes one chunk of the stream's envelope with one choice.
func (c *chatStream) chunk(choice int, delta map[string]json.RawMessage, finish *string) error {
	m := map[string]json.RawMessage{}
	for k, v := range c.env {
		m[k] = v
	}
	var fr any
	if finish != nil {
		fr = *finish
	}
	m["choices"] = mustJSON([]any{map[string]any{"index": choice, "delta": delta, "finish_reason": fr}})
	return c.s.write(&event{Data: mustJSON(m)})
}

func (c *chatStream) end() error {
	for choice, ps := range c.calls {
		for _, p := range ps {
			if p.Bad == "" {
				p.Bad = "the answer ended before the call was complete"
			}
		}
		if err := c.finishChoice(choice, ""); err != nil {
			return err
		}
	}
	return nil
}

// chatJSON guards a non-streamed chat completion.
func (g *Guard) chatJSON(ctx context.Context, b []byte, top map[string]json.RawMessage) ([]byte, error) {
	var choices []json.RawMessage
	if raw, ok := top["choices"]; ok {
		if err := json.Unmarshal(raw, &choices); err != nil {
			return nil, fmt.Errorf("%w: choices is not a list", ErrMalformed)
		}
	}
	changed, calls := false, 0
	for i, raw := range choices {
		ch, err := strictObject(raw)
		if err != nil {
			return nil, err
		}
		msgRaw, ok := ch["message"]
		if !ok {
			continue
		}
		msg, err := strictObject(msgRaw)
		if err != nil {
			return nil, err
		}
		var tcs []json.RawMessage
		if raw, ok := msg["tool_calls"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			if err := json.Unmarshal(raw, &tcs); err != nil {
				return nil, fmt.Errorf("%w: tool_calls is not a list", ErrMalformed)
			}
		}
		type one struct {
			raw   json.RawMessage
			c     *call
			field string
		}
		var all []one
		for _, t := range tcs {
			tc, err := strictObject(t)
			if err != nil {
				return nil, err
			}
			c := &call{ID: str(tc, "id")}
			if f := obj(tc, "function"); f != nil {
				c.Name = str(f, "name")
				c.Args, c.Bad = validArgs([]byte(str(f, "arguments")))
			} else if cu := obj(tc, "custom"); cu != nil {
				c.Name, c.Args = str(cu, "name"), mustJSON(map[string]string{"input": str(cu, "input")})
			} else {
				c.Name, c.Bad = str(tc, "type"), "a tool call of an unknown type"
			}
			all = append(all, one{raw: t, c: c, field: "tool_calls"})
		}
		if f := obj(msg, "function_call"); f != nil {
			c := &call{Name: str(f, "name")}
			c.Args, c.Bad = validArgs([]byte(str(f, "arguments")))
			all = append(all, one{c: c, field: "function_call"})
		}
		if len(all) == 0 {
			continue
		}
		var kept []json.RawMessage
		keptLegacy, text := false, ""
		for _, o := range all {
			if calls++; calls > g.o.MaxCalls {
				return nil, fmt.Errorf("%w: more than %d tool calls in one answer", ErrTooLarge, g.o.MaxCalls)
			}
			o.c.Tool = o.c.Name
			g.decide(ctx, OpenAIChat, o.c)
			switch {
			case !o.c.Allowed:
				text += "\n" + o.c.Message
			case o.field == "function_call":
				keptLegacy = true
			default:
				kept = append(kept, o.raw)
			}
		}
		if text == "" {
			continue
		}
		changed = true
		nm := msgRaw
		if len(kept) > 0 {
			nm, err = setField(nm, "tool_calls", mustJSON(kept))
		} else {
			nm, err = setField(nm, "tool_calls", nil)
		}
		if err != nil {
			return nil, err
		}
		if !keptLegacy {
			if nm, err = setField(nm, "function_call", nil); err != nil {
				return nil, err
			}
		}
		content := str(msg, "content") + text
		if nm, err = setField(nm, "content", mustJSON(content)); err != nil {
			return nil, err
		}
		nc, err := setField(raw, "message", nm)
		if err != nil {
			return nil, err
		}
		if fr := str(ch, "finish_reason"); len(kept) == 0 && !keptLegacy && (fr == "tool_calls" || fr == "function_call") {
			if nc, err = setField(nc, "finish_reason", []byte(`"stop"`)); err != nil {
				return nil, err
			}
		}
		choices[i] = nc
	}
	if !changed {
		return b, nil
	}
	return setField(b, "choices", mustJSON(choices))
}
