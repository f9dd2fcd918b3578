package engine

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/server"
)

// localShield is the appliance's ShieldService and ApprovalService in process, as the engine
// sees them when `shield serve` hosts it: the engine's calls carry its own identity, and its
// client resolves as another.
type localShield struct {
	svc *server.ShieldService
	apr *server.ApprovalService // nil: no human tier
}

type whoKey struct{}

func who(ctx context.Context) string { s, _ := ctx.Value(whoKey{}).(string); return s }

func newLocalShield(p *shield.Pipeline, apr *approval.Service) *localShield {
	l := &localShield{svc: server.NewShieldService(p, nil, "test")}
	l.svc.Identity = who
	if apr != nil {
		l.apr = server.NewApprovalService(apr, who)
	}
	return l
}

func (l *localShield) Evaluate(ctx context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	return l.svc.Evaluate(context.WithValue(ctx, whoKey{}, "engine:ws"), req)
}

func (l *localShield) AwaitDecision(ctx context.Context, req *shieldv1.AwaitDecisionRequest) (*shieldv1.Approval, error) {
	if l.apr == nil {
		return nil, status.Error(codes.Unavailable, "approvals are not enabled")
	}
	return l.apr.AwaitDecision(context.WithValue(ctx, whoKey{}, "engine:ws"), req)
}

func (l *localShield) Resolve(ctx context.Context, req *shieldv1.ResolveApprovalRequest) (*shieldv1.Approval, error) {
	if l.apr == nil {
		return nil, status.Error(codes.Unavailable, "approvals are not enabled")
	}
	return l.apr.Resolve(context.WithValue(ctx, whoKey{}, "client:ws"), req)
}
