package modelguard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// pending is a tool call being read from a stream: its events are held until it is complete and
// decided; then out (its own events, or the replacement) goes to the runtime.
type pending struct {
	call
	raw     []*event
	args    []byte // argument deltas as received
	done    bool
	decided bool
	out     []*event
	// API-specific
	index   int                        // content block / output index / tool call index
	choice  int                        // chat: the choice
	start   map[string]json.RawMessage // the block or item as announced
	final   map[string]json.RawMessage // Responses: the item as done
	doneArg *string                    // Responses: arguments of the …arguments.done event
	kind    string                     // chat: "function", "custom" or "legacy"
}

type seg struct {
	evs []*event
	p   *pending
}

// stream is the machinery the three API filters share: the queue of held events behind
// undecided calls, the bounds, and the writer (which renumbers Responses sequence numbers).
type stream struct {
	g     *Guard
	ctx   context.Context
	api   string
	w     io.Writer
	fl    http.Flusher
	queue []*seg
	held  int
	calls int
	done  bool // the terminal event went out: nothing more is sent
	// Responses API sequence numbers: the first one seen starts the count.
	renumber   bool
	seqStarted bool
	nextSeq    int
}

// emit sends ev, or holds it behind an undecided call.
func (s *stream) emit(ev *event) error {
	if len(s.queue) == 0 {
		return s.write(ev)
	}
	if err := s.hold(len(ev.Data)); err != nil {
		return err
	}
	last := s.queue[len(s.queue)-1]
	if last.p != nil {
		last = &seg{}
		s.queue = append(s.queue, last)
	}
	last.evs = append(last.evs, ev)
	return nil
}

func (s *stream) hold(n int) error {
	s.held += n
	if s.held > s.g.o.MaxHeld {
		return fmt.Errorf("%w: over %d bytes held behind undecided tool calls", ErrTooLarge, s.g.o.MaxHeld)
	}
	return nil
}

// begin queues a new call (its first event already in p.raw).
func (s *stream) begin(p *pending) error {
	s.calls++
	if s.calls > s.g.o.MaxCalls {
		return fmt.Errorf("%w: more than %d tool calls in one answer", ErrTooLarge, s.g.o.MaxCalls)
	}
	s.queue = append(s.queue, &seg{p: p})
	return s.hold(rawSize(p.raw))
}

// absorb adds an event of a call.
func (s *stream) absorb(p *pending, ev *event) error {
	p.raw = append(p.raw, ev)
	return s.hold(len(ev.Data))
}

// appendArgs adds an argument delta, within the bound (beyond it the call is stopped).
func (s *stream) appendArgs(p *pending, d string) {
	if p.Bad != "" {
		return
	}
	if len(p.args)+len(d) > s.g.o.MaxArgs {
		p.Bad, p.args = fmt.Sprintf("its arguments are over the guard's bound of %d bytes", s.g.o.MaxArgs), nil
		return
	}
	p.args = append(p.args, d...)
}

// flush sends the queue up to the first undecided call.
func (s *stream) flush() error {
	for len(s.queue) > 0 {
		h := s.queue[0]
		evs := h.evs
		if h.p != nil {
			if !h.p.decided {
				return nil
			}
			evs = h.p.out
		}
		for _, ev := range evs {
			if err := s.write(ev); err != nil {
				return err
			}
		}
		s.queue = s.queue[1:]
	}
	s.held = 0
	return nil
}

func (s *stream) write(ev *event) error {
	if s.renumber {
		var sq struct {
			Seq *json.Number `json:"sequence_number"`
		}
		if json.Unmarshal(ev.Data, &sq) == nil && sq.Seq != nil {
			n, err := strconv.Atoi(sq.Seq.String())
			if !s.seqStarted {
				s.seqStarted, s.nextSeq = true, n
			}
			if err != nil || n != s.nextSeq {
				d, err := setField(ev.Data, "sequence_number", []byte(strconv.Itoa(s.nextSeq)))
				if err != nil {
					return err
				}
				ev = &event{Name: ev.Name, Data: d}
			}
			s.nextSeq++
		}
	}
	if _, err := s.w.Write(ev.bytes()); err != nil {
		return err
	}
	if s.fl != nil {
		s.fl.Flush()
	}
	return nil
}

func rawSize(evs []*event) int {
	n := 0
	for _, e := range evs {
		n += len(e.Data)
	}
	return n
}

// filter is one API's stream rules.
type filter interface {
	handle(ev *event) error
	// end stops every call not yet complete (the stream ended first).
	end() error
}

// serveStream guards a streamed answer.
func (g *Guard) serveStream(w http.ResponseWriter, ctx context.Context, resp *http.Response, api string) {
	copyHeaders(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	g.filterStream(ctx, api, resp.Body, w, fl)
}

// filterStream reads an answer's events from r and writes what the runtime may see to w.
func (g *Guard) filterStream(ctx context.Context, api string, r io.Reader, w io.Writer, fl http.Flusher) {
	s := &stream{g: g, ctx: ctx, api: api, w: w, fl: fl, renumber: api == OpenAIResponses}
	var f filter
	switch api {
	case Anthropic:
		f = &anthropicStream{s: s, blocks: map[int]*pending{}}
	case OpenAIResponses:
		f = &responsesStream{s: s, byIndex: map[int]*pending{}, byItem: map[string]*pending{}, decided: map[string]*pending{}}
	default:
		f = &chatStream{s: s, calls: map[int]map[int]*pending{}}
	}
	err := g.runStream(s, f, newSSEReader(r, g.o.MaxLine, g.o.MaxEvent))
	if err != nil && ctx.Err() == nil {
		g.o.Log("%s stream failed: %v", api, err)
		s.queue = nil // nothing held behind an undecided call is sent
		if !s.done {
			s.write(streamError(api, "Shield model guard: the model's answer could not be inspected: "+err.Error()))
		}
	}
}

func (g *Guard) runStream(s *stream, f filter, r *sseReader) error {
	for !s.done {
		ev, err := r.next()
		if errors.Is(err, io.EOF) {
			if err := f.end(); err != nil {
				return err
			}
			return s.flush()
		}
		if err != nil {
			return err
		}
		if err := f.handle(ev); err != nil {
			return err
		}
	}
	return nil
}

// streamError is the API's own error event.
func streamError(api, msg string) *event {
	switch api {
	case Anthropic:
		return &event{Name: "error", Data: mustJSON(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})}
	case OpenAIResponses:
		return &event{Name: "error", Data: mustJSON(map[string]any{"type": "error", "code": "shield_guard", "message": msg, "param": nil, "sequence_number": 0})}
	default:
		return &event{Data: mustJSON(map[string]any{"error": map[string]any{"message": msg, "type": "shield_guard_error", "code": "shield_guard"}})}
	}
}
