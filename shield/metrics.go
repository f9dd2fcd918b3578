package shield

import (
	"context"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pipeline's Prometheus collectors. A nil *Metrics records nothing.
type Metrics struct {
	decisions   *prometheus.CounterVec
	ruleHits    *prometheus.CounterVec
	latency     prometheus.Histogram
	tierLat     *prometheus.HistogramVec
	cacheEvents *prometheus.CounterVec
	auditFails  prometheus.Counter
	abandoned   prometheus.Gauge
	auditWrite  prometheus.Histogram
	InFlight    prometheus.Gauge
}

// NewMetrics creates the pipeline's collectors and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	buckets := prometheus.ExponentialBuckets(2e-6, 2, 22) // 2 µs … ~8 s
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shield_decisions_total", Help: "Decisions by outcome and deciding tier.",
		}, []string{"decision", "tier"}),
		ruleHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shield_rule_hits_total", Help: "Decisions by the rule that decided.",
		}, []string{"rule", "decision"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "shield_evaluate_duration_seconds", Help: "End-to-end pipeline latency, audit included.", Buckets: buckets,
		}),
		tierLat: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shield_tier_duration_seconds", Help: "Latency of each tier's evaluation.", Buckets: buckets,
		}, []string{"tier"}),
		cacheEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shield_cache_requests_total", Help: "Verdict cache lookups by result (hit, miss; bypass: found but not used because the call has approval history).",
		}, []string{"result"}),
		auditFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shield_audit_failures_total", Help: "Decisions blocked because their audit record could not be written.",
		}),
		abandoned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shield_normalizations_abandoned",
			Help: "Normalisations still running after their call's budget ran out (the call was blocked).",
		}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shield_evaluations_in_flight", Help: "Evaluations in progress.",
		}),
		auditWrite: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "shield_audit_write_duration_seconds", Help: "Time to make a decision's audit record durable (append and fsync), failures included.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16), // 50 µs … ~1.6 s
		}),
	}
	reg.MustRegister(m.decisions, m.ruleHits, m.latency, m.tierLat, m.cacheEvents, m.auditFails, m.abandoned, m.InFlight, m.auditWrite)
	return m
}

func (m *Metrics) observe(v *Verdict, d time.Duration) {
	if m == nil {
		return
	}
	dec := v.Decision.String()
	m.decisions.WithLabelValues(dec, strconv.Itoa(v.Tier)).Inc()
	for _, r := range v.Rules {
		m.ruleHits.WithLabelValues(ruleLabel(r), dec).Inc()
	}
	m.latency.Observe(d.Seconds())
}

func (m *Metrics) tierLatency(tier string, d time.Duration) {
	if m == nil {
		return
	}
	m.tierLat.WithLabelValues(tier).Observe(d.Seconds())
}

// cache counts a verdict cache lookup: "hit", "miss", or "bypass" (an entry was found but the
// call has approval history, so it was evaluated in full; a bypass is also counted as a miss).
func (m *Metrics) cache(result string) {
	if m == nil {
		return
	}
	m.cacheEvents.WithLabelValues(result).Inc()
}

func (m *Metrics) auditFailure() {
	if m == nil {
		return
	}
	m.auditFails.Inc()
}

func (m *Metrics) abandonedNormalization(delta float64) {
	if m == nil {
		return
	}
	m.abandoned.Add(delta)
}

// ruleLabel bounds the rule label of shield_rule_hits_total: a rule id carrying a per-request id
// (a human approval "approval:apr_<id>", or any id with an "apr_" part) would create one series
// per request, so it is counted under its kind ("approval"). Policy rule ids come from the bundle
// and are bounded by it.
func ruleLabel(rule string) string {
	kind, _, found := strings.Cut(rule, ":")
	if found && kind == "approval" {
		return "approval"
	}
	if strings.Contains(rule, "apr_") {
		if found {
			return kind
		}
		return "approval"
	}
	return rule
}

// Recorder returns r with each RecordDecision timed into shield_audit_write_duration_seconds
// (r itself on a nil *Metrics).
func (m *Metrics) Recorder(r Recorder) Recorder {
	if m == nil || r == nil {
		return r
	}
	return timedRecorder{r: r, h: m.auditWrite}
}

type timedRecorder struct {
	r Recorder
	h prometheus.Histogram
}

func (t timedRecorder) RecordDecision(ctx context.Context, rec *DecisionRecord) (AuditPosition, error) {
	start := time.Now()
	pos, err := t.r.RecordDecision(ctx, rec)
	t.h.Observe(time.Since(start).Seconds())
	return pos, err
}

// infoCollector exports one gauge of value 1 whose labels come from a function at each scrape
// (an info metric): one series at any time, whatever changes.
type infoCollector struct {
	desc   *prometheus.Desc
	labels func() []string
}

func (c infoCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c infoCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, c.labels()...)
}

// RegisterInfo registers shield_build_info{version, revision, goversion} and
// shield_bundle_info{revision, digest} (the active bundle, read at each scrape: a reload
// replaces the series, never adds one).
func RegisterInfo(reg prometheus.Registerer, version string, bundle func() (revision, digest string)) {
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	build := []string{version, rev, runtime.Version()}
	reg.MustRegister(
		infoCollector{desc: prometheus.NewDesc("shield_build_info", "Build of the running binary (value 1).",
			[]string{"version", "revision", "goversion"}, nil), labels: func() []string { return build }},
		infoCollector{desc: prometheus.NewDesc("shield_bundle_info", "Active policy bundle (value 1).",
			[]string{"revision", "digest"}, nil), labels: func() []string {
			r, d := bundle()
			return []string{r, d}
		}})
}

// approvalCollector exports the pending approvals: how many, and how long the oldest waits.
type approvalCollector struct {
	count, oldest *prometheus.Desc
	pending       func() (n int, oldest time.Time, err error)
	now           func() time.Time
}

func (c approvalCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.count; ch <- c.oldest }
func (c approvalCollector) Collect(ch chan<- prometheus.Metric) {
	n, oldest, err := c.pending()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.count, err)
		return
	}
	age := 0.0
	if n > 0 && !oldest.IsZero() {
		age = max(c.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}

// RegisterApprovals registers shield_approvals_pending and
// shield_approvals_oldest_pending_age_seconds, computed by pending at each scrape.
func RegisterApprovals(reg prometheus.Registerer, pending func() (n int, oldest time.Time, err error)) {
	reg.MustRegister(approvalCollector{
		count:   prometheus.NewDesc("shield_approvals_pending", "Approval requests waiting for a human decision.", nil, nil),
		oldest:  prometheus.NewDesc("shield_approvals_oldest_pending_age_seconds", "How long the oldest pending approval request has waited (0: none).", nil, nil),
		pending: pending, now: time.Now,
	})
}
