package celrules

import (
	"context"
	"fmt"

	"github.com/shieldsec/shield/shield"
)

// Matches evaluates, one by one, every rule that applies to the action's class and tool and
// returns the ids of those that matched (whatever their decision: Evaluate reports only the
// strongest). It is for coverage (`shield policy test --coverage`), never the decision path.
func (e *Engine) Matches(ctx context.Context, in *shield.Input) ([]string, error) {
	if in == nil || in.Action == nil {
		return nil, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	act := &activation{a: in.Action, ctx: ContextOf(in.Call), adapter: e.adapter}
	var ids []string
	var firstErr error
	for _, r := range e.rulesFor(in.Action.Class) {
		ok, err := evalRule(ctx, r, act)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			ids = append(ids, r.Spec.ID)
		}
	}
	return ids, firstErr
}

// ExampleInputs returns every example of every rule as an input (normalised with norm), with
// the rule and kind it belongs to, for coverage.
func (e *Engine) ExampleInputs(norm NormFunc) []ExampleInput {
	var out []ExampleInput
	for _, r := range e.rules {
		for _, set := range []struct {
			kind  string
			calls []ExampleCall
		}{{"match", r.Spec.Examples.Match}, {"not_match", r.Spec.Examples.NotMatch}} {
			for i, call := range set.calls {
				a := norm(call.Tool, call.Arguments, call.Context.Cwd)
				if a == nil {
					continue
				}
				c := &shield.Call{Tool: call.Tool, Context: shield.CallContext{SessionID: call.Context.SessionID,
					AgentID: call.Context.AgentID, Runtime: call.Context.Runtime, Caller: call.Context.Caller,
					Labels: call.Context.Labels, Cwd: call.Context.Cwd}}
				out = append(out, ExampleInput{Rule: r.Spec.ID, Kind: set.kind, Index: i, Input: &shield.Input{Call: c, Action: a}})
			}
		}
	}
	return out
}

// ExampleInput is one rule example ready to evaluate.
type ExampleInput struct {
	Rule  string
	Kind  string
	Index int
	Input *shield.Input
}
