package celrules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// NormFunc normalises a tool call; examples need one. In the service it is the Normalize method
// of the shield/normalize normaliser built from the bundle's catalog.
type NormFunc func(tool string, args map[string]any, cwd string) *normalize.Action

// Options bound evaluation. The zero value applies the defaults.
type Options struct {
	// CostLimit is the CEL runtime cost limit per rule evaluation; 0 means DefaultCostLimit.
	CostLimit uint64
	// InterruptCheckFrequency is how many comprehension iterations pass between context
	// checks; 0 means DefaultInterruptCheckFrequency.
	InterruptCheckFrequency uint
}

// Defaults of Options.
const (
	DefaultCostLimit               = 10_000_000
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
}

// Engine is the compiled Tier 0 of one bundle. It is safe for concurrent use.
type Engine struct {
	rules   []*Rule            // evaluation order: block, escalate, allow
	byClass map[string][]*Rule // rules that apply to a class, in evaluation order
	any     []*Rule            // rules with no class list (for classes not in byClass)
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
	e := newEngine(rules)
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
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize),
		cel.CostLimit(opt.CostLimit),
		cel.InterruptCheckFrequency(opt.InterruptCheckFrequency),
	)
	if err != nil {
		return nil, policy.Problems{{File: s.File, Line: s.WhenLine, Msg: fmt.Sprintf("rule %q: %v", s.ID, err)}}
	}
	d, _ := shield.ParseDecision(s.Decision)
	r := &Rule{Spec: s, decision: d, prg: prg}
	if len(s.Tools) > 0 {
		r.tools = map[string]bool{}
		for _, t := range s.Tools {
			r.tools[t] = true
		}
	}
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

func newEngine(rules []*Rule) *Engine {
	sort.SliceStable(rules, func(i, j int) bool {
		return decisionRank(rules[i].decision) < decisionRank(rules[j].decision)
	})
	e := &Engine{rules: rules, byClass: map[string][]*Rule{}}
	classes := map[string]bool{}
	for _, r := range rules {
		for _, c := range r.Spec.Classes {
			classes[c] = true
		}
	}
	for _, r := range rules {
		if len(r.Spec.Classes) == 0 {
			e.any = append(e.any, r)
		}
	}
	for c := range classes {
		for _, r := range rules {
			if len(r.Spec.Classes) == 0 || contains(r.Spec.Classes, c) {
				e.byClass[c] = append(e.byClass[c], r)
			}
		}
	}
	return e
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// activation resolves rule variables straight from the Action, without building a map.
type activation struct {
	a   *normalize.Action
	ctx *Context
}

var _ interpreter.Activation = (*activation)(nil)

func (v *activation) Parent() interpreter.Activation { return nil }

func (v *activation) ResolveName(name string) (any, bool) {
	a := v.a
	switch name {
	case "tool":
		return a.Tool, true
	case "class":
		return a.Class, true
	case "known":
		return a.Known, true
	case "args":
		if a.Args == nil {
			return map[string]any{}, true
		}
		return a.Args, true
	case "cwd":
		return a.Cwd, true
	case "workspace":
		return a.Workspace, true
	case "command":
		return a.Command, true
	case "commands":
		return a.Commands, true
	case "parse_error":
		return a.ParseError, true
	case "paths":
		return a.Paths, true
	case "urls":
		return a.URLs, true
	case "recipients":
		return a.Recipients, true
	case "body":
		return a.Body, true
	case "content":
		return a.Content, true
	case "prompt":
		return a.Prompt, true
	case "method":
		return a.Method, true
	case "strings":
		return a.Strings, true
	case "ctx":
		return v.ctx, true
	}
	return nil, false
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
// the order. Any evaluation error (cost limit, cancelled context, a missing key) is returned:
// the pipeline fails closed.
func (e *Engine) Evaluate(ctx context.Context, in *shield.Input) (shield.Result, error) {
	if in == nil || in.Action == nil {
		return shield.Result{}, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	return e.eval(ctx, in.Action, ContextOf(in.Call), nil)
}

func (e *Engine) rulesFor(class string) []*Rule {
	if rs, ok := e.byClass[class]; ok {
		return rs
	}
	return e.any
}

// eval evaluates the applicable rules; when only is non-nil, only that rule is considered.
func (e *Engine) eval(ctx context.Context, a *normalize.Action, c *Context, only *Rule) (shield.Result, error) {
	act := &activation{a: a, ctx: c}
	var res shield.Result
	escalated := false
	rules := e.rulesFor(a.Class)
	if only != nil {
		rules = []*Rule{only}
	}
	for _, r := range rules {
		if r.decision == shield.Allow && escalated {
			break
		}
		if r.tools != nil && !r.tools[a.Tool] {
			continue
		}
		if only != nil && len(r.Spec.Classes) > 0 && !contains(r.Spec.Classes, a.Class) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return shield.Result{}, fmt.Errorf("%w: %w", ErrEvaluation, err)
		}
		out, _, err := r.prg.ContextEval(ctx, act)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return shield.Result{}, fmt.Errorf("%w: rule %s: %w", ErrEvaluation, r.Spec.ID, cerr)
			}
			return shield.Result{}, fmt.Errorf("%w: rule %s: %w", ErrEvaluation, r.Spec.ID, err)
		}
		matched, ok := out.Value().(bool)
		if !ok {
			return shield.Result{}, fmt.Errorf("%w: rule %s: result %v is not a bool", ErrEvaluation, r.Spec.ID, out)
		}
		if !matched {
			continue
		}
		res.Findings = append(res.Findings, shield.Finding{
			Decision:   r.decision,
			Rule:       "cel:" + r.Spec.ID,
			Reason:     r.Spec.Message,
			Severity:   r.Spec.Severity,
			Confidence: 1,
		})
		switch r.decision {
		case shield.Block:
			return res, nil
		case shield.Escalate:
			escalated = true
		}
	}
	return res, nil
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
			e := &Engine{}
			res, err := e.eval(ctx, a, c, r)
			cancel()
			switch {
			case err != nil:
				x.Msg = err.Error()
			case (len(res.Findings) > 0) != want:
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
