package regoeval

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/policy/gate"
)

// Rule gating for Tier 1. At load, each rule contributing to data.shield.deny, escalate or
// allow (a "decision rule") gets a necessary condition (a gate.Cond) for its body to succeed or
// to fail with an error; the served modules get a first expression calling the gate builtin,
// which is false when the call's Cond does not hold, so the rest of the body is never
// evaluated. When no decision rule's Cond holds, evaluation is skipped: the decision is then
// known to be empty.
//
// The Cond is derived from the compiled body, in evaluation order, up to and including the
// first expression that can fail with an error (a conflict in a function or complete rule that
// can produce several values, an object comprehension, a halting builtin): an atom after it
// could be false while the body would still have failed, and an error must fail the call closed.
// Built-in errors are not errors in OPA's default (non-strict) mode: the expression is undefined.
//
// The shapes recognised, in the compiled form:
//
//	input.class == "x", input.class in {...}, != and not ... in   (tool and method likewise)
//	input.F != ""                                (body, content, prompt, command, parse_error)
//	some x in input.L                            L not empty (commands, effects, paths, urls, …)
//	x.name == / in  (x over commands)            a command name in the set
//	x.kind == / in  (x over effects)             an effect kind in the set
//	x.role == / in  (x over paths)               a path role in the set
//	data.<base data object>[x.name]              a command name among the object's keys
//	some k, _ in input.args; k in {…}, lower(k) in {…}   an argument key in the set
//	count(input.L) > 0                           L not empty
//	regex.match("re", input.tool)                the tool matches re
//	a rule or function of package shield        the disjunction of its bodies' conditions
//	f(x, …) with x known (an element of a list, a command name, an input field)
//	                                             f's bodies analysed knowing what x holds
//	some n in S, S a partial set of command names (S contains c.name if some c in input.commands)
//	                                             n is a command name
//	a[x.name] with a := data.<base data object> as data.<…>[x.name]
//
// Anything else is "may hold". Gating is off for the whole bundle (every rule evaluated) when
// the decision document is not the plain {"deny": deny, "escalate": escalate, "allow": allow} of
// partial sets, when a module uses `with` (a gate reads the real call, not a replaced input),
// or when a module defines a rule the gate builtin's name would clash with.

// gateBuiltin is the name of the built-in the served modules call first in each decision rule.
const gateBuiltin = "shield_internal.gate"

// decisionRuleNames are the partial sets the decision document is made of.
var decisionRuleNames = map[string]bool{"deny": true, "escalate": true, "allow": true}

// GateInfo is what the gate analysis found, for lint and tests.
type GateInfo struct {
	// Off says why gating is off for the bundle ("" when on).
	Off string
	// Rules are the decision rules, in module and rule order.
	Rules []GatedRule
}

// GatedRule is one decision rule and its gate.
type GatedRule struct {
	File string
	Line int
	Name string // deny, escalate or allow
	ID   string // the finding's rule id when the head names it as a string, else ""
	Gate *gate.Cond
}

// halting are built-ins whose errors halt evaluation even in non-strict mode (topdown.Halt).
var halting = map[string]bool{
	"print": true, "internal.print": true, "internal.template_string": true, "http.send": true,
	"net.lookup_ip_addr": true, "net.cidr_expand": true, "numbers.range": true,
	"numbers.range_step": true, "trace": true,
}

type ruleInfo struct {
	cond   *gate.Cond
	mayErr bool
	done   bool
}

type analyzer struct {
	pkg   ast.Ref                // data.shield
	rules map[string][]*ast.Rule // rules of package shield by first head name
	all   map[string]bool        // every rule path of every package, dotted, for virtual refs
	data  map[string]any         // base data
	memo  map[string]*ruleInfo   // by rule name
	errs  []string               // why gating is off
	mods  map[string]*ast.Module // compiled, by file
	calls map[string]*gate.Cond  // callCond by name and operand bindings
	elems map[string]binding     // setElem by name
}

// analyzeGates compiles a copy of the non-test modules and derives a gate per decision rule.
// The rules are keyed by file and index in the file's module.
func analyzeGates(p *Parsed, files []string) (*GateInfo, map[string]map[int]*gate.Cond) {
	info := &GateInfo{}
	mods := map[string]*ast.Module{}
	for _, f := range files {
		mods[f] = p.Modules[f].Copy()
	}
	c := ast.NewCompiler().WithCapabilities(p.Capabilities).WithDefaultRegoVersion(p.RegoVersion)
	c.Compile(mods)
	if c.Failed() {
		info.Off = fmt.Sprintf("the modules do not compile for analysis: %v", c.Errors)
		return info, nil
	}
	a := &analyzer{pkg: ast.MustParseRef("data.shield"), rules: map[string][]*ast.Rule{},
		all: map[string]bool{}, data: p.Data, memo: map[string]*ruleInfo{}, mods: c.Modules,
		calls: map[string]*gate.Cond{}, elems: map[string]binding{}}
	decisionOK := false
	for _, f := range files {
		m := c.Modules[f]
		for _, r := range m.Rules {
			head := r.Head.Ref()
			if len(head) == 0 {
				continue
			}
			name := head[0].Value.String()
			a.all[m.Package.Path.String()+"."+name] = true
			if name == "shield_internal" || strings.HasPrefix(m.Package.Path.String(), "data.shield_internal") {
				a.errs = append(a.errs, fmt.Sprintf("%s: a rule or package named shield_internal", f))
			}
			if !m.Package.Path.Equal(a.pkg) {
				continue
			}
			a.rules[name] = append(a.rules[name], r)
			if name == "decision" {
				decisionOK = plainDecision(r)
			}
		}
		ast.WalkExprs(m, func(x *ast.Expr) bool {
			if len(x.With) > 0 {
				a.errs = append(a.errs, fmt.Sprintf("%s:%d: `with` replaces input or data", f, x.Location.Row))
			}
			return false
		})
	}
	if !decisionOK || len(a.rules["decision"]) != 1 {
		a.errs = append(a.errs, "data.shield.decision is not the plain {\"deny\": deny, \"escalate\": escalate, \"allow\": allow}")
	}
	for name := range decisionRuleNames {
		for _, r := range a.rules[name] {
			if len(r.Head.Ref()) != 1 || r.Head.Key == nil || r.Head.Value != nil {
				a.errs = append(a.errs, fmt.Sprintf("%s is not a partial set (line %d)", name, r.Location.Row))
			}
		}
	}
	if len(a.errs) > 0 {
		info.Off = strings.Join(a.errs, "; ")
		return info, nil
	}
	gates := map[string]map[int]*gate.Cond{}
	for _, f := range files {
		m := c.Modules[f]
		if !m.Package.Path.Equal(a.pkg) {
			continue
		}
		if len(m.Rules) != len(p.Modules[f].Rules) {
			info.Off = fmt.Sprintf("%s: the compiled module has %d rules, the parsed one %d", f, len(m.Rules), len(p.Modules[f].Rules))
			return info, nil
		}
		for i, r := range m.Rules {
			name := r.Head.Ref()[0].Value.String()
			if !decisionRuleNames[name] {
				continue
			}
			if pr := p.Modules[f].Rules[i]; pr.Head.Ref()[0].Value.String() != name || pr.Location.Row != r.Location.Row {
				info.Off = fmt.Sprintf("%s:%d: compiled and parsed rules differ", f, r.Location.Row)
				return info, nil
			}
			cond, _ := a.body(r.Body)
			if gates[f] == nil {
				gates[f] = map[int]*gate.Cond{}
			}
			gates[f][i] = cond
			info.Rules = append(info.Rules, GatedRule{File: f, Line: r.Location.Row, Name: name, ID: findingID(p.Modules[f].Rules[i]), Gate: cond})
		}
	}
	return info, gates
}

// plainDecision: decision := {"deny": deny, "escalate": escalate, "allow": allow} and nothing
// else, in its compiled form: three assignments of data.shield.<name> to locals, then the object
// of those locals assigned to the head's value.
func plainDecision(r *ast.Rule) bool {
	if r.Default || r.Else != nil || len(r.Head.Args) > 0 || r.Head.Value == nil || r.Head.Key != nil || len(r.Head.Ref()) != 1 {
		return false
	}
	head, ok := r.Head.Value.Value.(ast.Var)
	if !ok || len(r.Body) != 4 {
		return false
	}
	bound := map[ast.Var]string{}
	for _, x := range r.Body[:3] {
		if !x.IsEquality() || x.Negated || len(x.With) > 0 {
			return false
		}
		v, ok1 := x.Operand(0).Value.(ast.Var)
		ref, ok2 := x.Operand(1).Value.(ast.Ref)
		if !ok1 || !ok2 || len(ref) != 3 || !ref.HasPrefix(ast.MustParseRef("data.shield")) {
			return false
		}
		name, ok := ref[2].Value.(ast.String)
		if !ok || !decisionRuleNames[string(name)] {
			return false
		}
		bound[v] = string(name)
	}
	last := r.Body[3]
	if !last.IsEquality() || last.Negated || len(last.With) > 0 {
		return false
	}
	if v, ok := last.Operand(0).Value.(ast.Var); !ok || v != head {
		return false
	}
	obj, ok := last.Operand(1).Value.(ast.Object)
	if !ok || obj.Len() != 3 {
		return false
	}
	for name := range decisionRuleNames {
		t := obj.Get(ast.StringTerm(name))
		if t == nil {
			return false
		}
		v, ok := t.Value.(ast.Var)
		if !ok || bound[v] != name {
			return false
		}
	}
	return true
}

// findingID is the first string argument of the head's call (finding("id", …)), if any.
func findingID(r *ast.Rule) string {
	if r.Head.Key == nil {
		return ""
	}
	if call, ok := r.Head.Key.Value.(ast.Call); ok && len(call) > 1 {
		if s, ok := call[1].Value.(ast.String); ok {
			return string(s)
		}
	}
	return ""
}

// binding is what a local variable is known to hold.
type binding struct {
	elemOf gate.Field // an element of this input list
	str    gate.Field // this input string field
	names  bool       // a command's name
	kinds  bool       // an effect's kind
	roles  bool       // a path's role
	argKey bool       // a top-level argument key
	fold   bool       // lower(argument key)
	count  gate.Field // count of this input list
	list   gate.Field // this input list itself
}

// body returns the condition of a body and whether it can fail with an error.
func (a *analyzer) body(b ast.Body) (*gate.Cond, bool) {
	return a.bodyEnv(b, map[ast.Var]binding{})
}

// bodyEnv is body with what some variables are known to hold (a function's arguments); env
// receives the body's own bindings.
func (a *analyzer) bodyEnv(b ast.Body, env map[ast.Var]binding) (*gate.Cond, bool) {
	var conds []*gate.Cond
	for _, x := range b {
		c, mayErr := a.expr(x, env)
		conds = append(conds, c)
		if mayErr {
			return gate.And(conds...), true
		}
	}
	return gate.And(conds...), false
}

func (a *analyzer) expr(x *ast.Expr, env map[ast.Var]binding) (*gate.Cond, bool) {
	mayErr := a.exprMayErr(x)
	if x.Negated {
		return a.negated(x, env), mayErr
	}
	var conds []*gate.Cond
	switch t := x.Terms.(type) {
	case *ast.Term:
		conds = append(conds, a.termCond(t, env))
	case []*ast.Term:
		conds = append(conds, a.call(x, t, env))
		for _, op := range t[1:] {
			conds = append(conds, a.termCond(op, env))
		}
		if ref, ok := t[0].Value.(ast.Ref); ok {
			if name, ok := a.ruleName(ref); ok {
				conds = append(conds, a.callCond(name, t[1:], env))
			}
		}
	}
	return gate.And(conds...), mayErr
}

// termCond: a reference to a rule of package shield that is defined implies one of its bodies
// succeeded — except a partial set referenced whole, which is always defined. Comprehensions are
// not entered (they succeed empty).
func (a *analyzer) termCond(t *ast.Term, env map[ast.Var]binding) *gate.Cond {
	ref, ok := t.Value.(ast.Ref)
	if !ok {
		return nil
	}
	if name, ok := a.ruleName(ref); ok {
		// A partial set is defined (maybe empty) whatever its bodies do: only a reference into
		// it (an element) implies one of them succeeded. Other rules and functions are undefined
		// when no body succeeds (a default makes the condition nil).
		if a.partialSet(name) && len(ref) == 3 {
			return nil
		}
		if target := a.alias(name); target != nil && len(ref) > 3 {
			// name := data.<base document>: a lookup through the alias is one into the data.
			return gate.And(a.rule(name).cond, a.baseLookup(target.Concat(ref[3:]), env))
		}
		return a.rule(name).cond
	}
	return a.baseLookup(ref, env)
}

// partialSet reports whether the rules named name are partial sets (name contains x if …).
func (a *analyzer) partialSet(name string) bool {
	rs := a.rules[name]
	return len(rs) > 0 && rs[0].Head.Key != nil && rs[0].Head.Value == nil
}

// baseLookup: data.<base object>[v] with v a command name: a name among the object's keys
// whose value is not false.
func (a *analyzer) baseLookup(ref ast.Ref, env map[ast.Var]binding) *gate.Cond {
	if len(ref) < 3 || !ref[0].Equal(ast.DefaultRootDocument) {
		return nil
	}
	v, ok := ref[len(ref)-1].Value.(ast.Var)
	if !ok || !env[v].names {
		return nil
	}
	var cur any = a.data
	var path []string
	for _, t := range ref[1 : len(ref)-1] {
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil
		}
		path = append(path, string(s))
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[string(s)]
	}
	if a.virtualPrefix(path) {
		return nil
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	var keys []string
	for k, val := range m {
		if b, isBool := val.(bool); isBool && !b {
			continue
		}
		keys = append(keys, k)
	}
	return gate.In(gate.FieldNames, keys...)
}

// virtualPrefix reports whether a rule is defined at or under or above data.<path>.
func (a *analyzer) virtualPrefix(path []string) bool {
	p := "data." + strings.Join(path, ".")
	for r := range a.all {
		if r == p || strings.HasPrefix(r, p+".") || strings.HasPrefix(p, r+".") {
			return true
		}
	}
	return false
}

func (a *analyzer) ruleName(ref ast.Ref) (string, bool) {
	if len(ref) < 3 || !ref.HasPrefix(a.pkg) {
		return "", false
	}
	s, ok := ref[2].Value.(ast.String)
	if !ok {
		return "", false
	}
	if _, ok := a.rules[string(s)]; !ok {
		return "", false
	}
	return string(s), true
}

// rule is the condition and error possibility of a rule or function of package shield.
func (a *analyzer) rule(name string) *ruleInfo {
	if ri, ok := a.memo[name]; ok {
		if !ri.done {
			return &ruleInfo{mayErr: true} // recursion (refused by the compiler anyway)
		}
		return ri
	}
	ri := &ruleInfo{}
	a.memo[name] = ri
	var conds []*gate.Cond
	allTrue, defs, anyIter := true, 0, false
	for _, r := range a.rules[name] {
		if len(r.Head.Ref()) != 1 {
			ri.mayErr = true // a ref head (name.x …): not analysed
			conds = append(conds, nil)
			continue
		}
		if r.Default {
			conds = append(conds, nil)
			continue
		}
		defs++
		for rr := r; rr != nil; rr = rr.Else {
			c, me := a.body(rr.Body)
			conds = append(conds, c)
			if me || (rr.Head.Value != nil && a.termMayErr(rr.Head.Value)) || (rr.Head.Key != nil && a.termMayErr(rr.Head.Key)) {
				ri.mayErr = true
			}
			if rr.Head.Value == nil || !rr.Head.Value.Equal(ast.BooleanTerm(true)) {
				allTrue = false
			}
			if iterates(rr.Body) {
				anyIter = true
			}
		}
	}
	partialSet := a.partialSet(name)
	// A rule or function with a value other than true conflicts when it can produce two
	// values: several definitions, or a body that binds its variables several ways.
	if !partialSet && !allTrue && (defs > 1 || anyIter) {
		ri.mayErr = true
	}
	ri.cond = gate.Or(conds...)
	ri.done = true
	return ri
}

// iterates reports whether a body may bind a variable several ways: a reference with a
// variable operand (conservative: a lookup with a bound variable counts too).
func iterates(b ast.Body) bool {
	found := false
	ast.WalkRefs(b, func(r ast.Ref) bool {
		for _, t := range r[1:] {
			if _, ok := t.Value.(ast.Var); ok {
				found = true
			}
		}
		return found
	})
	return found
}

// exprMayErr: the expression can fail with an error (not merely be undefined).
func (a *analyzer) exprMayErr(x *ast.Expr) bool {
	if len(x.With) > 0 {
		return true
	}
	switch t := x.Terms.(type) {
	case *ast.Term:
		return a.termMayErr(t)
	case []*ast.Term:
		if ref, ok := t[0].Value.(ast.Ref); ok {
			if name, ok := a.ruleName(ref); ok {
				if a.rule(name).mayErr {
					return true
				}
			} else if ref.HasPrefix(ast.DefaultRootRef) {
				return true // a function of another package
			} else if halting[ref.String()] {
				return true
			}
		}
		for _, op := range t[1:] {
			if a.termMayErr(op) {
				return true
			}
		}
	case *ast.Every:
		return a.termMayErr(t.Domain) || a.bodyMayErr(t.Body)
	case *ast.SomeDecl:
		for _, s := range t.Symbols {
			if a.termMayErr(s) {
				return true
			}
		}
	}
	return false
}

func (a *analyzer) bodyMayErr(b ast.Body) bool {
	for _, x := range b {
		if a.exprMayErr(x) {
			return true
		}
	}
	return false
}

func (a *analyzer) termMayErr(t *ast.Term) bool {
	bad := false
	ast.WalkTerms(t, func(x *ast.Term) bool {
		if bad {
			return true
		}
		switch v := x.Value.(type) {
		case ast.Ref:
			if name, ok := a.ruleName(v); ok {
				bad = a.rule(name).mayErr
			} else if v.HasPrefix(ast.DefaultRootRef) && len(v) > 1 {
				var path []string
				for _, e := range v[1:] {
					s, ok := e.Value.(ast.String)
					if !ok {
						break
					}
					path = append(path, string(s))
				}
				if len(path) == 0 || a.virtualPrefix(path) {
					bad = true
				}
			}
		case *ast.ObjectComprehension:
			bad = true
		case *ast.ArrayComprehension:
			bad = a.bodyMayErr(v.Body)
			return true
		case *ast.SetComprehension:
			bad = a.bodyMayErr(v.Body)
			return true
		case ast.Call:
			bad = true // calls are expressions in compiled bodies; be safe
		}
		return bad
	})
	return bad
}

// resolve returns what a term is known to be: an input string field, an element field, an
// argument key.
func (a *analyzer) resolve(t *ast.Term, env map[ast.Var]binding) binding {
	switch v := t.Value.(type) {
	case ast.Var:
		return env[v]
	case ast.Ref:
		if len(v) == 2 && v[0].Equal(ast.InputRootDocument) {
			if s, ok := v[1].Value.(ast.String); ok {
				if f := gate.StringField(string(s)); f != gate.FieldNone {
					return binding{str: f}
				}
				if f := gate.ListField(string(s)); f != gate.FieldNone {
					return binding{list: f}
				}
			}
		}
		// an element of a partial set of package shield whose elements are all known
		if len(v) == 4 {
			if name, ok := a.ruleName(v); ok && a.partialSet(name) {
				return a.setElem(name)
			}
		}
		// x.name, x.kind for x over commands or effects; input.L[_].name / .kind
		if len(v) == 2 {
			if x, ok := v[0].Value.(ast.Var); ok {
				return elemField(env[x].elemOf, v[1])
			}
		}
		if len(v) == 4 && v[0].Equal(ast.InputRootDocument) {
			if s, ok := v[1].Value.(ast.String); ok {
				return elemField(gate.ListField(string(s)), v[3])
			}
		}
	}
	return binding{}
}

func elemField(list gate.Field, field *ast.Term) binding {
	s, ok := field.Value.(ast.String)
	if !ok {
		return binding{}
	}
	switch {
	case list == gate.FieldCommands && s == "name":
		return binding{names: true}
	case list == gate.FieldEffects && s == "kind":
		return binding{kinds: true}
	case list == gate.FieldPaths && s == "role":
		return binding{roles: true}
	}
	return binding{}
}

// inSet is the condition "b is one of set".
func inSet(b binding, set []string) *gate.Cond {
	switch {
	case b.str != gate.FieldNone:
		return gate.In(b.str, set...)
	case b.names:
		return gate.In(gate.FieldNames, set...)
	case b.kinds:
		return gate.In(gate.FieldEffectKinds, set...)
	case b.roles:
		return gate.In(gate.FieldPathRoles, set...)
	case b.argKey:
		return gate.In(gate.FieldArgKeys, set...)
	case b.fold:
		return gate.InFold(gate.FieldArgKeys, set...)
	}
	return nil
}

func (a *analyzer) call(x *ast.Expr, t []*ast.Term, env map[ast.Var]binding) *gate.Cond {
	op := x.Operator().String()
	args := t[1:]
	switch {
	case op == "eq" && len(args) == 2:
		for _, p := range [][2]*ast.Term{{args[0], args[1]}, {args[1], args[0]}} {
			lhs, rhs := p[0], p[1]
			if s, ok := rhs.Value.(ast.String); ok {
				if c := inSet(a.resolve(lhs, env), []string{string(s)}); c != nil {
					return c
				}
			}
		}
		for _, p := range [][2]*ast.Term{{args[0], args[1]}, {args[1], args[0]}} {
			v, ok := p[0].Value.(ast.Var)
			if !ok {
				continue
			}
			ref, ok := p[1].Value.(ast.Ref)
			if !ok {
				continue
			}
			// v = input.L[k]: an element of L (and k a key of args)
			if len(ref) == 3 && ref[0].Equal(ast.InputRootDocument) {
				if s, ok := ref[1].Value.(ast.String); ok {
					if f := gate.ListField(string(s)); f != gate.FieldNone && f != gate.FieldNames {
						env[v] = binding{elemOf: f}
						if k, ok := ref[2].Value.(ast.Var); ok && f == gate.FieldArgs {
							env[k] = binding{argKey: true}
						}
						return gate.NonEmpty(f)
					}
				}
			}
			if b := a.resolve(p[1], env); b != (binding{}) {
				env[v] = b
				return nil
			}
		}
	case op == "internal.member_2" && len(args) == 2:
		if set, ok := stringSet(args[1]); ok {
			return inSet(a.resolve(args[0], env), set)
		}
	case op == "neq" && len(args) == 2:
		for _, p := range [][2]*ast.Term{{args[0], args[1]}, {args[1], args[0]}} {
			if s, ok := p[1].Value.(ast.String); ok {
				if b := a.resolve(p[0], env); b.str != gate.FieldNone {
					if s == "" {
						return gate.NonEmpty(b.str)
					}
					return gate.NotIn(b.str, string(s))
				}
			}
		}
	case op == "count" && len(args) == 2:
		if b := a.resolve(args[0], env); b.list != gate.FieldNone {
			if v, ok := args[1].Value.(ast.Var); ok {
				env[v] = binding{count: b.list}
			}
		}
	case op == "gt" && len(args) == 2:
		if b := a.resolve(args[0], env); b.count != gate.FieldNone {
			if n, ok := args[1].Value.(ast.Number); ok {
				if i, ok := n.Int(); ok && i >= 0 {
					return gate.NonEmpty(b.count)
				}
			}
		}
	case op == "lower" && len(args) == 2:
		if b := a.resolve(args[0], env); b.argKey {
			if v, ok := args[1].Value.(ast.Var); ok {
				env[v] = binding{fold: true}
			}
		}
	case op == "regex.match" && len(args) == 2:
		if s, ok := args[0].Value.(ast.String); ok {
			if b := a.resolve(args[1], env); b.str == gate.FieldTool {
				if re, err := regexp.Compile(string(s)); err == nil {
					return gate.Match(gate.FieldTool, re)
				}
			}
		}
	}
	return nil
}

// negated: not input.class in {…}, not input.class == "x" (and the other string fields).
func (a *analyzer) negated(x *ast.Expr, env map[ast.Var]binding) *gate.Cond {
	t, ok := x.Terms.([]*ast.Term)
	if !ok || len(t) != 3 {
		return nil
	}
	switch x.Operator().String() {
	case "internal.member_2":
		if b := a.resolve(t[1], env); b.str != gate.FieldNone {
			if set, ok := stringSet(t[2]); ok {
				return gate.NotIn(b.str, set...)
			}
		}
	case "eq":
		for _, p := range [][2]*ast.Term{{t[1], t[2]}, {t[2], t[1]}} {
			if s, ok := p[1].Value.(ast.String); ok {
				if b := a.resolve(p[0], env); b.str != gate.FieldNone {
					return gate.NotIn(b.str, string(s))
				}
			}
		}
	}
	return nil
}

// stringSet reads a set or array literal of strings.
func stringSet(t *ast.Term) ([]string, bool) {
	var out []string
	ok := true
	add := func(e *ast.Term) {
		s, isStr := e.Value.(ast.String)
		if !isStr {
			ok = false
			return
		}
		out = append(out, string(s))
	}
	switch v := t.Value.(type) {
	case ast.Set:
		v.Foreach(add)
	case *ast.Array:
		v.Foreach(add)
	default:
		return nil, false
	}
	return out, ok
}

// callCond is the condition of a call of rule or function name of package shield with these
// operands: its bodies' conditions, each analysed knowing what the operands bound to its
// arguments hold (f(e) with e over input.effects: e.kind == "write" in f's body is an effect
// kind). Without such an operand it is the rule's own condition.
func (a *analyzer) callCond(name string, ops []*ast.Term, env map[ast.Var]binding) *gate.Cond {
	bs := make([]binding, len(ops))
	known := false
	for j, op := range ops {
		bs[j] = a.resolve(op, env)
		known = known || bs[j] != (binding{})
	}
	if !known {
		return a.rule(name).cond
	}
	k := fmt.Sprintf("%s%v", name, bs)
	if c, ok := a.calls[k]; ok {
		return c // nil while in progress: recursion (refused by the compiler anyway)
	}
	a.calls[k] = nil
	var conds []*gate.Cond
	for _, r := range a.rules[name] {
		if len(r.Head.Ref()) != 1 || r.Default {
			conds = append(conds, nil)
			continue
		}
		for rr := r; rr != nil; rr = rr.Else {
			seed := map[ast.Var]binding{}
			for j, h := range rr.Head.Args {
				if v, ok := h.Value.(ast.Var); ok && j < len(bs) && bs[j] != (binding{}) {
					seed[v] = bs[j]
				}
			}
			c, _ := a.bodyEnv(rr.Body, seed)
			conds = append(conds, c)
		}
	}
	c := gate.Or(conds...)
	a.calls[k] = c
	return c
}

// setElem is what every element of the partial set name is known to be (a command's name for
// `names contains c.name if some c in input.commands`), or nothing.
func (a *analyzer) setElem(name string) binding {
	if b, ok := a.elems[name]; ok {
		return b
	}
	a.elems[name] = binding{} // in progress
	var out binding
	for i, r := range a.rules[name] {
		if len(r.Head.Ref()) != 1 || r.Head.Key == nil || r.Head.Value != nil || r.Default || r.Else != nil {
			out = binding{}
			break
		}
		env := map[ast.Var]binding{}
		a.bodyEnv(r.Body, env)
		b := a.resolve(r.Head.Key, env)
		if b.list != gate.FieldNone || b.count != gate.FieldNone || b.elemOf != gate.FieldNone || (i > 0 && b != out) {
			out = binding{}
			break
		}
		out = b
	}
	a.elems[name] = out
	return out
}

// alias is data.<path> when the rule name of package shield is only `name := data.<path>`, a
// base document (no rule defines anything at, above or below it); else nil.
func (a *analyzer) alias(name string) ast.Ref {
	rs := a.rules[name]
	if len(rs) != 1 {
		return nil
	}
	r := rs[0]
	if len(r.Head.Ref()) != 1 || len(r.Head.Args) > 0 || r.Head.Key != nil || r.Head.Value == nil || r.Default || r.Else != nil {
		return nil
	}
	if len(r.Body) != 1 || r.Body[0].Negated || len(r.Body[0].With) > 0 {
		return nil
	}
	// Compiled, name := data.x is name := __local__ with the body __local__ = data.x.
	var ref ast.Ref
	switch hv := r.Head.Value.Value.(type) {
	case ast.Ref:
		if !ast.Boolean(true).Equal(termOf(r.Body[0])) {
			return nil
		}
		ref = hv
	case ast.Var:
		x := r.Body[0]
		if !x.IsEquality() {
			return nil
		}
		for _, p := range [][2]*ast.Term{{x.Operand(0), x.Operand(1)}, {x.Operand(1), x.Operand(0)}} {
			if v, ok := p[0].Value.(ast.Var); ok && v == hv {
				ref, _ = p[1].Value.(ast.Ref)
			}
		}
	}
	if len(ref) < 2 || !ref[0].Equal(ast.DefaultRootDocument) {
		return nil
	}
	var path []string
	for _, t := range ref[1:] {
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil
		}
		path = append(path, string(s))
	}
	if a.virtualPrefix(path) {
		return nil
	}
	return ref
}

func termOf(x *ast.Expr) ast.Value {
	if t, ok := x.Terms.(*ast.Term); ok {
		return t.Value
	}
	return nil
}
