// Package policytest runs a bundle's own tests: the examples of every CEL rule and every Rego
// test (*_test.rego, with OPA's tester), and lints a bundle (compile problems, rules without
// examples, duplicate ids, unknown action classes). It backs `shield policy test` and
// `shield policy lint`, and the reload path uses Run to reject a bundle whose tests fail.
//
// policytest imports policy, policy/celrules, policy/regoeval and shield/normalize; cmd and the
// bundle activation import it.
package policytest

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
)

// Case is one test: a CEL rule example or a Rego test rule.
type Case struct {
	Kind string // "cel" or "rego"
	Name string // "<rule id> match[0]" or "<package>.<test name>"
	File string
	Line int
	Pass bool
	Skip bool   // Rego todo_ tests
	Msg  string // why it failed
}

// Report is the outcome of Run.
type Report struct {
	Revision string
	Digest   string
	// Problems are compile problems; the tests of a tier with problems are not run.
	Problems policy.Problems
	Cases    []Case
	// Coverage is set when Options.Coverage asked for it.
	Coverage *Coverage `json:",omitempty"`
	// Gate is the evaluation gate (nil when the bundle has neither a gate nor labelled cases).
	Gate *GateReport `json:",omitempty"`
	// NotRun counts the tests (CEL examples and Rego test rules) that were not run because their
	// tier did not compile; a report with NotRun > 0 is never OK.
	NotRun int
}

// OK reports whether the bundle compiled and every test passed.
func (r *Report) OK() bool {
	if len(r.Problems) > 0 || r.NotRun > 0 || !r.Gate.OK() {
		return false
	}
	for _, c := range r.Cases {
		if !c.Pass && !c.Skip {
			return false
		}
	}
	return true
}

// Err returns nil when OK, else the problems and the failed tests as policy.Problems.
func (r *Report) Err() error {
	ps := append(policy.Problems(nil), r.Problems...)
	if r.NotRun > 0 {
		ps = append(ps, policy.Problem{Msg: fmt.Sprintf("%d tests did not run (compile problems, or no compiled policy for the evaluation gate)", r.NotRun)})
	}
	for _, c := range r.Cases {
		if !c.Pass && !c.Skip {
			ps = append(ps, policy.Problem{File: c.File, Line: c.Line, Msg: fmt.Sprintf("%s test %s failed: %s", c.Kind, c.Name, c.Msg)})
		}
	}
	ps = append(ps, r.Gate.failures()...)
	return ps.Err()
}

// Counts returns the number of passed, failed and skipped tests.
func (r *Report) Counts() (pass, fail, skip int) {
	for _, c := range r.Cases {
		switch {
		case c.Skip:
			skip++
		case c.Pass:
			pass++
		default:
			fail++
		}
	}
	return
}

// Write prints the report: failures with file:line first, then a summary line. verbose also
// lists passing tests.
func (r *Report) Write(w io.Writer, verbose bool) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "ERROR %s\n", p)
	}
	for _, c := range r.Cases {
		loc := c.File
		if c.Line > 0 {
			loc = fmt.Sprintf("%s:%d", c.File, c.Line)
		}
		switch {
		case c.Skip:
			if verbose {
				fmt.Fprintf(w, "SKIP  %s: %s %s\n", loc, c.Kind, c.Name)
			}
		case c.Pass:
			if verbose {
				fmt.Fprintf(w, "PASS  %s: %s %s\n", loc, c.Kind, c.Name)
			}
		default:
			fmt.Fprintf(w, "FAIL  %s: %s %s: %s\n", loc, c.Kind, c.Name, c.Msg)
		}
	}
	pass, fail, skip := r.Counts()
	status := "ok"
	if !r.OK() {
		status = "FAIL"
	}
	r.Gate.Write(w)
	r.Coverage.Write(w, verbose)
	if r.NotRun > 0 {
		fmt.Fprintf(w, "ERROR %d tests did not run: fix the problems above first\n", r.NotRun)
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped, %d not run, %d compile problems (revision %s, %s)\n",
		status, pass, fail, skip, r.NotRun, len(r.Problems), r.Revision, r.Digest)
}

// Options configure Run. The zero value is valid.
type Options struct {
	// Timeout bounds each Rego test; 0 means 10 s.
	Timeout time.Duration
	// Policy is the bundle's compiled policy, with the normaliser of the reference workspace,
	// that the evaluation gate evaluates the labelled cases (tests/*.jsonl) with. When the bundle
	// has a gate or cases and Policy is nil (the bundle did not compile), the cases count as not
	// run and the report is not OK.
	Policy *shield.Policy
	// Coverage collects Rego line coverage (OPA's) over the Rego tests and the labelled cases,
	// and which CEL rules fired on the rule examples and the labelled cases, into
	// Report.Coverage.
	Coverage bool
}

// Run compiles the bundle's CEL rules and Rego modules and runs every CEL example (with norm)
// and every Rego test.
func Run(ctx context.Context, b *policy.Bundle, norm celrules.NormFunc, opt Options) *Report {
	rep := &Report{Revision: b.Revision, Digest: b.Digest}
	cr := celrules.Check(b, norm, celrules.Options{})
	rep.Problems = append(rep.Problems, cr.Problems...)
	if cr.Engine == nil {
		// No example of any rule ran: count them so the summary does not read as complete.
		for _, sp := range cr.Specs {
			rep.NotRun += len(sp.Examples.Match) + len(sp.Examples.NotMatch)
		}
	}
	for _, x := range cr.Examples {
		rep.Cases = append(rep.Cases, Case{Kind: "cel", Name: fmt.Sprintf("%s %s[%d]", x.Rule, x.Kind, x.Index),
			File: x.File, Line: x.Line, Pass: x.Pass, Msg: x.Msg})
	}
	var cov *cover.Cover
	if opt.Coverage {
		cov = cover.New()
	}
	cases, probs, notRun := runRego(ctx, b, opt, cov)
	rep.Problems = append(rep.Problems, probs...)
	rep.NotRun += notRun
	rep.Cases = append(rep.Cases, cases...)
	rep.Problems.Sort()
	switch {
	case opt.Policy != nil:
		rep.Gate = RunGate(ctx, b, opt.Policy)
	case b.Manifest.Gate != nil || len(b.Paths(policy.IsGateCases)) > 0:
		n := countGateCases(b)
		rep.NotRun += n
		rep.Gate = &GateReport{Configured: b.Manifest.Gate != nil, Files: b.Paths(policy.IsGateCases),
			Problems: policy.Problems{{File: policy.ManifestFile, Msg: fmt.Sprintf("evaluation gate: %d labelled cases not run: the bundle has no compiled policy", n)}}}
	}
	if cov != nil {
		rep.Coverage = collectCoverage(ctx, b, norm, cr.Engine, opt.Policy, cov)
	}
	return rep
}

func runRego(ctx context.Context, b *policy.Bundle, opt Options, cov *cover.Cover) ([]Case, policy.Problems, int) {
	p, err := regoeval.Parse(b)
	if err != nil {
		return nil, policy.AsProblems(err), countRegoTests(b)
	}
	// The serving compile (test modules excluded) must succeed on its own.
	if _, err := p.Prepare(); err != nil {
		return nil, policy.AsProblems(err), countRegoTests(b)
	}
	hasTests := false
	for f := range p.Modules {
		if regoeval.IsTestFile(f) {
			hasTests = true
		}
	}
	if !hasTests {
		return nil, nil, 0
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	store := inmem.NewFromObjectWithOpts(p.Data, inmem.OptRoundTripOnWrite(false))
	compiler := ast.NewCompiler().
		WithCapabilities(p.Capabilities).
		WithEnablePrintStatements(true).
		WithStrict(true).
		WithDefaultRegoVersion(p.RegoVersion)
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		SetDefaultRegoVersion(p.RegoVersion).
		CapturePrintOutput(true).
		SetTimeout(timeout)
	if cov != nil {
		runner.SetCoverageQueryTracer(cov)
	}
	ch, err := runner.Run(ctx, p.Modules)
	if err != nil {
		return nil, policy.AsProblems(fmt.Errorf("run rego tests: %w", regoProblems(err))), countRegoTests(b)
	}
	var cases []Case
	for r := range ch {
		c := Case{Kind: "rego", Name: strings.TrimPrefix(r.Package, "data.") + "." + r.Name, Skip: r.Skip}
		if r.Location != nil {
			c.File, c.Line = r.Location.File, r.Location.Row
		}
		switch {
		case r.Skip:
		case r.Error != nil:
			c.Msg = r.Error.Error()
		case r.Fail:
			c.Msg = "test rule is false or undefined"
			if len(r.Output) > 0 {
				c.Msg += "; output: " + strings.TrimSpace(string(r.Output))
			}
		default:
			c.Pass = true
		}
		cases = append(cases, c)
	}
	sort.SliceStable(cases, func(i, j int) bool {
		if cases[i].File != cases[j].File {
			return cases[i].File < cases[j].File
		}
		return cases[i].Line < cases[j].Line
	})
	return cases, nil, 0
}

// countRegoTests counts the test rules (test_ and todo_test_ rules) of the bundle's Rego test
// files, for the summary of a run that could not run them. A file that does not parse counts
// its lines that start a test rule.
func countRegoTests(b *policy.Bundle) int {
	n := 0
	for _, f := range b.Paths(regoeval.IsTestFile) {
		seen := map[string]bool{}
		for _, line := range strings.Split(string(b.Files[f]), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "test_") && !strings.HasPrefix(line, "todo_test_") {
				continue
			}
			name := line
			if i := strings.IndexAny(name, " ({:="); i > 0 {
				name = name[:i]
			}
			if !seen[name] {
				seen[name] = true
				n++
			}
		}
	}
	return n
}

// regoProblems turns a compile error of the test run into problems with file:line.
func regoProblems(err error) error {
	var errs ast.Errors
	if e, ok := err.(ast.Errors); ok {
		errs = e
	} else {
		return err
	}
	var ps policy.Problems
	for _, e := range errs {
		p := policy.Problem{Msg: e.Code + ": " + e.Message}
		if e.Location != nil {
			p.File, p.Line, p.Col = e.Location.File, e.Location.Row, e.Location.Col
		}
		ps = append(ps, p)
	}
	return ps.Err()
}
