package regoeval

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/shieldsec/shield/shield"
)

// EvalTracedForTest evaluates like Evaluate (same gate bits, same pruned input) with a query tracer
// attached (OPA's profiler in the profiling benchmark); it reports how many decision rules'
// gates were open and whether evaluation ran at all.
func (e *Engine) EvalTracedForTest(ctx context.Context, in *shield.Input, tr topdown.QueryTracer) (open int, ran bool, err error) {
	bits := make([]bool, len(e.gates))
	for i, g := range e.gates {
		bits[i] = e.ungated || g.Holds(in.Action)
		if bits[i] {
			open++
		}
	}
	if e.gates != nil && open == 0 {
		return 0, false, nil
	}
	input, err := inputValue(in.Action, in.Call, e.keep)
	if err != nil {
		return open, false, err
	}
	if e.gateInput {
		input.(ast.Object).Insert(key(gateInputKey), gateTerm(bits))
	}
	ectx := ctx
	if !e.gateInput {
		ectx = context.WithValue(ctx, gateKey{}, bits)
	}
	_, err = e.pq.Eval(ectx, rego.EvalParsedInput(input), rego.EvalQueryTracer(tr), rego.EvalInterQueryBuiltinValueCache(e.values))
	return open, true, err
}

// EvalBitsForTest evaluates with the gate of rule i open when force(i, whether it holds) says so.
func (e *Engine) EvalBitsForTest(ctx context.Context, in *shield.Input, force func(i int, open bool) bool) error {
	bits := make([]bool, len(e.gates))
	for i, g := range e.gates {
		bits[i] = force(i, g.Holds(in.Action))
	}
	_, err := e.run(ctx, in, bits)
	return err
}

// InputValuePrunedForTest builds the input as Evaluate does (the keys the modules name).
func InputValuePrunedForTest(e *Engine, in *shield.Input) (ast.Value, error) {
	return inputValue(in.Action, in.Call, e.keep)
}

// Dispatched is the number of functions dispatched on an argument's field.
func (e *Engine) Dispatched() int { return e.dispatched }

// RegexCalls is the number of regex.match calls the served modules make through the
// prefiltered built-in.
func (e *Engine) RegexCalls() int { return e.regexCalls }
