package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Method classes the Shedder bounds separately. Health is in none: it is never shed.
const (
	classEvaluate = "evaluate"
	classQuery    = "query"
	classStream   = "stream"
)

const (
	methodHealth   = "/shield.v1.ShieldService/Health"
	methodEvaluate = "/shield.v1.ShieldService/Evaluate"
	// methodAwait is unary but held until a human decides: it counts as a stream.
	methodAwait = "/shield.v1.ApprovalService/AwaitDecision"
)

// Shedder bounds concurrent calls per method class, globally and per peer, and sheds the excess
// with RESOURCE_EXHAUSTED (naming the limit) instead of queueing it: a unary call waits at most
// Limits.QueueWait for a slot, and at most waitFactor × the cap wait at once (per class and per
// peer); a held call (stream or AwaitDecision) never waits. Streams' sends are bounded in time (Limits.StreamSendTimeout):
// a reader that stops taking messages is cut off. Health is exempt.
type Shedder struct {
	classes map[string]*shedClass
	sendTO  time.Duration
	log     *slog.Logger

	shed     *prometheus.CounterVec
	inFlight *prometheus.GaugeVec

	lastLog    atomic.Int64
	suppressed atomic.Int64
}

type shedClass struct {
	name, maxKey, peerKey string
	max, perPeer          int
	wait                  time.Duration
	maxWait               int // calls that may wait for a slot at once
	slots                 chan struct{}
	waiters               atomic.Int64

	mu    sync.Mutex
	peers map[string]*peerSlots
}

// waitFactor × a class's cap is how many of its calls may wait for a slot at once. Waiting
// calls sleep (they cost memory, not CPU) and slow a flooding client down to one attempt per
// queue_wait per call it holds, which keeps the CPU for admitted calls and Health.
var waitFactor = 16

// NewShedder builds the limiter for l (defaults filled), registering its metrics on reg (nil:
// none) and logging sheds, rate-limited, on log (nil: no log).
func NewShedder(l Limits, reg prometheus.Registerer, log *slog.Logger) *Shedder {
	l = l.WithDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mk := func(name, key string, n, perPeer int, wait time.Duration) *shedClass {
		return &shedClass{name: name, maxKey: "limits.max_" + key, peerKey: "limits.max_" + key + "_per_peer",
			max: n, perPeer: min(perPeer, n), wait: wait, maxWait: waitFactor * n, slots: make(chan struct{}, n), peers: map[string]*peerSlots{}}
	}
	s := &Shedder{
		classes: map[string]*shedClass{
			classEvaluate: mk(classEvaluate, "evaluate", l.MaxEvaluate, l.MaxEvaluatePerPeer, l.QueueWait),
			classQuery:    mk(classQuery, "queries", l.MaxQueries, l.MaxQueriesPerPeer, l.QueueWait),
			classStream:   mk(classStream, "streams", l.MaxStreams, l.MaxStreamsPerPeer, 0),
		},
		sendTO: l.StreamSendTimeout,
		log:    log,
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shield_requests_shed_total", Help: "Calls refused with RESOURCE_EXHAUSTED by method and the limit they hit (global, peer, slow_reader).",
		}, []string{"method", "reason"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "shield_requests_in_flight", Help: "Calls in progress by method class (evaluate, query, stream).",
		}, []string{"class"}),
	}
	if reg != nil {
		reg.MustRegister(s.shed, s.inFlight)
	}
	return s
}

// classOf returns the class of a method ("" for Health: never limited).
func classOf(method string, stream bool) string {
	switch {
	case method == methodHealth, method == methodGRPCHealth+"Check", method == methodGRPCHealth+"List":
		return ""
	case stream, method == methodAwait:
		return classStream
	case method == methodEvaluate:
		return classEvaluate
	}
	return classQuery
}

// callPeer names the caller for per-peer caps: "uid:N" on the unix socket, the remote IP on TCP.
func callPeer(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "unknown"
	}
	if pc, ok := p.AuthInfo.(PeerCred); ok {
		return "uid:" + strconv.FormatUint(uint64(pc.UID), 10)
	}
	if a, ok := p.Addr.(*net.TCPAddr); ok {
		return a.IP.String()
	}
	if p.Addr != nil {
		return p.Addr.Network() + ":" + p.Addr.String()
	}
	return "unknown"
}

// peerSlots are one peer's slots in a class; refs counts holders and waiters (the entry is
// dropped when it falls to zero).
type peerSlots struct {
	slots   chan struct{}
	refs    int
	waiters atomic.Int64
}

// acquire takes a slot of class c for peer who — first the peer's, then the class's — waiting
// at most c.wait for them when wait is set and there is room to wait, or returns the shed
// status naming the limit.
func (s *Shedder) acquire(ctx context.Context, c *shedClass, method, who string, wait bool) (func(), error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// take takes one slot of ch, waiting when allowed and within the class's (and, for a peer's
	// slots, the peer's) bound on waiters.
	take := func(ch chan struct{}, peerWaiters *atomic.Int64, maxPeerWaiters int) bool {
		select {
		case ch <- struct{}{}:
			return true
		default:
		}
		if !wait || c.wait <= 0 {
			return false
		}
		defer c.waiters.Add(-1)
		if c.waiters.Add(1) > int64(c.maxWait) {
			return false
		}
		if peerWaiters != nil {
			defer peerWaiters.Add(-1)
			if peerWaiters.Add(1) > int64(maxPeerWaiters) {
				return false
			}
		}
		if timer == nil {
			timer = time.NewTimer(c.wait)
		}
		select {
		case ch <- struct{}{}:
			return true
		case <-timer.C:
		case <-ctx.Done():
		}
		return false
	}

	// A per-peer cap as large as the class's is the class's: no per-peer slots then.
	var ps *peerSlots
	unref := func() {}
	if c.perPeer < c.max {
		c.mu.Lock()
		if ps = c.peers[who]; ps == nil {
			ps = &peerSlots{slots: make(chan struct{}, c.perPeer)}
			c.peers[who] = ps
		}
		ps.refs++
		c.mu.Unlock()
		unref = func() {
			c.mu.Lock()
			if ps.refs--; ps.refs == 0 {
				delete(c.peers, who)
			}
			c.mu.Unlock()
		}
		if !take(ps.slots, &ps.waiters, waitFactor*c.perPeer) {
			unref()
			return nil, s.refuse(method, "peer", fmt.Sprintf("%s has %d %s calls in progress (%s)", who, c.perPeer, c.name, c.peerKey))
		}
	}
	if !take(c.slots, nil, 0) {
		if ps != nil {
			<-ps.slots
		}
		unref()
		return nil, s.refuse(method, "global", fmt.Sprintf("the service has %d %s calls in progress (%s)", c.max, c.name, c.maxKey))
	}
	g := s.inFlight.WithLabelValues(c.name)
	g.Inc()
	return func() {
		<-c.slots
		if ps != nil {
			<-ps.slots
		}
		g.Dec()
		unref()
	}, nil
}

// refuse counts, logs (at most every 10 seconds, with a count) and builds the shed status.
func (s *Shedder) refuse(method, reason, what string) error {
	s.shed.WithLabelValues(method, reason).Inc()
	now := time.Now().UnixNano()
	last := s.lastLog.Load()
	if now-last >= int64(10*time.Second) && s.lastLog.CompareAndSwap(last, now) {
		s.log.Warn("call shed: over a limit", "method", method, "reason", reason, "limit", what,
			"shed_since_last_log", s.suppressed.Swap(0))
	} else {
		s.suppressed.Add(1)
	}
	return status.Errorf(codes.ResourceExhausted, "overloaded: %s; retry later", what)
}

// TapHandle sheds a call whose class is already full while its headers are read, before gRPC
// starts a goroutine for it or decodes its message: under a flood, refusing costs little, so the
// calls within the limits and Health keep the CPU. It only refuses what acquire would refuse
// (all slots taken and no room to wait, or the peer at its cap); the interceptors still take
// the slots. Install with grpc.InTapHandle.
func (s *Shedder) TapHandle() tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		cl := classOf(info.FullMethodName, false)
		if cl == "" {
			return ctx, nil
		}
		c := s.classes[cl]
		who := callPeer(ctx)
		canWait := cl != classStream && c.wait > 0 && c.waiters.Load() < int64(c.maxWait)
		c.mu.Lock()
		ps := c.peers[who]
		atPeerCap := ps != nil && len(ps.slots) == cap(ps.slots) &&
			(!canWait || ps.waiters.Load() >= int64(waitFactor*c.perPeer))
		c.mu.Unlock()
		if atPeerCap {
			return ctx, s.refuse(info.FullMethodName, "peer", fmt.Sprintf("%s has %d %s calls in progress (%s)", who, c.perPeer, c.name, c.peerKey))
		}
		if len(c.slots) == cap(c.slots) && !canWait {
			return ctx, s.refuse(info.FullMethodName, "global", fmt.Sprintf("the service has %d %s calls in progress (%s)", c.max, c.name, c.maxKey))
		}
		return ctx, nil
	}
}

// UnaryInterceptor bounds unary calls.
func (s *Shedder) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		cl := classOf(info.FullMethod, false)
		if cl == "" {
			return h(ctx, req)
		}
		done, err := s.acquire(ctx, s.classes[cl], info.FullMethod, callPeer(ctx), cl != classStream)
		if err != nil {
			return nil, err
		}
		defer done()
		return h(ctx, req)
	}
}

// StreamInterceptor bounds streams and the time each message may wait for its reader.
func (s *Shedder) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		done, err := s.acquire(ss.Context(), s.classes[classStream], info.FullMethod, callPeer(ss.Context()), false)
		if err != nil {
			return err
		}
		defer done()
		bs := &boundedStream{ServerStream: ss, timeout: s.sendTO}
		err = h(srv, bs)
		if bs.cut.Load() {
			// Whatever the handler made of the failed send, the caller learns why.
			s.shed.WithLabelValues(info.FullMethod, "slow_reader").Inc()
			return status.Errorf(codes.ResourceExhausted, "the reader fell behind: a message waited more than %s to be taken (limits.stream_send_timeout); reconnect and resume", s.sendTO)
		}
		return err
	}
}

// boundedStream sends each message within timeout or cuts the stream off. A send that does not
// complete in time is left to gRPC, which ends it when the handler returns; the stream then
// refuses every further send. The messages buffered for one stream are thus bounded by gRPC's
// per-stream write quota plus the one message in flight.
type boundedStream struct {
	grpc.ServerStream
	timeout time.Duration
	cut     atomic.Bool // a send timed out
	dead    atomic.Bool // a send was abandoned (timed out or the call ended)
}

func (b *boundedStream) SendMsg(m any) error {
	if b.dead.Load() {
		if b.cut.Load() {
			return status.Error(codes.ResourceExhausted, "stream cut off: the reader fell behind")
		}
		return b.Context().Err()
	}
	errc := make(chan error, 1)
	go func() { errc <- b.ServerStream.SendMsg(m) }()
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	select {
	case err := <-errc:
		return err
	case <-t.C:
		b.cut.Store(true)
		b.dead.Store(true)
		return status.Error(codes.ResourceExhausted, "stream cut off: the reader fell behind")
	case <-b.Context().Done():
		b.dead.Store(true)
		return b.Context().Err()
	}
}
