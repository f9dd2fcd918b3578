package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
)

// cacheRegoTier is a tier-1 stand-in: it escalates "reboot" and has no opinion on anything
// else (the class default, ALLOW, then applies).
type cacheRegoTier struct{}

func (cacheRegoTier) Level() int   { return shield.TierRego }
func (cacheRegoTier) Name() string { return "rego" }
func (cacheRegoTier) Evaluate(_ context.Context, in *shield.Input) (shield.Result, error) {
	if string(in.Call.Arguments) == `{"command":"reboot"}` {
		return shield.Result{Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "rego:reboot", Reason: "reboots the host"}}}, nil
	}
	return shield.Result{}, nil
}

// TestApprovalStateNotAnsweredFromCache replays H1 against the real tier and the real pipeline
// with its default cache: a call escalates (request pending, then denied, then timed out), the
// cache is flushed with 10 500 other calls, the agent sends the call with max_tier 0 (class
// default ALLOW), then in full. The full evaluation must answer from the approval's state.
func TestApprovalStateNotAnsweredFromCache(t *testing.T) {
	tests := []struct {
		name    string
		resolve func(t *testing.T, s *Service, id string, set func(time.Time))
		want    shield.Decision
	}{
		{"pending", func(*testing.T, *Service, string, func(time.Time)) {}, shield.Escalate},
		{"denied", func(t *testing.T, s *Service, id string, _ func(time.Time)) {
			if _, err := s.Resolve(context.Background(), id, false, "no", "uid:0"); err != nil {
				t.Fatal(err)
			}
		}, shield.Block},
		{"expired", func(_ *testing.T, _ *Service, _ string, set func(time.Time)) {
			set(time.Now().Add(time.Hour))
		}, shield.Block},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, Config{Timeout: time.Minute})
			var mu sync.Mutex
			now := time.Now()
			s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			set := func(tm time.Time) { mu.Lock(); now = tm; mu.Unlock() }
			p, err := shield.New(shield.Config{Escalation: []shield.Tier{s.Tier()}}, &shield.Policy{Revision: "r1", Digest: "sha256:d",
				Normalizer: approvalExecNormalizer{}, Tiers: []shield.Tier{cacheRegoTier{}},
				Defaults: map[string]shield.Decision{"exec": shield.Allow}})
			if err != nil {
				t.Fatal(err)
			}
			ev := func(cmd string, opt shield.EvalOptions) shield.Verdict {
				t.Helper()
				args, _ := json.Marshal(map[string]string{"command": cmd})
				v, err := p.Evaluate(context.Background(), &shield.Call{Tool: "Bash", Arguments: args,
					Context: shield.CallContext{SessionID: "s1", AgentID: "a1", Caller: "uid:1000"}}, opt)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			first := ev("reboot", shield.EvalOptions{})
			if first.Decision != shield.Escalate || first.EscalationID == "" {
				t.Fatalf("first: %s %q, want ESCALATE with a request", first.Decision, first.EscalationID)
			}
			tc.resolve(t, s, first.EscalationID, set)
			for i := range 10500 {
				ev(fmt.Sprintf("echo %d", i), shield.EvalOptions{})
			}
			zero := 0
			ev("reboot", shield.EvalOptions{MaxTier: &zero})
			v := ev("reboot", shield.EvalOptions{})
			if v.Decision != tc.want || v.Cached {
				t.Fatalf("full evaluation: %s cached=%v (rules %v), want a fresh %s", v.Decision, v.Cached, v.Rules, tc.want)
			}
		})
	}
}

// TestHasApprovals: the tier reports history for the call in its session only.
func TestHasApprovals(t *testing.T) {
	s := open(t, Config{})
	tier := s.Tier()
	ctx := context.Background()
	if ok, err := tier.HasApprovals(ctx, in("h1", "s1", "exec")); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	eval(t, s, in("h1", "s1", "exec"))
	for _, tc := range []struct {
		hash, session string
		want          bool
	}{{"h1", "s1", true}, {"h1", "s2", false}, {"h2", "s1", false}} {
		if ok, err := tier.HasApprovals(ctx, in(tc.hash, tc.session, "exec")); ok != tc.want || err != nil {
			t.Errorf("%s/%s: %v %v, want %v", tc.hash, tc.session, ok, err, tc.want)
		}
	}
	if _, err := tier.HasApprovals(ctx, &shield.Input{}); err == nil {
		t.Error("input without a call accepted")
	}
}
