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
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
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
	srv := grpc.NewServer(grpc.Creds(a.Credentials()), grpc.ForceServerCodecV2(Codec()),
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

// rawRequest is an EvaluateRequest already on the wire: a client that does not validate UTF-8.
type rawRequest []byte

// rawCodec sends rawRequest as it is and decodes responses with proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(rawRequest))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

// wireRequest encodes an EvaluateRequest by hand (field numbers of shield.proto), with no UTF-8
// check.
func wireRequest(callID, tool, args, session, cwd, labelKey, labelValue string) rawRequest {
	str := func(b []byte, num protowire.Number, s string) []byte {
		if s == "" {
			return b
		}
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	msg := func(b []byte, num protowire.Number, m []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, m)
	}
	call := str(str(str(nil, 1, callID), 2, tool), 3, args)
	cc := str(str(nil, 1, session), 4, cwd)
	if labelKey != "" {
		cc = msg(cc, 5, str(str(nil, 1, labelKey), 2, labelValue))
	}
	return msg(msg(nil, 1, call), 2, cc)
}

// TestEvaluateInvalidUTF8 is the README's promise over a real connection: invalid UTF-8 in any
// string field of a request is INVALID_ARGUMENT naming the field, and a BLOCK in the trail (grpc
// itself answered INTERNAL before the handler, with nothing audited).
func TestEvaluateInvalidUTF8(t *testing.T) {
	const bad = "ls\xff\xfe"
	tests := []struct {
		name string
		req  rawRequest
		want string
	}{
		{"tool", wireRequest("c1", "Ba\xffsh", `{"command":"ls"}`, "s1", "/w", "", ""), "tool name is not valid UTF-8"},
		{"call_id", wireRequest("c\xff", "Bash", `{"command":"ls"}`, "s1", "/w", "", ""), "call_id is not valid UTF-8"},
		{"arguments_json", wireRequest("c1", "Bash", `{"command":"`+bad+`"}`, "s1", "/w", "", ""), "invalid UTF-8 at byte offset"},
		{"session_id", wireRequest("c1", "Bash", `{"command":"ls"}`, "s\xc3", "/w", "", ""), "context.session_id is not valid UTF-8"},
		{"cwd", wireRequest("c1", "Bash", `{"command":"ls"}`, "s1", "/w\xff", "", ""), "context.cwd is not valid UTF-8"},
		{"label key", wireRequest("c1", "Bash", `{"command":"ls"}`, "s1", "/w", "k\xff", "v"), "label"},
		{"label value", wireRequest("c1", "Bash", `{"command":"ls"}`, "s1", "/w", "k", "v\xff"), "label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, rec := serveEvaluate(t, RoleAgent)
			var resp shieldv1.EvaluateResponse
			err := conn.Invoke(context.Background(), "/shield.v1.ShieldService/Evaluate", tc.req, &resp, grpc.ForceCodecV2(rawCodec{}))
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), tc.want) || !strings.Contains(st.Message(), "BLOCK") {
				t.Fatalf("status = %v %q, want INVALID_ARGUMENT mentioning %q and the BLOCK", st.Code(), st.Message(), tc.want)
			}
			if len(rec.recs) != 1 || rec.recs[0].Verdict.Decision != shield.Block || rec.recs[0].Error == "" {
				t.Fatalf("audit records = %d, want one BLOCK with its error", len(rec.recs))
			}
			if id := rec.recs[0].Verdict.DecisionID; !strings.Contains(st.Message(), id) {
				t.Errorf("message %q does not name the audited decision %s", st.Message(), id)
			}
		})
	}
	// A valid request still decodes strictly and is evaluated; a malformed one is not.
	conn, rec := serveEvaluate(t, RoleAgent)
	var resp shieldv1.EvaluateResponse
	if err := conn.Invoke(context.Background(), "/shield.v1.ShieldService/Evaluate",
		wireRequest("c1", "Bash", `{"command":"ls"}`, "s1", "/w", "k", "v"), &resp, grpc.ForceCodecV2(rawCodec{})); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	if resp.GetVerdict().GetDecision() != shieldv1.Decision_DECISION_ESCALATE {
		t.Errorf("valid request: %v", resp.GetVerdict().GetDecision())
	}
	trunc := wireRequest("c1", "Ba\xffsh", `{"command":"ls"}`, "s1", "/w", "", "")
	err := conn.Invoke(context.Background(), "/shield.v1.ShieldService/Evaluate", trunc[:len(trunc)-3], &resp, grpc.ForceCodecV2(rawCodec{}))
	if err == nil || len(rec.recs) != 1 {
		t.Errorf("truncated request: %v, %d records (want an error and no new record)", err, len(rec.recs))
	}
}

// TestLenientDescriptor: the proto2 twin of EvaluateRequest builds and has the same fields.
func TestLenientDescriptor(t *testing.T) {
	md := (&shieldv1.EvaluateRequest{}).ProtoReflect().Descriptor()
	twin, err := lenientDescriptor(md)
	if err != nil {
		t.Fatal(err)
	}
	if twin.Fields().Len() != md.Fields().Len() {
		t.Fatalf("twin has %d fields, want %d", twin.Fields().Len(), md.Fields().Len())
	}
	// Round trip of every field through the lenient path.
	in := &shieldv1.EvaluateRequest{
		Call:    &shieldv1.ToolCall{CallId: "c", Tool: "t", ArgumentsJson: "{}"},
		Context: &shieldv1.CallContext{SessionId: "s", AgentId: "a", Runtime: "r", Cwd: "/", Labels: map[string]string{"k": "v"}},
		MaxTier: proto.Int32(0), DryRun: true,
	}
	b, _ := proto.Marshal(in)
	out := &shieldv1.EvaluateRequest{}
	if err := unmarshalLenient(b, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Errorf("lenient round trip:\n got %v\nwant %v", out, in)
	}
}

// FuzzCodec: the server codec never panics on an EvaluateRequest; where the strict decoder
// accepts the bytes, the codec gives the same message; where it accepts what the strict one
// refused, the fault was UTF-8 only (the message re-encodes leniently to the same fields).
func FuzzCodec(f *testing.F) {
	f.Add([]byte(wireRequest("c1", "Bash", `{"command":"ls"}`, "s1", "/w", "k", "v")))
	f.Add([]byte(wireRequest("c\xff", "Ba\xffsh", `{"command":"l\xfes"}`, "s\xc3", "/w\xff", "k\xff", "v\xff")))
	f.Add([]byte{0x0a, 0x05, 0x12, 0x03, 'a', 0xff})
	f.Add([]byte{0x18, 0x80, 0x80, 0x80, 0x80, 0x10})
	c := Codec()
	f.Fuzz(func(t *testing.T, b []byte) {
		strict := &shieldv1.EvaluateRequest{}
		strictErr := proto.Unmarshal(b, strict)
		got := &shieldv1.EvaluateRequest{}
		err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
		if strictErr == nil {
			if err != nil || !proto.Equal(strict, got) {
				t.Fatalf("strict decode succeeded but the codec gave %v / %v", err, got)
			}
			return
		}
		if err != nil {
			return
		}
		re, merr := proto.MarshalOptions{}.Marshal(got)
		if merr == nil {
			t.Fatalf("the codec accepted bytes the strict decoder refused (%v), yet the result is valid UTF-8: %x", strictErr, re)
		}
	})
}
