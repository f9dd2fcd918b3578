package modelguard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is wrapped when a line, an event, a call's arguments or the held bytes exceed a bound.
var ErrTooLarge = errors.New("over the guard's bound")

// event is one server-sent event as dispatched: its name ("" when the stream gives none), its
// data lines joined by "\n", and the raw bytes it came as when they are in the plain form
// ("event: N\n", "data: D\n", "id: …\n", then "\n"), so that it can pass byte for byte. Raw is
// nil for any other form: the event is then written anew in the plain form.
type event struct {
	Name string
	Data []byte
	Raw  []byte
}

// sseReader splits a stream into events, bounding a line and an event before it holds them.
type sseReader struct {
	r        *bufio.Reader
	maxLine  int
	maxEvent int
	started  bool
}

func newSSEReader(r io.Reader, maxLine, maxEvent int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine, maxEvent: maxEvent}
}

// line returns one line without its ending ("\n" or "\r\n"). A bare "\r" inside a line is an
// error: SSE parsers disagree on it, and what one reads as two lines another reads as one.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(buf)+len(chunk) > s.maxLine+2 {
			return nil, fmt.Errorf("%w: an SSE line over %d bytes", ErrTooLarge, s.maxLine)
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(buf) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		break
	}
	buf = buf[:len(buf)-1]
	if n := len(buf); n > 0 && buf[n-1] == '\r' {
		buf = buf[:n-1]
	}
	if bytes.IndexByte(buf, '\r') >= 0 {
		return nil, fmt.Errorf("%w: a bare CR in an SSE line", ErrMalformed)
	}
	if len(buf) > s.maxLine {
		return nil, fmt.Errorf("%w: an SSE line over %d bytes", ErrTooLarge, s.maxLine)
	}
	return buf, nil
}

// next returns the next event with data. Comments and events without data are dropped (no
// parser dispatches them). io.EOF at a clean end; a stream cut inside an event is an error.
func (s *sseReader) next() (*event, error) {
	var ev event
	var raw bytes.Buffer
	plain, dataLines, size := true, 0, 0
	for {
		l, err := s.line()
		if err != nil {
			if err == io.EOF && raw.Len() == 0 {
				return nil, io.EOF
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("%w: the stream ended inside an event", ErrMalformed)
			}
			return nil, err
		}
		if !s.started {
			s.started = true
			if bytes.HasPrefix(l, []byte("\xef\xbb\xbf")) {
				l, plain = l[3:], false
			}
		}
		if len(l) == 0 {
			if dataLines == 0 {
				raw.Reset()
				plain, size, ev = true, 0, event{}
				continue
			}
			if plain {
				raw.WriteString("\n")
				ev.Raw = raw.Bytes()
			}
			return &ev, nil
		}
		size += len(l) + 1
		if size > s.maxEvent {
			return nil, fmt.Errorf("%w: an SSE event over %d bytes", ErrTooLarge, s.maxEvent)
		}
		raw.Write(l)
		raw.WriteByte('\n')
		if l[0] == ':' {
			plain = false
			continue
		}
		field, value := l, []byte(nil)
		if i := bytes.IndexByte(l, ':'); i >= 0 {
			field, value = l[:i], l[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			} else {
				plain = false
			}
		} else {
			plain = false
		}
		switch string(field) {
		case "event":
			if ev.Name != "" {
				plain = false
			}
			ev.Name = string(value)
		case "data":
			if dataLines > 0 {
				ev.Data = append(ev.Data, '\n')
				plain = false
			}
			ev.Data = append(ev.Data, value...)
			dataLines++
		case "id", "retry":
		default:
			plain = false
		}
	}
}

// bytes returns the event as it goes to the runtime.
func (e *event) bytes() []byte {
	if e.Raw != nil {
		return e.Raw
	}
	var b bytes.Buffer
	if e.Name != "" {
		b.WriteString("event: ")
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	for _, l := range bytes.Split(e.Data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
