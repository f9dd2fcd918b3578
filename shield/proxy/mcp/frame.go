package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Bounds on what the relay reads before it parses anything.
const (
	// DefaultMaxMessage bounds one message from the client (a host or an IDE): tool arguments.
	DefaultMaxMessage = 4 << 20
	// DefaultMaxServerMessage bounds one message from the server or runtime (tool results can
	// carry files, base64 images).
	DefaultMaxServerMessage = 64 << 20
	// maxDepth bounds the nesting of a message (objects and arrays).
	maxDepth = 64
)

// Framing errors. A line over the bound is consumed and reported, so the stream stays in step.
var (
	ErrTooLong   = errors.New("message over the size bound")
	ErrMalformed = errors.New("malformed JSON-RPC message")
)

// LineReader reads newline-delimited messages, each at most Max bytes, without ever holding
// more than Max+1 bytes of one line.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader reads lines of at most max bytes from r.
func NewLineReader(r io.Reader, max int) *LineReader {
	size := 64 << 10
	if max < size {
		size = max + 1
	}
	if size < 16 {
		size = 16
	}
	return &LineReader{r: bufio.NewReaderSize(r, size), max: max}
}

// Next returns the next non-empty line without its line ending. A line over the bound is
// skipped entirely and ErrTooLong returned; the next call reads the line after it. io.EOF at
// the end of the stream (a last line without a newline is still returned).
func (l *LineReader) Next() ([]byte, error) {
	for {
		line, err := l.line()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

func (l *LineReader) line() ([]byte, error) {
	var buf []byte
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(buf)+len(frag) > l.max+1 {
			for err == bufio.ErrBufferFull {
				_, err = l.r.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, ErrTooLong
		}
		buf = append(buf, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, nil
		case err != nil:
			return nil, err
		}
		return buf[:len(buf)-1], nil
	}
}

// Message is one parsed JSON-RPC message. Fields holds the top-level members by their exact
// names; Raw is the line as read.
type Message struct {
	Raw    []byte
	Fields map[string]json.RawMessage
	Method string
	// ID is the compacted id member, nil when absent (a notification). Used as a map key.
	ID string
}

// IsRequest: a method and an id. IsNotification: a method, no id. IsResponse: an id, no method.
func (m *Message) IsRequest() bool      { return m.Method != "" && m.ID != "" }
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == "" }
func (m *Message) IsResponse() bool     { return m.Method == "" && m.ID != "" }

// Params returns the params member (nil when absent).
func (m *Message) Params() json.RawMessage { return m.Fields["params"] }

// Result returns the result member (nil when absent).
func (m *Message) Result() json.RawMessage { return m.Fields["result"] }

// Parse checks one message strictly and splits its top level. It refuses what two JSON parsers
// could read differently, so that what Shield evaluates is what the peer executes: invalid
// UTF-8, a duplicate member name at any depth, nesting deeper than 64, trailing data, a
// top level that is not an object (batches are not relayed), a method that is not a string,
// an id that is not a string, a number or null.
func Parse(line []byte) (*Message, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("%w: invalid UTF-8", ErrMalformed)
	}
	if err := checkStrict(line); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("%w: the top level is not an object", ErrMalformed)
	}
	m := &Message{Raw: line, Fields: fields}
	if raw, ok := fields["method"]; ok {
		if err := json.Unmarshal(raw, &m.Method); err != nil || m.Method == "" {
			return nil, fmt.Errorf("%w: method is not a non-empty string", ErrMalformed)
		}
	}
	if raw, ok := fields["id"]; ok {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("%w: id: %v", ErrMalformed, err)
		}
		switch c := b.Bytes()[0]; {
		case c == '"', c == '-', c >= '0' && c <= '9':
			m.ID = b.String()
		case b.String() == "null":
			// An error response to an unparseable request carries id null: no id to correlate.
		default:
			return nil, fmt.Errorf("%w: id is neither a string nor a number", ErrMalformed)
		}
	}
	if m.Method == "" && m.ID == "" {
		if _, isErr := fields["error"]; !isErr {
			return nil, fmt.Errorf("%w: neither a request, a notification nor a response", ErrMalformed)
		}
	}
	return m, nil
}

// checkStrict walks the tokens once: one value, no duplicate member names, bounded depth.
func checkStrict(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	type frame struct {
		obj  bool
		keys map[string]struct{}
		key  bool // next string token in an object is a key
	}
	var stack []*frame
	tokens := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		tokens++
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
				}
				stack = append(stack, &frame{obj: t == '{', key: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) == 0 && dec.More() {
					return fmt.Errorf("%w: data after the message", ErrMalformed)
				}
			}
			continue
		case string:
			if top != nil && top.obj && top.key {
				if top.keys == nil {
					top.keys = map[string]struct{}{}
				}
				if _, dup := top.keys[t]; dup {
					return fmt.Errorf("%w: duplicate member %q", ErrMalformed, t)
				}
				top.keys[t] = struct{}{}
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
		if top == nil {
			return fmt.Errorf("%w: the top level is not an object", ErrMalformed)
		}
	}
	if tokens == 0 {
		return fmt.Errorf("%w: empty", ErrMalformed)
	}
	return nil
}
