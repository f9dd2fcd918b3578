package main

import (
	"context"
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

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/server"
)

// TestServeApprovalFlowAndAuth: a runtime authenticated by a bearer token over loopback TCP
// (role agent) gets ESCALATE with an escalation id; it may not read status or resolve approvals;
// an approver on the unix socket (peer credentials) approves; the exact call is then allowed
// once. Anonymous TCP callers are refused.
func TestServeApprovalFlowAndAuth(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	const agentToken = "agent-token-0123456789abcdef"
	os.WriteFile(tokens, []byte("# runtimes\n"+agentToken+" agent runtime-1\n"), 0o600)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	cfg := &Config{Listen: []string{addr}, Auth: AuthConfigForTest(tokens)}
	approver, _, _ := startServe(t, cfg)

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	anon := shieldv1.NewShieldServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agentCtx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+agentToken)
	call := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "frobnicate", ArgumentsJson: `{"level":"max"}`},
		Context: &shieldv1.CallContext{SessionId: "s1"}}

	if _, err := anon.Evaluate(ctx, call); status.Code(err) != codes.Unauthenticated {
		t.Errorf("anonymous Evaluate: %v", err)
	}
	if _, err := anon.Health(ctx, &shieldv1.HealthRequest{}); err != nil {
		t.Errorf("Health must be open: %v", err)
	}
	if _, err := anon.Evaluate(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer wrong-token-000000000"), call); status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := anon.GetStatus(agentCtx, &shieldv1.GetStatusRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("agent reading status: %v", err)
	}
	resp, err := anon.Evaluate(agentCtx, call)
	if err != nil {
		t.Fatal(err)
	}
	v := resp.GetVerdict()
	if v.GetDecision() != shieldv1.Decision_DECISION_ESCALATE || v.GetEscalationId() == "" || v.GetTier() != 3 {
		t.Fatalf("first verdict %v", v)
	}
	id := v.GetEscalationId()
	if _, err := shieldv1.NewApprovalServiceClient(conn).Resolve(agentCtx, &shieldv1.ResolveApprovalRequest{Id: id, Approve: true}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("agent resolving its own request: %v", err)
	}

	// The approver: the unix socket (this process's uid has every role by default).
	_ = approver
	uconn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer uconn.Close()
	ap := shieldv1.NewApprovalServiceClient(uconn)
	pend, err := ap.ListPending(ctx, &shieldv1.ListPendingApprovalsRequest{})
	if err != nil || len(pend.GetApprovals()) != 1 || pend.GetApprovals()[0].GetCaller() != "token:runtime-1" {
		t.Fatalf("pending: %v %v", pend, err)
	}
	awaited := make(chan *shieldv1.Approval, 1)
	go func() {
		a, err := shieldv1.NewApprovalServiceClient(conn).AwaitDecision(agentCtx, &shieldv1.AwaitDecisionRequest{Id: id})
		if err != nil {
			t.Errorf("await: %v", err)
		}
		awaited <- a
	}()
	time.Sleep(100 * time.Millisecond)
	// The CLI lists and approves it over the unix socket.
	if code, out, errs := runCmd(t, "", "approvals", "list", "--state-dir", cfg.StateDir); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("approvals list: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCmd(t, "", "approvals", "approve", id, "--comment", "ok", "--state-dir", cfg.StateDir); code != 0 || !strings.Contains(out, "APPROVED") {
		t.Fatalf("approvals approve: %d %q %q", code, out, errs)
	}
	if a := <-awaited; a.GetState() != "approved" {
		t.Errorf("awaited %v", a)
	}
	resp, err = anon.Evaluate(agentCtx, call)
	if err != nil || resp.GetVerdict().GetDecision() != shieldv1.Decision_DECISION_ALLOW || resp.GetVerdict().GetTier() != 3 {
		t.Fatalf("after approval: %v %v", resp.GetVerdict(), err)
	}
	resp, _ = anon.Evaluate(agentCtx, call)
	if resp.GetVerdict().GetDecision() != shieldv1.Decision_DECISION_ESCALATE || resp.GetVerdict().GetEscalationId() == id {
		t.Errorf("approval reused: %v", resp.GetVerdict())
	}
}

func TestServeRefusesTCPWithoutAuth(t *testing.T) {
	c := &Config{Listen: []string{"127.0.0.1:7999"}}
	if err := c.Validate(); err == nil {
		t.Error("a TCP listener without tokens or --dev was accepted")
	}
	c.Dev = true
	if err := c.Validate(); err != nil {
		t.Errorf("--dev: %v", err)
	}
}

// AuthConfigForTest names a tokens file; unix roles keep their defaults.
func AuthConfigForTest(tokens string) server.AuthConfig { return server.AuthConfig{TokensFile: tokens} }

// TestApprovalsRelativeStateDir: `shield approvals` with a relative --state-dir reaches the
// service (gRPC waited forever on a relative unix path).
func TestApprovalsRelativeStateDir(t *testing.T) {
	cfg := &Config{}
	startServe(t, cfg)
	t.Chdir(filepath.Dir(cfg.StateDir))
	done := make(chan struct{})
	var code int
	var out, errs string
	go func() {
		code, out, errs = runCmd(t, "", "approvals", "list", "--state-dir", filepath.Base(cfg.StateDir))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("approvals list with a relative state dir did not return")
	}
	if code != 0 || !strings.Contains(out, "ID") {
		t.Errorf("approvals list: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
