package shield

import (
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
	}
	reg.MustRegister(m.decisions, m.ruleHits, m.latency, m.tierLat, m.cacheEvents, m.auditFails, m.abandoned, m.InFlight)
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
