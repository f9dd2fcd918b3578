package celrules

import (
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
)

// ArgAccess is a read of a raw argument key (args.KEY or args["KEY"]) in a rule condition
// that nothing guards: no has(args.KEY) or "KEY" in args beside it in a conjunction (or as the
// condition of a ?: whose true branch reads it, or negated in a disjunction), and no tool guard
// (the rule's tools: list, or tool == "X" / tool in [...] in a conjunction). A call whose tool
// passes no such key makes the read an error, and the error blocks the call: a rule on
// args.command for the exec class blocks every exec tool whose command key is cmd or script.
// The action class alone is not a guard: a class spans tools with different argument keys.
type ArgAccess struct {
	Key  string
	Line int // in the rule file (0 when unknown)
	Col  int
}

// UnguardedArgs parses a rule's condition and returns its unguarded argument reads. It does
// not type-check (Check reports compile problems); a condition that does not parse has none.
func UnguardedArgs(s RuleSpec) ([]ArgAccess, error) {
	if s.When == "" {
		return nil, nil
	}
	env, err := parseEnv()
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	parsed, iss := env.Parse(s.When)
	if iss != nil && iss.Err() != nil {
		return nil, nil
	}
	native := parsed.NativeRep()
	w := &guardWalk{info: native.SourceInfo(), spec: s}
	w.walk(native.Expr(), guards{tool: len(s.Tools) > 0})
	return w.out, nil
}

// parseEnv is the environment UnguardedArgs parses with (parsing reads only its macros and
// limits; an Env is safe for concurrent use).
var parseEnv = sync.OnceValues(func() (*cel.Env, error) { return cel.NewEnv(envOptions()...) })

// guards is what holds where an expression is evaluated.
type guards struct {
	keys map[string]bool // keys known present
	tool bool            // the tool is pinned
}

func (g guards) with(o guards) guards {
	n := guards{keys: map[string]bool{}, tool: g.tool || o.tool}
	for k := range g.keys {
		n.keys[k] = true
	}
	for k := range o.keys {
		n.keys[k] = true
	}
	return n
}

type guardWalk struct {
	info *ast.SourceInfo
	spec RuleSpec
	out  []ArgAccess
}

func isArgs(e ast.Expr) bool { return e.Kind() == ast.IdentKind && e.AsIdent() == "args" }

// guardOf returns what an expression guarantees when it is true.
func guardOf(e ast.Expr) guards {
	g := guards{keys: map[string]bool{}}
	switch e.Kind() {
	case ast.SelectKind:
		if sel := e.AsSelect(); sel.IsTestOnly() && isArgs(sel.Operand()) {
			g.keys[sel.FieldName()] = true
		}
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case "@in":
			if len(args) == 2 && isArgs(args[1]) {
				if k, ok := stringLit(args[0]); ok {
					g.keys[k] = true
				}
			}
			if len(args) == 2 && args[0].Kind() == ast.IdentKind && args[0].AsIdent() == "tool" {
				g.tool = true
			}
		case "_==_":
			for _, a := range args {
				if a.Kind() == ast.IdentKind && a.AsIdent() == "tool" {
					g.tool = true
				}
			}
		case "_&&_":
			for _, a := range flatten(e, "_&&_") {
				g = g.with(guardOf(a))
			}
		}
	}
	return g
}

// flatten returns the operands of a chain of one logical operator.
func flatten(e ast.Expr, op string) []ast.Expr {
	if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == op {
		var out []ast.Expr
		for _, a := range e.AsCall().Args() {
			out = append(out, flatten(a, op)...)
		}
		return out
	}
	return []ast.Expr{e}
}

func (w *guardWalk) report(e ast.Expr, key string) {
	a := ArgAccess{Key: key, Line: w.spec.WhenLine}
	if loc := w.info.GetStartLocation(e.ID()); loc != nil && loc.Line() > 0 && w.spec.WhenLine > 0 {
		a.Line = w.spec.WhenLine + loc.Line() - 1
		a.Col = loc.Column() + 1
		if loc.Line() == 1 && w.spec.WhenCol > 0 {
			a.Col += w.spec.WhenCol
		}
	}
	if a.Line == 0 {
		a.Line = w.spec.Line
	}
	w.out = append(w.out, a)
}

func (w *guardWalk) walk(e ast.Expr, g guards) {
	switch e.Kind() {
	case ast.SelectKind:
		sel := e.AsSelect()
		if isArgs(sel.Operand()) {
			if !sel.IsTestOnly() && !g.keys[sel.FieldName()] && !g.tool {
				w.report(e, sel.FieldName())
			}
			return
		}
		w.walk(sel.Operand(), g)
	case ast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case "_&&_":
			ops := flatten(e, "_&&_")
			all := g
			for _, o := range ops {
				all = all.with(guardOf(o))
			}
			for _, o := range ops {
				w.walk(o, all)
			}
			return
		case "_||_":
			// !has(args.k) || f(args.k): a negated guard protects its siblings.
			ops := flatten(e, "_||_")
			all := g
			for _, o := range ops {
				if o.Kind() == ast.CallKind && o.AsCall().FunctionName() == "!_" {
					all = all.with(guardOf(o.AsCall().Args()[0]))
				}
			}
			for _, o := range ops {
				w.walk(o, all)
			}
			return
		case "_?_:_":
			w.walk(args[0], g)
			w.walk(args[1], g.with(guardOf(args[0])))
			w.walk(args[2], g)
			return
		case "_[_]":
			if len(args) == 2 && isArgs(args[0]) {
				if k, ok := stringLit(args[1]); ok && !g.keys[k] && !g.tool {
					w.report(e, k)
				}
				w.walk(args[1], g)
				return
			}
		}
		if c.IsMemberFunction() {
			w.walk(c.Target(), g)
		}
		for _, a := range args {
			w.walk(a, g)
		}
	case ast.ComprehensionKind:
		comp := e.AsComprehension()
		for _, x := range []ast.Expr{comp.IterRange(), comp.AccuInit(), comp.LoopCondition(), comp.LoopStep(), comp.Result()} {
			w.walk(x, g)
		}
	case ast.ListKind:
		for _, x := range e.AsList().Elements() {
			w.walk(x, g)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			w.walk(me.Key(), g)
			w.walk(me.Value(), g)
		}
	case ast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.walk(f.AsStructField().Value(), g)
		}
	}
}
