package policytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// Coverage is what the bundle's tests exercised: for Rego, OPA's line coverage of the non-test
// modules over the Rego tests and the labelled cases of the gate; for CEL, which rules ever
// fired on a rule example (any rule's) or a labelled case.
type Coverage struct {
	// RegoPercent is the share of Rego lines covered, 0–100 (-1: no Rego module).
	RegoPercent float64        `json:"rego_percent"`
	Rego        []RegoCoverage `json:"rego,omitempty"`
	// CELPercent is the share of CEL rules that fired at least once, 0–100 (-1: no rule).
	CELPercent float64       `json:"cel_percent"`
	CEL        []CELCoverage `json:"cel,omitempty"`
	// Errors are evaluation errors met while collecting CEL coverage (by input).
	Errors []string `json:"errors,omitempty"`
}

// RegoCoverage is one Rego file.
type RegoCoverage struct {
	File       string   `json:"file"`
	Percent    float64  `json:"percent"`
	Covered    int      `json:"covered_lines"`
	NotCovered []string `json:"not_covered,omitempty"` // row ranges: "12", "40-44"
}

// CELCoverage is one CEL rule: how many inputs it fired on.
type CELCoverage struct {
	Rule string `json:"rule"`
	File string `json:"file"`
	Line int    `json:"line"`
	// OwnExamples counts its own match examples it fired on; OtherExamples the examples of other
	// rules (match or not_match); Cases the labelled cases of the gate.
	OwnExamples   int `json:"own_examples"`
	OtherExamples int `json:"other_examples"`
	Cases         int `json:"cases"`
}

// Fired reports whether the rule fired on anything.
func (c CELCoverage) Fired() bool { return c.OwnExamples+c.OtherExamples+c.Cases > 0 }

// Below returns what is under min (a percentage): the Rego total and the CEL share of rules
// that fired. A tier with nothing to cover is not below.
func (c *Coverage) Below(min float64) []string {
	var out []string
	if c.RegoPercent >= 0 && c.RegoPercent < min {
		out = append(out, fmt.Sprintf("rego line coverage %.1f%% is below %.1f%%", c.RegoPercent, min))
	}
	if c.CELPercent >= 0 && c.CELPercent < min {
		out = append(out, fmt.Sprintf("cel rules fired %.1f%% is below %.1f%%", c.CELPercent, min))
	}
	return out
}

// Write prints the coverage: each Rego file with its uncovered rows, the CEL rules that never
// fired and (verbose) every rule's counts.
func (c *Coverage) Write(w io.Writer, verbose bool) {
	if c == nil {
		return
	}
	if c.RegoPercent < 0 {
		fmt.Fprintln(w, "coverage rego: no modules")
	}
	for _, f := range c.Rego {
		fmt.Fprintf(w, "coverage rego %-32s %6.1f%%", f.File, f.Percent)
		if len(f.NotCovered) > 0 {
			fmt.Fprintf(w, "  not covered: %s", strings.Join(f.NotCovered, ", "))
		}
		fmt.Fprintln(w)
	}
	if c.RegoPercent >= 0 {
		fmt.Fprintf(w, "coverage rego TOTAL %.1f%% of lines (Rego tests and labelled cases)\n", c.RegoPercent)
	}
	fired := 0
	for _, r := range c.CEL {
		if r.Fired() {
			fired++
		}
		if verbose || !r.Fired() {
			state := "fired"
			if !r.Fired() {
				state = "NEVER FIRED"
			}
			fmt.Fprintf(w, "coverage cel  %s:%d %s: %s (own examples %d, other examples %d, labelled cases %d)\n",
				r.File, r.Line, r.Rule, state, r.OwnExamples, r.OtherExamples, r.Cases)
		}
	}
	if c.CELPercent >= 0 {
		fmt.Fprintf(w, "coverage cel  TOTAL %d/%d rules fired = %.1f%% (on rule examples and labelled cases)\n", fired, len(c.CEL), c.CELPercent)
	} else {
		fmt.Fprintln(w, "coverage cel: no rules")
	}
	for _, e := range c.Errors {
		fmt.Fprintf(w, "coverage error: %s\n", e)
	}
}

// regoCover returns OPA's coverage of the bundle's non-test modules.
func regoCover(b *policy.Bundle, cov *cover.Cover) (float64, []RegoCoverage) {
	p, err := regoeval.Parse(b)
	if err != nil {
		return -1, nil
	}
	mods := map[string]*ast.Module{}
	for f, m := range p.Modules {
		if !regoeval.IsTestFile(f) {
			mods[f] = m
		}
	}
	if len(mods) == 0 {
		return -1, nil
	}
	rep := cov.Report(mods)
	var out []RegoCoverage
	covered, notCovered := 0, 0
	for f, fr := range rep.Files {
		if mods[f] == nil {
			continue // a test module: its own lines are not what the tests cover
		}
		covered += fr.CoveredLines
		notCovered += fr.NotCoveredLines
		rc := RegoCoverage{File: f, Percent: fr.Coverage, Covered: fr.CoveredLines}
		for _, r := range fr.NotCovered {
			if r.Start.Row == r.End.Row {
				rc.NotCovered = append(rc.NotCovered, fmt.Sprint(r.Start.Row))
			} else {
				rc.NotCovered = append(rc.NotCovered, fmt.Sprintf("%d-%d", r.Start.Row, r.End.Row))
			}
		}
		out = append(out, rc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	if covered+notCovered == 0 {
		return 0, out
	}
	return 100 * float64(covered) / float64(covered+notCovered), out
}

// celCover evaluates every rule example and every labelled case with every applicable rule and
// counts what fired.
func celCover(ctx context.Context, e *celrules.Engine, norm celrules.NormFunc, cases []*shield.Input) ([]CELCoverage, []string) {
	specs := e.Rules()
	byID := map[string]*CELCoverage{}
	out := make([]CELCoverage, len(specs))
	for i, s := range specs {
		out[i] = CELCoverage{Rule: s.ID, File: s.File, Line: s.Line}
		byID[s.ID] = &out[i]
	}
	var errs []string
	for _, x := range e.ExampleInputs(norm) {
		ids, err := e.Matches(ctx, x.Input)
		if err != nil && len(errs) < 20 {
			errs = append(errs, fmt.Sprintf("example %s %s[%d]: %v", x.Rule, x.Kind, x.Index, err))
		}
		for _, id := range ids {
			if id == x.Rule && x.Kind == "match" {
				byID[id].OwnExamples++
			} else {
				byID[id].OtherExamples++
			}
		}
	}
	for _, in := range cases {
		ids, err := e.Matches(ctx, in)
		if err != nil && len(errs) < 20 {
			errs = append(errs, fmt.Sprintf("labelled case %s: %v", in.Call.ID, err))
		}
		for _, id := range ids {
			byID[id].Cases++
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, errs
}

// caseInputs normalises the bundle's labelled cases with pol's normaliser (nil when there is no
// policy); cases whose arguments do not decode are left out (the gate reports them).
func caseInputs(b *policy.Bundle, pol *shield.Policy) []*shield.Input {
	if pol == nil || pol.Normalizer == nil {
		return nil
	}
	_, cases, _ := readGateCases(b)
	var out []*shield.Input
	for _, c := range cases {
		var raw json.RawMessage = c.Arguments
		args, err := normalize.DecodeArguments(raw, normalize.Limits{})
		if err != nil {
			continue
		}
		call := &shield.Call{ID: c.ID, Tool: c.Tool, Arguments: c.Arguments}
		cwd := ""
		if c.Context != nil {
			cwd = c.Context.Cwd
			call.Context = shield.CallContext{Cwd: cwd, SessionID: c.Context.SessionID, AgentID: c.Context.AgentID,
				Runtime: c.Context.Runtime, Labels: c.Context.Labels}
		}
		a := pol.Normalizer.Normalize(c.Tool, args, cwd)
		if a == nil {
			continue
		}
		out = append(out, &shield.Input{Call: call, Action: a})
	}
	return out
}

// regoEngine returns the Rego tier of a policy.
func regoEngine(pol *shield.Policy) *regoeval.Engine {
	if pol == nil {
		return nil
	}
	for _, t := range pol.Tiers {
		if e, ok := t.(*regoeval.Engine); ok {
			return e
		}
	}
	return nil
}

// collectCoverage finishes the coverage of a run: the labelled cases through Rego (into cov,
// which already holds the Rego tests) and every example and case through CEL.
func collectCoverage(ctx context.Context, b *policy.Bundle, norm celrules.NormFunc, e *celrules.Engine, pol *shield.Policy, cov *cover.Cover) *Coverage {
	c := &Coverage{RegoPercent: -1, CELPercent: -1}
	cases := caseInputs(b, pol)
	if rg := regoEngine(pol); rg != nil {
		for _, in := range cases {
			_, _ = rg.EvalTraced(ctx, in, cov) // errors are the gate's to report
		}
	}
	c.RegoPercent, c.Rego = regoCover(b, cov)
	if e != nil && norm != nil {
		c.CEL, c.Errors = celCover(ctx, e, norm, cases)
		if len(c.CEL) > 0 {
			fired := 0
			for _, r := range c.CEL {
				if r.Fired() {
					fired++
				}
			}
			c.CELPercent = 100 * float64(fired) / float64(len(c.CEL))
		}
	}
	return c
}
