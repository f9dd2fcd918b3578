package shield

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gowebpki/jcs"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield/normalize"
)

// Normalizer turns a decoded call into an Action. *normalize.Normalizer implements it.
//
// Normalize takes no context: the pipeline runs it on its own goroutine under the call's budget
// (Config.Timeout) and answers BLOCK when the budget runs out first. The abandoned goroutine runs
// to completion, so a Normalizer must bound its own work by the size of its input.
type Normalizer interface {
	Normalize(tool string, args map[string]any, cwd string) *normalize.Action
}

// ApprovalState is implemented by an escalation tier that keeps state per call (tier 3, human
// approval). Before the pipeline answers a call from the verdict cache, it asks every escalation
// tier implementing ApprovalState whether the call has any approval request — open, approved,
// denied, used or expired — for its action hash in its session. If one says yes, or fails, the
// cache is bypassed and the call is evaluated in full, so a call with approval history is never
// answered from the cache.
//
// HasApprovals must be cheap (it runs on every cache hit) and safe for concurrent use; a false
// positive only costs a full evaluation.
type ApprovalState interface {
	HasApprovals(ctx context.Context, in *Input) (bool, error)
}

// ContextNormalizer is a Normalizer that stops when its context is done (marking the action over
// a limit, so it is never allowed). *normalize.Normalizer implements it; the pipeline uses it when
// present so that the decision budget bounds normalisation too.
type ContextNormalizer interface {
	NormalizeContext(ctx context.Context, tool string, args map[string]any, cwd string) *normalize.Action
}

var _ ContextNormalizer = (*normalize.Normalizer)(nil)

// Policy is one compiled policy bundle: everything that is replaced together on reload.
type Policy struct {
	Revision string
	Digest   string
	LoadedAt time.Time
	// Normalizer built from the bundle's tool catalog. Required.
	Normalizer Normalizer
	// Tiers prepared from the bundle (CEL, Rego), evaluated in Level order.
	Tiers []Tier
	// Defaults is the decision per action class when no rule speaks. The key "*" applies to
	// classes not listed; without it, an unlisted class gets Escalate. Allow is never implied.
	Defaults map[string]Decision
	// RuleCounts per tier name, reported by GetStatus.
	RuleCounts map[string]int
	// ReviewClasses are action classes whose calls go to the escalation tiers even when tiers
	// 0–1 allow them (the bundle marks them for review).
	ReviewClasses map[string]bool
}

// Config configures a Pipeline. The zero value is valid: no audit log, default limits.
type Config struct {
	// Recorder persists each decision before it is returned. nil disables auditing (shield eval,
	// tests); the service always configures one.
	Recorder Recorder
	// Escalation tiers (2: judge, 3: human), independent of the bundle. Consulted only for calls
	// that tiers 0–1 left at ESCALATE.
	Escalation []Tier
	// CacheSize is the number of verdicts kept (tiers 0–1 of full evaluations only). 0 means
	// 10 000; negative disables.
	CacheSize int
	// Timeout is the budget of one call before escalation: decoding, normalisation and tiers
	// 0–1 together. A call whose budget runs out is BLOCKed. 0 means 500 ms.
	Timeout time.Duration
	// EscalationTimeout bounds tiers 2–3 per call. 0 means 60 s.
	EscalationTimeout time.Duration
	// Limits for decoding arguments (zero value: normalize's safe defaults).
	Limits normalize.Limits
	// Metrics, optional.
	Metrics *Metrics
	// Now, optional clock for tests.
	Now func() time.Time
	// Sessions is the per-session history of allowed calls (normalize/sessions.go): a secret read
	// earlier in a session, a script written earlier and run now. nil: a history of
	// normalize.DefaultMaxSessions sessions. NoSessions turns it off (each call judged alone).
	Sessions   *normalize.Sessions
	NoSessions bool
}

// EvalOptions are per-call options.
type EvalOptions struct {
	// MaxTier is the highest tier consulted; nil means all. An evaluation with MaxTier set is
	// partial: it is neither answered from nor stored in the verdict cache. Callers that take
	// MaxTier from a request must check that the requester may lower it (shield/server allows
	// it to the admin role only).
	MaxTier *int
	// DryRun asks escalation tiers not to create approval requests.
	DryRun bool
}

// Pipeline evaluates tool calls. It is safe for concurrent use; SetPolicy swaps bundles atomically.
type Pipeline struct {
	cfg    Config
	policy atomic.Pointer[active]
	gen    atomic.Uint64
	cache  *lru.Cache[string, cachedVerdict]

	hits, misses         atomic.Int64
	allows, blocks, escs atomic.Int64
}

// active is the served bundle and its activation number. The number is part of the cache key,
// so a verdict computed under one activation is never served under another, even when the
// bundle's digest is unchanged or an evaluation still running stores it after a reload.
type active struct {
	pol *Policy
	gen uint64
}

type cachedVerdict struct {
	v      Verdict
	action *normalize.Action
}

// Input limits for the call envelope (arguments have their own, in normalize.Limits).
const (
	maxToolLen    = 256
	maxCallIDLen  = 256
	maxContextLen = 4096
	maxLabels     = 64
)

// New returns a pipeline serving pol.
func New(cfg Config, pol *Policy) (*Pipeline, error) {
	if err := pol.validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 500 * time.Millisecond
	}
	if cfg.EscalationTimeout <= 0 {
		cfg.EscalationTimeout = 60 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sessions == nil && !cfg.NoSessions {
		cfg.Sessions = normalize.NewSessions(0)
	}
	if cfg.NoSessions {
		cfg.Sessions = nil
	}
	p := &Pipeline{cfg: cfg}
	if cfg.CacheSize >= 0 {
		n := cfg.CacheSize
		if n == 0 {
			n = 10000
		}
		c, err := lru.New[string, cachedVerdict](n)
		if err != nil {
			return nil, fmt.Errorf("create verdict cache: %w", err)
		}
		p.cache = c
	}
	p.policy.Store(&active{pol: pol, gen: p.gen.Add(1)})
	return p, nil
}

func (pol *Policy) validate() error {
	if pol == nil {
		return errors.New("pipeline: no policy")
	}
	if pol.Normalizer == nil {
		return errors.New("pipeline: policy has no normalizer")
	}
	for _, t := range pol.Tiers {
		if t.Level() > TierRego {
			return fmt.Errorf("pipeline: bundle tier %q has level %d; bundle tiers are 0 or 1", t.Name(), t.Level())
		}
	}
	return nil
}

// SetPolicy activates a new bundle and clears the verdict cache.
func (p *Pipeline) SetPolicy(pol *Policy) error {
	if err := pol.validate(); err != nil {
		return err
	}
	p.policy.Store(&active{pol: pol, gen: p.gen.Add(1)})
	if p.cache != nil {
		p.cache.Purge()
	}
	return nil
}

// Policy returns the active bundle.
func (p *Pipeline) Policy() *Policy { return p.policy.Load().pol }

// Stats are counters since the pipeline was created.
type Stats struct {
	CacheSize, CacheCapacity int
	CacheHits, CacheMisses   int64
	Allow, Block, Escalate   int64
}

// Stats returns the pipeline's counters.
func (p *Pipeline) Stats() Stats {
	s := Stats{
		CacheHits: p.hits.Load(), CacheMisses: p.misses.Load(),
		Allow: p.allows.Load(), Block: p.blocks.Load(), Escalate: p.escs.Load(),
	}
	if p.cache != nil {
		s.CacheSize = p.cache.Len()
		s.CacheCapacity = p.cfg.CacheSize
		if s.CacheCapacity == 0 {
			s.CacheCapacity = 10000
		}
	}
	return s
}

// Evaluate decides one call. It always returns a verdict; the verdict is ALLOW only when the
// call was well formed, every tier ran without error, none objected, and its audit record (when
// a Recorder is configured) is durable. The error is non-nil only for a malformed call
// (errors.Is(err, ErrInvalidCall)); its verdict is BLOCK and is audited too.
func (p *Pipeline) Evaluate(ctx context.Context, call *Call, opt EvalOptions) (Verdict, error) {
	start := p.cfg.Now()
	act := p.policy.Load()
	pol := act.pol
	v, action, callErr := p.decide(ctx, act, call, opt)
	defer func() {
		// What an allowed call does becomes its session's history (after the audit record: a
		// call whose record failed is blocked and observes nothing).
		if v.Decision == Allow && callErr == nil {
			nn, _ := pol.Normalizer.(*normalize.Normalizer)
			p.cfg.Sessions.Observe(call.Context.SessionID, action, nn)
		}
	}()
	v.EvaluatedAt = start.UTC()
	v.BundleRevision = pol.Revision
	v.BundleDigest = pol.Digest
	v.DecisionID = newDecisionID()
	if v.Decision != Allow && v.Decision != Escalate {
		v.Decision = Block
	}
	if v.Confidence == 0 {
		v.Confidence = 1
	}
	internal := ""
	if callErr != nil {
		internal = callErr.Error()
	} else if v.internalErr != "" {
		internal = v.internalErr
	}
	v.internalErr = ""
	if p.cfg.Recorder == nil {
		v.canonArgs = audit.CanonicalArgs{}
	}
	if p.cfg.Recorder != nil {
		canon := v.canonArgs
		v.canonArgs = audit.CanonicalArgs{}
		pos, err := p.record(ctx, &DecisionRecord{Call: call, Action: action, Verdict: &v, Error: internal, CanonicalArguments: canon})
		if err != nil {
			v.Decision = Block
			v.Tier = TierPipeline
			v.Rules = []string{RuleAuditFailure}
			v.Reason = "blocked: the decision could not be recorded in the audit log"
			v.Confidence = 1
			p.cfg.Metrics.auditFailure()
		} else {
			v.Audit = pos
		}
	}
	switch v.Decision {
	case Allow:
		p.allows.Add(1)
	case Escalate:
		p.escs.Add(1)
	default:
		p.blocks.Add(1)
	}
	p.cfg.Metrics.observe(&v, p.cfg.Now().Sub(start))
	return v, callErr
}

func (p *Pipeline) record(ctx context.Context, rec *DecisionRecord) (pos AuditPosition, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("audit recorder panicked: %v", r)
		}
	}()
	return p.cfg.Recorder.RecordDecision(context.WithoutCancel(ctx), rec)
}

// Reserved rule ids the pipeline itself reports.
const (
	RuleInvalidCall     = "pipeline:invalid-call"
	RuleTierError       = "pipeline:tier-error"
	RuleTimeout         = "pipeline:timeout" // the budget ran out before a tier could decide
	RuleAuditFailure    = "pipeline:audit-failure"
	RuleUnparsedAllowed = "pipeline:unparsed-not-allowed"
	RuleInputLimit      = "pipeline:input-limit"
	RuleDefaultPrefix   = "default:"
	RuleReviewPrefix    = "review:"
)

// ErrInvalidCall is wrapped by every error about a malformed call.
var ErrInvalidCall = errors.New("invalid call")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidCall, fmt.Sprintf(format, args...))
}

// checkCall validates the call envelope (tool name, ids, context).
func checkCall(call *Call) error {
	if call == nil {
		return invalid("no call")
	}
	switch {
	case call.Tool == "":
		return invalid("tool name is empty")
	case len(call.Tool) > maxToolLen:
		return invalid("tool name is %d bytes; the limit is %d", len(call.Tool), maxToolLen)
	case !utf8.ValidString(call.Tool):
		return invalid("tool name is not valid UTF-8")
	case strings.ContainsFunc(call.Tool, isControl):
		return invalid("tool name contains control characters")
	case len(call.ID) > maxCallIDLen:
		return invalid("call_id is %d bytes; the limit is %d", len(call.ID), maxCallIDLen)
	case !utf8.ValidString(call.ID):
		return invalid("call_id is not valid UTF-8")
	}
	c := &call.Context
	for name, s := range map[string]string{"session_id": c.SessionID, "agent_id": c.AgentID, "runtime": c.Runtime, "cwd": c.Cwd} {
		if len(s) > maxContextLen {
			return invalid("context.%s is %d bytes; the limit is %d", name, len(s), maxContextLen)
		}
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			return invalid("context.%s is not valid UTF-8 or contains NUL", name)
		}
	}
	if c.Cwd != "" && !strings.HasPrefix(c.Cwd, "/") {
		return invalid("context.cwd %q is not an absolute path", c.Cwd)
	}
	if len(c.Labels) > maxLabels {
		return invalid("context has %d labels; the limit is %d", len(c.Labels), maxLabels)
	}
	for k, v := range c.Labels {
		if len(k)+len(v) > maxContextLen || !utf8.ValidString(k) || !utf8.ValidString(v) {
			return invalid("context label %.40q is too long or not valid UTF-8", k)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// decide runs decoding, the cache, normalisation and the tiers. The returned verdict lacks the
// fields Evaluate fills (ids, bundle, time).
func (p *Pipeline) decide(ctx context.Context, act *active, call *Call, opt EvalOptions) (v Verdict, action *normalize.Action, callErr error) {
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Decision: Block, Tier: TierPipeline, Rules: []string{RuleTierError},
				Reason: "blocked: internal error while evaluating the call", internalErr: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
			callErr = nil
		}
	}()
	pol := act.pol
	if err := checkCall(call); err != nil {
		return invalidVerdict(err), nil, err
	}
	// One budget for everything before escalation: decoding, the cache, normalisation and
	// tiers 0–1. Escalation (judge, human) has its own, EscalationTimeout.
	bctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	// Arguments are decoded (and so validated) on every call, cache hit or not: the cache only
	// saves normalisation and tiers 0–1. Decoding is linear in the bounded input size.
	args, err := normalize.DecodeArguments(call.Arguments, p.cfg.Limits)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrInvalidCall, err)
		return invalidVerdict(err), nil, err
	}
	hash, canon, err := actionHashDecoded(call.Tool, args, call.Arguments)
	if !canon.IsZero() && len(call.Arguments) > 0 {
		// One canonicalisation per call: the audit record reuses these bytes.
		defer func() {
			if callErr == nil {
				v.canonArgs = canon
			}
		}()
	}
	if err != nil {
		err = fmt.Errorf("%w: canonicalise arguments: %w", ErrInvalidCall, err)
		return invalidVerdict(err), nil, err
	}
	if bctx.Err() != nil {
		v = p.budgetVerdict(bctx, "decoding the arguments")
		v.ActionHash = hash
		return v, nil, nil
	}
	// Only full evaluations use the cache: a partial one (MaxTier set) skipped tiers whose
	// answer a full one must hear.
	key := ""
	if p.cache != nil && opt.MaxTier == nil {
		key = cacheKey(act, hash, &call.Context, opt)
		// The session's history is an input of the verdict.
		key += "|s" + strconv.FormatUint(p.cfg.Sessions.Version(call.Context.SessionID), 10)
		if c, ok := p.cache.Get(key); ok {
			if !p.hasApprovals(bctx, call, c.action, hash, opt) {
				p.hits.Add(1)
				p.cfg.Metrics.cache("hit")
				v = c.v
				v.Rules = append([]string(nil), c.v.Rules...)
				v.Cached = true
				return p.escalate(ctx, call, c.action, v, opt), c.action, nil
			}
			p.cfg.Metrics.cache("bypass")
		}
		p.misses.Add(1)
		p.cfg.Metrics.cache("miss")
	}

	action, err = p.normalize(bctx, pol.Normalizer, call, args)
	if err != nil {
		if bctx.Err() != nil {
			v = p.budgetVerdict(bctx, "normalising the call")
		} else {
			v = Verdict{Decision: Block, Tier: TierPipeline, Rules: []string{RuleTierError},
				Reason: "blocked: internal error while normalising the call", internalErr: err.Error()}
		}
		v.ActionHash = hash
		return v, nil, nil
	}
	nn, _ := pol.Normalizer.(*normalize.Normalizer) // reads scripts run later; nil: secrets only
	p.cfg.Sessions.Annotate(bctx, nn, call.Context.SessionID, action)
	if action.OverLimit() {
		// Too large or deep to normalise (normalize.MaxShell*): blocked before any tier sees it.
		v = Verdict{Decision: Block, Tier: TierPipeline, Rules: []string{RuleInputLimit}, Reason: "blocked: " + action.ParseError}
	} else {
		v = p.runBundleTiers(bctx, pol, call, action, hash, opt)
	}
	v.ActionHash = hash
	v.ActionClass = action.Class
	// Stored: what tiers 0–1 said in a full evaluation that ran without error. What the
	// escalation tiers (judge, human) say is never stored; a hit goes through them again.
	if key != "" && v.internalErr == "" && v.Tier <= TierRego {
		p.cache.Add(key, cachedVerdict{v: v, action: action})
	}
	return p.escalate(ctx, call, action, v, opt), action, nil
}

// hasApprovals reports whether an escalation tier knows approval requests for the call (see
// ApprovalState). A failing or panicking check counts as yes: the call is then evaluated in full.
func (p *Pipeline) hasApprovals(ctx context.Context, call *Call, action *normalize.Action, hash string, opt EvalOptions) (found bool) {
	defer func() {
		if r := recover(); r != nil {
			found = true
		}
	}()
	var in *Input
	for _, t := range p.cfg.Escalation {
		as, ok := t.(ApprovalState)
		if !ok {
			continue
		}
		if in == nil {
			in = &Input{Call: call, Action: action, ActionHash: hash, DryRun: opt.DryRun}
		}
		if ok, err := as.HasApprovals(ctx, in); ok || err != nil {
			return true
		}
	}
	return false
}

// normalize runs the normaliser on its own goroutine and waits for it at most until ctx (the
// call's budget) ends. A normaliser still running then is abandoned: it runs to completion on
// its own bounds, its result is dropped, and the shield_normalizations_abandoned gauge counts it
// meanwhile. A panic in the normaliser is an error.
func (p *Pipeline) normalize(ctx context.Context, n Normalizer, call *Call, args map[string]any) (*normalize.Action, error) {
	type result struct {
		a   *normalize.Action
		err error
	}
	const running, finished, abandoned = 0, 1, 2
	var state atomic.Int32
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if x := recover(); x != nil {
				r = result{err: fmt.Errorf("normaliser panicked: %v\n%s", x, debug.Stack())}
			}
			done <- r
			if !state.CompareAndSwap(running, finished) {
				p.cfg.Metrics.abandonedNormalization(-1)
			}
		}()
		if cn, ok := n.(ContextNormalizer); ok {
			// Stops at the budget's deadline, so an abandoned run does not go on working.
			// The labels carry what a proxy says about the tool (MCP annotations).
			r.a = cn.NormalizeContext(normalize.WithLabels(ctx, call.Context.Labels), call.Tool, args, call.Context.Cwd)
		} else {
			r.a = n.Normalize(call.Tool, args, call.Context.Cwd)
		}
		if r.a == nil {
			r.err = errors.New("normaliser returned no action")
		}
	}()
	select {
	case r := <-done:
		return r.a, r.err
	case <-ctx.Done():
		if state.CompareAndSwap(running, abandoned) {
			p.cfg.Metrics.abandonedNormalization(1)
			return nil, ctx.Err()
		}
		r := <-done // finished at the same moment: it is sent or about to be
		return r.a, r.err
	}
}

// budgetVerdict is the BLOCK of a call whose budget ran out (or whose caller went away) while
// the pipeline was at stage.
func (p *Pipeline) budgetVerdict(ctx context.Context, stage string) Verdict {
	reason := fmt.Sprintf("blocked: %s took longer than the %s budget of a decision", stage, p.cfg.Timeout)
	if errors.Is(ctx.Err(), context.Canceled) {
		reason = fmt.Sprintf("blocked: the caller went away while %s", stage)
	}
	return Verdict{Decision: Block, Tier: TierPipeline, Rules: []string{RuleTimeout}, Reason: reason,
		internalErr: fmt.Sprintf("%s: %v", stage, ctx.Err())}
}

func invalidVerdict(err error) Verdict {
	return Verdict{Decision: Block, Tier: TierPipeline, Rules: []string{RuleInvalidCall},
		Reason: "blocked: " + err.Error()}
}

// runBundleTiers evaluates tiers 0–1 and applies the class default.
// ctx carries the call's budget.
func (p *Pipeline) runBundleTiers(ctx context.Context, pol *Policy, call *Call, action *normalize.Action, hash string, opt EvalOptions) Verdict {
	in := &Input{Call: call, Action: action, ActionHash: hash, DryRun: opt.DryRun}

	var esc, allow *Verdict
	for _, t := range pol.Tiers {
		if opt.MaxTier != nil && t.Level() > *opt.MaxTier {
			break
		}
		res, err := p.runTier(ctx, t, in)
		if err != nil {
			return tierErrorVerdict(t, err)
		}
		if blk := collect(res, Block); len(blk) > 0 {
			return verdictFrom(Block, t.Level(), blk)
		}
		if e := collect(res, Escalate); len(e) > 0 && esc == nil {
			v := verdictFrom(Escalate, t.Level(), e)
			esc = &v
		}
		if a := collect(res, Allow); len(a) > 0 && allow == nil {
			v := verdictFrom(Allow, t.Level(), a)
			allow = &v
		}
	}
	var v Verdict
	switch {
	case esc != nil:
		v = *esc
	case allow != nil:
		v = *allow
	default:
		d, ok := pol.Defaults[action.Class]
		if !ok {
			d, ok = pol.Defaults["*"]
		}
		if !ok || (d != Allow && d != Block && d != Escalate) {
			d = Escalate
		}
		v = Verdict{Decision: d, Tier: TierPipeline, Rules: []string{RuleDefaultPrefix + action.Class},
			Reason: defaultReason(d, action)}
	}
	// Classes the bundle marks for review are not allowed by tiers 0–1 alone.
	if v.Decision == Allow && pol.ReviewClasses[action.Class] {
		v = Verdict{Decision: Escalate, Tier: TierPipeline, Rules: append(v.Rules, RuleReviewPrefix+action.Class),
			Reason: fmt.Sprintf("needs review: the bundle sends %s actions to review", action.Class)}
	}
	// An argument Shield could not parse, or parsed only in part because it hit a bound, never
	// yields ALLOW, whatever the rules say.
	if v.Decision == Allow && notFullyUnderstood(action) {
		v = Verdict{Decision: Escalate, Tier: TierPipeline, Rules: []string{RuleUnparsedAllowed},
			Reason: "needs review: the call could not be fully parsed, so it cannot be allowed automatically"}
	}
	return v
}

// notFullyUnderstood reports whether normalisation failed or stopped at a bound.
func notFullyUnderstood(a *normalize.Action) bool {
	return a != nil && (a.ParseError != "" || a.Truncated)
}

func defaultReason(d Decision, a *normalize.Action) string {
	switch {
	case d == Allow:
		return "allowed: no rule objected"
	case !a.Known:
		return fmt.Sprintf("needs review: tool %q is not in the catalog, and an unknown tool is never allowed without review", a.Tool)
	case d == Block:
		return fmt.Sprintf("blocked: %s actions are not allowed by default", a.Class)
	default:
		return fmt.Sprintf("needs review: %s actions require approval by default", a.Class)
	}
}

// runTier evaluates one tier, turning a panic, a timeout or a cancellation into an error.
func (p *Pipeline) runTier(ctx context.Context, t Tier, in *Input) (res Result, err error) {
	start := p.cfg.Now()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tier %s panicked: %v", t.Name(), r)
		}
		p.cfg.Metrics.tierLatency(t.Name(), p.cfg.Now().Sub(start))
	}()
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("tier %s not started: %w", t.Name(), err)
	}
	res, err = t.Evaluate(ctx, in)
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("tier %s: %w", t.Name(), ctx.Err())
	}
	return res, err
}

func tierErrorVerdict(t Tier, err error) Verdict {
	reason := fmt.Sprintf("blocked: tier %s could not evaluate the call", t.Name())
	if errors.Is(err, context.DeadlineExceeded) {
		reason = fmt.Sprintf("blocked: tier %s timed out", t.Name())
	}
	return Verdict{Decision: Block, Tier: t.Level(), Rules: []string{RuleTierError}, Reason: reason,
		internalErr: fmt.Sprintf("tier %s: %v", t.Name(), err)}
}

func collect(res Result, d Decision) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		fd := f.Decision
		if fd != Allow && fd != Escalate {
			fd = Block // an unspecified or unknown decision from a tier is a block
		}
		if fd == d {
			out = append(out, f)
		}
	}
	return out
}

func verdictFrom(d Decision, tier int, fs []Finding) Verdict {
	v := Verdict{Decision: d, Tier: tier}
	var reasons []string
	for _, f := range fs {
		v.Rules = append(v.Rules, f.Rule)
		if f.Reason != "" && len(reasons) < 3 {
			reasons = append(reasons, f.Reason)
		}
		if f.Confidence > v.Confidence {
			v.Confidence = f.Confidence
		}
	}
	sort.Strings(v.Rules)
	v.Rules = compactStrings(v.Rules)
	v.Reason = strings.Join(reasons, "; ")
	if v.Reason == "" {
		v.Reason = strings.ToLower(d.String()) + ": " + strings.Join(v.Rules, ", ")
	}
	return v
}

func sortedUnion(a, b []string) []string {
	out := append(append([]string(nil), a...), b...)
	sort.Strings(out)
	return out
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// escalate consults tiers 2–3 for a call tiers 0–1 left at ESCALATE.
func (p *Pipeline) escalate(ctx context.Context, call *Call, action *normalize.Action, v Verdict, opt EvalOptions) Verdict {
	if v.Decision != Escalate || len(p.cfg.Escalation) == 0 {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.EscalationTimeout)
	defer cancel()
	prior := v
	in := &Input{Call: call, Action: action, ActionHash: v.ActionHash, Prior: &prior, DryRun: opt.DryRun}
	for _, t := range p.cfg.Escalation {
		if opt.MaxTier != nil && t.Level() > *opt.MaxTier {
			break
		}
		res, err := p.runTier(ctx, t, in)
		if err != nil {
			bv := tierErrorVerdict(t, err)
			bv.ActionHash, bv.ActionClass = v.ActionHash, v.ActionClass
			return bv
		}
		var next Verdict
		switch {
		case len(collect(res, Block)) > 0:
			next = verdictFrom(Block, t.Level(), collect(res, Block))
		case len(collect(res, Escalate)) > 0:
			next = verdictFrom(Escalate, t.Level(), collect(res, Escalate))
		case len(collect(res, Allow)) > 0:
			next = verdictFrom(Allow, t.Level(), collect(res, Allow))
		default:
			continue // no opinion: the call stays ESCALATE
		}
		next.ActionHash, next.ActionClass = v.ActionHash, v.ActionClass
		next.EscalationID = res.EscalationID
		next.Judge = res.Judge
		if next.Judge == "" {
			next.Judge = v.Judge
		}
		if next.Decision == Escalate {
			// Still undecided: keep why the earlier tiers escalated beside what this one says.
			next.Rules = compactStrings(sortedUnion(v.Rules, next.Rules))
			if v.Reason != "" && next.Reason != v.Reason {
				next.Reason = v.Reason + "; " + next.Reason
			}
		}
		if next.Decision == Allow && notFullyUnderstood(action) && t.Level() < TierHuman {
			continue // only a human may allow what Shield could not parse
		}
		if next.Decision != Escalate {
			return next
		}
		v = next
		prior = next
	}
	return v
}

// ActionHash is the hex SHA-256 of the canonical call: the RFC 8785 (JCS) form of
// {"arguments": ARGS, "tool": TOOL}. Anyone can recompute it from the audit record.
func ActionHash(tool string, args json.RawMessage) (string, error) {
	t, err := json.Marshal(tool)
	if err != nil {
		return "", err
	}
	a := args
	if len(strings.TrimSpace(string(a))) == 0 {
		a = json.RawMessage("{}")
	}
	doc := make([]byte, 0, len(a)+len(t)+32)
	doc = append(doc, `{"arguments":`...)
	doc = append(doc, a...)
	doc = append(doc, `,"tool":`...)
	doc = append(doc, t...)
	doc = append(doc, '}')
	canon, err := jcs.Transform(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// cacheKey binds a cached verdict to everything tiers 0–1 and the normaliser can read:
//   - the bundle: its digest, and the activation number (a reload of the same digest, or an
//     evaluation finishing after a reload, never serves a verdict across activations);
//   - the exact call: the canonical action hash (tool and canonical arguments);
//   - every context field a rule may read (session, agent, runtime, cwd — the normaliser
//     resolves paths against it — the authenticated caller, and the labels);
//   - the per-call options (max tier, dry run), although only full evaluations are stored.
//
// The call id is left out on purpose (no rule reads it; every retry has a new one). Rules that
// read the clock (Rego time.now_ns) see the time of the evaluation that filled the cache.
func cacheKey(act *active, actionHash string, c *CallContext, opt EvalOptions) string {
	h := sha256.New()
	w := func(s string) {
		var n [8]byte
		l := len(s)
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	w(act.pol.Digest)
	w(strconv.FormatUint(act.gen, 10))
	w(actionHash)
	w(c.SessionID)
	w(c.AgentID)
	w(c.Runtime)
	w(c.Cwd)
	w(c.Caller)
	keys := make([]string, 0, len(c.Labels))
	for k := range c.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w(strconv.Itoa(len(keys)))
	for _, k := range keys {
		w(k)
		w(c.Labels[k])
	}
	maxTier := "all"
	if opt.MaxTier != nil {
		maxTier = strconv.Itoa(*opt.MaxTier)
	}
	w(maxTier)
	w(strconv.FormatBool(opt.DryRun))
	return string(h.Sum(nil))
}

func newDecisionID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// crypto/rand failure: fall back to a random v4 (which panics only if rand is broken).
		return uuid.NewString()
	}
	return id.String()
}
