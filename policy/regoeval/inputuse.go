package regoeval

import (
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Input pruning. At load, the compiled modules are searched for every reference to the input;
// when each one names a constant top-level key (input.effects, input["class"],
// object.get(input, "context", {})), only those keys are built into the input of each
// evaluation. A key no module names cannot change any result, so pruning the others changes no
// verdict. Anything else that reaches the input whole or by a computed key (walk(input),
// some k, v in input, input[k], with input as ...) turns pruning off: the whole input is built.
// The differential test (policy/gate) compares the pruned, gated engine with the unpruned,
// ungated one on every corpus call and on fuzzed calls.

// inputKeys returns the top-level input keys the modules reference, sorted, and whether they
// reference the input whole or by a computed key (then keys is nil: build everything). The
// modules are compiled: the compiler turns object.get(input, "k", d) into a local bound to input
// (__local1__ = input) and object.get(__local1__, "k", d), so such locals are followed within
// their rule.
func inputKeys(mods map[string]*ast.Module) (keys []string, whole bool) {
	seen := map[string]bool{}
	names := make([]string, 0, len(mods))
	for f := range mods {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		for _, r := range mods[f].Rules {
			if !ruleInputKeys(r, seen) {
				return nil, true
			}
		}
		// Imports and anything else outside rules (the compiler resolves imports into the
		// rules' references; an import of input whole is still a whole use here).
		for _, imp := range mods[f].Imports {
			if ref, ok := imp.Path.Value.(ast.Ref); ok && ref.HasPrefix(ast.InputRootRef) {
				if len(ref) < 2 {
					return nil, true
				}
				s, ok := ref[1].Value.(ast.String)
				if !ok {
					return nil, true
				}
				seen[string(s)] = true
			}
		}
	}
	keys = make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, false
}

// ruleInputKeys adds the input keys one rule (with its else branches) references to seen, and
// returns false when it uses the input whole or by a computed key.
func ruleInputKeys(r *ast.Rule, seen map[string]bool) bool {
	isInput := func(t *ast.Term) bool {
		ref, ok := t.Value.(ast.Ref)
		return ok && len(ref) == 1 && ref.Equal(ast.InputRootRef)
	}
	// Locals bound to the input whole, and the expressions that bind them.
	aliases := map[ast.Var]bool{}
	binding := map[*ast.Expr]bool{}
	ast.WalkExprs(r, func(x *ast.Expr) bool {
		if !x.IsEquality() || x.Negated || len(x.With) > 0 {
			return false
		}
		a, b := x.Operand(0), x.Operand(1)
		if isInput(a) {
			a, b = b, a
		}
		if v, ok := a.Value.(ast.Var); ok && isInput(b) && !v.IsWildcard() {
			aliases[v] = true
			binding[x] = true
		}
		return false
	})
	whole := false
	allowed := map[*ast.Term]bool{} // first operands of object.get with a constant key
	objectGet := func(op *ast.Term, args []*ast.Term) {
		if len(args) < 2 || !isRef(op, ast.ObjectGet.Ref()) {
			return
		}
		s, ok := args[1].Value.(ast.String)
		if !ok {
			return
		}
		if v, isVar := args[0].Value.(ast.Var); isInput(args[0]) || isVar && aliases[v] {
			seen[string(s)] = true
			allowed[args[0]] = true
		}
	}
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if whole {
			return true
		}
		switch x := x.(type) {
		case *ast.Expr:
			if binding[x] {
				return true // the binding itself; the local's uses are checked
			}
			if ts, ok := x.Terms.([]*ast.Term); ok && len(ts) > 0 {
				objectGet(ts[0], ts[1:])
			}
		case ast.Call:
			if len(x) > 0 {
				objectGet(x[0], x[1:])
			}
		case *ast.Term:
			switch v := x.Value.(type) {
			case ast.Var:
				if aliases[v] && !allowed[x] {
					whole = true
				}
				if v.Equal(ast.InputRootDocument.Value) {
					whole = true // input outside a reference: never produced by the compiler
				}
				return true
			case ast.Ref:
				if !v.HasPrefix(ast.InputRootRef) {
					return false
				}
				// The head is input itself; what follows may hold references of its own
				// (input.effects[input.i]).
				for _, t := range v[1:] {
					vis.Walk(t)
				}
				if len(v) == 1 {
					if !allowed[x] {
						whole = true
					}
					return true
				}
				s, ok := v[1].Value.(ast.String)
				if !ok {
					whole = true
					return true
				}
				seen[string(s)] = true
				return true
			}
		}
		return false
	})
	vis.Walk(r)
	return !whole
}

func isRef(t *ast.Term, r ast.Ref) bool {
	ref, ok := t.Value.(ast.Ref)
	return ok && ref.Equal(r)
}

// referencedInput compiles a copy of the non-test modules and returns the set of top-level
// input keys they reference, or nil (build the whole input) when they reference it whole, by a
// computed key, or do not compile for the analysis.
func referencedInput(p *Parsed, files []string) map[string]bool {
	mods := make(map[string]*ast.Module, len(files))
	for _, f := range files {
		mods[f] = p.Modules[f].Copy()
	}
	c := ast.NewCompiler().WithCapabilities(p.Capabilities).WithDefaultRegoVersion(p.RegoVersion)
	c.Compile(mods)
	if c.Failed() {
		return nil
	}
	keys, whole := inputKeys(c.Modules)
	if whole {
		return nil
	}
	keep := make(map[string]bool, len(keys))
	for _, k := range keys {
		keep[k] = true
	}
	return keep
}
