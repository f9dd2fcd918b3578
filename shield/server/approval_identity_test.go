package server

import (
	"context"
	"encoding/json"
	"fmt"
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
	"google.golang.org/protobuf/proto"

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

// TestApprovalListPagesBounded: five requests with 1 MB arguments and large labels list in
// pages bounded in count and bytes, with argument previews; Get has the whole arguments; bad
// paging parameters are INVALID_ARGUMENT.
func TestApprovalListPagesBounded(t *testing.T) {
	_, ac, svc := approvalServer(t, approval.Config{})
	big := strings.Repeat("y", 1000_000)
	labels := map[string]string{}
	for i := range 64 {
		labels[fmt.Sprintf("l%02d", i)] = strings.Repeat("z", 4000)
	}
	var ids []string
	for i := range 5 {
		args, _ := json.Marshal(map[string]any{"command": "echo " + big, "n": i})
		res, err := svc.Tier().Evaluate(context.Background(), &shield.Input{Call: &shield.Call{Tool: "Bash", Arguments: args,
			Context: shield.CallContext{SessionID: "s", Caller: "token:agent-a", Labels: labels}}, Action: &normalize.Action{Class: "exec"},
			ActionHash: fmt.Sprintf("h%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.EscalationID)
	}
	var got []string
	token, pages := "", 0
	for {
		r, err := ac.ListPending(as(tokApprover), &shieldv1.ListPendingApprovalsRequest{PageSize: 500, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if n := proto.Size(r); n > maxPageBytes+64<<10 {
			t.Errorf("page %d is %d bytes", pages, n)
		}
		for _, a := range r.GetApprovals() {
			got = append(got, a.GetId())
			if !a.GetArgumentsTruncated() || len(a.GetArgumentsJson()) > previewBytes+100 || a.GetArgumentsBytes() < 1000_000 ||
				!strings.Contains(a.GetArgumentsJson(), "[truncated:") {
				t.Errorf("list view of %s: truncated %v, %d bytes of %d", a.GetId(), a.GetArgumentsTruncated(), len(a.GetArgumentsJson()), a.GetArgumentsBytes())
			}
		}
		if token = r.GetNextPageToken(); token == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) || pages < 2 {
		t.Errorf("listed %v in %d pages, want %v in more than one (byte bound)", got, pages, ids)
	}
	g, err := ac.Get(as(tokApprover), &shieldv1.GetApprovalRequest{Id: ids[4]})
	if err != nil || g.GetArgumentsTruncated() || !strings.Contains(g.GetArgumentsJson(), big) {
		t.Errorf("Get: truncated %v, %d bytes, %v", g.GetArgumentsTruncated(), len(g.GetArgumentsJson()), err)
	}
	// Resolve and AwaitDecision carry previews too.
	r, err := ac.Resolve(as(tokApprover), &shieldv1.ResolveApprovalRequest{Id: ids[0]})
	if err != nil || !r.GetArgumentsTruncated() || len(r.GetArgumentsJson()) > previewBytes+100 {
		t.Errorf("Resolve: %d bytes, %v", len(r.GetArgumentsJson()), err)
	}
	aw, err := ac.AwaitDecision(as(tokAgentA), &shieldv1.AwaitDecisionRequest{Id: ids[0]})
	if err != nil || aw.GetState() != "denied" || !aw.GetArgumentsTruncated() || len(aw.GetArgumentsJson()) > previewBytes+100 {
		t.Errorf("AwaitDecision: %d bytes, %v", len(aw.GetArgumentsJson()), err)
	}
	for _, req := range []*shieldv1.ListPendingApprovalsRequest{{PageSize: 501}, {PageSize: -1}, {PageToken: "not-a-token"}} {
		if _, err := ac.ListPending(as(tokApprover), req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%v: %v, want InvalidArgument", req, err)
		}
	}
}
