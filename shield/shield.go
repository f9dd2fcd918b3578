// Package shield is the decision core of the appliance: the tool call and verdict value types, the
// tier interface every tier engine implements, and the Pipeline that normalises a call, consults the
// verdict cache, runs the tiers in order, fails closed, and writes the decision to the audit log
// before it returns.
//
// shield imports no gRPC, CEL or OPA package: the tiers plug in through Tier, the audit log through
// Recorder. It may be imported by the tier engines (policy/celrules, policy/regoeval, shield/judge,
// shield/approval), the gRPC adapters (shield/server), the engine and cmd.
package shield

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield/normalize"
)

// Decision is the outcome of an evaluation. The zero value, DecisionUnspecified, is treated as
// BLOCK by every consumer.
type Decision int

const (
	DecisionUnspecified Decision = iota
	Allow
	Block
	Escalate
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "ALLOW"
	case Block:
		return "BLOCK"
	case Escalate:
		return "ESCALATE"
	default:
		return "UNSPECIFIED"
	}
}

// ParseDecision reads "allow", "block", "escalate" in any case. Anything else is an error.
func ParseDecision(s string) (Decision, bool) {
	switch s {
	case "allow", "ALLOW", "Allow":
		return Allow, true
	case "block", "BLOCK", "Block", "deny", "DENY":
		return Block, true
	case "escalate", "ESCALATE", "Escalate":
		return Escalate, true
	}
	return DecisionUnspecified, false
}

// MarshalText writes the decision as its upper-case name.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Tier levels.
const (
	TierCEL   = 0
	TierRego  = 1
	TierJudge = 2
	TierHuman = 3
	// TierPipeline marks verdicts the pipeline itself decided (bad input, errors, class defaults).
	TierPipeline = -1
)

// Call is one proposed tool call with the context the caller gave.
type Call struct {
	ID        string
	Tool      string
	Arguments json.RawMessage // a JSON object, as received
	Context   CallContext
}

// CallContext is what the caller says about where the call comes from.
type CallContext struct {
	SessionID string
	AgentID   string
	Runtime   string
	Cwd       string
	Labels    map[string]string
	// Caller is the authenticated identity of the API client (filled by the server, not the caller).
	Caller string
}

// Input is what every tier evaluates: the normalised action and its context.
type Input struct {
	Call   *Call
	Action *normalize.Action
	// ActionHash is the hex sha256 of the canonical call (tool + canonical arguments).
	ActionHash string
	// Prior holds the verdict of the tiers before this one (for tiers 2 and 3).
	Prior *Verdict
	// DryRun asks escalation tiers not to create approval requests.
	DryRun bool
}

// Result is what one tier says about a call. A Result with no findings and no allows means the
// tier has no opinion; the pipeline then applies the bundle's default for the action class.
type Result struct {
	Findings []Finding
	// EscalationID is set by tier 3 when it created an approval request.
	EscalationID string
	// Judge is the provider/model of the judge that answered (tier 2).
	Judge string
}

// Finding is one rule (or judge, or approver) that spoke.
type Finding struct {
	Decision Decision
	Rule     string // rule id, e.g. "cel:destructive.rm-root" or "rego:exfil.email-external"
	Reason   string // safe to show the agent
	Severity string // "low" | "medium" | "high" | "critical", optional
	// Confidence in [0,1]; 0 means deterministic (1.0 is reported).
	Confidence float64
}

// Tier is one decision tier. Implementations are prepared once per policy bundle (compile, type
// check, prepare queries) and then evaluated many times concurrently; Evaluate must honour ctx
// (deadline and cancellation) and must be safe for concurrent use. An error is never an allow: the
// pipeline turns it into BLOCK.
type Tier interface {
	// Level is the tier number: 0 (CEL), 1 (Rego), 2 (judge), 3 (human).
	Level() int
	// Name is a short label used in metrics and reasons, e.g. "cel".
	Name() string
	Evaluate(ctx context.Context, in *Input) (Result, error)
}

// Verdict is the pipeline's answer for one call.
type Verdict struct {
	Decision       Decision
	Tier           int      // the tier that decided, or TierPipeline
	Rules          []string // ids of the rules that fired (those that decided first)
	Reason         string   // safe to show the agent
	Confidence     float64
	ActionHash     string
	ActionClass    string
	BundleRevision string
	BundleDigest   string
	DecisionID     string
	EvaluatedAt    time.Time
	Cached         bool
	EscalationID   string // set when tier 3 created an approval request
	Judge          string // provider/model of the judge when tier 2 spoke
	Audit          AuditPosition

	internalErr string              // error detail for the audit record, never shown to the agent
	canonArgs   audit.CanonicalArgs // the arguments' RFC 8785 form, for the audit record
}

// AuditPosition locates the audit record of a decision.
type AuditPosition struct {
	Seq  uint64
	Hash string // hex record hash
}

// DecisionRecord is what the pipeline hands to the audit log for one decision.
type DecisionRecord struct {
	Call    *Call
	Action  *normalize.Action // nil when the call was rejected before normalisation
	Verdict *Verdict
	// Error is the internal error text when the verdict came from a failure (never shown to agents).
	Error string
	// CanonicalArguments is the RFC 8785 form of Call.Arguments, written by the audit package
	// while the pipeline hashed the call (zero otherwise): a recorder hands it to the log, which
	// then does not canonicalise the arguments a second time.
	CanonicalArguments audit.CanonicalArgs
}

// Recorder persists decision records. RecordDecision returns only once the record is durable
// (fsynced); an error makes the pipeline answer BLOCK. Implementations must be safe for
// concurrent use.
type Recorder interface {
	RecordDecision(ctx context.Context, rec *DecisionRecord) (AuditPosition, error)
}
