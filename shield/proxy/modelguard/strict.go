package modelguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// ErrMalformed is wrapped by every parse failure of an event or a body.
var ErrMalformed = errors.New("malformed model API message")

const maxDepth = 64

// strictObject checks b is exactly one JSON object, valid UTF-8, no duplicate member names at
// any depth, nesting at most maxDepth, and returns its top-level members.
func strictObject(b []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj, key bool
		keys     map[string]struct{}
	}
	var stack []*frame
	tokens := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		tokens++
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		} else if tokens > 1 {
			return nil, fmt.Errorf("%w: data after the object", ErrMalformed)
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				if top == nil && d != '{' {
					return nil, fmt.Errorf("%w: not an object", ErrMalformed)
				}
				if len(stack) >= maxDepth {
					return nil, fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
				}
				stack = append(stack, &frame{obj: d == '{', key: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top == nil {
			return nil, fmt.Errorf("%w: not an object", ErrMalformed)
		}
		if s, ok := tok.(string); ok && top.obj && top.key {
			if top.keys == nil {
				top.keys = map[string]struct{}{}
			}
			if _, dup := top.keys[s]; dup {
				return nil, fmt.Errorf("%w: duplicate member %q", ErrMalformed, s)
			}
			top.keys[s] = struct{}{}
			top.key = false
			continue
		}
		if top.obj {
			top.key = true
		}
	}
	if tokens == 0 {
		return nil, fmt.Errorf("%w: empty", ErrMalformed)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: not an object", ErrMalformed)
	}
	return m, nil
}

// str reads a string member ("" when absent or not a string).
func str(m map[string]json.RawMessage, k string) string {
	var s string
	if raw, ok := m[k]; ok {
		json.Unmarshal(raw, &s)
	}
	return s
}

// obj reads an object member (nil when absent or not an object).
func obj(m map[string]json.RawMessage, k string) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if raw, ok := m[k]; ok {
		json.Unmarshal(raw, &o)
	}
	return o
}

// num reads an integer member.
func num(m map[string]json.RawMessage, k string) (int, bool) {
	raw, ok := m[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(raw)))
	return n, err == nil
}

// setField returns the object b with member k set to v, keeping the other members' order and
// bytes (k is appended when absent). b must already have passed strictObject.
func setField(b []byte, k string, v []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%w: not an object", ErrMalformed)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	found, first := false, true
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if key == k {
			found = true
			if v == nil {
				continue
			}
			raw = v
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(raw)
	}
	if !found && v != nil {
		if !first {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// argsObject checks a tool call's arguments are one strict JSON object and returns them.
func argsObject(b []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: empty arguments", ErrMalformed)
	}
	if _, err := strictObject(b); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
