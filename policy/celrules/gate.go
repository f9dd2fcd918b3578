package celrules

import (
	"regexp"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/shieldsec/shield/policy/gate"
)

// condOf derives a necessary condition for a rule's `when` to evaluate to true or to fail (an
// error fails the call closed, so a rule that can fail must run too). nil: nothing is known.
//
// The shapes recognised, with why each is sound under CEL's commutative logic (false && error
// is false, true || error is true):
//
//	a && b                       cond(a) ∧ cond(b): the result is true or an error only if
//	                             neither operand is false
//	a || b                       cond(a) ∨ cond(b): false || false is false
//	class == 'x', class in [...] class ∈ set (likewise tool, method); class != 'x' and
//	!(class in [...])            class ∉ set: these variables are strings, never an error
//	v != ''                      v not empty (any string variable: body, command, …)
//	v.matches('re')              v matches re (CEL's matches is Go's RE2, as the gate's)
//	sets.intersects(names, [..]) a command name in the set; 'x' in names likewise
//	L.exists(v, p)               L not empty ∧ cond(p), for L a list variable or a list field
//	                             of a bound element (c.args): these never fail, and exists is
//	                             true or an error only if p is for some element
//	v.name == 'x', v.name in [..]  (v ranging over commands) a command name in the set
//	v.kind == 'x', v.kind in [..]  (v ranging over effects) an effect kind in the set
//
// Everything else is nil. A name shadowed by a comprehension variable is not the action's.
func condOf(e ast.Expr) *gate.Cond {
	return (&condWalker{scope: map[string]string{}}).cond(e)
}

type condWalker struct {
	// scope maps a bound comprehension variable to the action list it ranges over ("commands",
	// "effects"), or "" when it ranges over anything else.
	scope map[string]string
}

func (w *condWalker) cond(e ast.Expr) *gate.Cond {
	switch e.Kind() {
	case ast.CallKind:
		return w.call(e.AsCall())
	case ast.ComprehensionKind:
		return w.exists(e.AsComprehension())
	}
	return nil
}

func (w *condWalker) call(c ast.CallExpr) *gate.Cond {
	args := c.Args()
	switch c.FunctionName() {
	case operators.LogicalAnd:
		var cs []*gate.Cond
		for _, a := range args {
			cs = append(cs, w.cond(a))
		}
		return gate.And(cs...)
	case operators.LogicalOr:
		var cs []*gate.Cond
		for _, a := range args {
			cs = append(cs, w.cond(a))
		}
		return gate.Or(cs...)
	case operators.LogicalNot:
		if len(args) != 1 || args[0].Kind() != ast.CallKind {
			return nil
		}
		in := args[0].AsCall()
		f, set, ok := w.stringTest(in)
		if !ok {
			return nil
		}
		return gate.NotIn(f, set...)
	case operators.Equals, operators.In:
		if f, set, ok := w.stringTest(c); ok {
			return gate.In(f, set...)
		}
		if c.FunctionName() == operators.In && len(args) == 2 {
			// 'x' in names
			if s, ok := stringLit(args[0]); ok && w.isVar(args[1], "names") {
				return gate.In(gate.FieldNames, s)
			}
		}
		return w.elementTest(c)
	case operators.NotEquals:
		if len(args) != 2 {
			return nil
		}
		if f, s, ok := w.varEqLit(args[0], args[1]); ok {
			if s == "" {
				return gate.NonEmpty(f)
			}
			return gate.NotIn(f, s)
		}
		return nil
	case "matches":
		// v.matches('re') on a string variable: CEL's matches is Go's RE2 regexp.
		if c.IsMemberFunction() && len(args) == 1 {
			for _, name := range stringVars {
				if w.isVar(c.Target(), name) {
					if p, ok := stringLit(args[0]); ok {
						if re, err := regexp.Compile(p); err == nil {
							return gate.Match(gate.StringField(name), re)
						}
					}
				}
			}
		}
	case "sets.intersects":
		if len(args) != 2 {
			return nil
		}
		for i := range 2 {
			if w.isVar(args[i], "names") {
				if set, ok := stringList(args[1-i]); ok {
					return gate.In(gate.FieldNames, set...)
				}
			}
		}
	}
	return nil
}

// stringTest recognises `v == 'x'`, `'x' == v` and `v in ['x', …]` for v one of the action's
// string variables tool, class, method.
func (w *condWalker) stringTest(c ast.CallExpr) (gate.Field, []string, bool) {
	args := c.Args()
	if len(args) != 2 {
		return 0, nil, false
	}
	switch c.FunctionName() {
	case operators.Equals:
		if f, s, ok := w.varEqLit(args[0], args[1]); ok {
			return f, []string{s}, true
		}
	case operators.In:
		for _, name := range []string{"tool", "class", "method"} {
			if w.isVar(args[0], name) {
				if set, ok := stringList(args[1]); ok {
					return gate.StringField(name), set, true
				}
			}
		}
	}
	return 0, nil, false
}

// stringVars are the action's string variables an atom can test.
var stringVars = []string{"tool", "class", "method", "body", "content", "prompt", "command", "parse_error"}

func (w *condWalker) varEqLit(a, b ast.Expr) (gate.Field, string, bool) {
	for _, p := range [][2]ast.Expr{{a, b}, {b, a}} {
		for _, name := range stringVars {
			if w.isVar(p[0], name) {
				if s, ok := stringLit(p[1]); ok {
					return gate.StringField(name), s, true
				}
			}
		}
	}
	return 0, "", false
}

// elementTest recognises v.name == 'x' / v.name in [...] for v over commands and v.kind == 'x'
// / v.kind in [...] for v over effects.
func (w *condWalker) elementTest(c ast.CallExpr) *gate.Cond {
	args := c.Args()
	if len(args) != 2 {
		return nil
	}
	field := func(e ast.Expr) gate.Field {
		if e.Kind() != ast.SelectKind {
			return gate.FieldNone
		}
		s := e.AsSelect()
		if s.IsTestOnly() || s.Operand().Kind() != ast.IdentKind {
			return gate.FieldNone
		}
		switch over, bound := w.scope[s.Operand().AsIdent()]; {
		case !bound:
			return gate.FieldNone
		case over == "commands" && s.FieldName() == "name":
			return gate.FieldNames
		case over == "effects" && s.FieldName() == "kind":
			return gate.FieldEffectKinds
		}
		return gate.FieldNone
	}
	switch c.FunctionName() {
	case operators.Equals:
		for _, p := range [][2]ast.Expr{{args[0], args[1]}, {args[1], args[0]}} {
			if f := field(p[0]); f != gate.FieldNone {
				if s, ok := stringLit(p[1]); ok {
					return gate.In(f, s)
				}
			}
		}
	case operators.In:
		if f := field(args[0]); f != gate.FieldNone {
			if set, ok := stringList(args[1]); ok {
				return gate.In(f, set...)
			}
		}
	}
	return nil
}

// exists recognises the expansion of L.exists(v, p) (parser.MakeExists): accumulator false,
// step accu || p, result accu.
func (w *condWalker) exists(c ast.ComprehensionExpr) *gate.Cond {
	if c.HasIterVar2() {
		return nil
	}
	init := c.AccuInit()
	if init.Kind() != ast.LiteralKind || init.AsLiteral() != types.False {
		return nil
	}
	res := c.Result()
	if res.Kind() != ast.IdentKind || res.AsIdent() != c.AccuVar() {
		return nil
	}
	step := c.LoopStep()
	if step.Kind() != ast.CallKind || step.AsCall().FunctionName() != operators.LogicalOr || len(step.AsCall().Args()) != 2 {
		return nil
	}
	sa := step.AsCall().Args()
	if sa[0].Kind() != ast.IdentKind || sa[0].AsIdent() != c.AccuVar() {
		return nil
	}
	// The range must never fail: an action list variable, or a list field of a bound element.
	var over string
	var nonEmpty *gate.Cond
	r := c.IterRange()
	switch r.Kind() {
	case ast.IdentKind:
		name := r.AsIdent()
		if _, shadowed := w.scope[name]; shadowed {
			return nil
		}
		f := gate.ListField(name)
		if f == gate.FieldNone || f == gate.FieldArgs {
			return nil
		}
		over, nonEmpty = name, gate.NonEmpty(f)
	case ast.SelectKind:
		s := r.AsSelect()
		if s.IsTestOnly() || s.Operand().Kind() != ast.IdentKind {
			return nil
		}
		elem, bound := w.scope[s.Operand().AsIdent()]
		if !bound || elem != "commands" {
			return nil
		}
		switch s.FieldName() {
		case "args", "argv", "redirects", "env":
		default:
			return nil
		}
	default:
		return nil
	}
	prev, had := w.scope[c.IterVar()]
	w.scope[c.IterVar()] = over
	pc := w.cond(sa[1])
	if had {
		w.scope[c.IterVar()] = prev
	} else {
		delete(w.scope, c.IterVar())
	}
	return gate.And(nonEmpty, pc)
}

func (w *condWalker) isVar(e ast.Expr, name string) bool {
	if e.Kind() != ast.IdentKind || e.AsIdent() != name {
		return false
	}
	_, shadowed := w.scope[name]
	return !shadowed
}

func stringLit(e ast.Expr) (string, bool) {
	if e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

func stringList(e ast.Expr) ([]string, bool) {
	if e.Kind() != ast.ListKind {
		return nil, false
	}
	l := e.AsList()
	if len(l.OptionalIndices()) > 0 {
		return nil, false
	}
	var out []string
	for _, x := range l.Elements() {
		s, ok := stringLit(x)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// RuleGate is one compiled rule's gate and static cost, for lint and tests.
type RuleGate struct {
	ID   string
	File string
	Line int
	Gate *gate.Cond // nil: the gate cannot index the rule; it is always evaluated
	Cost uint64     // static worst-case cost estimate
}

// RuleGates returns the gate of every compiled rule, in evaluation order.
func (e *Engine) RuleGates() []RuleGate {
	out := make([]RuleGate, len(e.rules))
	for i, r := range e.rules {
		out[i] = RuleGate{ID: r.Spec.ID, File: r.Spec.File, Line: r.Spec.Line, Gate: r.gate, Cost: r.cost}
	}
	return out
}
