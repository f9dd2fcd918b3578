package server

import (
	"context"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/shield"
)

// switchSource is a StatusSource whose health a test flips.
type switchSource struct{ broken atomic.Bool }

func (s *switchSource) Problems() []string {
	if s.broken.Load() {
		return []string{"audit log: not writable"}
	}
	return nil
}
func (s *switchSource) Reloads() (int64, int64, string) { return 0, 0, "" }

// TestStandardHealth: grpc.health.v1 over a real unix socket follows the service's Health and is
// open to a caller with no role at all (an unmapped uid), like Health.
func TestStandardHealth(t *testing.T) {
	p, err := shield.New(shield.Config{}, &shield.Policy{Revision: "r1", Normalizer: evalNormalizer{}})
	if err != nil {
		t.Fatal(err)
	}
	src := &switchSource{}
	a, err := NewAuth(AuthConfig{UnixRoles: map[string][]string{"4242": {RoleAdmin}}}) // this uid: no role
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	shed := NewShedder(Limits{}, nil, nil)
	srv := grpc.NewServer(grpc.Creds(a.Credentials()),
		grpc.ChainUnaryInterceptor(a.UnaryInterceptor(), shed.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(a.StreamInterceptor(), shed.StreamInterceptor()))
	RegisterStandardHealth(srv, NewShieldService(p, src, "test"))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hc := healthpb.NewHealthClient(conn)
	ctx := context.Background()

	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("Check(%q): %v", service, err)
		}
		return r.GetStatus()
	}
	if got := check(""); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("healthy: %v, want SERVING", got)
	}
	if got := check("shield.v1.ShieldService"); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("healthy ShieldService: %v, want SERVING", got)
	}
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown service: %v, want NotFound", err)
	}

	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch first: %v %v, want SERVING", r, err)
	}
	src.broken.Store(true)
	if got := check(""); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("audit broken: %v, want NOT_SERVING", got)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("watch after break: %v %v, want NOT_SERVING", r, err)
	}
}
