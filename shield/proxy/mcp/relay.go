package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Relay sits between an MCP client (host) and an MCP server on two line-framed streams.
// Client→server: tools/call is decided before it is forwarded; a refused call is answered with
// an isError result and never reaches the server; answers to the server's roots/list are
// narrowed to the workspace; malformed, over-limit and batch messages are answered with an
// error and never forwarded. Server→client: tools/list answers are read for annotations;
// everything else passes unchanged.
type Relay struct {
	opts Options
	st   *state

	toClient, toServer *lockedWriter

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // held tools/call by request id
	wg       sync.WaitGroup
}

// maxInflight bounds the tools/call requests being decided at once.
const maxInflight = 64

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) writeLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(b)+1)
	buf = append(append(buf, b...), '\n')
	_, err := l.w.Write(buf)
	return err
}

// NewRelay prepares a relay; opts.Decider is required.
func NewRelay(opts Options) (*Relay, error) {
	if opts.Decider == nil {
		return nil, errors.New("mcp relay: no decider")
	}
	opts.defaults()
	return &Relay{opts: opts, st: newState(), inflight: map[string]context.CancelFunc{}}, nil
}

// Run relays until the server's stream ends. When the client's stream ends, the server's input
// is closed once every held call has been answered (a server then exits). Held calls end,
// refused, when the server's stream ends or ctx is done.
func (r *Relay) Run(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error {
	r.toClient = &lockedWriter{w: clientOut}
	r.toServer = &lockedWriter{w: serverIn}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := r.fromClient(ctx, clientIn); err != nil {
			r.opts.Log("reading the client: %v", err)
		}
		r.wg.Wait()
		serverIn.Close()
	}()
	err := r.fromServer(serverOut)
	cancel()
	r.wg.Wait()
	return err
}

func (r *Relay) fromClient(ctx context.Context, in io.Reader) error {
	lr := NewLineReader(in, r.opts.MaxMessage)
	for {
		line, err := lr.Next()
		if errors.Is(err, ErrTooLong) {
			r.opts.Log("refused a client message over %d bytes", r.opts.MaxMessage)
			r.toClient.writeLine(errorResponse("", -32600, fmt.Sprintf("Shield: message over %d bytes, not relayed", r.opts.MaxMessage)))
			continue
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		r.clientMessage(ctx, line)
	}
}

// clientMessage handles one client→server message.
func (r *Relay) clientMessage(ctx context.Context, line []byte) {
	m, err := Parse(line)
	if err != nil {
		r.opts.Log("refused a client message: %v", err)
		r.toClient.writeLine(errorResponse(idOf(line), -32600, "Shield: "+err.Error()+"; not relayed"))
		return
	}
	switch {
	case m.IsRequest() && m.Method == "tools/call":
		tc, ok := ParseToolCall(m.Params())
		if !ok {
			r.toClient.writeLine(errorResponse(m.ID, -32602, "Shield: tools/call without a tool name and an arguments object; not relayed"))
			return
		}
		hctx, hcancel := context.WithTimeout(ctx, r.opts.Hold)
		r.mu.Lock()
		if _, dup := r.inflight[m.ID]; dup || len(r.inflight) >= maxInflight {
			r.mu.Unlock()
			hcancel()
			r.toClient.writeLine(errorResponse(m.ID, -32600, "Shield: a request with this id is already held, or too many calls are held; not relayed"))
			return
		}
		r.inflight[m.ID] = hcancel
		r.mu.Unlock()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() {
				r.mu.Lock()
				delete(r.inflight, m.ID)
				r.mu.Unlock()
				hcancel()
			}()
			r.decideCall(hctx, m, tc)
		}()
	case m.Method == "tools/call":
		r.opts.Log("refused a tools/call notification")
	case m.IsRequest() && m.Method == "tools/list":
		r.st.mu.Lock()
		if len(r.st.toolsList) < 1024 {
			r.st.toolsList[m.ID] = true
		}
		r.st.mu.Unlock()
		r.toServer.writeLine(m.Raw)
	case m.IsNotification() && m.Method == "notifications/cancelled":
		var id string
		if p := Object(m.Params()); p != nil {
			id = compact(p["requestId"])
		}
		r.mu.Lock()
		stop, held := r.inflight[id]
		r.mu.Unlock()
		if held {
			stop() // the held call is refused; the client no longer waits for an answer
			return
		}
		r.toServer.writeLine(m.Raw)
	case m.IsResponse():
		r.st.mu.Lock()
		roots := r.st.rootsList[m.ID]
		delete(r.st.rootsList, m.ID)
		r.st.mu.Unlock()
		if _, hasRoots := Object(m.Result())["roots"]; (roots || hasRoots) && m.Result() != nil {
			if res, changed := r.opts.filterRoots(m.Result()); changed {
				r.opts.Log("roots/list answer narrowed to the workspace %s", r.opts.Workspace)
				r.toServer.writeLine(response(m.ID, res))
				return
			}
		}
		r.toServer.writeLine(m.Raw)
	default:
		r.toServer.writeLine(m.Raw)
	}
}

// decideCall asks the appliance (holding an ESCALATE) and forwards or refuses.
func (r *Relay) decideCall(ctx context.Context, m *Message, tc ToolCall) {
	call := r.opts.call(r.st, tc, m.ID)
	stopProgress := r.progress(ctx, tc.Progress)
	d := r.opts.Decider.Decide(ctx, call, true)
	stopProgress()
	r.opts.Log("tools/call %s (%s): %s", tc.Name, call.CallID, d.Message())
	if errors.Is(ctx.Err(), context.Canceled) && !d.Allowed {
		// Cancelled by the client (or the relay is ending): no answer is expected.
		return
	}
	if d.Allowed {
		r.toServer.writeLine(m.Raw)
		return
	}
	r.toClient.writeLine(blockedResult(m.ID, d))
}

// progress sends notifications/progress every 10 s while a call is held, when the client gave
// a progress token, so that a client that resets its timeout on progress keeps waiting.
func (r *Relay) progress(ctx context.Context, token json.RawMessage) (stop func()) {
	if len(token) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
					"params": map[string]any{"progressToken": token, "progress": n, "message": "Shield: waiting for a human decision"}})
				r.toClient.writeLine(b)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *Relay) fromServer(in io.Reader) error {
	lr := NewLineReader(in, r.opts.MaxServerMessage)
	for {
		line, err := lr.Next()
		if errors.Is(err, ErrTooLong) {
			r.opts.Log("dropped a server message over %d bytes", r.opts.MaxServerMessage)
			continue
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		m, err := Parse(line)
		if err != nil {
			r.opts.Log("dropped a server message: %v", err)
			continue
		}
		switch {
		case m.IsRequest() && m.Method == "roots/list":
			r.st.mu.Lock()
			if len(r.st.rootsList) < 1024 {
				r.st.rootsList[m.ID] = true
				r.st.mu.Unlock()
			} else {
				r.st.mu.Unlock()
				r.toServer.writeLine(response(m.ID, r.opts.workspaceRoots()))
				continue
			}
		case m.IsResponse():
			r.st.mu.Lock()
			tl := r.st.toolsList[m.ID]
			delete(r.st.toolsList, m.ID)
			r.st.mu.Unlock()
			if tl && m.Result() != nil {
				r.st.learnTools(m.Result())
			}
		}
		r.toClient.writeLine(m.Raw)
	}
}

func compact(raw json.RawMessage) string {
	m, err := Parse([]byte(`{"id":` + string(raw) + `,"error":{}}`))
	if err != nil || len(raw) == 0 {
		return ""
	}
	return m.ID
}

// idOf recovers the id of a message that did not pass Parse, to address the error answer; ""
// when there is none to be had.
func idOf(line []byte) string {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return ""
	}
	return compact(probe.ID)
}
