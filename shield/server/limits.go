package server

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Limits bounds what callers can hold (config key `limits`): connections per listener and per
// peer, HTTP/2 streams per connection, idle and handshake time, and concurrent calls per method
// class, globally and per peer. A peer is a uid on the unix socket (SO_PEERCRED) and a remote IP
// on TCP. Every zero value takes the default below; there is no "unlimited".
//
// Descriptor arithmetic (checked by Fit at start and by `shield config check`): the service needs
// listeners × MaxConnections descriptors for connections plus Reserve() for everything else —
// the audit log (active segment, checkpoint writes, segment reads by queries and Tail streams),
// the approval store, bundle reloads, the metrics endpoint and outbound judge or Rekor
// connections. The soft RLIMIT_NOFILE is raised to the hard limit at start; the sum must stay
// below it, so a flood of connections can never take the descriptors the audit log needs.
type Limits struct {
	// MaxConnections caps the open connections of each listener; connections over the cap are
	// accepted and closed at once. Default: 1024, or less when RLIMIT_NOFILE leaves less room.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerPeer caps one peer's connections on a listener. Default: 256.
	MaxConnectionsPerPeer int `yaml:"max_connections_per_peer"`
	// MaxStreamsPerConnection caps concurrent HTTP/2 streams (calls) on one connection.
	// Default: 128.
	MaxStreamsPerConnection int `yaml:"max_streams_per_connection"`
	// IdleTimeout closes a connection that has had no call for this long. Default: 5m.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// HandshakeTimeout bounds the connection handshake (TLS, HTTP/2 preface). Default: 10s.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// MaxEvaluate caps concurrent Evaluate calls. Default: 256.
	MaxEvaluate int `yaml:"max_evaluate"`
	// MaxEvaluatePerPeer caps one peer's concurrent Evaluate calls. Default: 128 (at most
	// MaxEvaluate).
	MaxEvaluatePerPeer int `yaml:"max_evaluate_per_peer"`
	// MaxQueries caps concurrent unary calls other than Evaluate and Health (audit queries and
	// proofs, status, approval listing and resolution). Default: 16.
	MaxQueries int `yaml:"max_queries"`
	// MaxQueriesPerPeer caps one peer's. Default: 8 (at most MaxQueries).
	MaxQueriesPerPeer int `yaml:"max_queries_per_peer"`
	// MaxStreams caps held calls: streams (Watch, Tail, reflection) and AwaitDecision.
	// Default: 64.
	MaxStreams int `yaml:"max_streams"`
	// MaxStreamsPerPeer caps one peer's held calls. Default: 16 (at most MaxStreams).
	MaxStreamsPerPeer int `yaml:"max_streams_per_peer"`
	// QueueWait is how long a unary call waits for a free slot (its peer's, then its class's)
	// before it is shed with RESOURCE_EXHAUSTED; at most 16 × the cap wait at once, the rest are
	// refused at once. Waiting calls sleep: a flooding client is slowed to one attempt per
	// QueueWait per call it holds, which keeps the CPU for admitted calls and Health.
	// Default: 500ms.
	QueueWait time.Duration `yaml:"queue_wait"`
	// StreamSendTimeout cuts off a stream whose reader has not taken a message for this long
	// (RESOURCE_EXHAUSTED): a slow reader is never buffered without bound. Default: 10s.
	StreamSendTimeout time.Duration `yaml:"stream_send_timeout"`
}

// Defaults of Limits.
const (
	DefaultMaxConnections        = 1024
	DefaultMaxConnectionsPerPeer = 256
	defaultStreamsPerConnection  = 128
	defaultIdleTimeout           = 5 * time.Minute
	defaultHandshakeTimeout      = 10 * time.Second
	defaultMaxEvaluate           = 256
	defaultMaxEvaluatePerPeer    = 128
	defaultMaxQueries            = 16
	defaultMaxQueriesPerPeer     = 8
	defaultMaxStreams            = 64
	defaultMaxStreamsPerPeer     = 16
	defaultQueueWait             = 500 * time.Millisecond
	defaultStreamSendTimeout     = 10 * time.Second

	// reserveFixed descriptors: runtime (epoll, pipes), stdio, listeners, audit writer and
	// checkpoints, keys, approval store, bundle reload, the metrics endpoint (MetricsConnections).
	reserveFixed = 64 + MetricsConnections
	// MetricsConnections caps the metrics endpoint's connections.
	MetricsConnections = 32
	// minConnections is the least MaxConnections a listener may end up with.
	minConnections = 16
)

// WithDefaults returns l with every zero value replaced by its default (MaxConnections is not
// filled: Fit sizes it from the descriptor limit).
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxConnectionsPerPeer, DefaultMaxConnectionsPerPeer)
	def(&l.MaxStreamsPerConnection, defaultStreamsPerConnection)
	defDur(&l.IdleTimeout, defaultIdleTimeout)
	defDur(&l.HandshakeTimeout, defaultHandshakeTimeout)
	def(&l.MaxEvaluate, defaultMaxEvaluate)
	def(&l.MaxEvaluatePerPeer, min(defaultMaxEvaluatePerPeer, l.MaxEvaluate))
	def(&l.MaxQueries, defaultMaxQueries)
	def(&l.MaxQueriesPerPeer, min(defaultMaxQueriesPerPeer, l.MaxQueries))
	def(&l.MaxStreams, defaultMaxStreams)
	def(&l.MaxStreamsPerPeer, min(defaultMaxStreamsPerPeer, l.MaxStreams))
	defDur(&l.QueueWait, defaultQueueWait)
	defDur(&l.StreamSendTimeout, defaultStreamSendTimeout)
	return l
}

// Validate reports every problem of a (defaulted or not) Limits.
func (l Limits) Validate() error {
	var errs []error
	ints := []struct {
		name string
		v    int
		max  int
	}{
		{"max_connections", l.MaxConnections, 1 << 20},
		{"max_connections_per_peer", l.MaxConnectionsPerPeer, 1 << 20},
		{"max_streams_per_connection", l.MaxStreamsPerConnection, 10_000},
		{"max_evaluate", l.MaxEvaluate, 100_000},
		{"max_evaluate_per_peer", l.MaxEvaluatePerPeer, 100_000},
		{"max_queries", l.MaxQueries, 10_000},
		{"max_queries_per_peer", l.MaxQueriesPerPeer, 10_000},
		{"max_streams", l.MaxStreams, 10_000},
		{"max_streams_per_peer", l.MaxStreamsPerPeer, 10_000},
	}
	for _, x := range ints {
		if x.v < 0 || x.v > x.max {
			errs = append(errs, fmt.Errorf("limits.%s %d: use 0 (the default) up to %d; there is no unlimited", x.name, x.v, x.max))
		}
	}
	pairs := []struct {
		peer, all string
		p, a      int
	}{
		{"max_connections_per_peer", "max_connections", l.MaxConnectionsPerPeer, l.MaxConnections},
		{"max_evaluate_per_peer", "max_evaluate", l.MaxEvaluatePerPeer, l.MaxEvaluate},
		{"max_queries_per_peer", "max_queries", l.MaxQueriesPerPeer, l.MaxQueries},
		{"max_streams_per_peer", "max_streams", l.MaxStreamsPerPeer, l.MaxStreams},
	}
	for _, x := range pairs {
		if x.p > 0 && x.a > 0 && x.p > x.a {
			errs = append(errs, fmt.Errorf("limits.%s %d is above limits.%s %d", x.peer, x.p, x.all, x.a))
		}
	}
	durs := []struct {
		name     string
		v        time.Duration
		min, max time.Duration
	}{
		{"idle_timeout", l.IdleTimeout, time.Second, 24 * time.Hour},
		{"handshake_timeout", l.HandshakeTimeout, 100 * time.Millisecond, 5 * time.Minute},
		{"queue_wait", l.QueueWait, time.Millisecond, 10 * time.Second},
		{"stream_send_timeout", l.StreamSendTimeout, 10 * time.Millisecond, 10 * time.Minute},
	}
	for _, x := range durs {
		if x.v != 0 && (x.v < x.min || x.v > x.max) {
			errs = append(errs, fmt.Errorf("limits.%s %s: use 0 (the default) or %s..%s", x.name, x.v, x.min, x.max))
		}
	}
	return errors.Join(errs...)
}

// Reserve is the number of descriptors kept free of connections (see Limits): a fixed part, one
// per concurrent Evaluate (an outbound judge connection) and two per concurrent query or stream
// (segment files read by the audit log).
func (l Limits) Reserve() int {
	l = l.WithDefaults()
	return reserveFixed + l.MaxEvaluate + 2*(l.MaxQueries+l.MaxStreams)
}

// ErrDescriptors is returned by Fit when the descriptor limit cannot hold the configured caps.
var ErrDescriptors = errors.New("not enough file descriptors")

// Fit returns l with defaults filled and MaxConnections sized for listeners listeners under a
// descriptor limit of nofile: listeners × MaxConnections + Reserve() ≤ nofile. An explicit
// MaxConnections that does not fit, or a limit that leaves fewer than 16 connections per
// listener, is an error naming the numbers.
func (l Limits) Fit(nofile uint64, listeners int) (Limits, error) {
	explicit := l.MaxConnections
	l = l.WithDefaults()
	if listeners < 1 {
		listeners = 1
	}
	avail := int64(nofile) - int64(l.Reserve())
	if nofile > 1<<40 {
		avail = 1 << 40
	}
	room := avail / int64(listeners)
	if explicit > 0 {
		if int64(explicit) > room {
			return l, fmt.Errorf("%w: limits.max_connections %d × %d listeners + %d reserved exceeds RLIMIT_NOFILE %d: lower it or raise LimitNOFILE",
				ErrDescriptors, explicit, listeners, l.Reserve(), nofile)
		}
		l.MaxConnections = explicit
	} else {
		l.MaxConnections = int(min(int64(DefaultMaxConnections), max(room, 0)))
		if l.MaxConnections < minConnections {
			return l, fmt.Errorf("%w: RLIMIT_NOFILE %d leaves %d connections per listener after %d reserved (at least %d needed): raise LimitNOFILE",
				ErrDescriptors, nofile, max(room, 0), l.Reserve(), minConnections)
		}
	}
	l.MaxConnectionsPerPeer = min(l.MaxConnectionsPerPeer, l.MaxConnections)
	return l, nil
}

// ServerOptions are the gRPC server options that enforce l: streams per connection, handshake
// time, idle connections closed, dead peers detected by keepalive pings, and clients that ping
// too often sent away.
func (l Limits) ServerOptions() []grpc.ServerOption {
	l = l.WithDefaults()
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(uint32(l.MaxStreamsPerConnection)),
		grpc.ConnectionTimeout(l.HandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: l.IdleTimeout,
			Time:              time.Minute,      // ping a connection quiet for a minute …
			Timeout:           20 * time.Second, // … and close it when the ping is not answered
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime:             30 * time.Second,
			PermitWithoutStream: false,
		}),
	}
}
