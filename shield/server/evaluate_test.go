package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// evalNormalizer classifies every call as exec.
type evalNormalizer struct{}

func (evalNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	return &normalize.Action{Tool: tool, Class: "exec", Known: true, Args: args, Cwd: cwd}
}

// evalRego is a tier-1 stand-in that escalates every call.
type evalRego struct{}

func (evalRego) Level() int   { return shield.TierRego }
func (evalRego) Name() string { return "rego" }
func (evalRego) Evaluate(context.Context, *shield.Input) (shield.Result, error) {
	return shield.Result{Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "rego:review", Reason: "review"}}}, nil
}

// evalRecorder keeps the decision records.
type evalRecorder struct {
	mu   sync.Mutex
	recs []*shield.DecisionRecord
}

func (r *evalRecorder) RecordDecision(_ context.Context, rec *shield.DecisionRecord) (shield.AuditPosition, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cp := *rec
	v := *rec.Verdict
	cp.Verdict = &v
	r.recs = append(r.recs, &cp)
	return shield.AuditPosition{Seq: uint64(len(r.recs)), Hash: "h"}, nil
}

// serveEvaluate serves a ShieldService (a pipeline whose class default is ALLOW and whose tier 1
// escalates everything) over a real unix socket, with this process's uid mapped to roles, the
// auth interceptors and the server codec as `shield serve` installs them.
func serveEvaluate(t *testing.T, roles ...string) (*grpc.ClientConn, *evalRecorder) {
	t.Helper()
	rec := &evalRecorder{}
	p, err := shield.New(shield.Config{Recorder: rec}, &shield.Policy{Revision: "r1", Digest: "sha256:d",
		Normalizer: evalNormalizer{}, Tiers: []shield.Tier{evalRego{}},
		Defaults: map[string]shield.Decision{"exec": shield.Allow}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuth(AuthConfig{UnixRoles: map[string][]string{strconv.Itoa(os.Getuid()): roles}})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(a.Credentials()),
		grpc.ChainUnaryInterceptor(a.UnaryInterceptor()), grpc.ChainStreamInterceptor(a.StreamInterceptor()))
	svc := NewShieldService(p, nil, "test")
	svc.Identity = Identity
	shieldv1.RegisterShieldServiceServer(srv, svc)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, rec
}

// TestEvaluateMaxTierNeedsAdmin is H1's role rule over a real connection: an agent may not lower
// max_tier (PERMISSION_DENIED, nothing evaluated); an admin may; max_tier 3 lowers nothing.
func TestEvaluateMaxTierNeedsAdmin(t *testing.T) {
	tests := []struct {
		name     string
		role     string
		maxTier  *int32
		wantCode codes.Code
		wantDec  shieldv1.Decision
	}{
		{"agent without max_tier", RoleAgent, nil, codes.OK, shieldv1.Decision_DECISION_ESCALATE},
		{"agent max_tier 0", RoleAgent, proto.Int32(0), codes.PermissionDenied, 0},
		{"agent max_tier 1", RoleAgent, proto.Int32(1), codes.PermissionDenied, 0},
		{"agent max_tier 2", RoleAgent, proto.Int32(2), codes.PermissionDenied, 0},
		{"agent max_tier 3 lowers nothing", RoleAgent, proto.Int32(3), codes.OK, shieldv1.Decision_DECISION_ESCALATE},
		{"agent max_tier out of range", RoleAgent, proto.Int32(-1), codes.InvalidArgument, 0},
		{"admin max_tier 0", RoleAdmin, proto.Int32(0), codes.OK, shieldv1.Decision_DECISION_ALLOW},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, rec := serveEvaluate(t, tc.role)
			c := shieldv1.NewShieldServiceClient(conn)
			req := &shieldv1.EvaluateRequest{
				Call:    &shieldv1.ToolCall{Tool: "Bash", ArgumentsJson: `{"command":"reboot"}`},
				Context: &shieldv1.CallContext{SessionId: "s1"},
				MaxTier: tc.maxTier,
			}
			resp, err := c.Evaluate(context.Background(), req)
			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.wantCode)
			}
			if tc.wantCode == codes.PermissionDenied && !strings.Contains(status.Convert(err).Message(), "only the admin role may lower max_tier") {
				t.Errorf("message %q does not say why", status.Convert(err).Message())
			}
			if err != nil {
				if len(rec.recs) != 0 {
					t.Errorf("refused request was evaluated: %d records", len(rec.recs))
				}
				return
			}
			if got := resp.GetVerdict().GetDecision(); got != tc.wantDec {
				t.Errorf("decision = %v, want %v", got, tc.wantDec)
			}
		})
	}
}
