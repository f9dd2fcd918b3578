package appliance

import (
	"context"

	"google.golang.org/grpc"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/hook"
	"github.com/shieldsec/shield/shield/server"
)

// hookShield and hookApprovals call the appliance's own service adapters in process, with
// the caller's context: the identity the HTTP listener authenticated asks and waits.
type hookShield struct{ s *server.ShieldService }

func (l hookShield) Evaluate(ctx context.Context, in *shieldv1.EvaluateRequest, _ ...grpc.CallOption) (*shieldv1.EvaluateResponse, error) {
	return l.s.Evaluate(ctx, in)
}

type hookApprovals struct{ s *server.ApprovalService }

func (l hookApprovals) AwaitDecision(ctx context.Context, in *shieldv1.AwaitDecisionRequest, _ ...grpc.CallOption) (*shieldv1.Approval, error) {
	return l.s.AwaitDecision(ctx, in)
}

// hookRoutes are the runtime hooks served on the HTTP listener: Claude Code's `type: "http"`
// PreToolUse hook, authorised as an Evaluate call (the agent role), decided in process.
func (a *Appliance) hookRoutes() []server.HTTPRoute {
	var aw client.Awaiter
	if a.aprSvc != nil {
		aw = hookApprovals{a.aprSvc}
	}
	d := client.NewLocal(hookShield{a.svc}, aw, "claude-code", 0)
	return []server.HTTPRoute{{
		Pattern: "POST " + hook.HTTPPath,
		Method:  "/shield.v1.ShieldService/Evaluate",
		Summary: "Claude Code PreToolUse http hook: {} for ALLOW, the deny JSON for anything else (an ESCALATE is held for a human within the hook's deadline)",
		Handler: hook.NewHTTPHandler(d),
	}}
}
