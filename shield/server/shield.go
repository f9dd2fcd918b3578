// Package server holds the gRPC adapters of the appliance: ShieldService (and, beside it, the
// audit and approval services). Generated proto types stop here: adapters convert them to the
// domain types of package shield and back, and map errors to status codes in one function each.
//
// Only cmd/shield and the engine import server.
package server

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
)

// StatusSource reports what the service knows beyond the pipeline (reloads, health). Optional
// parts may return zero values.
type StatusSource interface {
	// Problems lists why the service cannot decide right now (empty when healthy). Health calls
	// it on every probe, under any load and exempt from every limit: it must not block or take a
	// lock that evaluation holds (read atomically updated state).
	Problems() []string
	// Reloads returns reload counts and the last reload error.
	Reloads() (ok, failed int64, lastErr string)
}

// ShieldService implements shieldv1.ShieldServiceServer on a pipeline.
type ShieldService struct {
	shieldv1.UnimplementedShieldServiceServer
	pipeline *shield.Pipeline
	source   StatusSource
	version  string
	started  time.Time
	// Identity extracts the authenticated caller from a request context (nil: none).
	Identity func(ctx context.Context) string
}

var _ shieldv1.ShieldServiceServer = (*ShieldService)(nil)

// NewShieldService returns the ShieldService adapter. source may be nil.
func NewShieldService(p *shield.Pipeline, source StatusSource, version string) *ShieldService {
	return &ShieldService{pipeline: p, source: source, version: version, started: time.Now()}
}

// Evaluate decides one tool call.
func (s *ShieldService) Evaluate(ctx context.Context, req *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	call := req.GetCall()
	if call == nil {
		return nil, status.Error(codes.InvalidArgument, "call is required: set call.tool and call.arguments_json")
	}
	c := &shield.Call{
		ID:        call.GetCallId(),
		Tool:      call.GetTool(),
		Arguments: []byte(call.GetArgumentsJson()),
	}
	if cc := req.GetContext(); cc != nil {
		c.Context = shield.CallContext{
			SessionID: cc.GetSessionId(), AgentID: cc.GetAgentId(), Runtime: cc.GetRuntime(),
			Cwd: cc.GetCwd(), Labels: cc.GetLabels(),
		}
	}
	if s.Identity != nil {
		c.Context.Caller = s.Identity(ctx)
	}
	var opt shield.EvalOptions
	if req.MaxTier != nil {
		mt := int(req.GetMaxTier())
		if mt < 0 || mt > shield.TierHuman {
			return nil, status.Errorf(codes.InvalidArgument, "max_tier %d is out of range: use 0..3 or leave it unset", mt)
		}
		// A lower max_tier skips tiers (a partial evaluation): policy testing, for admins only.
		// max_tier 3 skips nothing and is the same as leaving it unset.
		if mt < shield.TierHuman {
			if !hasRole(ctx, RoleAdmin) {
				return nil, status.Errorf(codes.PermissionDenied,
					"max_tier %d would skip decision tiers; only the admin role may lower max_tier: leave it unset", mt)
			}
			opt.MaxTier = &mt
		}
	}
	opt.DryRun = req.GetDryRun()
	v, err := s.pipeline.Evaluate(ctx, c, opt)
	if err != nil {
		return nil, evaluateError(err, &v)
	}
	return &shieldv1.EvaluateResponse{Verdict: VerdictToProto(&v)}, nil
}

// evaluateError maps a pipeline error to a status. Invalid calls are INVALID_ARGUMENT with the
// problem and the decision id (the BLOCK was audited under it); nothing else leaks details.
func evaluateError(err error, v *shield.Verdict) error {
	st := status.Convert(Status(err))
	return status.Errorf(st.Code(), "%s (decision %s: BLOCK)", st.Message(), v.DecisionID)
}

// VerdictToProto converts a domain verdict to its wire form.
func VerdictToProto(v *shield.Verdict) *shieldv1.Verdict {
	return &shieldv1.Verdict{
		Decision:        DecisionToProto(v.Decision),
		Tier:            int32(v.Tier),
		Rules:           v.Rules,
		Reason:          v.Reason,
		Confidence:      v.Confidence,
		ActionHash:      v.ActionHash,
		ActionClass:     v.ActionClass,
		BundleRevision:  v.BundleRevision,
		BundleDigest:    v.BundleDigest,
		DecisionId:      v.DecisionID,
		EvaluatedAt:     timestamppb.New(v.EvaluatedAt),
		AuditSeq:        v.Audit.Seq,
		AuditRecordHash: v.Audit.Hash,
		Cached:          v.Cached,
		EscalationId:    v.EscalationID,
		Judge:           v.Judge,
	}
}

// DecisionToProto maps a decision; anything unknown becomes BLOCK, never UNSPECIFIED.
func DecisionToProto(d shield.Decision) shieldv1.Decision {
	switch d {
	case shield.Allow:
		return shieldv1.Decision_DECISION_ALLOW
	case shield.Escalate:
		return shieldv1.Decision_DECISION_ESCALATE
	default:
		return shieldv1.Decision_DECISION_BLOCK
	}
}

// Health reports whether the service can decide. It is never shed (see Shedder) and reads only
// the status source's atomically kept state, so it answers while evaluation is saturated.
func (s *ShieldService) Health(ctx context.Context, _ *shieldv1.HealthRequest) (*shieldv1.HealthResponse, error) {
	resp := &shieldv1.HealthResponse{Status: shieldv1.HealthResponse_SERVING}
	if s.source != nil {
		if p := s.source.Problems(); len(p) > 0 {
			resp.Status = shieldv1.HealthResponse_NOT_SERVING
			resp.Problems = p
		}
	}
	return resp, nil
}

// GetStatus reports the active bundle and counters.
func (s *ShieldService) GetStatus(ctx context.Context, _ *shieldv1.GetStatusRequest) (*shieldv1.GetStatusResponse, error) {
	pol := s.pipeline.Policy()
	st := s.pipeline.Stats()
	resp := &shieldv1.GetStatusResponse{
		Version:        s.version,
		BundleRevision: pol.Revision,
		BundleDigest:   pol.Digest,
		BundleLoadedAt: timestamppb.New(pol.LoadedAt),
		RulesPerTier:   map[string]int64{},
		Cache: &shieldv1.CacheStats{
			Size: int64(st.CacheSize), Capacity: int64(st.CacheCapacity), Hits: st.CacheHits, Misses: st.CacheMisses,
		},
		Decisions:     map[string]int64{"ALLOW": st.Allow, "BLOCK": st.Block, "ESCALATE": st.Escalate},
		UptimeSeconds: int64(time.Since(s.started).Seconds()),
	}
	for k, n := range pol.RuleCounts {
		resp.RulesPerTier[k] = int64(n)
	}
	if s.source != nil {
		resp.Reloads, resp.ReloadFailures, resp.LastReloadError = s.source.Reloads()
	}
	return resp, nil
}

// String helps logs.
func (s *ShieldService) String() string { return fmt.Sprintf("ShieldService(%s)", s.version) }
