package server

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

type panickyShield struct{ healthyShield }

func (panickyShield) Evaluate(context.Context, *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	panic("boom")
}

// TestRecoverUnary: a panicking handler answers INTERNAL and the server goes on serving.
func TestRecoverUnary(t *testing.T) {
	lis := newUnixListener(t)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(RecoverUnary(slog.New(slog.DiscardHandler))))
	shieldv1.RegisterShieldServiceServer(srv, panickyShield{})
	go srv.Serve(lis)
	defer srv.Stop()
	c, conn := healthClient(t, "unix://"+lis.Addr().String())
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Evaluate(ctx, &shieldv1.EvaluateRequest{})
	if status.Code(err) != codes.Internal {
		t.Fatalf("panicking Evaluate: %v, want INTERNAL", err)
	}
	if err := health(c); err != nil {
		t.Fatalf("health after a panic: %v", err)
	}
}
