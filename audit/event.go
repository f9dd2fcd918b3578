package audit

// This file holds the payloads of the lifecycle records Shield writes, as types, so that a
// misspelt member cannot compile. Their JSON member names are API, like the record types: the
// canonical (RFC 8785) form of each struct is byte-identical to the map literals that wrote the
// records before (testdata/events.jsonl holds such records; TestEventPayloadsByteIdentical reads
// them).

// Record types written by the shadow evaluator (shield/shadow) for a candidate bundle.
const (
	TypeShadowDecision Type = "shadow_decision"
	TypeShadowSummary  Type = "shadow_summary"
)

// ServiceStart is the payload of a TypeServiceStart record.
type ServiceStart struct {
	Version        string         `json:"version"`
	PID            int            `json:"pid"`
	BundleRevision string         `json:"bundle_revision"`
	BundleDigest   string         `json:"bundle_digest"`
	Rules          map[string]int `json:"rules"` // rule counts per tier name
}

// ServiceStop is the payload of a TypeServiceStop record.
type ServiceStop struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
}

// BundleActivated is the payload of a TypeBundleActivated record (a reload that passed).
type BundleActivated struct {
	BundleRevision string         `json:"bundle_revision"`
	BundleDigest   string         `json:"bundle_digest"`
	Rules          map[string]int `json:"rules"`
}

// AgentEvent is the payload of a TypeAgentEvent record: an agent's or engine's lifecycle event,
// named by the package that owns it (engine.Event), with its detail.
type AgentEvent struct {
	Event  string `json:"event"`
	Detail any    `json:"detail"`
}

// Anchored is the payload of a TypeAnchored record: the checkpoint of Size records was anchored
// in a transparency log (audit/rekor), at LogIndex, through its API version ("v1", "v2").
type Anchored struct {
	API      string `json:"api"`
	Size     uint64 `json:"size"`
	LogIndex int64  `json:"log_index"`
}
