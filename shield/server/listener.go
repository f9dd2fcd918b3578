package server

import (
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// ConnMetrics counts connections of limited listeners. A nil *ConnMetrics counts nothing.
type ConnMetrics struct {
	open    *prometheus.GaugeVec
	refused *prometheus.CounterVec
}

// NewConnMetrics registers the connection metrics on reg.
func NewConnMetrics(reg prometheus.Registerer) *ConnMetrics {
	m := &ConnMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "shield_connections_open", Help: "Open connections by listener.",
		}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shield_connections_refused_total", Help: "Connections closed at accept by listener and the limit they hit.",
		}, []string{"listener", "reason"}),
	}
	reg.MustRegister(m.open, m.refused)
	return m
}

// LimitListener wraps l so it holds at most max connections, and at most perPeer from one peer
// (a uid on a unix socket, from SO_PEERCRED; a remote IP on TCP). A connection over a cap is
// accepted and closed at once, so it never waits in the kernel's backlog holding a descriptor;
// refusals are logged at most every 10 seconds per listener, with a count. name labels metrics
// and logs.
func LimitListener(l net.Listener, name string, maxConns, perPeer int, m *ConnMetrics, log *slog.Logger) net.Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &limitListener{Listener: l, name: name, max: maxConns, perPeer: max(1, min(perPeer, maxConns)),
		peers: map[string]int{}, m: m, log: log}
}

type limitListener struct {
	net.Listener
	name         string
	max, perPeer int
	m            *ConnMetrics
	log          *slog.Logger

	mu    sync.Mutex
	total int
	peers map[string]int

	lastLog    atomic.Int64 // unix nanoseconds of the last refusal logged
	suppressed atomic.Int64 // refusals since then
}

// Accept returns the next connection within the caps; over-limit ones are closed here.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := connPeer(c)
		if reason := l.admit(key); reason != "" {
			// Counted before the close, so that whoever sees the close also sees the count.
			l.refused(reason, key)
			_ = c.Close()
			continue
		}
		if l.m != nil {
			l.m.open.WithLabelValues(l.name).Inc()
		}
		return &limitedConn{Conn: c, l: l, key: key}, nil
	}
}

func (l *limitListener) admit(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max {
		return "listener"
	}
	if l.peers[key] >= l.perPeer {
		return "peer"
	}
	l.total++
	l.peers[key]++
	return ""
}

func (l *limitListener) release(key string) {
	l.mu.Lock()
	l.total--
	if l.peers[key]--; l.peers[key] <= 0 {
		delete(l.peers, key)
	}
	l.mu.Unlock()
	if l.m != nil {
		l.m.open.WithLabelValues(l.name).Dec()
	}
}

func (l *limitListener) refused(reason, key string) {
	if l.m != nil {
		l.m.refused.WithLabelValues(l.name, reason).Inc()
	}
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(10*time.Second) || !l.lastLog.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return
	}
	limit, cfgKey := l.max, "limits.max_connections"
	if reason == "peer" {
		limit, cfgKey = l.perPeer, "limits.max_connections_per_peer"
	}
	l.log.Warn("connection refused: over the limit", "listener", l.name, "peer", key, "limit", limit,
		"config", cfgKey, "refused_since_last_log", l.suppressed.Swap(0))
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	l    *limitListener
	key  string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// SyscallConn exposes the socket (peer credentials are read from it).
func (c *limitedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, syscall.EINVAL
	}
	return sc.SyscallConn()
}

// unwrapConn returns the connection a limited listener wrapped (or c).
func unwrapConn(c net.Conn) net.Conn {
	if lc, ok := c.(*limitedConn); ok {
		return lc.Conn
	}
	return c
}

// connPeer names the peer of a connection for per-peer caps: "uid:N" on a unix socket, the
// remote IP on TCP.
func connPeer(c net.Conn) string {
	switch cc := unwrapConn(c).(type) {
	case *net.UnixConn:
		if cred, err := peerUcred(cc); err == nil {
			return "uid:" + strconv.FormatUint(uint64(cred.Uid), 10)
		}
		return "unix:unknown"
	case *net.TCPConn:
		if a, ok := cc.RemoteAddr().(*net.TCPAddr); ok {
			return a.IP.String()
		}
	}
	if a := c.RemoteAddr(); a != nil {
		return a.String()
	}
	return "unknown"
}

// peerUcred reads SO_PEERCRED of a unix connection.
func peerUcred(uc *net.UnixConn) (*unix.Ucred, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return nil, err
	}
	return cred, cerr
}
