package server

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

type healthyShield struct {
	shieldv1.UnimplementedShieldServiceServer
}

func (healthyShield) Health(context.Context, *shieldv1.HealthRequest) (*shieldv1.HealthResponse, error) {
	return &shieldv1.HealthResponse{Status: shieldv1.HealthResponse_SERVING}, nil
}

// serveLimited serves a healthy ShieldService on network/addr behind LimitListener.
func serveLimited(t *testing.T, network, addr string, maxConns, perPeer int) (target string, m *ConnMetrics) {
	t.Helper()
	lis, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	m = NewConnMetrics(prometheus.NewRegistry())
	a, err := NewAuth(AuthConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(append(Limits{}.ServerOptions(), grpc.Creds(a.Credentials()))...)
	shieldv1.RegisterShieldServiceServer(srv, healthyShield{})
	go srv.Serve(LimitListener(lis, network, maxConns, perPeer, m, nil))
	t.Cleanup(srv.Stop)
	if network == "unix" {
		return "unix://" + addr, m
	}
	return lis.Addr().String(), m
}

func healthClient(t *testing.T, target string) (shieldv1.ShieldServiceClient, *grpc.ClientConn) {
	t.Helper()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	return shieldv1.NewShieldServiceClient(conn), conn
}

func health(c shieldv1.ShieldServiceClient) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Health(ctx, &shieldv1.HealthRequest{})
	return err
}

// refusedAtAccept dials a raw connection and reports whether the server closed it unread.
func refusedAtAccept(t *testing.T, network, addr string) bool {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// An admitted connection gets the server's HTTP/2 SETTINGS frame; a refused one is closed.
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("no answer and no close in 10s")
	}
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err))
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

// TestConnectionLimitPerPeerUnix: over a real unix socket, connections past the per-peer cap are
// closed at accept while the admitted ones keep working; closing one frees its slot.
func TestConnectionLimitPerPeerUnix(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	const perPeer = 3
	target, m := serveLimited(t, "unix", sock, 100, perPeer)

	var conns []*grpc.ClientConn
	var clients []shieldv1.ShieldServiceClient
	for i := 0; i < perPeer; i++ {
		c, conn := healthClient(t, target)
		if err := health(c); err != nil {
			t.Fatalf("connection %d within the cap: %v", i, err)
		}
		conns, clients = append(conns, conn), append(clients, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 3; i++ {
		if !refusedAtAccept(t, "unix", sock) {
			t.Fatalf("extra connection %d was admitted past the per-peer cap", i)
		}
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("unix", "peer")); got < 3 {
		t.Errorf("refused{peer} = %v, want ≥ 3", got)
	}
	for i, c := range clients {
		if err := health(c); err != nil {
			t.Errorf("admitted connection %d stopped working: %v", i, err)
		}
	}
	// Closing one connection frees a slot: a new connection is admitted (once the server has
	// seen the close, which it does asynchronously).
	conns[0].Close()
	conns = conns[1:]
	deadline := time.Now().Add(20 * time.Second)
	for refusedAtAccept(t, "unix", sock) {
		if time.Now().After(deadline) {
			t.Fatal("the slot of a closed connection was never freed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConnectionLimitPerListenerTCP: on TCP the peer is the remote IP; the listener cap holds
// whatever the peer cap.
func TestConnectionLimitPerListenerTCP(t *testing.T) {
	target, m := serveLimited(t, "tcp", "127.0.0.1:0", 2, 2)
	for i := 0; i < 2; i++ {
		c, conn := healthClient(t, target)
		defer conn.Close()
		if err := health(c); err != nil {
			t.Fatalf("connection %d within the cap: %v", i, err)
		}
	}
	if !refusedAtAccept(t, "tcp", target) {
		t.Fatal("a third connection was admitted past max 2")
	}
	if got := testutil.ToFloat64(m.refused.WithLabelValues("tcp", "peer")) + testutil.ToFloat64(m.refused.WithLabelValues("tcp", "listener")); got != 1 {
		t.Errorf("refused = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.open.WithLabelValues("tcp")); got != 2 {
		t.Errorf("open = %v, want 2", got)
	}
}

func TestLimitsFit(t *testing.T) {
	tests := []struct {
		name      string
		in        Limits
		nofile    uint64
		listeners int
		wantConns int
		wantErr   bool
	}{
		{"default on a large limit", Limits{}, 524288, 2, DefaultMaxConnections, false},
		{"default shrinks to the room left", Limits{}, 1024, 1, 1024 - Limits{}.Reserve(), false},
		{"default shared by listeners", Limits{}, 1024, 2, (1024 - Limits{}.Reserve()) / 2, false},
		{"too small a limit", Limits{}, 256, 1, 0, true},
		{"explicit fits", Limits{MaxConnections: 4000}, 524288, 3, 4000, false},
		{"explicit does not fit", Limits{MaxConnections: 1000}, 1024, 1, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Fit(tc.nofile, tc.listeners)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if got.MaxConnections != tc.wantConns {
					t.Errorf("max_connections = %d, want %d", got.MaxConnections, tc.wantConns)
				}
				if need := tc.listeners*got.MaxConnections + got.Reserve(); uint64(need) > tc.nofile {
					t.Errorf("%d descriptors needed, limit %d", need, tc.nofile)
				}
			}
		})
	}
}

func TestLimitsValidate(t *testing.T) {
	bad := []Limits{
		{MaxEvaluate: -1},
		{MaxEvaluate: 10, MaxEvaluatePerPeer: 20},
		{QueueWait: time.Hour},
		{StreamSendTimeout: time.Nanosecond},
		{MaxStreamsPerConnection: 1 << 30},
	}
	for _, l := range bad {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	if err := (Limits{}).Validate(); err != nil {
		t.Errorf("zero limits: %v", err)
	}
	if err := (Limits{}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func newUnixListener(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	return lis
}
