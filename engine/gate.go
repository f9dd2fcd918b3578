package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// Shield is the engine's view of the appliance's ShieldService and ApprovalService: the one
// pipeline, approval store and audit chain every runtime uses. The appliance hands the engine
// either the services themselves (in process, when `shield serve` hosts the engine) or clients
// of a running appliance's unix socket (`shield start --socket`). The engine never builds a
// pipeline of its own.
type Shield interface {
	// Evaluate decides one call (ShieldService.Evaluate).
	Evaluate(ctx context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error)
	// AwaitDecision returns once an approval request is no longer pending, or ctx ends.
	AwaitDecision(ctx context.Context, req *shieldv1.AwaitDecisionRequest) (*shieldv1.Approval, error)
	// Resolve approves or denies a request as the engine's client (ClientService.ResolveApproval).
	Resolve(ctx context.Context, req *shieldv1.ResolveApprovalRequest) (*shieldv1.Approval, error)
}

// gateCall is one call to be decided.
type gateCall struct {
	callID, tool, args string
	session, agent     string
	runtime            string
}

// gateResult is the outcome of gate: allowed, or the refusal the agent gets.
type gateResult struct {
	allowed    bool
	decision   string // ALLOW, BLOCK or ESCALATE: the last verdict
	reason     string
	rules      []string
	approvalID string
	tier       int32   // the tier that decided; -1 the pipeline or the engine itself
	confidence float64 // the verdict's confidence
}

// decisionName maps a wire decision; anything but ALLOW and ESCALATE is BLOCK.
func decisionName(d shieldv1.Decision) string {
	switch d {
	case shieldv1.Decision_DECISION_ALLOW:
		return "ALLOW"
	case shieldv1.Decision_DECISION_ESCALATE:
		return "ESCALATE"
	default:
		return "BLOCK"
	}
}

// evaluate asks the ShieldService once. Every error is a BLOCK.
func (e *Engine) evaluate(ctx context.Context, c gateCall) gateResult {
	resp, err := e.cfg.Shield.Evaluate(ctx, &shieldv1.EvaluateRequest{
		Call:    &shieldv1.ToolCall{CallId: c.callID, Tool: c.tool, ArgumentsJson: c.args},
		Context: &shieldv1.CallContext{SessionId: c.session, AgentId: c.agent, Runtime: c.runtime, Cwd: e.cfg.Tools.Workspace()},
	})
	if err != nil {
		msg := err.Error()
		if s, ok := status.FromError(err); ok {
			msg = s.Code().String() + ": " + s.Message()
		}
		return gateResult{decision: "BLOCK", reason: "the Shield appliance could not decide: " + msg, tier: -1, confidence: 1}
	}
	v := resp.GetVerdict()
	d := decisionName(v.GetDecision())
	return gateResult{allowed: d == "ALLOW", decision: d, reason: v.GetReason(), rules: v.GetRules(), approvalID: v.GetEscalationId(),
		tier: v.GetTier(), confidence: v.GetConfidence()}
}

// gate decides a call and holds an ESCALATE: it reports the verdict (verdict), then, when the
// appliance created an approval request, announces it (held) and waits for a human up to the
// approval timeout. Approved: the call is evaluated again, which consumes the approval and is
// audited like any decision, and that verdict stands. Denied, expired, timed out, cancelled or
// any error: refused. An ESCALATE without a request (no human tier) is refused at once.
func (e *Engine) gate(ctx context.Context, c gateCall, verdict func(gateResult) error, held func(id string, timeout time.Duration) error) (gateResult, error) {
	r := e.evaluate(ctx, c)
	if err := verdict(r); err != nil {
		return r, err
	}
	if r.decision != "ESCALATE" {
		return r, nil
	}
	if r.approvalID == "" {
		r.reason = "escalated, and no human approval is configured: " + r.reason
		return r, nil
	}
	if err := held(r.approvalID, e.cfg.ApprovalTimeout); err != nil {
		return r, err
	}
	wctx, cancel := context.WithTimeout(ctx, e.cfg.ApprovalTimeout)
	defer cancel()
	a, err := e.cfg.Shield.AwaitDecision(wctx, &shieldv1.AwaitDecisionRequest{Id: r.approvalID})
	switch {
	case err != nil && (errors.Is(wctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded):
		r.reason = fmt.Sprintf("no human decision within %s (approval %s)", e.cfg.ApprovalTimeout, r.approvalID)
		return r, nil
	case err != nil:
		r.reason = fmt.Sprintf("waiting for the human decision on %s ended: %v", r.approvalID, err)
		return r, nil
	}
	if a.GetState() != "approved" {
		why := "a human denied the call"
		if a.GetResolver() == "timeout" || a.GetState() == "expired" {
			why = "no human decision in time"
		}
		if a.GetComment() != "" {
			why += ": " + a.GetComment()
		}
		r.decision, r.reason = "BLOCK", why+" (approval "+r.approvalID+")"
		return r, nil
	}
	again := e.evaluate(ctx, c)
	if again.approvalID == "" {
		again.approvalID = r.approvalID
	}
	if again.decision == "ESCALATE" {
		// Approved, yet the appliance escalates again (the approval went to another call, or
		// expired in between): never run on that.
		again.decision, again.allowed = "BLOCK", false
		again.reason = "approved, but the appliance still escalates the call: " + again.reason
	}
	return again, verdict(again)
}

// refusal is the tool result the agent gets for a call it may not run.
func refusal(r gateResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Shield refused this call (%s)", r.decision)
	if len(r.rules) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(r.rules, ", "))
	}
	b.WriteString(": ")
	b.WriteString(r.reason)
	return b.String()
}
