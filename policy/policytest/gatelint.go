package policytest

import (
	"fmt"
	"io"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/regoeval"
)

// GateNotes lists what the rule gate (policy/gate) cannot index: CEL rules and Rego decision
// rules whose necessary condition says nothing, so they are evaluated on every call (of their
// classes), and why Rego gating is off for the whole bundle when it is. These are notes, not
// problems: an unindexed rule is correct, only slower. Nothing is listed for a bundle that
// does not compile (Lint reports that).
func GateNotes(b *policy.Bundle) []policy.Problem {
	var out []policy.Problem
	if r := celrules.Check(b, nil, celrules.Options{}); r.Engine != nil {
		for _, g := range r.Engine.RuleGates() {
			if !g.Gate.Indexed() {
				out = append(out, policy.Problem{File: g.File, Line: g.Line, Msg: fmt.Sprintf("rule %q: the gate cannot index it (evaluated on every call of its classes)", g.ID)})
			}
		}
	}
	if e, err := regoeval.Compile(b); err == nil {
		gi := e.Gates()
		if gi.Off != "" && gi.Off != "no modules" {
			out = append(out, policy.Problem{Msg: "rego: gating is off, every rule is evaluated: " + gi.Off})
		}
		for _, r := range gi.Rules {
			if !r.Gate.Indexed() {
				id := r.ID
				if id == "" {
					id = r.Name
				}
				out = append(out, policy.Problem{File: r.File, Line: r.Line, Msg: fmt.Sprintf("rego rule %q: the gate cannot index it (evaluated on every call)", id)})
			}
		}
	}
	return out
}

// WriteGateNotes prints GateNotes, one "note:" line each.
func WriteGateNotes(w io.Writer, b *policy.Bundle) {
	for _, p := range GateNotes(b) {
		fmt.Fprintf(w, "note: %s\n", p)
	}
}
