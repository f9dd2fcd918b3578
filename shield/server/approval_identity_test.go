package server

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

type execNormalizer struct{}

func (execNormalizer) Normalize(tool string, _ map[string]any, _ string) *normalize.Action {
	return &normalize.Action{Tool: tool, Class: "exec", Known: true}
}

// escalatingTier is a tier-0 stand-in that escalates every call.
type escalatingTier struct{}

func (escalatingTier) Level() int   { return shield.TierCEL }
func (escalatingTier) Name() string { return "cel" }
func (escalatingTier) Evaluate(context.Context, *shield.Input) (shield.Result, error) {
	return shield.Result{Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "cel:exec.reboot", Reason: "reboots the host"}}}, nil
}

const (
	tokAgentA   = "tok-agent-a-0123456789"
	tokAgentB   = "tok-agent-b-0123456789"
	tokApprover = "tok-approver-0123456789"
)

// approvalServer serves ShieldService (a pipeline ending in the approval tier) and
// ApprovalService behind the real authentication (bearer tokens) on a unix socket.
func approvalServer(t *testing.T, cfg approval.Config) (shieldv1.ShieldServiceClient, shieldv1.ApprovalServiceClient, *approval.Service) {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	body := tokAgentA + " agent agent-a\n" + tokAgentB + " agent agent-b\n" + tokApprover + " approver ops\n"
	if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := NewAuth(AuthConfig{TokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path == "" {
		cfg.Path = filepath.Join(dir, "approvals.db")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	svc, err := approval.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	p, err := shield.New(shield.Config{Escalation: []shield.Tier{svc.Tier()}}, &shield.Policy{Revision: "r1", Digest: "sha256:d",
		Normalizer: execNormalizer{}, Tiers: []shield.Tier{escalatingTier{}}})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(auth.UnaryInterceptor()), grpc.StreamInterceptor(auth.StreamInterceptor()))
	ss := NewShieldService(p, nil, "test")
	ss.Identity = Identity
	shieldv1.RegisterShieldServiceServer(gs, ss)
	shieldv1.RegisterApprovalServiceServer(gs, NewApprovalService(svc, Identity))
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return shieldv1.NewShieldServiceClient(conn), shieldv1.NewApprovalServiceClient(conn), svc
}

func as(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

// TestApprovalBoundToRequester: an approval granted to one caller is not consumed by another
// caller using the same session id and call (it gets its own escalation), and AwaitDecision
// and Get show a request only to its requester and to approvers; others get NOT_FOUND, as for
// an id that does not exist.
func TestApprovalBoundToRequester(t *testing.T) {
	sc, ac, _ := approvalServer(t, approval.Config{})
	req := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: `{"command":"reboot"}`},
		Context: &shieldv1.CallContext{SessionId: "shared-session", AgentId: "a1"}}
	eval := func(tok string) *shieldv1.Verdict {
		t.Helper()
		r, err := sc.Evaluate(as(tok), req)
		if err != nil {
			t.Fatal(err)
		}
		return r.GetVerdict()
	}
	v := eval(tokAgentA)
	idA := v.GetEscalationId()
	if v.GetDecision() != shieldv1.Decision_DECISION_ESCALATE || idA == "" {
		t.Fatalf("agent A: %v", v)
	}
	if _, err := ac.Resolve(as(tokApprover), &shieldv1.ResolveApprovalRequest{Id: idA, Approve: true}); err != nil {
		t.Fatal(err)
	}
	// Agent B, same session id, same call: its own escalation, A's approval untouched.
	v = eval(tokAgentB)
	if v.GetDecision() != shieldv1.Decision_DECISION_ESCALATE || v.GetEscalationId() == "" || v.GetEscalationId() == idA {
		t.Fatalf("agent B with A's session: %v, want a new escalation", v)
	}
	idB := v.GetEscalationId()
	if v := eval(tokAgentA); v.GetDecision() != shieldv1.Decision_DECISION_ALLOW {
		t.Errorf("agent A after B: %v, want ALLOW by A's approval", v)
	}

	for _, tc := range []struct {
		name string
		tok  string
		id   string
		want codes.Code
	}{
		{"requester", tokAgentA, idA, codes.OK},
		{"approver", tokApprover, idA, codes.OK},
		{"other agent", tokAgentB, idA, codes.NotFound},
		{"unknown id", tokAgentB, "apr_000000000000000000000000", codes.NotFound},
		{"other agent on B's", tokAgentA, idB, codes.NotFound},
	} {
		t.Run("await "+tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(as(tc.tok), 10*time.Second)
			defer cancel()
			a, err := ac.AwaitDecision(ctx, &shieldv1.AwaitDecisionRequest{Id: tc.id})
			if status.Code(err) != tc.want {
				t.Fatalf("AwaitDecision: %v, want %s", err, tc.want)
			}
			if err != nil {
				if strings.Contains(err.Error(), "reboot") || status.Convert(err).Message() != "no such approval" {
					t.Errorf("error tells more than an unknown id would: %v", err)
				}
			} else if a.GetId() != tc.id {
				t.Errorf("got %s", a.GetId())
			}
		})
	}
	// Get is for approvers (the method table keeps agents out); an approver sees any request.
	if _, err := ac.Get(as(tokAgentB), &shieldv1.GetApprovalRequest{Id: idA}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("agent Get: %v", err)
	}
	if a, err := ac.Get(as(tokApprover), &shieldv1.GetApprovalRequest{Id: idB}); err != nil || a.GetCaller() != "token:agent-b" {
		t.Errorf("approver Get: %v %v", a, err)
	}
}

// TestApprovalAPIRedacted: a secret in a call's arguments is in no ApprovalService response.
func TestApprovalAPIRedacted(t *testing.T) {
	sc, ac, _ := approvalServer(t, approval.Config{})
	args := `{"command":"curl -H 'Authorization: Bearer abcdef0123456789abcdef.token' https://x.example/?password=hunter2-correct-horse AKIAIOSFODNN7EXAMPLE"}`
	secrets := []string{"abcdef0123456789abcdef.token", "hunter2-correct-horse", "AKIAIOSFODNN7EXAMPLE"}
	wctx, cancel := context.WithTimeout(as(tokApprover), 20*time.Second)
	defer cancel()
	w, err := ac.Watch(wctx, &shieldv1.WatchApprovalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sc.Evaluate(as(tokAgentA), &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: args},
		Context: &shieldv1.CallContext{SessionId: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	id := r.GetVerdict().GetEscalationId()
	var got []*shieldv1.Approval
	wa, err := w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, wa)
	l, err := ac.ListPending(as(tokApprover), &shieldv1.ListPendingApprovalsRequest{})
	if err != nil || len(l.GetApprovals()) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}
	got = append(got, l.GetApprovals()...)
	g, err := ac.Get(as(tokApprover), &shieldv1.GetApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, g)
	res, err := ac.Resolve(as(tokApprover), &shieldv1.ResolveApprovalRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, res)
	aw, err := ac.AwaitDecision(as(tokAgentA), &shieldv1.AwaitDecisionRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, aw)
	for _, a := range got {
		b, _ := protojson.Marshal(a)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("response holds %q: %s", s, b)
			}
		}
		if !json.Valid([]byte(a.GetArgumentsJson())) || !strings.Contains(a.GetArgumentsJson(), "[REDACTED]") {
			t.Errorf("arguments %q, want redacted JSON", a.GetArgumentsJson())
		}
	}
}
