package normalize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Default limits of DecodeArguments.
const (
	DefaultMaxArgumentBytes = 1 << 20
	DefaultMaxArgumentDepth = 64
)

// Limits bounds DecodeArguments. A zero field takes its default; there is no "unlimited".
type Limits struct {
	MaxBytes int // size of the raw arguments; 0 = DefaultMaxArgumentBytes (1 MiB)
	MaxDepth int // nesting of objects and arrays, the top object being depth 1; 0 = DefaultMaxArgumentDepth (64)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxArgumentBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxArgumentDepth
	}
	return l
}

// DecodeArguments decodes a tool call's arguments. They must be one JSON object, valid UTF-8, no
// larger than lim.MaxBytes, nested no deeper than lim.MaxDepth, without duplicate keys (two parsers
// could disagree on which one counts) and without NUL characters in keys or strings (a classic way
// to cut a string short for one consumer and not another). Numbers are kept as json.Number.
//
// Every error wraps ErrInvalidArguments and is an *ArgumentsError saying what and where.
func DecodeArguments(raw []byte, lim Limits) (map[string]any, error) {
	lim = lim.withDefaults()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, &ArgumentsError{Reason: "empty; send a JSON object ({} when there are none)"}
	}
	if len(raw) > lim.MaxBytes {
		return nil, &ArgumentsError{Reason: fmt.Sprintf("%d bytes, larger than the limit of %d", len(raw), lim.MaxBytes)}
	}
	if !utf8.Valid(raw) {
		off := invalidUTF8Offset(raw)
		return nil, &ArgumentsError{Reason: fmt.Sprintf("invalid UTF-8 at byte offset %d", off)}
	}
	if v, ok := decodeFast(raw, lim.MaxDepth); ok {
		return v, nil
	}
	return decodeSlow(raw, lim)
}

// decodeFast decodes valid arguments with encoding/json in one call, then checks what the token
// decoder checks (depth, NUL characters, duplicate keys). ok is false when anything is wrong; the
// slow path then says what and where. FuzzDecodePaths checks that both paths agree.
func decodeFast(raw []byte, maxDepth int) (map[string]any, bool) {
	if hasDuplicateKeys(raw) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if !checkValue(m, 1, maxDepth) {
		return nil, false
	}
	return m, true
}

// checkValue reports whether v (a container at depth) nests no deeper than max and holds no NUL.
func checkValue(v any, depth, max int) bool {
	switch x := v.(type) {
	case map[string]any:
		if depth > max {
			return false
		}
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || !checkValue(e, depth+1, max) {
				return false
			}
		}
	case []any:
		if depth > max {
			return false
		}
		for _, e := range x {
			if !checkValue(e, depth+1, max) {
				return false
			}
		}
	case string:
		return strings.IndexByte(x, 0) < 0
	}
	return true
}

// hasDuplicateKeys scans JSON text (assumed well-formed; malformed text is left to the decoder)
// for an object with the same key twice, comparing keys after unescaping.
func hasDuplicateKeys(raw []byte) bool {
	type frame struct {
		object  bool
		wantKey bool
		keys    []string
	}
	var stack []frame
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{':
			stack = append(stack, frame{object: true, wantKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
		case '"':
			j := i + 1
			esc := false
			for ; j < len(raw); j++ {
				if raw[j] == '\\' {
					j++
					esc = true
					continue
				}
				if raw[j] == '"' {
					break
				}
			}
			if j >= len(raw) {
				return false // unterminated: the decoder reports it
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				key := string(raw[i+1 : j])
				if esc {
					if err := json.Unmarshal(raw[i:j+1], &key); err != nil {
						return false
					}
				}
				for _, k := range stack[n-1].keys {
					if k == key {
						return true
					}
				}
				stack[n-1].keys = append(stack[n-1].keys, key)
				stack[n-1].wantKey = false
			}
			i = j
		}
	}
	return false
}

// decodeSlow walks the tokens, checking as it goes, and says exactly what is wrong and where.
func decodeSlow(raw []byte, lim Limits) (map[string]any, error) {
	d := &argDecoder{dec: json.NewDecoder(bytes.NewReader(raw)), maxDepth: lim.MaxDepth}
	d.dec.UseNumber()
	tok, err := d.token("$")
	if err != nil {
		return nil, err
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return nil, &ArgumentsError{Path: "$", Reason: fmt.Sprintf("must be a JSON object, got %s", describeToken(tok))}
	}
	v, err := d.object("$", 1)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, &ArgumentsError{Reason: fmt.Sprintf("trailing data after the object at byte offset %d", d.dec.InputOffset())}
	}
	return v, nil
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

type argDecoder struct {
	dec      *json.Decoder
	maxDepth int
}

func (d *argDecoder) token(path string) (json.Token, error) {
	tok, err := d.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ArgumentsError{Path: path, Reason: "unexpected end of JSON"}
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &ArgumentsError{Reason: fmt.Sprintf("invalid JSON at byte offset %d: %s", se.Offset, se.Error())}
		}
		return nil, &ArgumentsError{Path: path, Reason: "invalid JSON: " + err.Error()}
	}
	return tok, nil
}

func (d *argDecoder) object(path string, depth int) (map[string]any, error) {
	if depth > d.maxDepth {
		return nil, &ArgumentsError{Path: path, Reason: fmt.Sprintf("nesting deeper than %d", d.maxDepth)}
	}
	m := map[string]any{}
	for {
		tok, err := d.token(path)
		if err != nil {
			return nil, err
		}
		if tok == json.Delim('}') {
			return m, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, &ArgumentsError{Path: path, Reason: "object key is not a string"}
		}
		kp := childKey(path, key)
		if strings.IndexByte(key, 0) >= 0 {
			return nil, &ArgumentsError{Path: kp, Reason: "NUL character in an object key"}
		}
		if _, dup := m[key]; dup {
			return nil, &ArgumentsError{Path: kp, Reason: "duplicate object key"}
		}
		v, err := d.value(kp, depth)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

func (d *argDecoder) array(path string, depth int) ([]any, error) {
	if depth > d.maxDepth {
		return nil, &ArgumentsError{Path: path, Reason: fmt.Sprintf("nesting deeper than %d", d.maxDepth)}
	}
	a := []any{}
	for i := 0; ; i++ {
		if !d.dec.More() {
			if _, err := d.token(path); err != nil { // the closing ']'
				return nil, err
			}
			return a, nil
		}
		v, err := d.value(path+"["+strconv.Itoa(i)+"]", depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}

// value reads one value whose container is at depth.
func (d *argDecoder) value(path string, depth int) (any, error) {
	tok, err := d.token(path)
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return d.object(path, depth+1)
		case '[':
			return d.array(path, depth+1)
		}
		return nil, &ArgumentsError{Path: path, Reason: fmt.Sprintf("unexpected %q", string(t))}
	case string:
		if strings.IndexByte(t, 0) >= 0 {
			return nil, &ArgumentsError{Path: path, Reason: "NUL character in a string"}
		}
		return t, nil
	default: // json.Number, bool, nil
		return t, nil
	}
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// childKey appends an object key to a location: $.a for plain keys, $["a b"] otherwise.
func childKey(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}
