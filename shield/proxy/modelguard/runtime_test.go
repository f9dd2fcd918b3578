package modelguard

// What a runtime reads from an answer: a strict reader per API that accumulates the stream the
// way the vendors' SDKs do, checks the stream is well formed (event order, indices, sequence
// numbers, the terminal event) and returns the tool calls, the text and the stop reason.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

type seenCall struct {
	Name, Args string
}

type answer struct {
	Calls []seenCall
	Text  string
	Stop  string
	Err   string // an error event in the stream
}

func readEvents(b []byte) ([]*event, error) {
	r := newSSEReader(bytes.NewReader(b), 64<<20, 64<<20)
	var out []*event
	for {
		ev, err := r.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func decode(data []byte) map[string]any {
	m := map[string]any{}
	json.Unmarshal(data, &m)
	return m
}

func mp(v any) map[string]any { m, _ := v.(map[string]any); return m }
func sl(v any) []any          { s, _ := v.([]any); return s }
func st(v any) string         { s, _ := v.(string); return s }
func in(v any) int            { f, _ := v.(float64); return int(f) }

// readAnswer reads a streamed (SSE) or a JSON answer of api.
func readAnswer(api string, stream bool, body []byte) (answer, error) {
	if !stream {
		return readJSONAnswer(api, body)
	}
	evs, err := readEvents(body)
	if err != nil {
		return answer{}, err
	}
	switch api {
	case Anthropic:
		return readAnthropic(evs)
	case OpenAIResponses:
		return readResponses(evs)
	default:
		return readChat(evs)
	}
}

func readAnthropic(evs []*event) (answer, error) {
	var a answer
	type blk struct {
		typ, name, json, text string
		stopped               bool
	}
	blocks := map[int]*blk{}
	var order []int
	started, stopped := false, false
	for i, ev := range evs {
		d := decode(ev.Data)
		typ := st(d["type"])
		if ev.Name != typ {
			return a, fmt.Errorf("event %d: name %q type %q", i, ev.Name, typ)
		}
		if stopped {
			return a, fmt.Errorf("event %s after message_stop", typ)
		}
		switch typ {
		case "message_start":
			started = true
		case "content_block_start":
			idx := in(d["index"])
			if blocks[idx] != nil {
				return a, fmt.Errorf("block %d started twice", idx)
			}
			if len(order) != idx {
				return a, fmt.Errorf("block %d started out of order", idx)
			}
			cb := mp(d["content_block"])
			blocks[idx] = &blk{typ: st(cb["type"]), name: st(cb["name"])}
			order = append(order, idx)
		case "content_block_delta":
			b := blocks[in(d["index"])]
			if b == nil || b.stopped {
				return a, fmt.Errorf("delta for a block not open")
			}
			dl := mp(d["delta"])
			switch st(dl["type"]) {
			case "input_json_delta":
				if b.typ != "tool_use" {
					return a, fmt.Errorf("json delta in a %s block", b.typ)
				}
				b.json += st(dl["partial_json"])
			case "text_delta":
				if b.typ != "text" {
					return a, fmt.Errorf("text delta in a %s block", b.typ)
				}
				b.text += st(dl["text"])
			}
		case "content_block_stop":
			b := blocks[in(d["index"])]
			if b == nil || b.stopped {
				return a, fmt.Errorf("stop for a block not open")
			}
			b.stopped = true
		case "message_delta":
			a.Stop = st(mp(d["delta"])["stop_reason"])
		case "message_stop":
			stopped = true
		case "error":
			a.Err = st(mp(d["error"])["message"])
		}
	}
	if a.Err == "" && (!started || !stopped) {
		return a, fmt.Errorf("message_start/message_stop missing")
	}
	for _, i := range order {
		b := blocks[i]
		if !b.stopped && a.Err == "" {
			return a, fmt.Errorf("block %d never stopped", i)
		}
		switch b.typ {
		case "tool_use":
			a.Calls = append(a.Calls, seenCall{b.name, b.json})
		case "text":
			a.Text += b.text
		}
	}
	return a, nil
}

func readResponses(evs []*event) (answer, error) {
	var a answer
	seq := -1
	var items []map[string]any
	completed := false
	for i, ev := range evs {
		d := decode(ev.Data)
		typ := st(d["type"])
		if ev.Name != "" && ev.Name != typ {
			return a, fmt.Errorf("event %d: name %q type %q", i, ev.Name, typ)
		}
		if completed {
			return a, fmt.Errorf("event %s after response.completed", typ)
		}
		if n, ok := d["sequence_number"].(float64); ok && typ != "error" {
			if seq >= 0 && int(n) != seq+1 {
				return a, fmt.Errorf("sequence number %d after %d", int(n), seq)
			}
			seq = int(n)
		}
		switch typ {
		case "response.output_item.done":
			if in(d["output_index"]) != len(items) {
				return a, fmt.Errorf("item done at index %d, want %d", in(d["output_index"]), len(items))
			}
			items = append(items, mp(d["item"]))
		case "response.completed":
			completed = true
			out := sl(mp(d["response"])["output"])
			if len(out) != len(items) {
				return a, fmt.Errorf("completed output has %d items, the stream %d", len(out), len(items))
			}
			for j, o := range out {
				if st(mp(o)["type"]) != st(items[j]["type"]) || st(mp(o)["arguments"]) != st(items[j]["arguments"]) {
					return a, fmt.Errorf("completed output item %d differs from the stream's", j)
				}
			}
		case "error":
			a.Err = st(d["message"])
		}
	}
	if !completed && a.Err == "" {
		return a, fmt.Errorf("no response.completed")
	}
	a.Calls, a.Text = responsesItems(items)
	if len(a.Calls) > 0 {
		a.Stop = "tool_calls"
	} else {
		a.Stop = "stop"
	}
	return a, nil
}

func responsesItems(items []map[string]any) ([]seenCall, string) {
	var calls []seenCall
	text := ""
	for _, it := range items {
		switch t := st(it["type"]); {
		case t == "message":
			for _, c := range sl(it["content"]) {
				text += st(mp(c)["text"])
			}
		case t == "function_call":
			calls = append(calls, seenCall{st(it["name"]), st(it["arguments"])})
		case t == "custom_tool_call":
			calls = append(calls, seenCall{st(it["name"]), st(it["input"])})
		case strings.HasSuffix(t, "_call"):
			b, _ := json.Marshal(it)
			calls = append(calls, seenCall{t, string(b)})
		}
	}
	return calls, text
}

func readChat(evs []*event) (answer, error) {
	var a answer
	type tc struct{ id, name, args string }
	calls := map[int]*tc{}
	done := false
	for _, ev := range evs {
		if done {
			return a, fmt.Errorf("data after [DONE]")
		}
		if string(ev.Data) == "[DONE]" {
			done = true
			continue
		}
		d := decode(ev.Data)
		if e := mp(d["error"]); e != nil {
			a.Err = st(e["message"])
			continue
		}
		for _, c := range sl(d["choices"]) {
			ch := mp(c)
			dl := mp(ch["delta"])
			a.Text += st(dl["content"])
			for _, t := range sl(dl["tool_calls"]) {
				tm := mp(t)
				i := in(tm["index"])
				if calls[i] == nil {
					if i != len(calls) {
						return a, fmt.Errorf("tool call index %d after %d calls", i, len(calls))
					}
					calls[i] = &tc{}
				}
				f := mp(tm["function"])
				calls[i].name += st(f["name"])
				calls[i].args += st(f["arguments"])
			}
			if fc := mp(dl["function_call"]); fc != nil {
				if calls[-1] == nil {
					calls[-1] = &tc{}
				}
				calls[-1].name += st(fc["name"])
				calls[-1].args += st(fc["arguments"])
			}
			if f := st(ch["finish_reason"]); f != "" {
				a.Stop = f
			}
		}
	}
	if !done && a.Err == "" {
		return a, fmt.Errorf("no [DONE]")
	}
	var idx []int
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		a.Calls = append(a.Calls, seenCall{calls[i].name, calls[i].args})
	}
	return a, nil
}

func readJSONAnswer(api string, body []byte) (answer, error) {
	var a answer
	d := decode(body)
	if e := mp(d["error"]); e != nil {
		a.Err = st(e["message"])
		return a, nil
	}
	switch api {
	case Anthropic:
		for _, c := range sl(d["content"]) {
			b := mp(c)
			switch st(b["type"]) {
			case "tool_use":
				in, _ := json.Marshal(b["input"])
				a.Calls = append(a.Calls, seenCall{st(b["name"]), string(in)})
			case "text":
				a.Text += st(b["text"])
			}
		}
		a.Stop = st(d["stop_reason"])
	case OpenAIResponses:
		var items []map[string]any
		for _, o := range sl(d["output"]) {
			items = append(items, mp(o))
		}
		a.Calls, a.Text = responsesItems(items)
		a.Stop = "stop"
		if len(a.Calls) > 0 {
			a.Stop = "tool_calls"
		}
	default:
		for _, c := range sl(d["choices"]) {
			ch := mp(c)
			m := mp(ch["message"])
			a.Text += st(m["content"])
			for _, t := range sl(m["tool_calls"]) {
				f := mp(mp(t)["function"])
				a.Calls = append(a.Calls, seenCall{st(f["name"]), st(f["arguments"])})
			}
			if fc := mp(m["function_call"]); fc != nil {
				a.Calls = append(a.Calls, seenCall{st(fc["name"]), st(fc["arguments"])})
			}
			a.Stop = st(ch["finish_reason"])
		}
	}
	return a, nil
}
