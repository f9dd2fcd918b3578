package celrules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/gate"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// NormFunc normalises a tool call; examples need one. In the service it is the Normalize method
// of the shield/normalize normaliser built from the bundle's catalog.
type NormFunc func(tool string, args map[string]any, cwd string) *normalize.Action

// Options bound evaluation. The zero value applies the defaults.
type Options struct {
	// CostLimit bounds the static worst-case cost of each rule (cel-go's cost estimator, with
	// the normaliser's bounds on list sizes and string lengths: cost.go); a rule over it is
	// refused at load. 0 means DefaultCostLimit. Evaluation has no runtime cost tracker: the
	// context (the pipeline's tier timeout) stops a long evaluation, which then fails closed.
	CostLimit uint64
	// InterruptCheckFrequency is how many comprehension iterations pass between context
	// checks; 0 means DefaultInterruptCheckFrequency.
	InterruptCheckFrequency uint
	// NoGate evaluates every rule that applies to the class, whatever its gate, and every
	// regular expression without its literal prefilter: the reference the differential test
	// compares the gated engine with.
	NoGate bool
}

// Defaults of Options.
const (
	// DefaultCostLimit is ~5.6e14. Worst cases multiply every list at its bound by every
	// string at its bound, so estimates are loose: the default bundle's costliest rule estimates
	// at ~4e13; three comprehensions nested over the call's strings at 7.7e14 (refused).
	DefaultCostLimit               = 1 << 49
	DefaultInterruptCheckFrequency = 100
)

// ErrEvaluation is wrapped by every error Evaluate returns.
var ErrEvaluation = errors.New("cel evaluation")

// Rule is a compiled rule.
type Rule struct {
	Spec     RuleSpec
	decision shield.Decision
	tools    map[string]bool // nil: all tools
	prg      cel.Program
	// gate is a necessary condition for the rule to be true or to fail (gate.go); nil when
	// nothing is known, and the rule is always evaluated.
	gate *gate.Cond
	// cost is the static cost estimate of the rule's condition (the maximum).
	cost uint64
}

// Gate returns the rule's necessary condition (nil: always evaluated).
func (r *Rule) Gate() *gate.Cond { return r.gate }

// Cost returns the static cost estimate of the rule's condition.
func (r *Rule) Cost() uint64 { return r.cost }

// Engine is the compiled Tier 0 of one bundle. It is safe for concurrent use.
type Engine struct {
	rules   []*Rule                  // evaluation order: block, escalate, allow
	byClass map[string]*classProgram // the rules that apply to a class
	any     *classProgram            // rules with no class list (for classes not in byClass)
	adapter types.Adapter
	ungated bool // evaluate every rule whatever its gate (the differential test's reference)
}

var _ shield.Tier = (*Engine)(nil)

// Level is 0.
func (e *Engine) Level() int { return shield.TierCEL }

// Name is "cel".
func (e *Engine) Name() string { return "cel" }

// RuleCount is the number of compiled rules.
func (e *Engine) RuleCount() int { return len(e.rules) }

// Rules returns the specs of the compiled rules in evaluation order.
func (e *Engine) Rules() []RuleSpec {
	out := make([]RuleSpec, len(e.rules))
	for i, r := range e.rules {
		out[i] = r.Spec
	}
	return out
}

// ExampleResult is the outcome of one example.
type ExampleResult struct {
	Rule  string
	File  string
	Line  int
	Kind  string // "match" or "not_match"
	Index int
	Tool  string
	Pass  bool
	Msg   string // why it failed
}

// Report is what Check found.
type Report struct {
	// Engine is nil when there are compile problems.
	Engine *Engine
	// Specs are every rule that decoded, in file order, even when some did not compile.
	Specs []RuleSpec
	// Problems are compile problems (YAML, fields, CEL, duplicate ids), not example failures.
	Problems policy.Problems
	// Examples are the example results in file and line order (empty when there are compile
	// problems).
	Examples []ExampleResult
}

// Failed returns the failed examples as problems.
func (r *Report) Failed() policy.Problems {
	var ps policy.Problems
	for _, x := range r.Examples {
		if !x.Pass {
			ps = append(ps, policy.Problem{File: x.File, Line: x.Line, Msg: fmt.Sprintf("rule %q: example %s[%d] (%s): %s", x.Rule, x.Kind, x.Index, x.Tool, x.Msg)})
		}
	}
	return ps
}

// Compile parses, type-checks and prepares every CEL rule of the bundle and runs their examples
// with norm. Every problem (including failing examples) is returned at once as policy.Problems.
func Compile(b *policy.Bundle, norm NormFunc) (*Engine, error) {
	return CompileOptions(b, norm, Options{})
}

// CompileOptions is Compile with evaluation bounds.
func CompileOptions(b *policy.Bundle, norm NormFunc, opt Options) (*Engine, error) {
	r := Check(b, norm, opt)
	probs := append(r.Problems, r.Failed()...)
	if err := probs.Err(); err != nil {
		return nil, fmt.Errorf("compile cel rules: %w", err)
	}
	return r.Engine, nil
}

// Check compiles the bundle's rules and runs their examples, reporting everything it finds.
func Check(b *policy.Bundle, norm NormFunc, opt Options) *Report {
	rep := &Report{}
	env, err := newEnv()
	if err != nil {
		rep.Problems = policy.Problems{{Msg: fmt.Sprintf("cel environment: %v", err)}}
		return rep
	}
	if opt.CostLimit == 0 {
		opt.CostLimit = DefaultCostLimit
	}
	if opt.InterruptCheckFrequency == 0 {
		opt.InterruptCheckFrequency = DefaultInterruptCheckFrequency
	}
	var rules []*Rule
	seen := map[string]RuleSpec{}
	for _, file := range b.Paths(IsRuleFile) {
		specs, probs := ParseFile(file, b.Files[file])
		rep.Problems = append(rep.Problems, probs...)
		rep.Specs = append(rep.Specs, specs...)
		for _, s := range specs {
			if prev, dup := seen[s.ID]; dup && s.ID != "" {
				rep.Problems = append(rep.Problems, policy.Problem{File: s.File, Line: s.Line,
					Msg: fmt.Sprintf("rule %q: duplicate id (first at %s:%d)", s.ID, prev.File, prev.Line)})
				continue
			}
			seen[s.ID] = s
			r, probs := compileRule(env, s, opt)
			rep.Problems = append(rep.Problems, probs...)
			if r != nil {
				rules = append(rules, r)
			}
		}
	}
	if len(rep.Problems) > 0 {
		rep.Problems.Sort()
		return rep
	}
	e, probs := newEngine(env, rules, opt)
	if len(probs) > 0 {
		rep.Problems = probs
		return rep
	}
	rep.Engine = e
	for _, r := range rules {
		rep.Examples = append(rep.Examples, runExamples(r, norm)...)
	}
	sort.SliceStable(rep.Examples, func(i, j int) bool {
		a, b := rep.Examples[i], rep.Examples[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return rep
}

func compileRule(env *cel.Env, s RuleSpec, opt Options) (*Rule, policy.Problems) {
	if s.When == "" {
		return nil, nil // reported by checkSpec
	}
	ast, iss := env.Compile(s.When)
	if iss != nil && iss.Err() != nil {
		var probs policy.Problems
		for _, e := range iss.Errors() {
			line, col := e.Location.Line(), e.Location.Column()
			p := policy.Problem{File: s.File, Msg: fmt.Sprintf("rule %q: %s", s.ID, e.Message)}
			if s.WhenLine > 0 && line > 0 {
				p.Line = s.WhenLine + line - 1
				if line == 1 && s.WhenCol > 0 {
					p.Col = s.WhenCol + col
				}
			} else {
				p.Line = s.Line
			}
			probs = append(probs, p)
		}
		return nil, probs
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		return nil, policy.Problems{{File: s.File, Line: s.WhenLine, Msg: fmt.Sprintf("rule %q: when has type %s, want bool", s.ID, ast.OutputType())}}
	}
	est, err := env.EstimateCost(ast, sizeEstimator{})
	if err != nil {
		return nil, policy.Problems{{File: s.File, Line: s.WhenLine, Msg: fmt.Sprintf("rule %q: estimate cost: %v", s.ID, err)}}
	}
	if est.Max > opt.CostLimit {
		return nil, policy.Problems{{File: s.File, Line: s.WhenLine, Msg: fmt.Sprintf("rule %q: worst-case cost %d is over the bound %d (nested iterations over calls' lists and strings multiply; guard with sets.intersects(names, [...]) or narrow the comprehension)", s.ID, est.Max, opt.CostLimit)}}
	}
	prg, err := env.Program(ast, programOptions(opt)...)
	if err != nil {
		return nil, policy.Problems{{File: s.File, Line: s.WhenLine, Msg: fmt.Sprintf("rule %q: %v", s.ID, err)}}
	}
	d, _ := shield.ParseDecision(s.Decision)
	r := &Rule{Spec: s, decision: d, prg: prg, cost: est.Max}
	var toolCond *gate.Cond
	if len(s.Tools) > 0 {
		r.tools = map[string]bool{}
		for _, t := range s.Tools {
			r.tools[t] = true
		}
		toolCond = gate.In(gate.FieldTool, s.Tools...)
	}
	r.gate = gate.And(toolCond, condOf(ast.NativeRep().Expr()))
	return r, nil
}

func decisionRank(d shield.Decision) int {
	switch d {
	case shield.Block:
		return 0
	case shield.Escalate:
		return 1
	default:
		return 2
	}
}

// classProgram is one CEL program evaluating every rule that applies to a class at once: a
// list literal with one bool per rule, each guarded by the rule's tool filter. One program per
// class pays the per-evaluation set-up (frame, cost tracker, context check) once, not per rule.
type classProgram struct {
	rules []*Rule
	prg   cel.Program
}

func newEngine(env *cel.Env, rules []*Rule, opt Options) (*Engine, policy.Problems) {
	sort.SliceStable(rules, func(i, j int) bool {
		return decisionRank(rules[i].decision) < decisionRank(rules[j].decision)
	})
	e := &Engine{rules: rules, byClass: map[string]*classProgram{}, adapter: env.CELTypeAdapter(), ungated: opt.NoGate}
	var probs policy.Problems
	// The fused programs read one gate variable per rule (__g0, __g1, … by position in the
	// program); rules compile without them, so no rule can name one.
	gates := make([]cel.EnvOption, len(rules))
	for i := range rules {
		gates[i] = cel.Variable(gateVar(i), cel.BoolType)
	}
	fenv, err := env.Extend(gates...)
	if err != nil {
		return nil, policy.Problems{{Msg: fmt.Sprintf("cel environment: %v", err)}}
	}
	build := func(name string, rs []*Rule) *classProgram {
		cp, err := fuse(fenv, rs, opt)
		if err != nil {
			probs = append(probs, policy.Problem{Msg: fmt.Sprintf("fuse the rules of class %q: %v", name, err)})
		}
		return cp
	}
	var any []*Rule
	classes := map[string]bool{}
	for _, r := range rules {
		if len(r.Spec.Classes) == 0 {
			any = append(any, r)
		}
		for _, c := range r.Spec.Classes {
			classes[c] = true
		}
	}
	e.any = build("*", any)
	for c := range classes {
		var rs []*Rule
		for _, r := range rules {
			if len(r.Spec.Classes) == 0 || contains(r.Spec.Classes, c) {
				rs = append(rs, r)
			}
		}
		e.byClass[c] = build(c, rs)
	}
	return e, probs
}

// gateVar names the gate variable of the rule at position i of a fused program. The name is
// not a CEL identifier a rule could declare: rules compile in an environment without it.
func gateVar(i int) string { return "__g" + strconv.Itoa(i) }

// fuse compiles the rules' conditions into one program. Every condition already compiled on
// its own, so each is a complete expression; newlines keep a trailing // comment from
// swallowing what follows. Each rule is guarded by its gate variable: false && x is false
// without evaluating x (and without its errors, which the gate accounts for: see gate.go).
func fuse(env *cel.Env, rules []*Rule, opt Options) (*classProgram, error) {
	cp := &classProgram{rules: rules}
	if len(rules) == 0 {
		return cp, nil
	}
	var b strings.Builder
	b.WriteString("[")
	for i, r := range rules {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n(" + gateVar(i) + " && ")
		if len(r.Spec.Tools) > 0 {
			b.WriteString("tool in [")
			for j, t := range r.Spec.Tools {
				if j > 0 {
					b.WriteString(",")
				}
				b.WriteString(strconv.Quote(t))
			}
			b.WriteString("] && ")
		}
		b.WriteString("(\n")
		b.WriteString(r.Spec.When)
		b.WriteString("\n))")
	}
	b.WriteString("\n]")
	ast, iss := env.Compile(b.String())
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	prg, err := env.Program(ast, programOptions(opt)...)
	if err != nil {
		return nil, err
	}
	cp.prg = prg
	return cp, nil
}

func programOptions(opt Options) []cel.ProgramOption {
	o := []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize),
		cel.InterruptCheckFrequency(opt.InterruptCheckFrequency),
	}
	if !opt.NoGate {
		// Constant patterns of matches run behind their literal prefilter (regexfilter.go); the
		// ungated reference runs every regular expression as cel-go compiles it.
		o = append(o, cel.OptimizeRegex(prefilteredMatches()...))
	}
	return o
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// activation resolves rule variables straight from the Action, without building a map, and
// converts each to a CEL value at most once per evaluation (a fused program reads `commands`
// once per rule that names it).
type activation struct {
	a       *normalize.Action
	ctx     *Context
	adapter types.Adapter
	cache   [numVars]ref.Val
	gates   []bool // by position in the fused program; nil when evaluating one rule alone
}

var _ interpreter.Activation = (*activation)(nil)

func (v *activation) Parent() interpreter.Activation { return nil }

const numVars = 24

// varIndex maps a variable name to its slot in activation.cache; -1 when unknown.
func varIndex(name string) int {
	switch name {
	case "tool":
		return 0
	case "class":
		return 1
	case "known":
		return 2
	case "args":
		return 3
	case "cwd":
		return 4
	case "workspace":
		return 5
	case "command":
		return 6
	case "commands":
		return 7
	case "parse_error":
		return 8
	case "paths":
		return 9
	case "urls":
		return 10
	case "recipients":
		return 11
	case "body":
		return 12
	case "content":
		return 13
	case "prompt":
		return 14
	case "method":
		return 15
	case "strings":
		return 16
	case "truncated":
		return 17
	case "ctx":
		return 18
	case "names":
		return 19
	case "effects":
		return 20
	case "flows":
		return 21
	case "unresolved":
		return 22
	case "unknown_programs":
		return 23
	}
	return -1
}

func (v *activation) native(i int) any {
	a := v.a
	switch i {
	case 0:
		return a.Tool
	case 1:
		return a.Class
	case 2:
		return a.Known
	case 3:
		if a.Args == nil {
			return map[string]any{}
		}
		return a.Args
	case 4:
		return a.Cwd
	case 5:
		return a.Workspace
	case 6:
		return a.Command
	case 7:
		return a.Commands
	case 8:
		return a.ParseError
	case 9:
		return a.Paths
	case 10:
		return a.URLs
	case 11:
		return a.Recipients
	case 12:
		return a.Body
	case 13:
		return a.Content
	case 14:
		return a.Prompt
	case 15:
		return a.Method
	case 16:
		return a.Strings
	case 17:
		return a.Truncated
	case 20:
		return a.Effects
	case 21:
		return a.Flows
	case 22:
		return a.Unresolved
	case 23:
		return a.UnknownPrograms
	case 19:
		names := make([]string, len(a.Commands))
		for i := range a.Commands {
			names[i] = a.Commands[i].Name
		}
		return names
	default:
		return v.ctx
	}
}

func (v *activation) ResolveName(name string) (any, bool) {
	i := varIndex(name)
	if i < 0 {
		if g, ok := strings.CutPrefix(name, "__g"); ok && v.gates != nil {
			n, err := strconv.Atoi(g)
			if err != nil || n < 0 || n >= len(v.gates) {
				return nil, false
			}
			return types.Bool(v.gates[n]), true
		}
		return nil, false
	}
	if v.adapter == nil {
		return v.native(i), true
	}
	if c := v.cache[i]; c != nil {
		return c, true
	}
	c := v.adapter.NativeToValue(v.native(i))
	v.cache[i] = c
	return c, true
}

// ContextOf converts the pipeline's call context into the ctx variable.
func ContextOf(c *shield.Call) *Context {
	if c == nil {
		return &Context{}
	}
	return &Context{
		SessionID: c.Context.SessionID,
		AgentID:   c.Context.AgentID,
		Runtime:   c.Context.Runtime,
		Caller:    c.Context.Caller,
		Labels:    c.Context.Labels,
	}
}

// Evaluate runs the rules that apply to the action's class and tool. See the package doc for
// how matches combine. Any evaluation error (cost limit, cancelled context, a missing key) is
// returned: the pipeline fails closed.
func (e *Engine) Evaluate(ctx context.Context, in *shield.Input) (shield.Result, error) {
	if in == nil || in.Action == nil {
		return shield.Result{}, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	cp := e.programFor(in.Action.Class)
	if cp == nil || len(cp.rules) == 0 {
		return shield.Result{}, ctxErr(ctx)
	}
	gates := make([]bool, len(cp.rules))
	open := 0
	for i, r := range cp.rules {
		if e.ungated || r.gate.Holds(in.Action) {
			gates[i] = true
			open++
		}
	}
	if open == 0 {
		return shield.Result{}, ctxErr(ctx)
	}
	return e.evalFused(ctx, cp, &activation{a: in.Action, ctx: ContextOf(in.Call), adapter: e.adapter, gates: gates})
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	return nil
}

func (e *Engine) programFor(class string) *classProgram {
	if cp, ok := e.byClass[class]; ok {
		return cp
	}
	return e.any
}

// rulesFor returns the rules that apply to a class, in evaluation order.
func (e *Engine) rulesFor(class string) []*Rule {
	if cp := e.programFor(class); cp != nil {
		return cp.rules
	}
	return nil
}

func (e *Engine) evalFused(ctx context.Context, cp *classProgram, act *activation) (shield.Result, error) {
	if err := ctxErr(ctx); err != nil {
		return shield.Result{}, err
	}
	out, _, err := cp.prg.ContextEval(ctx, act)
	if err != nil {
		if cerr := ctxErr(ctx); cerr != nil {
			return shield.Result{}, cerr
		}
		// Name the rule that failed: evaluate them one by one (error path only).
		for i, r := range cp.rules {
			if !act.gates[i] {
				continue
			}
			if _, rerr := evalRule(ctx, r, act); rerr != nil {
				return shield.Result{}, rerr
			}
		}
		return shield.Result{}, fmt.Errorf("%w: %d rules of class %q together: %w", ErrEvaluation, len(cp.rules), act.a.Class, err)
	}
	list, ok := out.(traits.Lister)
	if !ok || list.Size() != types.Int(len(cp.rules)) {
		return shield.Result{}, fmt.Errorf("%w: fused result %v is not a list of %d", ErrEvaluation, out, len(cp.rules))
	}
	matched := make([]bool, len(cp.rules))
	for i := range cp.rules {
		b, ok := list.Get(types.Int(i)).(types.Bool)
		if !ok {
			return shield.Result{}, fmt.Errorf("%w: rule %s: result is not a bool", ErrEvaluation, cp.rules[i].Spec.ID)
		}
		matched[i] = bool(b)
	}
	return combine(cp.rules, matched), nil
}

// combine reports the matched rules of the strongest decision: every matched block rule if
// any, else every matched escalate rule, else every matched allow rule. rules are in
// evaluation order.
func combine(rules []*Rule, matched []bool) shield.Result {
	var res shield.Result
	for _, want := range []shield.Decision{shield.Block, shield.Escalate, shield.Allow} {
		for i, r := range rules {
			if matched[i] && r.decision == want {
				res.Findings = append(res.Findings, shield.Finding{
					Decision:   r.decision,
					Rule:       "cel:" + r.Spec.ID,
					Reason:     r.Spec.Message,
					Severity:   r.Spec.Severity,
					Confidence: 1,
				})
			}
		}
		if len(res.Findings) > 0 {
			return res
		}
	}
	return res
}

// evalRule evaluates one rule (its class and tool filters included).
func evalRule(ctx context.Context, r *Rule, act *activation) (bool, error) {
	if len(r.Spec.Classes) > 0 && !contains(r.Spec.Classes, act.a.Class) {
		return false, nil
	}
	if r.tools != nil && !r.tools[act.a.Tool] {
		return false, nil
	}
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	out, _, err := r.prg.ContextEval(ctx, act)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return false, fmt.Errorf("%w: rule %s: %w", ErrEvaluation, r.Spec.ID, cerr)
		}
		return false, fmt.Errorf("%w: rule %s: %w", ErrEvaluation, r.Spec.ID, err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("%w: rule %s: result %v is not a bool", ErrEvaluation, r.Spec.ID, out)
	}
	return bool(b), nil
}

// exampleTimeout bounds one example evaluation at load.
const exampleTimeout = 5 * time.Second

func runExamples(r *Rule, norm NormFunc) []ExampleResult {
	var out []ExampleResult
	run := func(kind string, want bool, calls []ExampleCall) {
		for i, call := range calls {
			x := ExampleResult{Rule: r.Spec.ID, File: r.Spec.File, Line: call.Line, Kind: kind, Index: i, Tool: call.Tool}
			if x.Line == 0 {
				x.Line = r.Spec.Line
			}
			if norm == nil {
				x.Msg = "no normaliser to run examples with"
				out = append(out, x)
				continue
			}
			a := norm(call.Tool, call.Arguments, call.Context.Cwd)
			if a == nil {
				x.Msg = "the normaliser returned no action"
				out = append(out, x)
				continue
			}
			c := &Context{SessionID: call.Context.SessionID, AgentID: call.Context.AgentID,
				Runtime: call.Context.Runtime, Caller: call.Context.Caller, Labels: call.Context.Labels}
			ctx, cancel := context.WithTimeout(context.Background(), exampleTimeout)
			got, err := evalRule(ctx, r, &activation{a: a, ctx: c})
			cancel()
			switch {
			case err != nil:
				x.Msg = err.Error()
			case got != want:
				if want {
					x.Msg = fmt.Sprintf("did not match (class %q)", a.Class)
				} else {
					x.Msg = fmt.Sprintf("matched (class %q)", a.Class)
				}
			default:
				x.Pass = true
			}
			out = append(out, x)
		}
	}
	run("match", true, r.Spec.Examples.Match)
	run("not_match", false, r.Spec.Examples.NotMatch)
	return out
}
