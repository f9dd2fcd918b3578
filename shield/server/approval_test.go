package server

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

// approvalTestIdentity trusts an "x-test-identity" header: the real server derives identity from
// peer credentials or tokens; this test is about the adapter.
func approvalTestIdentity(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-test-identity"); len(v) == 1 {
		return v[0]
	}
	return ""
}

func approvalAs(who string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "x-test-identity", who)
}

// TestApprovalServiceOverUnixSocket: Watch sees the request and its resolution, AwaitDecision
// returns on deadline and on resolution, Resolve refuses anonymous, self-approval and bad grants.
func TestApprovalServiceOverUnixSocket(t *testing.T) {
	dir := t.TempDir()
	svc, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db"), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	shieldv1.RegisterApprovalServiceServer(gs, NewApprovalService(svc, approvalTestIdentity))
	go gs.Serve(l)
	defer gs.Stop()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := shieldv1.NewApprovalServiceClient(conn)

	wctx, wcancel := context.WithTimeout(approvalAs("uid:0"), 20*time.Second)
	defer wcancel()
	watch, err := c.Watch(wctx, &shieldv1.WatchApprovalsRequest{})
	if err != nil {
		t.Fatal(err)
	}

	call := &shield.Call{Tool: "Bash", Arguments: json.RawMessage(`{"command":"reboot"}`),
		Context: shield.CallContext{SessionID: "s1", AgentID: "a1", Caller: "uid:1000"}}
	in := &shield.Input{Call: call, Action: &normalize.Action{Class: "exec"}, ActionHash: "h"}
	res, err := svc.Tier().Evaluate(context.Background(), in)
	if err != nil || res.EscalationID == "" {
		t.Fatalf("evaluate: %+v %v", res, err)
	}
	id := res.EscalationID

	if a, err := watch.Recv(); err != nil || a.GetId() != id || a.GetState() != "pending" {
		t.Fatalf("watch first: %v %v", a, err)
	}
	if p, err := c.ListPending(approvalAs("uid:0"), &shieldv1.ListPendingApprovalsRequest{}); err != nil || len(p.GetApprovals()) != 1 {
		t.Fatalf("list pending: %v %v", p, err)
	}
	if _, err := c.Get(approvalAs("uid:0"), &shieldv1.GetApprovalRequest{Id: "apr_nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("get unknown: %v", err)
	}

	short, cancel := context.WithTimeout(approvalAs("uid:1000"), 200*time.Millisecond)
	defer cancel()
	if _, err := c.AwaitDecision(short, &shieldv1.AwaitDecisionRequest{Id: id}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("await before a decision: %v, want DeadlineExceeded", err)
	}

	for _, tc := range []struct {
		name string
		ctx  context.Context
		req  *shieldv1.ResolveApprovalRequest
		want codes.Code
	}{
		{"anonymous", context.Background(), &shieldv1.ResolveApprovalRequest{Id: id, Approve: true}, codes.Unauthenticated},
		{"self", approvalAs("uid:1000"), &shieldv1.ResolveApprovalRequest{Id: id, Approve: true}, codes.PermissionDenied},
		{"grant too long", approvalAs("uid:0"), &shieldv1.ResolveApprovalRequest{Id: id, Approve: true, GrantSeconds: 86401}, codes.InvalidArgument},
		{"grant on deny", approvalAs("uid:0"), &shieldv1.ResolveApprovalRequest{Id: id, GrantSeconds: 60}, codes.InvalidArgument},
		{"unknown", approvalAs("uid:0"), &shieldv1.ResolveApprovalRequest{Id: "apr_nope", Approve: true}, codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.Resolve(tc.ctx, tc.req); status.Code(err) != tc.want {
				t.Errorf("resolve: %v, want %s", err, tc.want)
			}
		})
	}

	awaited := make(chan *shieldv1.Approval, 1)
	go func() {
		ctx, cancel := context.WithTimeout(approvalAs("uid:1000"), 20*time.Second)
		defer cancel()
		a, err := c.AwaitDecision(ctx, &shieldv1.AwaitDecisionRequest{Id: id})
		if err != nil {
			t.Errorf("await: %v", err)
		}
		awaited <- a
	}()
	if a, err := c.Resolve(approvalAs("uid:0"), &shieldv1.ResolveApprovalRequest{Id: id, Approve: true, Comment: "ok", GrantSeconds: 600}); err != nil ||
		a.GetState() != "approved" || a.GetResolver() != "uid:0" || a.GetGrantUntil() == nil {
		t.Fatalf("resolve: %v %v", a, err)
	}
	if a := <-awaited; a.GetState() != "approved" {
		t.Errorf("await returned %v", a)
	}
	if a, err := watch.Recv(); err != nil || a.GetId() != id || a.GetState() != "approved" {
		t.Errorf("watch second: %v %v", a, err)
	}
	if _, err := c.Resolve(approvalAs("uid:2"), &shieldv1.ResolveApprovalRequest{Id: id}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("resolving twice: %v", err)
	}
}
