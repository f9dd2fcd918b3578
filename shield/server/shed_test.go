package server

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// blockingShield is the real ShieldService (Health, from its status source) with an Evaluate
// that stands for a pipeline stuck in work: it holds every call until release is closed.
type blockingShield struct {
	*ShieldService
	entered chan struct{}
	release chan struct{}
}

func (b *blockingShield) Evaluate(ctx context.Context, _ *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &shieldv1.EvaluateResponse{Verdict: &shieldv1.Verdict{Decision: shieldv1.Decision_DECISION_BLOCK}}, nil
}

type okSource struct{}

func (okSource) Problems() []string                    { return nil }
func (okSource) Reloads() (ok, failed int64, e string) { return 0, 0, "" }

// serveShedded serves services behind auth (default roles: this uid has all) and a Shedder on a
// real unix socket.
func serveShedded(t *testing.T, l Limits, register func(*grpc.Server)) (*grpc.ClientConn, *Shedder) {
	return serveSheddedTap(t, l, true, register)
}

// serveSheddedTap is serveShedded with or without the tap handle (the interceptors alone must
// hold the limits too).
func serveSheddedTap(t *testing.T, l Limits, withTap bool, register func(*grpc.Server)) (*grpc.ClientConn, *Shedder) {
	t.Helper()
	a, err := NewAuth(AuthConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sh := NewShedder(l, prometheus.NewRegistry(), nil)
	sock := filepath.Join(t.TempDir(), "s.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(l.ServerOptions(), grpc.Creds(a.Credentials()),
		grpc.ChainUnaryInterceptor(a.UnaryInterceptor(), sh.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(a.StreamInterceptor(), sh.StreamInterceptor()))
	if withTap {
		opts = append(opts, grpc.InTapHandle(sh.TapHandle()))
	}
	srv := grpc.NewServer(opts...)
	register(srv)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, sh
}

// TestEvaluateShedWhileHealthAnswers saturates the Evaluate limit with held calls: further calls
// are refused with RESOURCE_EXHAUSTED naming the limit, Health still answers SERVING, and once
// the held calls finish Evaluate is served again.
func TestEvaluateShedWhileHealthAnswers(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		hold    int
		wantMsg string
		reason  string
	}{
		{"global", Limits{MaxEvaluate: 4, QueueWait: time.Millisecond}, 4, "limits.max_evaluate)", "global"},
		{"per peer", Limits{MaxEvaluate: 8, MaxEvaluatePerPeer: 3, QueueWait: time.Millisecond}, 3, "limits.max_evaluate_per_peer", "peer"},
	}
	for _, tc := range tests {
		for _, withTap := range []bool{true, false} {
			name := tc.name + map[bool]string{true: "/tap", false: "/interceptor only"}[withTap]
			t.Run(name, func(t *testing.T) {
				fake := &blockingShield{ShieldService: NewShieldService(nil, okSource{}, "test"),
					entered: make(chan struct{}, 64), release: make(chan struct{})}
				conn, sh := serveSheddedTap(t, tc.limits, withTap, func(s *grpc.Server) { shieldv1.RegisterShieldServiceServer(s, fake) })
				c := shieldv1.NewShieldServiceClient(conn)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				req := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: `{}`}}

				var wg sync.WaitGroup
				held := make(chan error, tc.hold)
				for range tc.hold {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := c.Evaluate(ctx, req)
						held <- err
					}()
				}
				for range tc.hold {
					<-fake.entered // every slot is taken by a call inside the pipeline
				}
				for i := 0; i < 3; i++ {
					_, err := c.Evaluate(ctx, req)
					if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), "retry later") {
						t.Fatalf("call over the limit: %v, want RESOURCE_EXHAUSTED naming %s", err, tc.wantMsg)
					}
				}
				h, err := c.Health(ctx, &shieldv1.HealthRequest{})
				if err != nil || h.GetStatus() != shieldv1.HealthResponse_SERVING {
					t.Fatalf("health while Evaluate is saturated: %v %v", h, err)
				}
				if got := testutil.ToFloat64(sh.inFlight.WithLabelValues(classEvaluate)); got != float64(tc.hold) {
					t.Errorf("in-flight gauge = %v, want %d", got, tc.hold)
				}
				if got := testutil.ToFloat64(sh.shed.WithLabelValues(methodEvaluate, tc.reason)); got != 3 {
					t.Errorf("shed{%s} = %v, want 3", tc.reason, got)
				}
				close(fake.release)
				wg.Wait()
				for range tc.hold {
					if err := <-held; err != nil {
						t.Errorf("held call: %v", err)
					}
				}
				if _, err := c.Evaluate(ctx, req); err != nil {
					t.Errorf("Evaluate after the load went: %v", err)
				}
			})
		}
	}
}

// TestQueueWaitAdmitsWhenASlotFrees: a call over the cap waits (up to queue_wait) and is served
// when a slot frees within it.
func TestQueueWaitAdmitsWhenASlotFrees(t *testing.T) {
	for name, l := range map[string]Limits{
		"global":   {MaxEvaluate: 1, QueueWait: 10 * time.Second},
		"per peer": {MaxEvaluate: 4, MaxEvaluatePerPeer: 1, QueueWait: 10 * time.Second},
	} {
		t.Run(name, func(t *testing.T) { queueWaitAdmits(t, l) })
	}
}

func queueWaitAdmits(t *testing.T, l Limits) {
	fake := &blockingShield{ShieldService: NewShieldService(nil, okSource{}, "test"),
		entered: make(chan struct{}, 64), release: make(chan struct{})}
	conn, _ := serveShedded(t, l, func(s *grpc.Server) { shieldv1.RegisterShieldServiceServer(s, fake) })
	c := shieldv1.NewShieldServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: `{}`}}
	errs := make(chan error, 2)
	go func() { _, err := c.Evaluate(ctx, req); errs <- err }()
	<-fake.entered
	go func() { _, err := c.Evaluate(ctx, req); errs <- err }()
	close(fake.release) // the first finishes; the waiting one takes its slot
	<-fake.entered
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("evaluate: %v", err)
		}
	}
}

// shedAuditLog opens an audit log with n decision records whose arguments are big enough that
// an unread Tail fills gRPC's flow-control window.
func shedAuditLog(t *testing.T, n int) *audit.Log {
	t.Helper()
	l, err := audit.Open(audit.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	args, _ := json.Marshal(map[string]string{"content": strings.Repeat("x", 64<<10)})
	for range n {
		if _, err := l.Append(context.Background(), audit.TypeDecision, &audit.Decision{Tool: "Write", Decision: "ALLOW", Arguments: args}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// TestTailStreamCap: held streams past max_streams_per_peer are refused; closing one frees it.
func TestTailStreamCap(t *testing.T) {
	l := shedAuditLog(t, 1)
	conn, _ := serveShedded(t, Limits{MaxStreams: 4, MaxStreamsPerPeer: 2}, func(s *grpc.Server) {
		shieldv1.RegisterAuditServiceServer(s, NewAuditService(l))
	})
	c := shieldv1.NewAuditServiceClient(conn)
	from := uint64(0)
	open := func(ctx context.Context) (shieldv1.AuditService_TailClient, error) {
		st, err := c.Tail(ctx, &shieldv1.TailAuditRequest{FromSeq: &from})
		if err != nil {
			return nil, err
		}
		_, err = st.Recv() // the first record, or the refusal
		return st, err
	}
	var cancels []context.CancelFunc
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cancels = append(cancels, cancel)
		if _, err := open(ctx); err != nil {
			t.Fatalf("stream %d within the cap: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := open(ctx); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "limits.max_streams_per_peer") {
		t.Fatalf("third stream: %v, want RESOURCE_EXHAUSTED naming limits.max_streams_per_peer", err)
	}
	cancels[0]()
	for {
		_, err := open(ctx)
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted || ctx.Err() != nil {
			t.Fatalf("after closing a stream: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // the server sees the cancellation asynchronously
	}
	cancels[1]()
}

// TestTailSlowReaderCutOff: a Tail reader that stops reading is cut off with RESOURCE_EXHAUSTED
// once a message waits longer than stream_send_timeout, and its slot is freed.
func TestTailSlowReaderCutOff(t *testing.T) {
	l := shedAuditLog(t, 300) // ≈20 MB of records: more than any flow-control window (BDP grows it to 16 MB)
	conn, sh := serveShedded(t, Limits{MaxStreams: 1, StreamSendTimeout: 50 * time.Millisecond}, func(s *grpc.Server) {
		shieldv1.RegisterAuditServiceServer(s, NewAuditService(l))
	})
	c := shieldv1.NewAuditServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	from := uint64(0)
	st, err := c.Tail(ctx, &shieldv1.TailAuditRequest{FromSeq: &from})
	if err != nil {
		t.Fatal(err)
	}
	// Do not read until the server has given up on this reader.
	for testutil.ToFloat64(sh.shed.WithLabelValues("/shield.v1.AuditService/Tail", "slow_reader")) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the slow reader was never cut off")
		}
		time.Sleep(10 * time.Millisecond)
	}
	n := 0
	for {
		_, err = st.Recv()
		if err != nil {
			break
		}
		n++
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "stream_send_timeout") {
		t.Fatalf("after %d records: %v, want RESOURCE_EXHAUSTED naming limits.stream_send_timeout", n, err)
	}
	if n >= 300 {
		t.Errorf("the slow reader got all %d records: nothing was cut", n)
	}
	// The slot is free again: a new Tail is admitted.
	st2, err := c.Tail(ctx, &shieldv1.TailAuditRequest{FromSeq: &from})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.Recv(); err != nil {
		t.Fatalf("new Tail after the cut: %v", err)
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		method string
		stream bool
		want   string
	}{
		{methodHealth, false, ""},
		{methodEvaluate, false, classEvaluate},
		{methodAwait, false, classStream},
		{"/shield.v1.ApprovalService/Watch", true, classStream},
		{"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", true, classStream},
		{"/shield.v1.AuditService/Query", false, classQuery},
		{"/shield.v1.ShieldService/GetStatus", false, classQuery},
	}
	for _, tc := range tests {
		if got := classOf(tc.method, tc.stream); got != tc.want {
			t.Errorf("classOf(%s) = %q, want %q", tc.method, got, tc.want)
		}
	}
}
