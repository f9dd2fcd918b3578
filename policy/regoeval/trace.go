package regoeval

import (
	"bytes"
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"

	"github.com/shieldsec/shield/shield"
)

// Trace modes, as `opa eval --explain`.
const (
	TraceNotes = "notes" // the trace() notes of the policy and the expressions around them
	TraceFails = "fails" // the expressions that failed (why a rule did not produce a value)
	TraceFull  = "full"  // every evaluation step
)

// MaxTraceBytes bounds the text of one trace; the rest is cut with a note.
const MaxTraceBytes = 1 << 20

// Trace evaluates the action like Evaluate with OPA's tracer on, and returns the result, the
// error (in full) and the pretty trace with file:row of each step, filtered by mode (TraceNotes,
// TraceFails or TraceFull). It is for authors (shield eval --trace), never the decision path.
func (e *Engine) Trace(ctx context.Context, in *shield.Input, mode string) (shield.Result, string, error) {
	var filter func([]*topdown.Event) []*topdown.Event
	switch mode {
	case TraceNotes:
		filter = lineage.Notes
	case TraceFails:
		filter = lineage.Fails
	case TraceFull, "":
		filter = lineage.Full
	default:
		return shield.Result{}, "", fmt.Errorf("trace mode %q is not notes, fails or full", mode)
	}
	if in == nil || in.Action == nil {
		return shield.Result{}, "", fmt.Errorf("%w: no action", ErrEvaluation)
	}
	if e.empty {
		return shield.Result{}, "(no Rego modules)\n", nil
	}
	input, err := e.authorInput(in)
	if err != nil {
		return shield.Result{}, "", fmt.Errorf("%w: input: %w", ErrEvaluation, err)
	}
	bt := topdown.NewBufferTracer()
	rs, evalErr := e.pq.Eval(ctx, rego.EvalParsedInput(input), rego.EvalQueryTracer(bt))
	var buf bytes.Buffer
	topdown.PrettyTraceWithLocation(&limitWriter{w: &buf, n: MaxTraceBytes}, filter(*bt))
	text := buf.String()
	if buf.Len() >= MaxTraceBytes {
		text += fmt.Sprintf("\n… trace cut at %d bytes\n", MaxTraceBytes)
	}
	if evalErr != nil {
		return shield.Result{}, text, fmt.Errorf("%w: %w", ErrEvaluation, evalErr)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return shield.Result{}, text, nil
	}
	if len(rs) > 1 || len(rs[0].Expressions) > 1 {
		return shield.Result{}, text, fmt.Errorf("%w: %s has %d results", ErrEvaluation, Query, len(rs))
	}
	res, err := decode(rs[0].Expressions[0].Value)
	return res, text, err
}

// limitWriter keeps the first n bytes written and discards the rest.
type limitWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
	}
	l.n -= len(q)
	if _, err := l.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// EvalTraced evaluates the action like Evaluate with a query tracer attached (a *cover.Cover
// for `shield policy test --coverage`). It is for authors, never the decision path.
func (e *Engine) EvalTraced(ctx context.Context, in *shield.Input, tracer topdown.QueryTracer) (shield.Result, error) {
	if in == nil || in.Action == nil {
		return shield.Result{}, fmt.Errorf("%w: no action", ErrEvaluation)
	}
	if e.empty {
		return shield.Result{}, nil
	}
	input, err := e.authorInput(in)
	if err != nil {
		return shield.Result{}, fmt.Errorf("%w: input: %w", ErrEvaluation, err)
	}
	rs, err := e.pq.Eval(ctx, rego.EvalParsedInput(input), rego.EvalQueryTracer(tracer), rego.EvalInterQueryBuiltinValueCache(e.values))
	if err != nil {
		return shield.Result{}, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return shield.Result{}, nil
	}
	if len(rs) > 1 || len(rs[0].Expressions) > 1 {
		return shield.Result{}, fmt.Errorf("%w: %s has %d results", ErrEvaluation, Query, len(rs))
	}
	return decode(rs[0].Expressions[0].Value)
}
