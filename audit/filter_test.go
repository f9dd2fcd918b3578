package audit

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFilter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tier := func(n int) *int { return &n }
	tests := []struct {
		name string
		in   FilterArgs
		want Query
	}{
		{"empty", FilterArgs{}, Query{}},
		{"decision any case", FilterArgs{Decision: "Block"}, Query{Decision: DecisionBlock}},
		{"escalate", FilterArgs{Decision: "escalate"}, Query{Decision: DecisionEscalate}},
		{"tier 0", FilterArgs{Tier: "0"}, Query{Tier: tier(0)}},
		{"tier 3", FilterArgs{Tier: "3"}, Query{Tier: tier(3)}},
		{"tier -1 is any", FilterArgs{Tier: "-1"}, Query{}},
		{"types", FilterArgs{Types: []string{"decision", "shadow_summary"}}, Query{Types: []Type{TypeDecision, TypeShadowSummary}}},
		{"strings pass through", FilterArgs{SessionID: "s", AgentID: "a", Tool: "Bash", ActionClass: "exec", Rule: "cel:x"},
			Query{SessionID: "s", AgentID: "a", Tool: "Bash", ActionClass: "exec", Rule: "cel:x"}},
		{"rfc3339", FilterArgs{Since: "2026-01-02T15:04:05Z", Until: "2026-01-02T16:04:05.5+01:00"},
			Query{Since: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), Until: time.Date(2026, 1, 2, 15, 4, 5, 5e8, time.UTC)}},
		{"duration ago", FilterArgs{Since: "90m", Until: "0s"}, Query{Since: now.Add(-90 * time.Minute), Until: now}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFilter(tc.in, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
				cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Match" }, cmp.Ignore())); diff != "" {
				t.Errorf("ParseFilter (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseFilterRefuses: a value no record can hold is an error naming the field and what is
// accepted, never an empty result.
func TestParseFilterRefuses(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name string
		in   FilterArgs
		want []string // substrings of the error
	}{
		{"unknown decision", FilterArgs{Decision: "maybe"}, []string{`decision "maybe": want one of ALLOW, BLOCK, ESCALATE`}},
		{"verdict word", FilterArgs{Decision: "DENY"}, []string{`decision "DENY"`}},
		{"tier 4", FilterArgs{Tier: "4"}, []string{`tier "4": want 0..3`}},
		{"tier -2", FilterArgs{Tier: "-2"}, []string{`tier "-2"`}},
		{"tier not a number", FilterArgs{Tier: "one"}, []string{`tier "one"`}},
		{"unknown type", FilterArgs{Types: []string{"decisions"}}, []string{`type "decisions": want one of decision, bundle_activated`}},
		{"bad time", FilterArgs{Since: "yesterday"}, []string{`since "yesterday": want an RFC 3339 time`}},
		{"negative duration", FilterArgs{Until: "-1h"}, []string{`until "-1h": want a positive duration`}},
		{"range backwards", FilterArgs{Since: "2026-01-02T00:00:00Z", Until: "2026-01-01T00:00:00Z"}, []string{"want a time at or after since"}},
		{"overlong", FilterArgs{Tool: strings.Repeat("x", maxFilterValue+1)}, []string{"tool", "at most 1024 bytes"}},
		{"every problem reported", FilterArgs{Decision: "maybe", Tier: "9", Types: []string{"x"}, Since: "soon"},
			[]string{"decision", "tier", "type", "since"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, err := ParseFilter(tc.in, now)
			if err == nil {
				t.Fatalf("ParseFilter(%+v) = %+v, want an error", tc.in, q)
			}
			if !errors.Is(err, ErrBadFilter) {
				t.Errorf("error %v is not ErrBadFilter", err)
			}
			var fe *FilterError
			if !errors.As(err, &fe) {
				t.Errorf("error %v holds no *FilterError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestQueryValidate: the check the server applies to typed request fields (gRPC) is the one
// ParseFilter applies to strings.
func TestQueryValidate(t *testing.T) {
	t.Parallel()
	five, zero := 5, 0
	q := Query{Decision: "allow", Tier: &zero, Types: []Type{TypeAgentEvent}}
	if err := q.Validate(); err != nil || q.Decision != DecisionAllow {
		t.Fatalf("Validate: %v, decision %q; want nil, ALLOW", err, q.Decision)
	}
	for _, bad := range []Query{{Decision: "allowed"}, {Tier: &five}, {Types: []Type{"Decision"}}} {
		if err := bad.Validate(); !errors.Is(err, ErrBadFilter) {
			t.Errorf("Validate(%+v) = %v, want ErrBadFilter", bad, err)
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	f.Add("", "", "", "", "")
	f.Add("block", "1", "decision", "1h", "2026-01-02T15:04:05Z")
	f.Add("maybe", "-1", "shadow_summary", "-1h", "x")
	f.Add("ESCALATE", "99999999999999999999", "", "9223372036854775807ns", "2026-13-40T25:61:61Z")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, decision, tier, typ, since, until string) {
		q, err := ParseFilter(FilterArgs{Decision: decision, Tier: tier, Types: []string{typ}, Since: since, Until: until}, now)
		if err != nil {
			if !errors.Is(err, ErrBadFilter) {
				t.Fatalf("error %v is not ErrBadFilter", err)
			}
			return
		}
		// What is accepted is valid and stays so.
		if err := q.Validate(); err != nil {
			t.Fatalf("accepted %+v fails Validate: %v", q, err)
		}
		if q.Tier != nil && (*q.Tier < 0 || *q.Tier > MaxTier) {
			t.Fatalf("tier %d accepted", *q.Tier)
		}
	})
}
