// Package shadow evaluates a candidate policy bundle beside the live one, off the decision path:
// the live pipeline's Recorder is wrapped so that each decision, once durable, is offered to a
// bounded queue (a non-blocking send: a full queue drops the call and counts it, the verdict
// never waits); one worker evaluates the call at tiers 0–1 under the live bundle and under the
// candidate, counts agreements and differences in metrics, and writes each difference to the
// audit trail as a shadow_decision record (no arguments: the decision record of the same
// decision_id holds the redacted call), with a shadow_summary record of the counters at an
// interval and at Close. `shield policy shadow status` reads those records.
//
// shadow imports shield (Pipeline, Recorder) and audit value types only, like shield itself; the
// composition root builds the candidate policy and wires the wrapper.
package shadow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
)

// Audit record types written by the evaluator.
const (
	TypeDecision = audit.TypeShadowDecision
	TypeSummary  = audit.TypeShadowSummary
)

// Defaults of Config.
const (
	DefaultQueueSize       = 1024
	DefaultQueueBytes      = 64 << 20
	DefaultTimeout         = 2 * time.Second
	DefaultSummaryInterval = 10 * time.Minute
)

// Config configures an Evaluator. Candidate and Live are required.
type Config struct {
	// Candidate is the compiled candidate bundle (activated like a live one: it passed its tests
	// and its gate).
	Candidate *shield.Policy
	// Live returns the policy serving now (the pipeline's Policy method), the baseline each call
	// is compared against at tiers 0–1, so that a judge or approver deciding the live call does
	// not count as a bundle difference.
	Live func() *shield.Policy
	// Append writes an audit record (durably). nil: differences are only counted.
	Append func(ctx context.Context, typ audit.Type, payload any) error
	// QueueSize bounds the calls waiting; 0 means DefaultQueueSize.
	QueueSize int
	// QueueBytes bounds the bytes of the calls waiting (arguments and context strings); 0 means
	// DefaultQueueBytes.
	QueueBytes int64
	// Timeout bounds each of the two evaluations of a call; 0 means DefaultTimeout.
	Timeout time.Duration
	// SummaryInterval is how often a shadow_summary record is written while calls come in;
	// 0 means DefaultSummaryInterval.
	SummaryInterval time.Duration
	// Registerer receives the metrics (optional).
	Registerer prometheus.Registerer
	// Logger (optional).
	Logger *slog.Logger
}

// Stats are the counters since the evaluator started or its candidate was last replaced.
type Stats struct {
	Offered   int64 `json:"offered"`
	Dropped   int64 `json:"dropped"` // queue full (calls or bytes)
	Evaluated int64 `json:"evaluated"`
	Agreed    int64 `json:"agreed"`
	Differed  int64 `json:"differed"`
	Errors    int64 `json:"errors"` // a shadow record could not be written
	// Changes counts differences by "LIVE→CANDIDATE" decision ("ALLOW→BLOCK").
	Changes map[string]int64 `json:"changes,omitempty"`
}

// Evaluator is the shadow evaluator. Its methods are safe for concurrent use.
type Evaluator struct {
	cfg    Config
	cand   atomic.Pointer[candidate]
	queue  chan job
	qbytes atomic.Int64

	offered, dropped, evaluated, agreed, differed, errs atomic.Int64
	mu                                                  sync.Mutex
	changes                                             map[string]int64

	baseMu  sync.Mutex
	basePol *shield.Policy
	base    *shield.Pipeline

	mDropped prometheus.Counter
	mResults *prometheus.CounterVec
	mChanges *prometheus.CounterVec

	stop     chan struct{}
	done     chan struct{}
	startOne sync.Once
	stopOne  sync.Once
}

// job is what the worker needs of one live decision (copied: the caller's call is not kept).
type job struct {
	call       shield.Call
	bytes      int64 // callBytes(call), counted against QueueBytes
	decisionID string
	tier       int
	decision   shield.Decision
	rules      []string
	actionHash string
	class      string
}

// New prepares an evaluator; Start runs its worker.
func New(cfg Config) (*Evaluator, error) {
	if cfg.Candidate == nil || cfg.Live == nil {
		return nil, errors.New("shadow: a candidate policy and the live policy are required")
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.SummaryInterval <= 0 {
		cfg.SummaryInterval = DefaultSummaryInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cand, err := shield.New(shield.Config{CacheSize: -1, Timeout: cfg.Timeout}, cfg.Candidate)
	if err != nil {
		return nil, fmt.Errorf("shadow: candidate pipeline: %w", err)
	}
	e := &Evaluator{cfg: cfg, queue: make(chan job, cfg.QueueSize), changes: map[string]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	e.cand.Store(&candidate{pol: cfg.Candidate, p: cand, since: time.Now().UTC()})
	e.mDropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "shield_shadow_dropped_total",
		Help: "Calls not evaluated by the shadow bundle because its queue was full."})
	e.mResults = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shield_shadow_evaluations_total",
		Help: "Calls evaluated by the shadow bundle, by result (agree, differ)."}, []string{"result"})
	e.mChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shield_shadow_differences_total",
		Help: "Calls the shadow bundle decided differently, by live and shadow decision."}, []string{"live", "shadow"})
	if r := cfg.Registerer; r != nil {
		for _, c := range []prometheus.Collector{e.mDropped, e.mResults, e.mChanges,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shield_shadow_queue_length", Help: "Calls waiting for the shadow bundle."},
				func() float64 { return float64(len(e.queue)) })} {
			if err := r.Register(c); err != nil {
				return nil, fmt.Errorf("shadow: register metrics: %w", err)
			}
		}
	}
	return e, nil
}

// candidate is the bundle under evaluation and when it started.
type candidate struct {
	pol   *shield.Policy
	p     *shield.Pipeline
	since time.Time
}

// Candidate returns the candidate policy.
func (e *Evaluator) Candidate() *shield.Policy { return e.cand.Load().pol }

// SetCandidate replaces the candidate (a reload of the shadow bundle): the old one's counters
// are written as its last summary, and counting starts again for the new one.
func (e *Evaluator) SetCandidate(pol *shield.Policy) error {
	if pol == nil {
		return errors.New("shadow: no candidate policy")
	}
	p, err := shield.New(shield.Config{CacheSize: -1, Timeout: e.cfg.Timeout}, pol)
	if err != nil {
		return fmt.Errorf("shadow: candidate pipeline: %w", err)
	}
	e.summary(context.Background())
	e.cand.Store(&candidate{pol: pol, p: p, since: time.Now().UTC()})
	for _, c := range []*atomic.Int64{&e.offered, &e.dropped, &e.evaluated, &e.agreed, &e.differed, &e.errs} {
		c.Store(0)
	}
	e.mu.Lock()
	e.changes = map[string]int64{}
	e.mu.Unlock()
	return nil
}

// Recorder wraps the live pipeline's recorder: each decision is recorded by next first, and
// only once it is durable offered to the shadow queue. A nil evaluator returns next.
func (e *Evaluator) Recorder(next shield.Recorder) shield.Recorder {
	if e == nil {
		return next
	}
	return &recorder{next: next, e: e}
}

type recorder struct {
	next shield.Recorder
	e    *Evaluator
}

func (r *recorder) RecordDecision(ctx context.Context, rec *shield.DecisionRecord) (shield.AuditPosition, error) {
	pos, err := r.next.RecordDecision(ctx, rec)
	if err == nil {
		r.e.Offer(rec)
	}
	return pos, err
}

// Offer queues a live decision for shadow evaluation without ever blocking: when the queue is
// full (in calls or argument bytes) the call is dropped and counted. It reports whether the
// call was queued.
func (e *Evaluator) Offer(rec *shield.DecisionRecord) bool {
	if rec == nil || rec.Call == nil || rec.Verdict == nil {
		return false
	}
	e.offered.Add(1)
	select {
	case <-e.stop:
		e.drop()
		return false
	default:
	}
	n := callBytes(rec.Call)
	if e.qbytes.Add(n) > e.cfg.QueueBytes {
		e.qbytes.Add(-n)
		e.drop()
		return false
	}
	c := *rec.Call
	c.Arguments = slices.Clone(rec.Call.Arguments)
	if rec.Call.Context.Labels != nil {
		c.Context.Labels = make(map[string]string, len(rec.Call.Context.Labels))
		for k, v := range rec.Call.Context.Labels {
			c.Context.Labels[k] = v
		}
	}
	v := rec.Verdict
	j := job{call: c, bytes: n, decisionID: v.DecisionID, tier: v.Tier, decision: v.Decision, rules: slices.Clone(v.Rules),
		actionHash: v.ActionHash, class: v.ActionClass}
	select {
	case e.queue <- j:
		return true
	default:
		e.qbytes.Add(-n)
		e.drop()
		return false
	}
}

// callBytes is what a queued call holds: its arguments and every context string (labels
// included, up to 64 of 4 KiB each).
func callBytes(c *shield.Call) int64 {
	n := len(c.Arguments) + len(c.ID) + len(c.Tool) + len(c.Context.SessionID) + len(c.Context.AgentID) +
		len(c.Context.Runtime) + len(c.Context.Cwd) + len(c.Context.Caller)
	for k, v := range c.Context.Labels {
		n += len(k) + len(v)
	}
	return int64(n)
}

func (e *Evaluator) drop() {
	e.dropped.Add(1)
	e.mDropped.Inc()
}

// Start runs the worker until Close or ctx ends. Start and Close do nothing on a nil evaluator
// (shadow mode off).
func (e *Evaluator) Start(ctx context.Context) {
	if e == nil {
		return
	}
	e.startOne.Do(func() { go e.run(ctx) })
}

// Close stops the worker (calls still queued are dropped and counted) and writes a last
// summary record. It waits for the call being evaluated, at most twice the evaluation timeout.
func (e *Evaluator) Close() {
	if e == nil {
		return
	}
	e.stopOne.Do(func() {
		close(e.stop)
		ran := true
		e.startOne.Do(func() { ran = false }) // a Start after Close does nothing
		if ran {
			select {
			case <-e.done:
			case <-time.After(2*e.cfg.Timeout + time.Second):
				e.cfg.Logger.Warn("shadow evaluator did not stop in time")
			}
		}
		for drained := false; !drained; {
			select {
			case j := <-e.queue:
				e.qbytes.Add(-j.bytes)
				e.drop()
			default:
				drained = true
			}
		}
		e.summary(context.Background())
	})
}

func (e *Evaluator) run(ctx context.Context) {
	defer close(e.done)
	t := time.NewTicker(e.cfg.SummaryInterval)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.stop:
			return
		case <-t.C:
			if n := e.evaluated.Load(); n != last {
				last = n
				e.summary(ctx)
			}
		case j := <-e.queue:
			e.qbytes.Add(-j.bytes)
			e.evaluate(ctx, j)
		}
	}
}

// baseline returns a pipeline of the live policy (rebuilt when the live bundle changes).
func (e *Evaluator) baseline() (*shield.Pipeline, error) {
	pol := e.cfg.Live()
	if pol == nil {
		return nil, errors.New("no live policy")
	}
	e.baseMu.Lock()
	defer e.baseMu.Unlock()
	if e.base != nil && e.basePol == pol {
		return e.base, nil
	}
	p, err := shield.New(shield.Config{CacheSize: -1, Timeout: e.cfg.Timeout}, pol)
	if err != nil {
		return nil, err
	}
	e.base, e.basePol = p, pol
	return p, nil
}

// bundleTiers limits a shadow evaluation to the bundle's tiers (0–1).
var bundleTiers = shield.TierRego

// Outcome is one side of a shadow comparison.
type Outcome struct {
	Decision string   `json:"decision"`
	Tier     int      `json:"tier"`
	Rules    []string `json:"rules,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// Record is the payload of a shadow_decision record: a live decision the candidate bundle
// would have decided differently. It holds no arguments; decision_id names the live decision
// record, which holds the (redacted) call.
type Record struct {
	DecisionID        string  `json:"decision_id"`
	ActionHash        string  `json:"action_hash,omitempty"`
	Tool              string  `json:"tool"`
	ActionClass       string  `json:"action_class,omitempty"`
	SessionID         string  `json:"session_id,omitempty"`
	Live              Outcome `json:"live"`     // the verdict returned (any tier)
	Baseline          Outcome `json:"baseline"` // the live bundle at tiers 0–1
	Candidate         Outcome `json:"candidate"`
	BaselineRevision  string  `json:"baseline_revision"`
	BaselineDigest    string  `json:"baseline_digest"`
	CandidateRevision string  `json:"candidate_revision"`
	CandidateDigest   string  `json:"candidate_digest"`
}

// Summary is the payload of a shadow_summary record.
type Summary struct {
	CandidateRevision string    `json:"candidate_revision"`
	CandidateDigest   string    `json:"candidate_digest"`
	Since             time.Time `json:"since"`
	Stats
}

func (e *Evaluator) evaluate(ctx context.Context, j job) {
	base, err := e.baseline()
	if err != nil {
		e.cfg.Logger.Warn("shadow: no baseline", "error", err.Error())
		return
	}
	opt := shield.EvalOptions{MaxTier: &bundleTiers, DryRun: true}
	c1, c2 := j.call, j.call
	bv, _ := base.Evaluate(ctx, &c1, opt) // an error is a BLOCK verdict, on both sides alike
	cv, _ := e.cand.Load().p.Evaluate(ctx, &c2, opt)
	e.evaluated.Add(1)
	if bv.Decision == cv.Decision {
		e.agreed.Add(1)
		e.mResults.WithLabelValues("agree").Inc()
		return
	}
	e.differed.Add(1)
	e.mResults.WithLabelValues("differ").Inc()
	e.mChanges.WithLabelValues(bv.Decision.String(), cv.Decision.String()).Inc()
	e.mu.Lock()
	e.changes[bv.Decision.String()+"→"+cv.Decision.String()]++
	e.mu.Unlock()
	if e.cfg.Append == nil {
		return
	}
	rec := Record{
		DecisionID: j.decisionID, ActionHash: j.actionHash, Tool: j.call.Tool, ActionClass: j.class, SessionID: j.call.Context.SessionID,
		Live:             Outcome{Decision: j.decision.String(), Tier: j.tier, Rules: j.rules},
		Baseline:         Outcome{Decision: bv.Decision.String(), Tier: bv.Tier, Rules: bv.Rules, Reason: bv.Reason},
		Candidate:        Outcome{Decision: cv.Decision.String(), Tier: cv.Tier, Rules: cv.Rules, Reason: cv.Reason},
		BaselineRevision: bv.BundleRevision, BaselineDigest: bv.BundleDigest,
		CandidateRevision: cv.BundleRevision, CandidateDigest: cv.BundleDigest,
	}
	if err := e.cfg.Append(context.WithoutCancel(ctx), TypeDecision, rec); err != nil {
		e.errs.Add(1)
		e.cfg.Logger.Error("shadow record failed", "error", err.Error())
	}
}

// Stats returns the counters.
func (e *Evaluator) Stats() Stats {
	s := Stats{Offered: e.offered.Load(), Dropped: e.dropped.Load(), Evaluated: e.evaluated.Load(),
		Agreed: e.agreed.Load(), Differed: e.differed.Load(), Errors: e.errs.Load(), Changes: map[string]int64{}}
	e.mu.Lock()
	for k, v := range e.changes {
		s.Changes[k] = v
	}
	e.mu.Unlock()
	return s
}

func (e *Evaluator) summary(ctx context.Context) {
	if e.cfg.Append == nil {
		return
	}
	c := e.cand.Load()
	s := Summary{CandidateRevision: c.pol.Revision, CandidateDigest: c.pol.Digest, Since: c.since, Stats: e.Stats()}
	if err := e.cfg.Append(context.WithoutCancel(ctx), TypeSummary, s); err != nil {
		e.errs.Add(1)
		e.cfg.Logger.Error("shadow summary record failed", "error", err.Error())
	}
}
