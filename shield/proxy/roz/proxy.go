// Package roz puts the appliance in front of a roz.v1 runtime (seed 002): a gRPC proxy for
// roz.v1.AgentService that relays every method and frame as the bytes it arrived as, except on
// StreamSession:
//
//   - runtime → client: a tool request (v0.2 SessionResponse.tool_request, HEAD
//     session_event.tool_call_requested) is decided before the client sees it. Allowed: the frame
//     goes on unchanged. Refused: it is dropped and the runtime gets a failed ToolResult for the
//     call. ESCALATE: held (the client is told waiting_approval) until a human answers, within
//     the call's timeout less 5 s.
//   - client → runtime: a PermissionDecision loses HEAD's modifier (it would change arguments
//     after they were reviewed); a ToolResult for a call the client was never shown is dropped.
//
// A frame the proxy must read and cannot (malformed, or a tool request sharing its frame with
// other fields) is refused the same way. Approvals the runtime itself asks for pass to the IDE.
//
// Only cmd/shield imports it.
package roz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/mcp"
)

// StreamSession is the one method whose frames are read.
const StreamSession = "/roz.v1.AgentService/StreamSession"

// frame is one message as bytes.
type frame []byte

// rawCodec moves frames without decoding them. It is forced on the proxy's server and on its
// upstream streams only; registered under "proto" so that peers see an ordinary protobuf service.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("roz proxy codec: %T is not a frame", v)
	}
	return *f, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("roz proxy codec: %T is not a frame", v)
	}
	*f = append((*f)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

// Options configure the proxy. Zero values are the safe ones.
type Options struct {
	Decider   mcp.Decider
	Workspace string
	// Session prefixes the appliance session id of each stream.
	Session string
	// MaxFrame bounds one frame in either direction. Default 4 MiB.
	MaxFrame int
	Log      func(format string, args ...any)
}

// Proxy is a grpc.StreamHandler for every method, relaying to an upstream connection.
type Proxy struct {
	opts     Options
	upstream *grpc.ClientConn
	seq      uint64
	mu       sync.Mutex
}

// New relays to upstream (a connection the caller owns).
func New(o Options, upstream *grpc.ClientConn) (*Proxy, error) {
	if o.Decider == nil || upstream == nil {
		return nil, errors.New("roz proxy: a decider and an upstream are required")
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = 4 << 20
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	return &Proxy{opts: o, upstream: upstream}, nil
}

// ServerOptions are what a grpc.Server needs to serve the proxy.
func (p *Proxy) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.UnknownServiceHandler(p.Handle), grpc.ForceServerCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(p.opts.MaxFrame), grpc.MaxSendMsgSize(p.opts.MaxFrame)}
}

// Handle relays one call of any method.
func (p *Proxy) Handle(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "roz proxy: no method")
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	md, _ := metadata.FromIncomingContext(ss.Context())
	md = md.Copy()
	for _, h := range []string{":authority", "content-type", "user-agent", "grpc-timeout"} {
		delete(md, h)
	}
	cs, err := p.upstream.NewStream(metadata.NewOutgoingContext(ctx, md),
		&grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method,
		grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(p.opts.MaxFrame), grpc.MaxCallSendMsgSize(p.opts.MaxFrame))
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.seq++
	session := fmt.Sprintf("%s-%d", p.opts.Session, p.seq)
	p.mu.Unlock()
	s := &stream{p: p, ss: ss, cs: cs, inspect: method == StreamSession, session: session,
		shown: map[string]bool{}, refused: map[string]bool{}, ctx: ctx}

	go func() {
		if err := s.clientToRuntime(); err != nil {
			p.opts.Log("client stream: %v", err)
		}
	}()
	down := s.runtimeToClient()
	cancel() // calls still held are refused; their answers go nowhere
	s.wg.Wait()
	if down == io.EOF {
		ss.SetTrailer(cs.Trailer())
		return nil
	}
	if st, ok := status.FromError(down); ok {
		ss.SetTrailer(cs.Trailer())
		return st.Err()
	}
	return down
}

type stream struct {
	p       *Proxy
	ss      grpc.ServerStream
	cs      grpc.ClientStream
	inspect bool
	session string
	ctx     context.Context

	toClient, toRuntime sync.Mutex
	wg                  sync.WaitGroup

	mu      sync.Mutex
	head    bool            // the runtime speaks the HEAD dialect (session_event seen)
	shown   map[string]bool // tool calls passed to the client
	refused map[string]bool // tool calls Shield answered
	held    int
}

func (s *stream) sendClient(b []byte) error {
	s.toClient.Lock()
	defer s.toClient.Unlock()
	f := frame(b)
	return s.ss.SendMsg(&f)
}

func (s *stream) sendRuntime(b []byte) error {
	s.toRuntime.Lock()
	defer s.toRuntime.Unlock()
	f := frame(b)
	return s.cs.SendMsg(&f)
}

func (s *stream) clientToRuntime() error {
	for {
		var f frame
		if err := s.ss.RecvMsg(&f); err != nil {
			s.toRuntime.Lock()
			s.cs.CloseSend()
			s.toRuntime.Unlock()
			if err == io.EOF {
				return nil
			}
			return err
		}
		out := []byte(f)
		if s.inspect {
			var ok bool
			if out, ok = s.fromClient(f); !ok {
				continue
			}
		}
		if err := s.sendRuntime(out); err != nil {
			return err
		}
	}
}

// fromClient returns the frame to send on (possibly rewritten) and false to drop it.
func (s *stream) fromClient(b []byte) ([]byte, bool) {
	fs, err := fields(b)
	if err != nil {
		s.p.opts.Log("dropped a malformed client frame: %v", err)
		return nil, false
	}
	for _, f := range fs {
		switch f.num {
		case reqPermissionDecision:
			stripped, removed, err := withoutField(f.val, pdModifier)
			if err != nil {
				return nil, false
			}
			if removed {
				s.p.opts.Log("stripped the modifier of a permission decision: arguments are not changed after review")
				if len(fs) != 1 {
					return nil, false
				}
				var out []byte
				out = protowire.AppendTag(out, reqPermissionDecision, protowire.BytesType)
				return protowire.AppendBytes(out, stripped), true
			}
		case reqToolResult:
			tfs, err := fields(f.val)
			if err != nil {
				return nil, false
			}
			var id string
			for _, tf := range tfs {
				if tf.num == trToolCallID && tf.typ == protowire.BytesType {
					id = string(tf.val)
				}
			}
			s.mu.Lock()
			shown := s.shown[id]
			s.mu.Unlock()
			if !shown {
				s.p.opts.Log("dropped a tool result for %q, a call the client was not shown", id)
				return nil, false
			}
		}
	}
	return b, true
}

func (s *stream) runtimeToClient() error {
	for {
		var f frame
		if err := s.cs.RecvMsg(&f); err != nil {
			return err
		}
		if s.inspect {
			if s.fromRuntime([]byte(f)) {
				continue
			}
		}
		if err := s.sendClient(f); err != nil {
			return err
		}
	}
}

// fromRuntime handles a tool request and reports true when it took the frame over.
func (s *stream) fromRuntime(b []byte) bool {
	fs, err := fields(b)
	if err != nil {
		s.p.opts.Log("dropped a malformed runtime frame: %v", err)
		return true
	}
	var req []byte
	found, head := false, false
	for _, f := range fs {
		switch {
		case (f.num == respToolRequest || f.num == respSessionEvent) && f.typ != protowire.BytesType:
			s.p.opts.Log("dropped a runtime frame with field %d of wire type %d", f.num, f.typ)
			return true
		case f.num == respToolRequest:
			req, found = append(req, f.val...), true
		case f.num == respSessionEvent:
			s.mu.Lock()
			s.head = true
			s.mu.Unlock()
			efs, err := fields(f.val)
			if err != nil {
				return true
			}
			for _, ef := range efs {
				if ef.num == envToolCallRequested && ef.typ != protowire.BytesType {
					return true
				}
				if ef.num == envToolCallRequested {
					req, found, head = append(req, ef.val...), true, true
				}
			}
		}
	}
	if !found {
		return false
	}
	tr, err := parseToolRequest(req)
	if err != nil || len(fs) != 1 {
		s.p.opts.Log("refused a tool request that could not be read: %v", err)
		if tr.ID != "" {
			s.refuse(tr.ID, "blocked by Shield: the tool request could not be read")
		}
		return true
	}
	s.mu.Lock()
	if s.held >= 64 {
		s.mu.Unlock()
		s.refuse(tr.ID, "blocked by Shield: too many calls under decision")
		return true
	}
	s.held++
	s.mu.Unlock()
	frameCopy := append([]byte(nil), b...)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { s.mu.Lock(); s.held--; s.mu.Unlock() }()
		s.decide(tr, head, frameCopy)
	}()
	return true
}

// decide holds a tool request for its decision, within the call's timeout less 5 s.
func (s *stream) decide(tr toolRequest, head bool, raw []byte) {
	budget := 120 * time.Second
	if tr.TimeoutMS > 0 {
		budget = time.Duration(tr.TimeoutMS) * time.Millisecond
	}
	budget -= 5 * time.Second
	if budget < time.Second {
		budget = time.Second
	}
	ctx, cancel := context.WithTimeout(s.ctx, budget)
	defer cancel()
	waiting := time.AfterFunc(500*time.Millisecond, func() { s.sendClient(waitingUpdate(head, tr.ID)) })
	d := s.p.opts.Decider.Decide(ctx, client.Call{CallID: tr.ID, Tool: tr.Tool, Arguments: tr.Arguments,
		Session: s.session, Cwd: s.p.opts.Workspace}, true)
	waiting.Stop()
	s.p.opts.Log("tool request %s (%s): %s", tr.Tool, tr.ID, d.Message())
	if d.Allowed {
		s.mu.Lock()
		s.shown[tr.ID] = true
		s.mu.Unlock()
		s.sendClient(raw)
		return
	}
	s.refuse(tr.ID, "blocked by "+d.Message())
}

func (s *stream) refuse(id, why string) {
	s.mu.Lock()
	s.refused[id] = true
	s.mu.Unlock()
	if err := s.sendRuntime(failedToolResult(id, why)); err != nil {
		s.p.opts.Log("answering the runtime for %s: %v", id, err)
	}
}
