package shield

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestServiceInfoMetrics: build and bundle info are one series each (a new bundle replaces
// the series), pending approvals report count and oldest age, and audit writes are timed.
func TestServiceInfoMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	rev := "r1"
	RegisterInfo(reg, "v9.9.9", func() (string, string) { return rev, "sha256:" + rev })
	now := time.Now()
	pending := 0
	RegisterApprovals(reg, func() (int, time.Time, error) {
		if pending == 0 {
			return 0, time.Time{}, nil
		}
		return pending, now.Add(-90 * time.Second), nil
	})
	for _, r := range []string{"r1", "r2", "r3"} {
		rev = r
		if n, err := testutil.GatherAndCount(reg, "shield_bundle_info"); err != nil || n != 1 {
			t.Fatalf("bundle info series after %s: %d %v", r, n, err)
		}
	}
	want := `# HELP shield_bundle_info Active policy bundle (value 1).
# TYPE shield_bundle_info gauge
shield_bundle_info{digest="sha256:r3",revision="r3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "shield_bundle_info"); err != nil {
		t.Error(err)
	}
	if n, _ := testutil.GatherAndCount(reg, "shield_build_info"); n != 1 {
		t.Errorf("build info series: %d", n)
	}
	pending = 3
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "shield_approvals_") {
			got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if got["shield_approvals_pending"] != 3 || got["shield_approvals_oldest_pending_age_seconds"] < 90 {
		t.Errorf("approval gauges %v, want 3 pending, oldest >= 90 s", got)
	}

	m := NewMetrics(reg)
	rec := m.Recorder(recorderFunc(func() error { return nil }))
	for i := 0; i < 4; i++ {
		rec.RecordDecision(context.Background(), &DecisionRecord{})
	}
	if c := testutil.CollectAndCount(m.auditWrite); c != 1 {
		t.Fatalf("audit write histogram series %d", c)
	}
	if n := histCount(t, reg, "shield_audit_write_duration_seconds"); n != 4 {
		t.Errorf("audit writes observed %d, want 4", n)
	}
}

type recorderFunc func() error

func (f recorderFunc) RecordDecision(context.Context, *DecisionRecord) (AuditPosition, error) {
	return AuditPosition{}, f()
}

func histCount(t *testing.T, g prometheus.Gatherer, name string) uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}
