package approval

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// approvalExecNormalizer classifies every call as exec.
type approvalExecNormalizer struct{}

func (approvalExecNormalizer) Normalize(tool string, _ map[string]any, _ string) *normalize.Action {
	return &normalize.Action{Tool: tool, Class: "exec", Known: true}
}

// approvalEscalatingTier is a tier-0 stand-in that escalates every call.
type approvalEscalatingTier struct{}

func (approvalEscalatingTier) Level() int   { return shield.TierCEL }
func (approvalEscalatingTier) Name() string { return "cel" }
func (approvalEscalatingTier) Evaluate(context.Context, *shield.Input) (shield.Result, error) {
	return shield.Result{Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "cel:exec.reboot", Reason: "reboots the host"}}}, nil
}

// TestApprovalThroughPipeline runs the real pipeline (with its verdict cache) and the real tier:
// ESCALATE with an escalation id, approve, the re-submitted call is allowed once, then escalates
// again; a denied one is blocked.
func TestApprovalThroughPipeline(t *testing.T) {
	s := open(t, Config{})
	p, err := shield.New(shield.Config{Escalation: []shield.Tier{s.Tier()}}, &shield.Policy{Revision: "r1", Digest: "sha256:d",
		Normalizer: approvalExecNormalizer{}, Tiers: []shield.Tier{approvalEscalatingTier{}}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(cmd string) *shield.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return &shield.Call{Tool: "Bash", Arguments: args, Context: shield.CallContext{SessionID: "s1", AgentID: "a1", Caller: "uid:1000"}}
	}
	ev := func(cmd string) shield.Verdict {
		t.Helper()
		v, err := p.Evaluate(context.Background(), call(cmd), shield.EvalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := ev("reboot")
	if v.Decision != shield.Escalate || v.EscalationID == "" {
		t.Fatalf("first: %+v", v)
	}
	a, err := s.Get(v.EscalationID)
	if err != nil || len(a.Rules) == 0 || a.Rules[0] != "cel:exec.reboot" || a.ActionHash != v.ActionHash {
		t.Fatalf("stored request: %+v %v", a, err)
	}
	if _, err := s.Resolve(context.Background(), a.ID, true, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	if v := ev("reboot"); v.Decision != shield.Allow || v.Tier != shield.TierHuman {
		t.Errorf("resubmitted: %s by tier %d, want ALLOW by tier 3", v.Decision, v.Tier)
	}
	if v := ev("reboot"); v.Decision != shield.Escalate || v.EscalationID == a.ID {
		t.Errorf("second resubmit: %s %q, want a new escalation", v.Decision, v.EscalationID)
	}

	v = ev("shutdown")
	if _, err := s.Resolve(context.Background(), v.EscalationID, false, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	if v := ev("shutdown"); v.Decision != shield.Block {
		t.Errorf("denied: %s, want BLOCK", v.Decision)
	}
}
