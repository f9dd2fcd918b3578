package appliance

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/engine"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/server"
)

// principalKey marks a request made in process by a hosted engine; only this package can set it,
// so no remote caller can claim an engine's identity.
type principalKey struct{}

// identity names the caller of a request: a hosted engine (in process) by its principal, anyone
// else as the auth interceptor authenticated them (server.Identity).
func identity(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(string); ok && p != "" {
		return p
	}
	return server.Identity(ctx)
}

// localShield is the appliance's own ShieldService and ApprovalService as a hosted engine
// consults them, in process: the same adapters the socket serves, with the engine's identity
// ("engine:<workspace>") on its calls and its client's ("client:<workspace>") on its
// resolutions, so that the engine's client may resolve the agent's requests and the agent's
// requests are never its client's own.
type localShield struct {
	svc       *server.ShieldService
	approvals *server.ApprovalService // nil: approvals disabled
	engine    string
	client    string
}

var _ engine.Shield = (*localShield)(nil)

func errNoApprovals() error {
	return status.Error(codes.Unavailable, "approvals are disabled (approvals.disabled)")
}

func (l *localShield) Evaluate(ctx context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	return l.svc.Evaluate(context.WithValue(ctx, principalKey{}, l.engine), req)
}

func (l *localShield) AwaitDecision(ctx context.Context, req *shieldv1.AwaitDecisionRequest) (*shieldv1.Approval, error) {
	if l.approvals == nil {
		return nil, errNoApprovals()
	}
	return l.approvals.AwaitDecision(context.WithValue(ctx, principalKey{}, l.engine), req)
}

func (l *localShield) Resolve(ctx context.Context, req *shieldv1.ResolveApprovalRequest) (*shieldv1.Approval, error) {
	if l.approvals == nil {
		return nil, errNoApprovals()
	}
	return l.approvals.Resolve(context.WithValue(ctx, principalKey{}, l.client), req)
}

// remoteShield is a running appliance's ShieldService and ApprovalService over its unix socket
// (`shield start --socket`): the engine acts as the socket peer it is (its uid), with the roles the
// appliance's auth.unix_roles give it. Every error is a refusal (engine.Engine fails closed).
type remoteShield struct {
	conn      *grpc.ClientConn
	shield    shieldv1.ShieldServiceClient
	approvals shieldv1.ApprovalServiceClient
}

var _ engine.Shield = (*remoteShield)(nil)

// dialShield prepares a client of the appliance at the unix socket path (made absolute: gRPC
// does not resolve relative unix paths).
func dialShield(socket string) (*remoteShield, error) {
	abs, err := filepath.Abs(socket)
	if err != nil {
		return nil, fmt.Errorf("shield socket %q: %w", socket, err)
	}
	conn, err := grpc.NewClient("unix://"+abs, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("shield socket %s: %w", abs, err)
	}
	return &remoteShield{conn: conn, shield: shieldv1.NewShieldServiceClient(conn), approvals: shieldv1.NewApprovalServiceClient(conn)}, nil
}

// remoteEvalTimeout bounds one Evaluate over the socket: an appliance that does not answer is a
// refusal, not a wedged agent.
const remoteEvalTimeout = 30 * time.Second

func (r *remoteShield) Evaluate(ctx context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteEvalTimeout)
	defer cancel()
	return r.shield.Evaluate(ctx, req)
}

func (r *remoteShield) AwaitDecision(ctx context.Context, req *shieldv1.AwaitDecisionRequest) (*shieldv1.Approval, error) {
	return r.approvals.AwaitDecision(ctx, req)
}

func (r *remoteShield) Resolve(ctx context.Context, req *shieldv1.ResolveApprovalRequest) (*shieldv1.Approval, error) {
	return r.approvals.Resolve(ctx, req)
}
