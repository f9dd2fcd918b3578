package regoeval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/cache"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/gate"
	"github.com/shieldsec/shield/shield"
)

// Query is the document the engine evaluates.
const Query = "data.shield.decision"

// ErrEvaluation is wrapped by every error Evaluate returns.
var ErrEvaluation = errors.New("rego evaluation")

// Engine is the prepared Tier 1 of one bundle. It is safe for concurrent use.
type Engine struct {
	pq    rego.PreparedEvalQuery
	empty bool // no modules: no opinion on anything
	rules int
	// gates are the decision rules' gates, by the index their gate call carries; nil when
	// gating is off (gate.go). ungated evaluates every rule (the differential test's reference).
	gates   []*gate.Cond
	ungated bool
	info    *GateInfo
	// keep are the top-level input keys the modules reference; nil builds the whole input
	// (inputuse.go).
	keep map[string]bool
	// gateInput: the gate bits are the input's gateInputKey array, not the gate built-in's.
	gateInput bool
	inline    bool // Options.CallerGoroutine
	// dispatched is the number of functions dispatched on an argument's field (dispatch.go).
	dispatched int
	// regexCalls is the number of regex.match calls served through the engine's prefiltered
	// built-in (regexmatch.go); regex holds its compiled patterns.
	regexCalls int
	regex      *regexTable
	// values is the engine's inter-query cache of built-in state: compiled regular expressions
	// and the prefix/suffix tries of strings.any_prefix_match / any_suffix_match (see
	// builtinValueCacheEntries).
	values cache.InterQueryValueCache
	// vocab holds a shared term for each string the served modules and the data name (input.go
	// uses them for equal strings of the input instead of allocating its own).
	vocab map[string]*ast.Term
}

// builtinValueCacheEntries bounds the engine's cache of built-in state. Without a cache of its
// own, OPA keeps compiled regular expressions in one process-wide map of 100 entries and evicts
// one at random when it is full: the default bundle names more than 100 distinct patterns, so
// every evaluation recompiled some of them (a quarter of the Rego tier's CPU). A pattern built
// from the input (none in the default bundle) takes an entry too; the bound keeps such a bundle
// from holding more than this many compiled patterns.
const builtinValueCacheEntries = 2048

// Options change how a bundle is prepared. The zero value is what the service uses.
type Options struct {
	// NoGate evaluates every rule whatever its gate: the reference the differential test
	// compares the gated engine with.
	NoGate bool
	// FullInput builds every key of the input, referenced or not: the reference for input
	// pruning.
	FullInput bool
	// CallerGoroutine evaluates on the caller's goroutine, never on an evaluation goroutine
	// (evalpool.go): the reference for benchmarks and the differential test.
	CallerGoroutine bool
	// NoDispatch serves the functions as written (dispatch.go): the reference for benchmarks.
	NoDispatch bool
	// NoRegexFilter serves regex.match as written (regexmatch.go): the reference for benchmarks.
	NoRegexFilter bool
}

// InputKeys returns the top-level input keys built for each evaluation, sorted; nil when the
// whole input is built.
func (e *Engine) InputKeys() []string {
	if e.keep == nil {
		return nil
	}
	keys := make([]string, 0, len(e.keep))
	for k := range e.keep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Gates returns what the gate analysis found (for lint and tests).
func (e *Engine) Gates() *GateInfo {
	if e.info == nil {
		return &GateInfo{Off: "no modules"}
	}
	return e.info
}

var _ shield.Tier = (*Engine)(nil)

// Level is 1.
func (e *Engine) Level() int { return shield.TierRego }

// Name is "rego".
func (e *Engine) Name() string { return "rego" }

// RuleCount is the number of rules in the non-test modules.
func (e *Engine) RuleCount() int { return e.rules }

// compileTimeout bounds preparing the query.
const compileTimeout = 30 * time.Second

// Compile parses and compiles the bundle's non-test modules and data and prepares the query.
// Every problem is returned at once, with file:line, as policy.Problems.
func Compile(b *policy.Bundle) (*Engine, error) {
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("compile rego: %w", err)
	}
	return p.Prepare()
}

// CompileOptions is Compile with options.
func CompileOptions(b *policy.Bundle, opt Options) (*Engine, error) {
	p, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("compile rego: %w", err)
	}
	return p.PrepareOptions(opt)
}

// Prepare compiles the parsed non-test modules and prepares the query.
func (p *Parsed) Prepare() (*Engine, error) { return p.PrepareOptions(Options{}) }

// PrepareOptions is Prepare with options.
func (p *Parsed) PrepareOptions(opt Options) (*Engine, error) {
	e := &Engine{ungated: opt.NoGate, inline: opt.CallerGoroutine}
	entries := builtinValueCacheEntries
	e.values = cache.NewInterQueryValueCache(context.Background(), &cache.Config{
		InterQueryBuiltinValueCache: cache.InterQueryBuiltinValueCacheConfig{MaxNumEntries: &entries},
	})
	opts := []func(*rego.Rego){
		rego.Query(Query),
		rego.Store(NewStore(p.Data)),
		rego.Capabilities(p.Capabilities),
		rego.SetRegoVersion(p.RegoVersion),
		// Strict mode, as `opa check --strict`: unused local variables and function arguments,
		// unused and duplicate imports, deprecated built-ins and shadowed input/data are errors,
		// so a rule whose condition silently stopped constraining anything does not go live.
		rego.Strict(true),
		gateFunction,
	}
	files := make([]string, 0, len(p.Modules))
	for f := range p.Modules {
		if !IsTestFile(f) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		e.empty = true
		return e, nil
	}
	info, gates := analyzeGates(p, files)
	e.info = info
	if !opt.FullInput {
		e.keep = referencedInput(p, files)
	}
	// The gate bits travel in the input (an indexed reference, no built-in call) when the
	// modules reach the input only by constant keys, none of them the gate's: they cannot see
	// it. Otherwise (the input used whole, or no pruning) through the gate built-in.
	e.gateInput = e.keep != nil && !e.keep[gateInputKey]
	served := make(map[string]*ast.Module, len(files))
	for _, f := range files {
		m := p.Modules[f]
		e.rules += len(m.Rules)
		if g := gates[f]; len(g) > 0 {
			m = m.Copy()
			for i, r := range m.Rules {
				if c, ok := g[i]; ok {
					x := gateExpr(len(e.gates), r.Location)
					if e.gateInput {
						x = gateInputExpr(len(e.gates), r.Location)
					}
					r.Body = append(ast.Body{x}, r.Body...)
					e.gates = append(e.gates, c)
				}
			}
		}
		served[f] = m
	}
	if !opt.NoDispatch {
		served, e.dispatched = dispatchFunctions(served)
	}
	if !opt.NoRegexFilter {
		e.regex = newRegexTable()
		served, e.regexCalls = rewriteRegexMatch(served, e.regex)
		opts = append(opts, e.regex.function())
	}
	for _, f := range files {
		opts = append(opts, rego.ParsedModule(served[f]))
	}
	e.vocab = vocabulary(served, p.Data)
	ctx, cancel := context.WithTimeout(context.Background(), compileTimeout)
	defer cancel()
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("compile rego: %w", astProblems("", err).Err())
	}
	e.pq = pq
	return e, nil
}

// NewStore is the data store of a bundle's evaluations: the data converted to Rego values once,
// when the bundle loads (a round trip through JSON first, so that whatever a data file decoded
// to converts), and read as such; without it every evaluation converted each data document it
// read (the whole effects configuration, every list) from Go values again.
func NewStore(data map[string]any) storage.Store {
	return inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(true), inmem.OptReturnASTValuesOnRead(true))
}

// Evaluate evaluates data.shield.decision with the action as input (see the package doc).
func (e *Engine) Evaluate(ctx context.Context, in *shield.Input) (shield.Result, error) {
	if in == nil || in.Action == nil {
		return shield.Result{}, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	if err := ctx.Err(); err != nil {
		return shield.Result{}, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if e.empty {
		return shield.Result{}, nil
	}
	var bits []bool
	if e.gates != nil {
		bits = make([]bool, len(e.gates))
		open := false
		for i, g := range e.gates {
			bits[i] = e.ungated || g.Holds(in.Action)
			open = open || bits[i]
		}
		if !open {
			return shield.Result{}, nil // no decision rule can fire: the decision is empty
		}
	}
	return e.run(ctx, in, bits)
}

// noMetrics is the metrics of every evaluation: OPA otherwise allocates a fresh set (and a timer
// per stage) for each evaluation, which nothing reads.
var noMetrics = metrics.NoOp()

// resultTerm keeps a result as the term the evaluation produced: decodeTerm reads the decision
// document as Rego values, with no conversion to Go maps and slices first (OPA's default
// converts every set, object and string of the document).
func resultTerm(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }

// run evaluates the prepared query on the call's input with the given gate bits (nil: no
// gates) and decodes the decision document.
func (e *Engine) run(ctx context.Context, in *shield.Input, bits []bool) (shield.Result, error) {
	input, err := buildInput(in.Action, in.Call, e.keep, e.vocab)
	if err != nil {
		return shield.Result{}, fmt.Errorf("%w: input: %w", ErrEvaluation, err)
	}
	if e.gateInput {
		input.(ast.Object).Insert(key(gateInputKey), gateTerm(bits))
	}
	// Cancellation without a goroutine per evaluation: the context's own cancellation calls
	// the interpreter's Cancel (OPA otherwise starts a goroutine to wait on ctx.Done()).
	cancel := topdown.NewCancel()
	stop := context.AfterFunc(ctx, cancel.Cancel)
	ectx := ctx
	if !e.gateInput && bits != nil {
		ectx = context.WithValue(ctx, gateKey{}, bits) // for the gate built-in
	}
	var rs rego.ResultSet
	eval := func() {
		rs, err = e.pq.Eval(ectx, rego.EvalParsedInput(input), rego.EvalExternalCancel(cancel),
			rego.EvalInterQueryBuiltinValueCache(e.values), rego.EvalMetrics(noMetrics), rego.EvalGenerateJSON(resultTerm))
	}
	if e.inline {
		eval()
	} else {
		onEvalStack(eval)
	}
	stop()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return shield.Result{}, fmt.Errorf("%w: %w", ErrEvaluation, cerr)
		}
		return shield.Result{}, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return shield.Result{}, nil // undefined: no opinion
	}
	if len(rs) > 1 || len(rs[0].Expressions) > 1 {
		return shield.Result{}, fmt.Errorf("%w: %s has %d results", ErrEvaluation, Query, len(rs))
	}
	t, ok := rs[0].Expressions[0].Value.(*ast.Term)
	if !ok {
		return decode(rs[0].Expressions[0].Value)
	}
	return decodeTerm(t.Value)
}

var decisionKeys = []struct {
	key string
	d   shield.Decision
}{
	{"deny", shield.Block},
	{"escalate", shield.Escalate},
	{"allow", shield.Allow},
}

// decode checks a decision document against the output contract and turns it into findings.
func decode(v any) (shield.Result, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return shield.Result{}, fmt.Errorf("%w: %s is %T, want an object", ErrEvaluation, Query, v)
	}
	// Keys in order, so that a document with several faults always reports the same one.
	for _, k := range sortedKeys(obj) {
		switch k {
		case "deny", "escalate", "allow":
		default:
			return shield.Result{}, fmt.Errorf("%w: %s has unknown key %q", ErrEvaluation, Query, k)
		}
	}
	var res shield.Result
	for _, dk := range decisionKeys {
		raw, ok := obj[dk.key]
		if !ok || raw == nil {
			continue
		}
		list, ok := raw.([]any)
		if !ok {
			return shield.Result{}, fmt.Errorf("%w: %s.%s is %T, want an array or a set", ErrEvaluation, Query, dk.key, raw)
		}
		start := len(res.Findings)
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return shield.Result{}, fmt.Errorf("%w: %s.%s[%d] is %T, want an object", ErrEvaluation, Query, dk.key, i, item)
			}
			f := shield.Finding{Decision: dk.d, Confidence: 1}
			for _, k := range sortedKeys(m) {
				x := m[k]
				s, ok := x.(string)
				if !ok {
					return shield.Result{}, fmt.Errorf("%w: %s.%s[%d].%s is %T, want a string", ErrEvaluation, Query, dk.key, i, k, x)
				}
				switch k {
				case "rule":
					f.Rule = "rego:" + s
				case "reason":
					f.Reason = s
				case "severity":
					f.Severity = s
				default:
					return shield.Result{}, fmt.Errorf("%w: %s.%s[%d] has unknown key %q", ErrEvaluation, Query, dk.key, i, k)
				}
			}
			if f.Rule == "rego:" || f.Rule == "" {
				return shield.Result{}, fmt.Errorf("%w: %s.%s[%d] has no rule id", ErrEvaluation, Query, dk.key, i)
			}
			res.Findings = append(res.Findings, f)
		}
		part := res.Findings[start:]
		sort.SliceStable(part, func(i, j int) bool { return part[i].Rule < part[j].Rule })
	}
	return res, nil
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ProblemsOf returns the problems of a Compile error (for linters).
func ProblemsOf(err error) policy.Problems { return policy.AsProblems(err) }

var _ = ast.RegoV1

// gateKey carries an evaluation's gate bits ([]bool) in its context.
type gateKey struct{}

// gateFunction is the built-in each gated decision rule calls first: true when the rule's gate
// holds for the call. Without bits (an evaluation outside Evaluate) every gate is open.
var gateFunction = rego.Function1(&rego.Function{
	Name:             gateBuiltin,
	Decl:             types.NewFunction(types.Args(types.N), types.B),
	Nondeterministic: true, // never folded or cached: the bits change per evaluation
}, func(bctx rego.BuiltinContext, op *ast.Term) (*ast.Term, error) {
	bits, _ := bctx.Context.Value(gateKey{}).([]bool)
	n, _ := op.Value.(ast.Number)
	i, ok := n.Int()
	if !ok || bits == nil || i < 0 || i >= len(bits) {
		return ast.BooleanTerm(true), nil
	}
	return ast.BooleanTerm(bits[i]), nil
})

// authorInput is the input of an evaluation for authors (Trace, EvalTraced): the whole input,
// every gate open.
func (e *Engine) authorInput(in *shield.Input) (ast.Value, error) {
	input, err := InputValue(in.Action, in.Call)
	if err != nil || !e.gateInput {
		return input, err
	}
	bits := make([]bool, len(e.gates))
	for i := range bits {
		bits[i] = true
	}
	input.(ast.Object).Insert(key(gateInputKey), gateTerm(bits))
	return input, nil
}

// gateInputKey is the input key that carries the gate bits when no module can see it.
const gateInputKey = "shield_internal_gate"

// gateTerm is the indices of the open gates, as an array of numbers in increasing order.
func gateTerm(bits []bool) *ast.Term {
	terms := make([]*ast.Term, 0, len(bits))
	for i, b := range bits {
		if b {
			terms = append(terms, ast.InternedTerm(i))
		}
	}
	return ast.ArrayTerm(terms...)
}

// gateInputExpr is `i in input.shield_internal_gate`, the first expression of gated decision
// rule i when the open gates travel in the input. OPA's rule index answers it before the body
// runs, and answers it for all decision rules at once: a constant's membership in an input
// collection is one level of the index (the collection is resolved once and each of its
// elements looked up), where one reference per rule (input.shield_internal_gate[i] = true, the
// carrier before) gave the index one level per rule, each resolved on every path through it
// (BenchmarkRegoOverhead/allclosed: the index took half of an evaluation with every gate
// closed).
func gateInputExpr(i int, loc *ast.Location) *ast.Expr {
	// Fresh terms (never interned ones): their locations are set below.
	ref := ast.RefTerm(ast.VarTerm("input"), ast.StringTerm(gateInputKey))
	x := ast.Member.Expr(ast.IntNumberTerm(i), ref)
	x.Location = loc
	for _, t := range x.Terms.([]*ast.Term) {
		t.Location = loc
	}
	ast.WalkTerms(ref, func(t *ast.Term) bool { t.Location = loc; return false })
	return x
}

// gateExpr is the call of the gate built-in for decision rule i.
func gateExpr(i int, loc *ast.Location) *ast.Expr {
	x := ast.NewExpr([]*ast.Term{ast.NewTerm(ast.MustParseRef(gateBuiltin)), ast.IntNumberTerm(i)})
	x.Location = loc
	for _, t := range x.Terms.([]*ast.Term) {
		t.Location = loc
	}
	return x
}
