package shield

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/shieldsec/shield/shield/normalize"
)

// slowNormalizer sleeps before normalising, as a shell walk of a large command does.
type slowNormalizer struct{ d time.Duration }

func (n slowNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	time.Sleep(n.d)
	return classNormalizer{}.Normalize(tool, args, cwd)
}

// blockingNormalizer does not return before release is closed; it says on started when it runs.
type blockingNormalizer struct {
	started chan struct{}
	release chan struct{}
}

func (n blockingNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	close(n.started)
	<-n.release
	return classNormalizer{}.Normalize(tool, args, cwd)
}

type panickyNormalizer struct{}

func (panickyNormalizer) Normalize(string, map[string]any, string) *normalize.Action { panic("walk") }

// TestBudgetCoversNormalization is M7: normalisation runs under the call's budget. A normaliser
// slower than the budget gets the call BLOCKed with a clear reason, and the BLOCK is audited.
func TestBudgetCoversNormalization(t *testing.T) {
	const budget = 50 * time.Millisecond
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.Normalizer = slowNormalizer{d: 6 * budget}
	rec := &recorder{}
	p, _ := New(Config{Recorder: rec, Timeout: budget}, pol)
	v, err := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != Block || len(v.Rules) != 1 || v.Rules[0] != RuleTimeout || !strings.Contains(v.Reason, "normalising the call took longer than the 50ms budget") {
		t.Fatalf("verdict = %s %v %q, want BLOCK %s naming normalisation and the budget", v.Decision, v.Rules, v.Reason, RuleTimeout)
	}
	if len(rec.recs) != 1 || rec.recs[0].Verdict.Decision != Block || !strings.Contains(rec.recs[0].Error, "deadline exceeded") || rec.recs[0].Verdict.ActionHash == "" {
		t.Fatalf("audit records = %d %+v, want the BLOCK with its error and action hash", len(rec.recs), rec.recs)
	}
	// Not cached: the same call is normalised again (and blocked again).
	if v, _ := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{}); v.Cached || v.Decision != Block {
		t.Errorf("second = %s cached=%v", v.Decision, v.Cached)
	}
}

// TestBudgetSharedByNormalizationAndTiers: the tiers get what normalisation left of the budget,
// not a budget of their own.
func TestBudgetSharedByNormalizationAndTiers(t *testing.T) {
	const budget = 100 * time.Millisecond
	tier := &fakeTier{level: 1, name: "rego", fn: func(ctx context.Context, _ *Input) (Result, error) {
		select {
		case <-ctx.Done():
		case <-time.After(budget * 6 / 10):
		}
		return Result{Findings: []Finding{{Decision: Allow, Rule: "rego:ok"}}}, nil
	}}
	pol := newPolicy(tier)
	pol.Normalizer = slowNormalizer{d: budget * 6 / 10}
	p, _ := New(Config{Timeout: budget, CacheSize: -1}, pol)
	v, _ := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{})
	if v.Decision != Block {
		t.Fatalf("normalisation and tiers together over the budget: %s %q, want BLOCK", v.Decision, v.Reason)
	}
}

// TestBudgetAbandonedNormalization: the call is answered when the budget ends although the
// normaliser still runs; the gauge counts it until it returns.
func TestBudgetAbandonedNormalization(t *testing.T) {
	n := blockingNormalizer{started: make(chan struct{}), release: make(chan struct{})}
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.Normalizer = n
	m := NewMetrics(prometheus.NewRegistry())
	p, _ := New(Config{Timeout: 20 * time.Millisecond, Metrics: m}, pol)
	v, _ := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{})
	<-n.started
	if v.Decision != Block || v.Rules[0] != RuleTimeout {
		t.Fatalf("verdict = %s %v, want BLOCK %s", v.Decision, v.Rules, RuleTimeout)
	}
	if got := testutil.ToFloat64(m.abandoned); got != 1 {
		t.Errorf("abandoned gauge = %v, want 1", got)
	}
	close(n.release)
	deadline := time.Now().Add(10 * time.Second)
	for testutil.ToFloat64(m.abandoned) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := testutil.ToFloat64(m.abandoned); got != 0 {
		t.Errorf("abandoned gauge after the normaliser returned = %v, want 0", got)
	}
}

// TestBudgetCallerGoneDuringNormalization: a caller that goes away while the call is
// normalised gets a BLOCK saying so.
func TestBudgetCallerGoneDuringNormalization(t *testing.T) {
	n := blockingNormalizer{started: make(chan struct{}), release: make(chan struct{})}
	defer close(n.release)
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.Normalizer = n
	p, _ := New(Config{Timeout: time.Hour}, pol)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-n.started; cancel() }()
	v, _ := p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	if v.Decision != Block || !strings.Contains(v.Reason, "caller went away") {
		t.Fatalf("verdict = %s %q, want BLOCK: caller went away", v.Decision, v.Reason)
	}
}

// TestNormalizerPanicBlocks: a panic on the normaliser's goroutine is a BLOCK, not a crash.
func TestNormalizerPanicBlocks(t *testing.T) {
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.Normalizer = panickyNormalizer{}
	rec := &recorder{}
	p, _ := New(Config{Recorder: rec}, pol)
	v, err := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{})
	if err != nil || v.Decision != Block || v.Rules[0] != RuleTierError {
		t.Fatalf("verdict = %s %v (%v), want BLOCK %s", v.Decision, v.Rules, err, RuleTierError)
	}
	if len(rec.recs) != 1 || !strings.Contains(rec.recs[0].Error, "normaliser panicked") {
		t.Errorf("panic not audited: %+v", rec.recs)
	}
}

// BenchmarkEvaluateMiss measures a call evaluated in full (normalisation on its own goroutine
// under the budget, one tier); BenchmarkEvaluateHit the same call answered from the cache.
func BenchmarkEvaluateMiss(b *testing.B) {
	p, _ := New(Config{CacheSize: -1}, newPolicy(&fakeTier{level: 0, name: "cel", fn: silent}))
	c := call("exec", `{"command":"ls -la"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Evaluate(ctx, c, EvalOptions{})
	}
}

func BenchmarkEvaluateHit(b *testing.B) {
	p, _ := New(Config{}, newPolicy(&fakeTier{level: 0, name: "cel", fn: silent}))
	c := call("exec", `{"command":"ls -la"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Evaluate(ctx, c, EvalOptions{})
	}
}

// ctxNormalizer is context-aware: it waits for its context and reports what it saw.
type ctxNormalizer struct{ sawDeadline, stopped chan bool }

func (n ctxNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	panic("the pipeline must prefer NormalizeContext")
}

func (n ctxNormalizer) NormalizeContext(ctx context.Context, tool string, args map[string]any, cwd string) *normalize.Action {
	_, ok := ctx.Deadline()
	n.sawDeadline <- ok
	<-ctx.Done()
	n.stopped <- true
	return classNormalizer{}.Normalize(tool, args, cwd)
}

// TestBudgetReachesContextNormalizer: a normaliser that takes a context gets the decision's
// budget, so an abandoned run stops at the deadline instead of running on.
func TestBudgetReachesContextNormalizer(t *testing.T) {
	n := ctxNormalizer{sawDeadline: make(chan bool, 1), stopped: make(chan bool, 1)}
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.Normalizer = n
	p, _ := New(Config{Timeout: 20 * time.Millisecond, CacheSize: -1}, pol)
	v, _ := p.Evaluate(context.Background(), call("exec", `{"command":"ls"}`), EvalOptions{})
	// The normaliser returns as its context ends: the pipeline either sees the budget spent
	// (timeout) or hands the tier a context already done (tier error). Both are BLOCKs.
	if v.Decision != Block || (v.Rules[0] != RuleTimeout && v.Rules[0] != RuleTierError) {
		t.Fatalf("verdict = %s %v, want BLOCK %s or %s", v.Decision, v.Rules, RuleTimeout, RuleTierError)
	}
	if !<-n.sawDeadline {
		t.Error("the normaliser's context has no deadline")
	}
	select {
	case <-n.stopped:
	case <-time.After(10 * time.Second):
		t.Error("the normaliser's context was not cancelled with the budget")
	}
}
