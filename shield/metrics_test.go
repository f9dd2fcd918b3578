package shield

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Block, "cel:x")}
	p, _ := New(Config{Metrics: m}, newPolicy(t0))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, _ = p.Evaluate(ctx, call("exec", `{"command":"ls"}`), EvalOptions{})
	}
	_, _ = p.Evaluate(ctx, call("", `{}`), EvalOptions{}) // invalid: blocked by the pipeline
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("BLOCK", "0")); got != 3 {
		t.Errorf("BLOCK tier 0 = %v, want 3", got)
	}
	if got := testutil.ToFloat64(m.decisions.WithLabelValues("BLOCK", "-1")); got != 1 {
		t.Errorf("BLOCK by pipeline = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.ruleHits.WithLabelValues("cel:x", "BLOCK")); got != 3 {
		t.Errorf("rule hits = %v, want 3", got)
	}
	if hit, miss := testutil.ToFloat64(m.cacheEvents.WithLabelValues("hit")), testutil.ToFloat64(m.cacheEvents.WithLabelValues("miss")); hit != 2 || miss != 1 {
		t.Errorf("cache hit/miss = %v/%v, want 2/1", hit, miss)
	}
	if n := testutil.CollectAndCount(m.tierLat); n != 1 {
		t.Errorf("tier latency series = %d, want 1", n)
	}
	if n, err := testutil.GatherAndCount(reg, "shield_evaluate_duration_seconds"); err != nil || n != 1 {
		t.Errorf("latency histogram: %d %v", n, err)
	}
}

// TestRuleLabelBounded: a rule id carrying an approval id must not create a series per
// approval (shield_rule_hits_total{rule="approval:apr_<id>"} grew one series per approval).
func TestRuleLabelBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	for i := 0; i < 100; i++ {
		m.observe(&Verdict{Decision: Allow, Tier: 3, Rules: []string{fmt.Sprintf("approval:apr_%032x", i)}}, 0)
	}
	if n := testutil.CollectAndCount(m.ruleHits); n > 1 {
		t.Fatalf("100 approvals made %d rule-hit series, want at most 1", n)
	}
	if got := testutil.ToFloat64(m.ruleHits.WithLabelValues("approval", "ALLOW")); got != 100 {
		t.Errorf("approval hits = %v, want 100", got)
	}
	if got := ruleLabel("cel:block_rm"); got != "cel:block_rm" {
		t.Errorf("policy rule label = %q, want it unchanged", got)
	}
}
