package server

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/approval"
)

// TestApprovalRevokeOverGRPC: an approver withdraws a scoped grant; the agent may not; the call
// escalates again afterwards; a pending request cannot be revoked.
func TestApprovalRevokeOverGRPC(t *testing.T) {
	sc, ac, _ := approvalServer(t, approval.Config{})
	req := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: `{"command":"reboot"}`},
		Context: &shieldv1.CallContext{SessionId: "s1"}}
	eval := func() *shieldv1.Verdict {
		t.Helper()
		r, err := sc.Evaluate(as(tokAgentA), req)
		if err != nil {
			t.Fatal(err)
		}
		return r.GetVerdict()
	}
	id := eval().GetEscalationId()
	if _, err := ac.Revoke(as(tokApprover), &shieldv1.RevokeApprovalRequest{Id: id}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("revoke pending: %v, want FAILED_PRECONDITION", err)
	}
	if _, err := ac.Resolve(as(tokApprover), &shieldv1.ResolveApprovalRequest{Id: id, Approve: true, GrantSeconds: 600}); err != nil {
		t.Fatal(err)
	}
	if d := eval().GetDecision(); d != shieldv1.Decision_DECISION_ALLOW {
		t.Fatalf("under the grant: %v", d)
	}
	if _, err := ac.Revoke(as(tokAgentA), &shieldv1.RevokeApprovalRequest{Id: id}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("agent revokes: %v, want PERMISSION_DENIED", err)
	}
	a, err := ac.Revoke(as(tokApprover), &shieldv1.RevokeApprovalRequest{Id: id, Comment: "window closed"})
	if err != nil || a.GetState() != "revoked" || a.GetResolver() != "token:ops" {
		t.Fatalf("revoke: %v %v", a, err)
	}
	if v := eval(); v.GetDecision() != shieldv1.Decision_DECISION_ESCALATE || v.GetEscalationId() == id {
		t.Fatalf("after revoke: %v, want a new escalation", v)
	}
}
