package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	_, filterErr := audit.ParseFilter(audit.FilterArgs{Decision: "maybe"}, time.Now())
	tests := []struct {
		name string
		err  error
		code codes.Code
		msg  string // substring of the message; "" checks only the code
	}{
		{"status kept", status.Error(codes.PermissionDenied, "no"), codes.PermissionDenied, "no"},
		{"wrapped status kept", fmt.Errorf("ctx: %w", status.Error(codes.NotFound, "gone")), codes.NotFound, "gone"},
		{"bad request", badRequest{"page_size must be 0..1000"}, codes.InvalidArgument, "page_size"},
		{"canceled", fmt.Errorf("query: %w", context.Canceled), codes.Canceled, ""},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, ""},
		{"audit filter", filterErr, codes.InvalidArgument, "want one of ALLOW, BLOCK, ESCALATE"},
		{"audit not found", fmt.Errorf("seq 9: %w", audit.ErrNotFound), codes.NotFound, "no such audit record"},
		{"audit closed", audit.ErrClosed, codes.Unavailable, ""},
		{"approval not found", approval.ErrNotFound, codes.NotFound, "no such approval"},
		{"approval page token", approval.ErrBadPageToken, codes.InvalidArgument, ""},
		{"not pending", approval.ErrNotPending, codes.FailedPrecondition, ""},
		{"not granted", approval.ErrNotGranted, codes.FailedPrecondition, ""},
		{"self approval", approval.ErrSelfApproval, codes.PermissionDenied, ""},
		{"same approver", approval.ErrSameApprover, codes.PermissionDenied, ""},
		{"invalid call", fmt.Errorf("%w: tool is empty", shield.ErrInvalidCall), codes.InvalidArgument, "tool is empty"},
		{"anything else", errors.New("open /var/lib/shield/approvals.db: secret detail"), codes.Internal, "internal error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := status.Convert(Status(tc.err))
			if st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
				t.Fatalf("Status(%v) = %v %q, want %v containing %q", tc.err, st.Code(), st.Message(), tc.code, tc.msg)
			}
			if tc.code == codes.Internal && strings.Contains(st.Message(), "secret") {
				t.Fatalf("INTERNAL leaks the detail: %q", st.Message())
			}
		})
	}
	if Status(nil) != nil {
		t.Fatal("Status(nil) is not nil")
	}
}

// errShield answers Evaluate with the error (or panic) named by the call's tool.
type errShield struct {
	healthyShield
	errs map[string]error
}

func (s errShield) Evaluate(_ context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	if req.GetCall().GetTool() == "panic" {
		panic("boom")
	}
	return nil, s.errs[req.GetCall().GetTool()]
}

// TestNewGRPC: a server built by NewGRPC over a real socket maps handler errors through Status
// (logging the detail of an INTERNAL one, never sending it), turns a panic into INTERNAL and goes
// on serving, and runs the caller's interceptors before the handler.
func TestNewGRPC(t *testing.T) {
	logBuf := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logBuf, nil))
	var intercepted atomic.Int32
	srv := NewGRPC(GRPCConfig{Log: log, Unary: []grpc.UnaryServerInterceptor{
		func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			intercepted.Add(1)
			return h(ctx, req)
		}}})
	shieldv1.RegisterShieldServiceServer(srv, errShield{errs: map[string]error{
		"internal": errors.New("open approvals.db: secret detail"),
		"notfound": fmt.Errorf("get: %w", audit.ErrNotFound),
	}})
	lis := newUnixListener(t)
	go srv.Serve(lis)
	defer srv.Stop()
	c, conn := healthClient(t, "unix://"+lis.Addr().String())
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(tool string) error {
		_, err := c.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: tool}})
		return err
	}
	if err := call("internal"); status.Code(err) != codes.Internal || strings.Contains(err.Error(), "secret") {
		t.Errorf("internal error: %v, want INTERNAL without the detail", err)
	}
	if err := call("notfound"); status.Code(err) != codes.NotFound {
		t.Errorf("not found: %v, want NOT_FOUND", err)
	}
	if err := call("panic"); status.Code(err) != codes.Internal {
		t.Errorf("panic: %v, want INTERNAL", err)
	}
	if err := health(c); err != nil {
		t.Fatalf("health after a panic: %v", err)
	}
	if n := intercepted.Load(); n != 4 {
		t.Errorf("caller's interceptor ran %d times, want 4", n)
	}
	if !strings.Contains(logBuf.String(), "secret detail") || !strings.Contains(logBuf.String(), "handler panic") {
		t.Errorf("log lacks the internal detail or the panic:\n%s", logBuf.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
