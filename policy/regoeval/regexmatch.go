package regoeval

import (
	"regexp"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/shieldsec/shield/policy/gate"
)

// Regular-expression prefilters for Rego. The served modules call regexMatchBuiltin wherever
// the modules as written call regex.match. It answers as regex.match does (the same operand
// checks, the same regexp.Compile, the same MatchString) with two differences in cost only:
// the compiled pattern comes from the engine's own table, filled at load with every constant
// pattern of the modules (no cache lookup that can miss and recompile), and a pattern's
// prefilter (gate.NewRegexFilter: the literals any match must contain) answers false without
// running the regular expression for a string that contains none of them. Patterns that are
// not constants (data lists turned into one alternation, patterns built from the input) are
// compiled when first seen and kept in the same table, up to maxRegexTable patterns; past that
// they are compiled per call and not kept.
//
// The rewrite is skipped for a bundle that names anything shield_internal (the built-in's name
// would resolve to it). TestServedEqualsPlainOPA compares the served engine with plain OPA on
// every corpus call, and FuzzRegexMatch the built-in with regexp.MatchString.

// regexMatchBuiltin is the name of the built-in served modules call instead of regex.match.
const regexMatchBuiltin = "shield_internal.regex_match"

// maxRegexTable bounds the compiled patterns one engine keeps.
const maxRegexTable = 4096

// matcher is one compiled pattern with its prefilter (nil: none known).
type matcher struct {
	re     *regexp.Regexp
	filter *gate.RegexFilter
}

// match is re.MatchString(s) behind the prefilter.
func (m *matcher) match(s string) bool {
	if m.filter != nil && !m.filter.MayMatch(s) {
		return false
	}
	return m.re.MatchString(s)
}

// regexTable is an engine's compiled patterns. Patterns known at load are read without a lock.
type regexTable struct {
	fixed map[string]*matcher // filled before the engine serves, read-only afterwards
	mu    sync.RWMutex
	seen  map[string]*matcher // patterns first seen during evaluation
}

func newRegexTable() *regexTable {
	return &regexTable{fixed: map[string]*matcher{}, seen: map[string]*matcher{}}
}

func compileMatcher(pattern string) (*matcher, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	return &matcher{re: re, filter: gate.NewRegexFilter(pattern)}, nil
}

// addFixed compiles a constant pattern at load; an invalid one is left to evaluation, which
// fails it as regex.match does.
func (t *regexTable) addFixed(pattern string) {
	if _, ok := t.fixed[pattern]; ok || len(t.fixed) >= maxRegexTable {
		return
	}
	if m, err := compileMatcher(pattern); err == nil {
		t.fixed[pattern] = m
	}
}

// get returns the matcher of a pattern, compiling it when it is not in the table.
func (t *regexTable) get(pattern string) (*matcher, error) {
	if m, ok := t.fixed[pattern]; ok {
		return m, nil
	}
	t.mu.RLock()
	m, ok := t.seen[pattern]
	t.mu.RUnlock()
	if ok {
		return m, nil
	}
	m, err := compileMatcher(pattern)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if len(t.fixed)+len(t.seen) < maxRegexTable {
		t.seen[pattern] = m
	}
	t.mu.Unlock()
	return m, nil
}

// function is the built-in over this table, declared as regex.match is.
func (t *regexTable) function() func(*rego.Rego) {
	return rego.Function2(&rego.Function{
		Name: regexMatchBuiltin,
		Decl: types.NewFunction(types.Args(types.Named("pattern", types.S), types.Named("value", types.S)), types.B),
	}, func(_ rego.BuiltinContext, a, b *ast.Term) (*ast.Term, error) {
		// The operand checks and errors of OPA's builtinRegexMatch, in its order.
		pattern, err := builtins.StringOperand(a.Value, 1)
		if err != nil {
			return nil, err
		}
		s, err := builtins.StringOperand(b.Value, 2)
		if err != nil {
			return nil, err
		}
		m, err := t.get(string(pattern))
		if err != nil {
			return nil, err
		}
		return ast.InternedTerm(m.match(string(s))), nil
	})
}

// regexMatchRef is the reference a call of regex.match has as its operator.
var regexMatchRef = ast.RegexMatch.Ref()

// rewriteRegexMatch returns the modules to serve with every regex.match call turned into a call
// of the table's built-in (copies of the modules it changes; the originals are never modified),
// the constant patterns added to the table, and the number of calls rewritten. Nothing is
// rewritten when a module names anything shield_internal.
func rewriteRegexMatch(mods map[string]*ast.Module, t *regexTable) (map[string]*ast.Module, int) {
	clash := false
	for _, m := range mods {
		if m.Package != nil && len(m.Package.Path) > 1 && m.Package.Path[1].Value.Compare(ast.String("shield_internal")) == 0 {
			clash = true
		}
		ast.WalkVars(m, func(v ast.Var) bool {
			if v == "shield_internal" {
				clash = true
			}
			return clash
		})
	}
	if clash {
		return mods, 0
	}
	op := ast.MustParseRef(regexMatchBuiltin)
	out := make(map[string]*ast.Module, len(mods))
	n := 0
	for f, m := range mods {
		if !callsRegexMatch(m) {
			out[f] = m
			continue
		}
		m = m.Copy()
		vis := ast.NewGenericVisitor(func(x any) bool {
			var terms []*ast.Term
			switch x := x.(type) {
			case *ast.Expr:
				if ts, ok := x.Terms.([]*ast.Term); ok {
					terms = ts
				}
			case ast.Call:
				terms = x
			}
			if len(terms) >= 3 && terms[0].Value.Compare(regexMatchRef) == 0 {
				loc := terms[0].Location
				terms[0] = ast.NewTerm(op.Copy())
				terms[0].Location = loc
				if s, ok := terms[1].Value.(ast.String); ok {
					t.addFixed(string(s))
				}
				n++
			}
			return false
		})
		vis.Walk(m)
		out[f] = m
	}
	return out, n
}

// callsRegexMatch reports whether a module calls regex.match anywhere.
func callsRegexMatch(m *ast.Module) bool {
	found := false
	ast.WalkRefs(m, func(r ast.Ref) bool {
		if r.Equal(regexMatchRef) {
			found = true
		}
		return found
	})
	return found
}
