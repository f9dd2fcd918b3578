package appliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
)

// auditRecorder writes the pipeline's decisions to the audit log: the adapter between
// shield.Recorder and audit.Log (audit does not import shield).
type auditRecorder struct {
	l   *audit.Log
	log *slog.Logger // nil: failures are not logged here

	mu         sync.Mutex
	lastLog    time.Time
	suppressed int
}

var _ shield.Recorder = (*auditRecorder)(nil)

// NewAuditRecorder returns the shield.Recorder that appends one TypeDecision record per
// decision and returns once it is durable; failures are logged on log (nil: not logged here).
func NewAuditRecorder(l *audit.Log, log *slog.Logger) shield.Recorder {
	return &auditRecorder{l: l, log: log}
}

func (r *auditRecorder) RecordDecision(ctx context.Context, rec *shield.DecisionRecord) (shield.AuditPosition, error) {
	if rec == nil || rec.Verdict == nil {
		return shield.AuditPosition{}, errors.New("record decision: no verdict")
	}
	pos, err := r.l.Append(ctx, audit.TypeDecision, decisionPayload(rec))
	if err != nil {
		r.logFailure(rec, err)
		return shield.AuditPosition{}, fmt.Errorf("record decision: %w", err)
	}
	return shield.AuditPosition{Seq: pos.Seq, Hash: pos.Hash}, nil
}

// decisionPayload maps a decision record onto the audit payload. Arguments are passed as
// received; the log redacts them and hashes the original.
func decisionPayload(rec *shield.DecisionRecord) *audit.Decision {
	v := rec.Verdict
	d := &audit.Decision{
		ActionHash:     v.ActionHash,
		ActionClass:    v.ActionClass,
		Decision:       v.Decision.String(),
		Tier:           v.Tier,
		Rules:          v.Rules,
		Reason:         v.Reason,
		Confidence:     v.Confidence,
		BundleDigest:   v.BundleDigest,
		BundleRevision: v.BundleRevision,
		DecisionID:     v.DecisionID,
		EscalationID:   v.EscalationID,
		Judge:          v.Judge,
		Cached:         v.Cached,
		Error:          rec.Error,
	}
	if c := rec.Call; c != nil {
		d.CallID, d.Tool = c.ID, c.Tool
		if len(c.Arguments) > 0 {
			d.Arguments = c.Arguments
			// Canonicalised once (by the audit package) while the pipeline hashed the call.
			d.CanonicalArguments = rec.CanonicalArguments
		}
		d.SessionID, d.AgentID, d.Runtime, d.Caller = c.Context.SessionID, c.Context.AgentID, c.Context.Runtime, c.Context.Caller
	}
	if d.ActionClass == "" && rec.Action != nil {
		d.ActionClass = rec.Action.Class
	}
	return d
}

// logFailure logs a decision that could not be recorded (the pipeline blocks it). A failed log
// logs its own failure and refusals; the rest (a deadline while waiting for the fsync, an
// unrecordable payload) is logged here, at most once every 10 s with a count of the others.
func (r *auditRecorder) logFailure(rec *shield.DecisionRecord, err error) {
	if r.log == nil || errors.Is(err, audit.ErrUnhealthy) {
		return
	}
	r.mu.Lock()
	now := time.Now()
	if !r.lastLog.IsZero() && now.Sub(r.lastLog) < 10*time.Second {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	n := r.suppressed
	r.lastLog, r.suppressed = now, 0
	r.mu.Unlock()
	var id string
	if rec.Verdict != nil {
		id = rec.Verdict.DecisionID
	}
	r.log.Error("audit record failed: the decision is BLOCKed", "decision_id", id, "error", err.Error(), "suppressed_since_last_line", n)
}
