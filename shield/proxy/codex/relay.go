// Package codex puts the appliance in front of the Codex runtime on stdio, in its two wire
// dialects: the app-server's JSON-RPC (AppServer) and the legacy submission/event queue of
// `codex proto` (Proto, seed 004). The runtime's approval requests are answered by policy —
// BLOCK refuses, ESCALATE holds for a human through the appliance, ALLOW accepts or, when
// asked, defers to the client with its answer narrowed to a one-shot decision — and the
// client-initiated actions the runtime would run with no approval at all are decided first.
// Every failure refuses.
//
// Only cmd/shield imports it.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/mcp"
)

// Options configure either proxy. Zero values are the safe ones.
type Options struct {
	Decider mcp.Decider
	// Workspace is the cwd sent with calls that name none.
	Workspace string
	Session   string
	// Hold bounds the wait for a human on an ESCALATE. Default 10 min (Codex itself waits).
	Hold time.Duration
	// DeferAllowed passes requests Shield allows on to the client, whose answer is then
	// narrowed to a one-shot decision; false: Shield answers them itself.
	DeferAllowed bool
	// KeepApprovalPolicy leaves the client's approval policy as sent; false: thread and turn
	// requests are rewritten to "untrusted" so that Codex asks before every command.
	KeepApprovalPolicy bool
	// AllowConfigWrites lets client requests that change Codex's configuration, plugins or
	// MCP servers through; false: they are refused.
	AllowConfigWrites bool
	MaxMessage        int
	MaxServerMessage  int
	Log               func(format string, args ...any)
}

func (o *Options) defaults() error {
	if o.Decider == nil {
		return errors.New("codex proxy: no decider")
	}
	if o.Hold <= 0 {
		o.Hold = 10 * time.Minute
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = mcp.DefaultMaxMessage
	}
	if o.MaxServerMessage <= 0 {
		o.MaxServerMessage = mcp.DefaultMaxServerMessage
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	return nil
}

// maxInflight bounds the decisions being made at once in one proxy.
const maxInflight = 64

type writer struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *writer) line(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(b)+1)
	l.w.Write(append(append(buf, b...), '\n'))
}

func (l *writer) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	l.line(b)
}

// pump reads bounded lines and hands each to fn; over-limit lines go to tooLong.
func pump(in io.Reader, max int, fn func([]byte), tooLong func()) error {
	lr := mcp.NewLineReader(in, max)
	for {
		line, err := lr.Next()
		switch {
		case errors.Is(err, mcp.ErrTooLong):
			tooLong()
			continue
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		fn(line)
	}
}

// decider runs decisions in goroutines, bounded, and waits for them at the end.
type decider struct {
	opts *Options
	wg   sync.WaitGroup
	mu   sync.Mutex
	n    int
}

// start decides call in the background (holding an ESCALATE) and hands the decision to done.
// It returns false, without calling done, when too many decisions are under way.
func (d *decider) start(ctx context.Context, what string, call client.Call, done func(client.Decision)) bool {
	d.mu.Lock()
	if d.n >= maxInflight {
		d.mu.Unlock()
		return false
	}
	d.n++
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() { d.mu.Lock(); d.n--; d.mu.Unlock() }()
		hctx, cancel := context.WithTimeout(ctx, d.opts.Hold)
		defer cancel()
		if call.Session == "" {
			call.Session = d.opts.Session
		}
		if call.Cwd == "" {
			call.Cwd = d.opts.Workspace
		}
		dec := d.opts.Decider.Decide(hctx, call, true)
		d.opts.Log("%s %s (%s): %s", what, call.Tool, call.CallID, dec.Message())
		done(dec)
	}()
	return true
}

// run wires both directions: it returns when the runtime's output ends, after the decisions
// under way have been answered or refused.
func run(ctx context.Context, o *Options, d *decider, clientIn io.Reader, serverIn io.WriteCloser, serverOut io.Reader,
	fromClient, fromServer func(context.Context, []byte), clientTooLong, serverTooLong func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if err := pump(clientIn, o.MaxMessage, func(b []byte) { fromClient(ctx, b) }, clientTooLong); err != nil {
			o.Log("reading the client: %v", err)
		}
		d.wg.Wait()
		serverIn.Close()
	}()
	err := pump(serverOut, o.MaxServerMessage, func(b []byte) { fromServer(ctx, b) }, serverTooLong)
	cancel()
	d.wg.Wait()
	return err
}

// obj is mcp.Object: exact member names.
func obj(raw json.RawMessage) map[string]json.RawMessage { return mcp.Object(raw) }

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func strList(raw json.RawMessage) ([]string, bool) {
	var l []string
	if json.Unmarshal(raw, &l) != nil {
		return nil, false
	}
	return l, true
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
