package audit

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the one parser and validator of the filters a user gives to select records:
// the shield audit command's flags, the AuditService's request fields and the HTTP API's query
// parameters all go through ParseFilter or Query.Validate, so that each accepts the same names
// and refuses the same mistakes. A filter value no record can hold (a misspelt decision, a tier
// that does not exist) would silently select nothing; it is an error instead.

// Decision names, as TypeDecision records hold them.
const (
	DecisionAllow    = "ALLOW"
	DecisionBlock    = "BLOCK"
	DecisionEscalate = "ESCALATE"
)

// Decisions lists the decision names a filter accepts (case-insensitively).
var Decisions = []string{DecisionAllow, DecisionBlock, DecisionEscalate}

// MaxTier is the highest deciding tier (3: human approval).
const MaxTier = 3

// Types lists the record types Shield writes, the ones a filter accepts. The list is API: a type
// is never removed, only added.
var Types = []Type{TypeDecision, TypeBundleActivated, TypeSandboxCanaryResult, TypeApprovalRequested,
	TypeApprovalResolved, TypeServiceStart, TypeServiceStop, TypeCheckpoint, TypeRecovered, TypeAnchored,
	TypeAgentEvent, TypeShadowDecision, TypeShadowSummary}

// ErrBadFilter is wrapped by every error of ParseFilter and Query.Validate: the caller's mistake
// (a usage error, INVALID_ARGUMENT, HTTP 400), never a failure of the log.
var ErrBadFilter = errors.New("bad audit filter")

// FilterError is one refused filter value. Its message names the field, the value and what is
// accepted.
type FilterError struct {
	Field string // the filter's name: decision, tier, type, since, until, session_id …
	Value string
	Want  string // what is accepted, e.g. "one of ALLOW, BLOCK, ESCALATE"
}

func (e *FilterError) Error() string {
	return fmt.Sprintf("%s %q: want %s", e.Field, e.Value, e.Want)
}

// Unwrap makes every FilterError an ErrBadFilter.
func (e *FilterError) Unwrap() error { return ErrBadFilter }

// FilterArgs are a query's filters as a user wrote them (flags, query parameters). Empty fields do
// not filter.
type FilterArgs struct {
	// Since and Until are RFC 3339 times or, relative to the now given to ParseFilter, a positive
	// Go duration ago ("1h", "90m").
	Since, Until                                string
	SessionID, AgentID, Tool, ActionClass, Rule string
	// Decision is one of Decisions, in any case.
	Decision string
	// Tier is 0..MaxTier; "" or "-1" is any tier.
	Tier string
	// Types are record types, each one of Types.
	Types []string
}

// maxFilterValue bounds one string filter value in bytes.
const maxFilterValue = 1024

// ParseFilter parses and validates a, with relative times taken before now, and returns the
// query's filter fields set (paging, Match, Newest and Limit are the caller's). Every refused
// value is reported, each as a *FilterError.
func ParseFilter(a FilterArgs, now time.Time) (Query, error) {
	q := Query{SessionID: a.SessionID, AgentID: a.AgentID, Tool: a.Tool, ActionClass: a.ActionClass,
		Rule: a.Rule, Decision: a.Decision}
	var errs []error
	var err error
	if q.Since, err = ParseTime("since", a.Since, now); err != nil {
		errs = append(errs, err)
	}
	if q.Until, err = ParseTime("until", a.Until, now); err != nil {
		errs = append(errs, err)
	}
	if a.Tier != "" && a.Tier != "-1" {
		n, err := strconv.Atoi(a.Tier)
		if err != nil {
			errs = append(errs, &FilterError{Field: "tier", Value: a.Tier, Want: tierWant})
		} else {
			q.Tier = &n
		}
	}
	for _, t := range a.Types {
		q.Types = append(q.Types, Type(t))
	}
	if err := q.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Query{}, err
	}
	return q, nil
}

const tierWant = "0..3 (tier 0 CEL rules, 1 Rego, 2 judge, 3 human approval)"

// ParseTime reads a filter time: "" (no bound), an RFC 3339 time, or a positive duration before
// now. field names the filter in the error.
func ParseTime(field, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, &FilterError{Field: field, Value: s, Want: "a positive duration ago (1h) or an RFC 3339 time"}
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &FilterError{Field: field, Value: s, Want: "an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (1h)"}
	}
	return t, nil
}

// Validate checks q's filter fields and normalises its decision to upper case: an unknown
// decision, a tier outside 0..MaxTier, a type Shield does not write, a time range that ends
// before it starts or an overlong value is an error (all of them are reported). Paging, Match,
// Newest and Limit are not checked here (Log.Query bounds Limit).
func (q *Query) Validate() error {
	var errs []error
	if q.Decision != "" {
		d := strings.ToUpper(q.Decision)
		if !slices.Contains(Decisions, d) {
			errs = append(errs, &FilterError{Field: "decision", Value: q.Decision, Want: "one of " + strings.Join(Decisions, ", ")})
		} else {
			q.Decision = d
		}
	}
	if q.Tier != nil && (*q.Tier < 0 || *q.Tier > MaxTier) {
		errs = append(errs, &FilterError{Field: "tier", Value: strconv.Itoa(*q.Tier), Want: tierWant})
	}
	for _, t := range q.Types {
		if !slices.Contains(Types, t) {
			errs = append(errs, &FilterError{Field: "type", Value: string(t), Want: "one of " + joinTypes(Types)})
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
		errs = append(errs, &FilterError{Field: "until", Value: q.Until.UTC().Format(time.RFC3339Nano),
			Want: "a time at or after since " + q.Since.UTC().Format(time.RFC3339Nano)})
	}
	for _, f := range []struct{ name, v string }{{"session_id", q.SessionID}, {"agent_id", q.AgentID},
		{"tool", q.Tool}, {"action_class", q.ActionClass}, {"rule", q.Rule}} {
		if len(f.v) > maxFilterValue {
			errs = append(errs, &FilterError{Field: f.name, Value: f.v[:32] + "…", Want: fmt.Sprintf("at most %d bytes", maxFilterValue)})
		}
	}
	return errors.Join(errs...)
}

func joinTypes(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
