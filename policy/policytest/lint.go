package policytest

import (
	"fmt"
	"io"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield/normalize"
)

// Lint severities.
const (
	LintError   = "error"
	LintWarning = "warning"
)

// LintFinding is one thing lint found.
type LintFinding struct {
	Level   string // LintError or LintWarning
	Problem policy.Problem
}

// LintReport lists lint findings sorted by file and line.
type LintReport struct {
	Findings []LintFinding
}

// Errors counts the findings of level error.
func (r *LintReport) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Level == LintError {
			n++
		}
	}
	return n
}

// Write prints one finding per line and a summary.
func (r *LintReport) Write(w io.Writer) {
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s: %s\n", f.Level, f.Problem)
	}
	fmt.Fprintf(w, "%d errors, %d warnings\n", r.Errors(), len(r.Findings)-r.Errors())
}

// Lint checks a bundle without running its tests: CEL and Rego compile problems (errors),
// duplicate rule ids (errors, across files), action classes that neither normalize.KnownClasses
// nor the bundle catalog's classes: list (errors: such a rule never fires), rules without
// examples, unguarded reads of raw argument keys (celrules.UnguardedArgs) and Rego packages or
// data outside the manifest roots (warnings).
func Lint(b *policy.Bundle) *LintReport {
	rep := &LintReport{}
	add := func(level string, ps ...policy.Problem) {
		for _, p := range ps {
			rep.Findings = append(rep.Findings, LintFinding{Level: level, Problem: p})
		}
	}
	// Examples are not run here (Check with a nil normaliser would report each as failed).
	cr := celrules.Check(b, nil, celrules.Options{})
	add(LintError, cr.Problems...)

	classes := map[string]bool{}
	for _, c := range normalize.KnownClasses {
		classes[c] = true
	}
	var cat struct {
		Classes []string `yaml:"classes"`
	}
	if data := b.Catalog(); data != nil {
		if err := yaml.Unmarshal(data, &cat); err != nil {
			add(LintError, policy.YAMLProblems(policy.CatalogFile, err)...)
		}
	}
	for _, c := range cat.Classes {
		classes[c] = true
	}
	for _, s := range cr.Specs {
		for _, c := range s.Classes {
			if !classes[c] {
				add(LintError, policy.Problem{File: s.File, Line: s.Line, Msg: fmt.Sprintf("rule %q: unknown action class %q (the rule never fires)", s.ID, c)})
			}
		}
		if acc, err := celrules.UnguardedArgs(s); err != nil {
			add(LintError, policy.Problem{File: s.File, Line: s.Line, Msg: fmt.Sprintf("rule %q: %v", s.ID, err)})
		} else {
			for _, a := range acc {
				add(LintWarning, policy.Problem{File: s.File, Line: a.Line, Col: a.Col, Msg: fmt.Sprintf(
					"rule %q: args.%s is read unguarded: a call without that key (another tool of the class, e.g. cmd or script for a command) makes the rule fail and the call BLOCK; guard it with has(args.%s) && …, \"%s\" in args, or a tool filter",
					s.ID, a.Key, a.Key, a.Key)})
			}
		}
		if len(s.Examples.Match) == 0 {
			add(LintWarning, policy.Problem{File: s.File, Line: s.Line, Msg: fmt.Sprintf("rule %q: no match examples", s.ID)})
		}
		if len(s.Examples.NotMatch) == 0 {
			add(LintWarning, policy.Problem{File: s.File, Line: s.Line, Msg: fmt.Sprintf("rule %q: no not_match examples", s.ID)})
		}
	}
	for c := range b.Defaults.Classes {
		if !classes[c] {
			add(LintError, policy.Problem{File: policy.DefaultsFile, Msg: fmt.Sprintf("unknown action class %q", c)})
		}
	}
	if p, err := regoeval.Parse(b); err != nil {
		add(LintError, policy.AsProblems(err)...)
	} else {
		add(LintWarning, p.CheckRoots(b)...)
		if _, err := p.Prepare(); err != nil {
			add(LintError, policy.AsProblems(err)...)
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i].Problem, rep.Findings[j].Problem
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return rep
}
