package audit

// Record types written by the shadow evaluator (shield/shadow) for a candidate bundle.
const (
	TypeShadowDecision Type = "shadow_decision"
	TypeShadowSummary  Type = "shadow_summary"
)
