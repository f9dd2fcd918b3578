package regoeval

import (
	"sort"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Function dispatch on an argument's field. OPA's rule index selects the bodies of a rule whose
// first expressions compare input or data with constants, and the bodies of a function whose
// head arguments are constants; it does not index a comparison of a field of an argument
// (`e.kind == "exec"` in `inside(e)`). Every body of such a function is entered for every call:
// the default bundle's `inside(e)` has 45 bodies, almost all of them starting with a test of
// e.kind, and runs for each effect of each exec call (profiled: most of the cost of
// exec.outside-envelope and exec.known-effects).
//
// At load, for a function whose bodies mostly start with `a.F == "s"` or `a.F in {"s", …}` (a
// one of its arguments, F one field, s strings), the served modules move those bodies into a
// function of their package named dispatchPrefix+name, with the compared value as a constant
// first argument (one body per value of an `in` set), and give the function one body that calls
// it with the field:
//
//	inside(e) if { e.kind == "exec"; rest }    →  shield_internal_dispatch_inside("exec", e) if { rest }
//	inside(e) if { e.kind in {"write", "delete"}; rest }
//	                                            →  shield_internal_dispatch_inside("write", e) if { rest }
//	                                               shield_internal_dispatch_inside("delete", e) if { rest }
//	                                               inside(e) if shield_internal_dispatch_inside(e.kind, e)
//
// OPA then indexes the moved bodies on their constant argument. The result is the same: a
// moved body succeeds exactly when the field equals its constant and the rest succeeds (an
// undefined or non-string field matches no constant, as it failed the comparison), and only
// functions whose every body has the value true are rewritten (no conflict can arise or go
// away; a body that runs under two constants of a set runs at most once per call, since the
// field has one value). Bodies that do not start with such a test stay as they are. Functions
// with a default, an else, a ref head or arguments that are not plain variables are left alone.
// TestServedEqualsPlainOPA compares the result with plain OPA on every corpus call.

// dispatchPrefix starts the name of each function dispatch adds; a bundle that defines a rule
// of that name is served without dispatch.
const dispatchPrefix = "shield_internal_dispatch_"

// minDispatchBodies is the least number of movable bodies worth a dispatch function.
const minDispatchBodies = 3

// dispatchTest is the first expression of a body that dispatch can move: argument arg's field
// compared with values.
type dispatchTest struct {
	arg    int
	field  string
	values []string
}

// dispatchFunctions returns the modules to serve (file → module): copies of those where
// functions were rewritten, the originals elsewhere (never modified). It also returns the number
// of functions rewritten.
func dispatchFunctions(mods map[string]*ast.Module) (map[string]*ast.Module, int) {
	type fn struct {
		pkg, name string
	}
	type site struct {
		file string
		rule *ast.Rule
	}
	files := make([]string, 0, len(mods))
	for f := range mods {
		files = append(files, f)
	}
	sort.Strings(files)
	groups := map[fn][]site{}
	var order []fn
	for _, f := range files {
		m := mods[f]
		for _, r := range m.Rules {
			if strings.HasPrefix(r.Head.Ref()[0].Value.String(), dispatchPrefix) {
				return mods, 0 // the bundle uses the name: no rewriting
			}
			if len(r.Head.Args) == 0 || len(r.Head.Ref()) != 1 {
				continue
			}
			k := fn{m.Package.Path.String(), r.Head.Ref()[0].Value.String()}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], site{f, r})
		}
	}
	// What moves (original rules) and what each file gains (built against the file's copy).
	moved := map[*ast.Rule]bool{}
	type addition struct {
		from   *ast.Rule
		target string
		value  string
		// dispatcher (not a moved body) when field != ""
		arg   int
		field string
	}
	adds := map[string][]addition{}
	n := 0
	for _, k := range order {
		sites := groups[k]
		rules := make([]*ast.Rule, len(sites))
		for i, s := range sites {
			rules[i] = s.rule
		}
		if !dispatchable(rules) {
			continue
		}
		// The most common (argument, field) among the bodies' first tests.
		type key struct {
			arg   int
			field string
		}
		tests := make([]*dispatchTest, len(sites))
		count := map[key]int{}
		for i, r := range rules {
			if tests[i] = firstTest(r); tests[i] != nil {
				count[key{tests[i].arg, tests[i].field}]++
			}
		}
		var best key
		for c, nc := range count {
			if nc > count[best] || nc == count[best] && (c.arg < best.arg || c.arg == best.arg && c.field < best.field) {
				best = c
			}
		}
		if count[best] < minDispatchBodies {
			continue
		}
		target := dispatchPrefix + k.name
		first := ""
		for i, s := range sites {
			t := tests[i]
			if t == nil || t.arg != best.arg || t.field != best.field {
				continue
			}
			if first == "" {
				first = s.file
			}
			moved[s.rule] = true
			for _, v := range t.values {
				adds[s.file] = append(adds[s.file], addition{from: s.rule, target: target, value: v})
			}
		}
		adds[first] = append(adds[first], addition{from: rules[0], target: target, arg: best.arg, field: best.field})
		n++
	}
	out := make(map[string]*ast.Module, len(mods))
	for f, m := range mods {
		add, ok := adds[f]
		if !ok {
			out[f] = m
			continue
		}
		c := m.Copy()
		kept := make([]*ast.Rule, 0, len(c.Rules)+len(add))
		for i, r := range c.Rules {
			if !moved[m.Rules[i]] {
				kept = append(kept, r)
			}
		}
		for _, a := range add {
			if a.field != "" {
				kept = append(kept, dispatcherRule(c, a.from, a.target, a.arg, a.field))
			} else {
				kept = append(kept, movedRule(c, a.from, a.target, a.value))
			}
		}
		c.Rules = kept
		out[f] = c
	}
	return out, n
}

// dispatchable: every definition of the function is plain (no default, no else, value true,
// the same number of arguments, each a named variable).
func dispatchable(rules []*ast.Rule) bool {
	for _, r := range rules {
		if r.Default || r.Else != nil || len(r.Head.Args) != len(rules[0].Head.Args) || r.Head.Key != nil ||
			r.Head.Value == nil || !r.Head.Value.Equal(ast.BooleanTerm(true)) || len(r.Body) == 0 {
			return false
		}
		for _, a := range r.Head.Args {
			if v, isVar := a.Value.(ast.Var); !isVar || v.IsWildcard() {
				return false
			}
		}
	}
	return true
}

// firstTest reads `a.F == "s"`, `"s" == a.F` or `a.F in {"s", …}` (a set or array of strings)
// as the body's first expression, a being an argument of the head.
func firstTest(r *ast.Rule) *dispatchTest {
	x := r.Body[0]
	if x.Negated || len(x.With) > 0 {
		return nil
	}
	terms, ok := x.Terms.([]*ast.Term)
	if !ok || len(terms) != 3 {
		return nil
	}
	field := func(t *ast.Term) (int, string, bool) {
		ref, ok := t.Value.(ast.Ref)
		if !ok || len(ref) != 2 {
			return 0, "", false
		}
		v, ok := ref[0].Value.(ast.Var)
		s, ok2 := ref[1].Value.(ast.String)
		if !ok || !ok2 {
			return 0, "", false
		}
		for i, a := range r.Head.Args {
			if a.Value.Compare(v) == 0 {
				return i, string(s), true
			}
		}
		return 0, "", false
	}
	switch x.Operator().String() {
	case ast.Equal.Name:
		for _, p := range [][2]*ast.Term{{terms[1], terms[2]}, {terms[2], terms[1]}} {
			if i, f, ok := field(p[0]); ok {
				if s, ok := p[1].Value.(ast.String); ok {
					return &dispatchTest{arg: i, field: f, values: []string{string(s)}}
				}
			}
		}
	case ast.Member.Name:
		i, f, ok := field(terms[1])
		if !ok {
			return nil
		}
		set, ok := stringSet(terms[2])
		if !ok || len(set) == 0 {
			return nil
		}
		sort.Strings(set)
		set = compactStrings(set)
		return &dispatchTest{arg: i, field: f, values: set}
	}
	return nil
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// movedRule is body r without its first expression, as a body of target with value as its
// first argument. An argument the rest no longer uses becomes a wildcard (strict mode refuses
// unused arguments).
func movedRule(m *ast.Module, r *ast.Rule, target, value string) *ast.Rule {
	c := r.Copy()
	c.Module = m
	rest := c.Body[1:]
	used := ast.NewVarSet()
	ast.WalkVars(rest, func(v ast.Var) bool {
		used.Add(v)
		return false
	})
	args := make(ast.Args, 0, len(c.Head.Args)+1)
	first := ast.StringTerm(value)
	first.Location = r.Location
	args = append(args, first)
	for i, a := range c.Head.Args {
		if !used.Contains(a.Value.(ast.Var)) {
			// A wildcard, as the parser writes _ (strict mode accepts it unused).
			w := ast.VarTerm(ast.WildcardPrefix + "shield_internal_unused" + strconv.Itoa(i))
			w.Location = a.Location
			a = w
		}
		args = append(args, a)
	}
	head := c.Head.Copy()
	name := ast.VarTerm(target)
	name.Location = c.Head.Location
	head.Reference = ast.Ref{name}
	head.Name = ast.Var(target)
	head.Args = args
	c.Head = head
	if len(rest) == 0 {
		t := ast.BooleanTerm(true)
		t.Location = r.Body[0].Location
		x := ast.NewExpr(t)
		x.Location = r.Body[0].Location
		rest = ast.Body{x}
	}
	c.Body = rest
	return c
}

// dispatcherRule is name(a0, …) if target(aARG.FIELD, a0, …), at r's location.
func dispatcherRule(m *ast.Module, r *ast.Rule, target string, arg int, field string) *ast.Rule {
	loc := r.Location
	term := func(t *ast.Term) *ast.Term { t.Location = loc; return t }
	args := make(ast.Args, len(r.Head.Args))
	call := []*ast.Term{term(ast.RefTerm(term(ast.VarTerm(target))))}
	for i := range args {
		args[i] = term(ast.VarTerm("shield_internal_arg" + strconv.Itoa(i)))
	}
	call = append(call, term(ast.RefTerm(term(ast.VarTerm(string(args[arg].Value.(ast.Var)))), term(ast.StringTerm(field)))))
	for _, a := range args {
		call = append(call, term(ast.VarTerm(string(a.Value.(ast.Var)))))
	}
	x := ast.NewExpr(call)
	x.Location = loc
	head := r.Head.Copy()
	head.Args = args
	head.Value = term(ast.BooleanTerm(true))
	return &ast.Rule{Head: head, Body: ast.Body{x}, Location: loc, Module: m}
}
