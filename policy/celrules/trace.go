package celrules

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/shieldsec/shield/shield"
)

// RuleTrace is one rule evaluated on its own for a policy author (shield eval --trace): whether
// it applied, matched or failed, and the value of every sub-expression that decided it.
type RuleTrace struct {
	Rule     string      `json:"rule"`
	File     string      `json:"file"`
	Line     int         `json:"line"`
	Decision string      `json:"decision"`
	Applies  bool        `json:"applies"` // the rule's class and tool filters hold
	Matched  bool        `json:"matched"`
	Error    string      `json:"error,omitempty"` // the full runtime error, as the pipeline saw it
	Steps    []TraceStep `json:"steps,omitempty"`
}

// TraceStep is one sub-expression of a rule's condition and the value it had. Logical operators
// (&&, ||, !, ?:) are opened up; any other expression (a call, a comparison, a macro such as
// exists) is one step with its value.
type TraceStep struct {
	Depth int    `json:"depth"`
	Expr  string `json:"expr"`
	Value string `json:"value"`
}

// maxTraceValue bounds the text of one value in a trace.
const maxTraceValue = 200

// Trace evaluates rules of the action's class one by one, with exhaustive evaluation and state
// tracking, and returns what decided each. ids names the rules to trace; when empty, the rules
// that matched or failed are traced (the ones that decided the tier's result). Trace is for
// authors: it compiles a tracing program per rule on every call and must not be used on the
// decision path.
func (e *Engine) Trace(ctx context.Context, in *shield.Input, ids []string) ([]RuleTrace, error) {
	if in == nil || in.Action == nil {
		return nil, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	env, err := cel.NewEnv(append(envOptions(), cel.EnableMacroCallTracking())...)
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[strings.TrimPrefix(id, "cel:")] = true
	}
	act := &activation{a: in.Action, ctx: ContextOf(in.Call), adapter: e.adapter}
	var out []RuleTrace
	for _, r := range e.rules {
		if len(want) > 0 && !want[r.Spec.ID] {
			continue
		}
		applies := (len(r.Spec.Classes) == 0 || contains(r.Spec.Classes, in.Action.Class)) && (r.tools == nil || r.tools[in.Action.Tool])
		rt := RuleTrace{Rule: "cel:" + r.Spec.ID, File: r.Spec.File, Line: r.Spec.Line, Decision: r.decision.String(), Applies: applies}
		if !applies {
			if len(want) > 0 {
				out = append(out, rt)
			}
			continue
		}
		matched, evalErr := evalRule(ctx, r, act)
		rt.Matched = matched
		if evalErr != nil {
			rt.Error = evalErr.Error()
		}
		if len(want) == 0 && !matched && evalErr == nil {
			continue
		}
		steps, err := traceRule(ctx, env, r, act)
		if err != nil {
			if rt.Error == "" {
				rt.Error = err.Error()
			}
		}
		rt.Steps = steps
		out = append(out, rt)
	}
	return out, nil
}

// traceRule compiles the rule's condition for tracing, evaluates it exhaustively and walks its
// syntax tree.
func traceRule(ctx context.Context, env *cel.Env, r *Rule, act *activation) ([]TraceStep, error) {
	checked, iss := env.Compile(r.Spec.When)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("compile for tracing: %w", iss.Err())
	}
	prg, err := env.Program(checked,
		cel.EvalOptions(cel.OptExhaustiveEval),
		cel.CostLimit(DefaultCostLimit),
		cel.InterruptCheckFrequency(DefaultInterruptCheckFrequency))
	if err != nil {
		return nil, fmt.Errorf("program for tracing: %w", err)
	}
	_, det, evalErr := prg.ContextEval(ctx, act)
	if det == nil || det.State() == nil {
		return nil, evalErr
	}
	native := checked.NativeRep()
	t := &tracer{info: native.SourceInfo(), state: det.State()}
	t.walk(native.Expr(), 0)
	return t.steps, nil
}

type tracer struct {
	info  *ast.SourceInfo
	state interpreter.EvalState
	steps []TraceStep
}

// logical returns the operands of a logical operator, flattening chains of the same operator
// (the parser balances a && b && c into a tree), or nil when e is not one.
func logical(e ast.Expr) (op string, args []ast.Expr) {
	if e.Kind() != ast.CallKind {
		return "", nil
	}
	c := e.AsCall()
	switch c.FunctionName() {
	case "_&&_", "_||_":
		op = c.FunctionName()
		var flat func(x ast.Expr)
		flat = func(x ast.Expr) {
			if x.Kind() == ast.CallKind && x.AsCall().FunctionName() == op {
				for _, a := range x.AsCall().Args() {
					flat(a)
				}
				return
			}
			args = append(args, x)
		}
		flat(e)
		return op, args
	case "!_", "_?_:_":
		return c.FunctionName(), c.Args()
	}
	return "", nil
}

func (t *tracer) walk(e ast.Expr, depth int) {
	op, args := logical(e)
	text := t.text(e)
	if op != "" {
		label := map[string]string{"_&&_": "all of (&&)", "_||_": "any of (||)", "!_": "not", "_?_:_": "if ? then : else"}[op]
		if depth == 0 {
			label += ": " + clip(text, 120)
		}
		t.steps = append(t.steps, TraceStep{Depth: depth, Expr: label, Value: t.value(e)})
		for _, a := range args {
			t.walk(a, depth+1)
		}
		return
	}
	t.steps = append(t.steps, TraceStep{Depth: depth, Expr: text, Value: t.value(e)})
}

func (t *tracer) text(e ast.Expr) string {
	s, err := cel.ExprToString(e, t.info)
	if err != nil {
		return fmt.Sprintf("<expression %d>", e.ID())
	}
	return newlines.ReplaceAllString(s, " ")
}

// newlines are line breaks with the indentation around them, shown as one space.
var newlines = regexp.MustCompile(`[ \t]*\r?\n[ \t]*`)

// value is the recorded value of an expression: true, false, an error, or (for anything else)
// its text, clipped.
func (t *tracer) value(e ast.Expr) string {
	v, ok := t.state.Value(e.ID())
	if !ok || v == nil {
		return "not evaluated"
	}
	return valueText(v)
}

func valueText(v ref.Val) string {
	switch x := v.(type) {
	case *types.Err:
		return "error: " + x.String()
	case types.Bool:
		if x {
			return "true"
		}
		return "false"
	case types.String:
		return clip(fmt.Sprintf("%q", string(x)), maxTraceValue)
	}
	if types.IsUnknown(v) {
		return "unknown"
	}
	return clip(fmt.Sprint(v.Value()), maxTraceValue)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
