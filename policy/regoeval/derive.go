package regoeval

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/policy"
)

// DerivedKey is the data document under which the loader exposes forms of the bundle's lists
// that Rego answers with one built-in call, where a loop over the list costs one or two calls
// per element. They are computed when the bundle loads from the lists people keep (data files,
// and module constants that are plain lists of strings), never kept by hand, so they cannot
// drift from their source. A bundle may not define this key itself.
//
// data.shield_derived.FORM.PATH is the form FORM of the list at data.PATH (a data file's list,
// or a rule `name := ["…", …]` of package PKG at data.PKG.name):
//
//   - under: each string with one trailing "/" removed and "/" appended, so that
//     `p in L` or `strings.any_prefix_match(p, under)` holds exactly when p is one of the list's
//     paths or lies below one (under(p, root) of effects.rego for some root of L).
//   - contains: one regular expression that matches a string exactly when some element of the
//     list is a substring of it (each element quoted, in one alternation).
//   - match: one regular expression that matches a string exactly when some element of the list,
//     itself a regular expression, matches it (each element in a non-capturing group, in one
//     alternation).
//
// The forms mirror how the loops behaved under OPA's default (non-strict) built-in errors, where
// a built-in given a bad operand makes its expression undefined: elements that are not strings
// (and, for match, patterns that do not compile) never matched in the loop and are left out of
// the form. A pattern that does not mean the same inside a group (`\Q` quotes to the end of
// the pattern, the group's parenthesis included) cannot be combined: when a module refers to the
// match form of its list the bundle is refused, with the element named; otherwise the form is an
// invalid pattern.
//
// A Rego test that replaces a list with `with data.….list as …` must replace its derived forms
// too: they are computed from the bundle's data, not from the test's replacement.
const DerivedKey = "shield_derived"

// The derived forms (see DerivedKey).
const (
	FormUnder    = "under"
	FormContains = "contains"
	FormMatch    = "match"
)

// neverMatches is the combined pattern of an empty list: it matches no string.
const neverMatches = `[^\x00-\x{10FFFF}]`

// derive computes data.shield_derived from the merged data and the non-test modules.
func derive(data map[string]any, modules map[string]*ast.Module) (map[string]any, policy.Problems) {
	var probs policy.Problems
	out := map[string]any{FormUnder: map[string]any{}, FormContains: map[string]any{}, FormMatch: map[string]any{}}
	used := matchFormsUsed(modules)
	put := func(path []string, list []any, origin string) {
		match, err := matchForm(list)
		if err != nil {
			if used(path) {
				probs = append(probs, policy.Problem{File: origin, Msg: fmt.Sprintf("data.%s.%s.%s: %v", DerivedKey, FormMatch, strings.Join(path, "."), err)})
			}
			match = "(" + DerivedKey + ": " + err.Error()
		}
		forms := map[string]any{FormUnder: underForm(list), FormContains: containsForm(list), FormMatch: match}
		for form, v := range forms {
			if err := setPath(out[form].(map[string]any), path, v); err != nil {
				probs = append(probs, policy.Problem{File: origin, Msg: fmt.Sprintf("data.%s.%s.%s: %v", DerivedKey, form, strings.Join(path, "."), err)})
			}
		}
	}
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(append(path[:len(path):len(path)], k), x[k])
			}
		case []any:
			put(path, x, "")
		}
	}
	walk(nil, data)
	// Module constants: `name := ["…", …]` (or a set) with no body, defined once.
	files := make([]string, 0, len(modules))
	for f := range modules {
		if !IsTestFile(f) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	defs := map[string]int{}
	type constant struct {
		path []string
		list []any
		file string
	}
	var consts []constant
	for _, f := range files {
		for _, r := range modules[f].Rules {
			path, ok := rulePath(r)
			if !ok {
				continue
			}
			key := strings.Join(path, ".")
			defs[key]++
			if list, ok := constantList(r); ok {
				consts = append(consts, constant{path, list, f})
			}
		}
	}
	for _, c := range consts {
		if defs[strings.Join(c.path, ".")] == 1 {
			put(c.path, c.list, c.file)
		}
	}
	probs.Sort()
	return out, probs
}

// rulePath is the data path of a rule (package path and the rule's name), without "data".
func rulePath(r *ast.Rule) ([]string, bool) {
	if r.Module == nil || r.Module.Package == nil {
		return nil, false
	}
	var path []string
	for i, t := range r.Path() {
		if i == 0 {
			continue // data
		}
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil, false
		}
		path = append(path, string(s))
	}
	return path, len(path) > 0
}

// constantList returns the strings of a rule `name := [...]` or `name := {...}` whose value is
// a literal array or set of strings and whose body is empty.
func constantList(r *ast.Rule) ([]any, bool) {
	if r.Default || r.Else != nil || len(r.Head.Args) > 0 || r.Head.Value == nil || r.Head.Key != nil {
		return nil, false
	}
	if len(r.Body) != 1 || !isTrue(r.Body[0]) {
		return nil, false
	}
	var terms []*ast.Term
	switch v := r.Head.Value.Value.(type) {
	case *ast.Array:
		v.Foreach(func(t *ast.Term) { terms = append(terms, t) })
	case ast.Set:
		terms = v.Slice() // sorted
	default:
		return nil, false
	}
	list := make([]any, 0, len(terms))
	for _, t := range terms {
		s, ok := t.Value.(ast.String)
		if !ok {
			return nil, false
		}
		list = append(list, string(s))
	}
	return list, true
}

func isTrue(x *ast.Expr) bool {
	t, ok := x.Terms.(*ast.Term)
	return ok && !x.Negated && len(x.With) == 0 && t.Value.Compare(ast.Boolean(true)) == 0
}

// stringsOf returns the list's strings, leaving out anything else.
func stringsOf(list []any) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func underForm(list []any) any {
	ss := stringsOf(list)
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = strings.TrimSuffix(s, "/") + "/"
	}
	return out
}

func containsForm(list []any) any {
	ss := stringsOf(list)
	if len(ss) == 0 {
		return neverMatches
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = regexp.QuoteMeta(s)
	}
	return strings.Join(q, "|")
}

func matchForm(list []any) (string, error) {
	var parts []string
	for _, s := range stringsOf(list) {
		re, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			continue // never matched: regex.match was undefined on it
		}
		// The element must mean inside a group what it means alone.
		grouped, err := syntax.Parse("(?:"+s+")", syntax.Perl)
		if err != nil || grouped.String() != re.String() {
			return "", fmt.Errorf("the pattern %q cannot be combined with the others (write it without \\Q)", s)
		}
		parts = append(parts, "(?:"+s+")")
	}
	if len(parts) == 0 {
		return neverMatches, nil
	}
	all := strings.Join(parts, "|")
	if _, err := regexp.Compile(all); err != nil {
		return "", fmt.Errorf("the patterns cannot be combined: %v", err)
	}
	return all, nil
}

// matchFormsUsed reports whether any module refers to the match form of the list at a path:
// a reference to data.shield_derived.match.P (or to a document above it, or through a
// variable) uses the forms of every list under P.
func matchFormsUsed(modules map[string]*ast.Module) func(path []string) bool {
	var prefixes [][]string
	all := false
	for _, m := range modules {
		ast.WalkRefs(m, func(r ast.Ref) bool {
			if len(r) < 2 || !r[0].Equal(ast.DefaultRootDocument) || r[1].Value.Compare(ast.String(DerivedKey)) != 0 {
				return false
			}
			if len(r) == 2 {
				all = true
				return false
			}
			if f, ok := r[2].Value.(ast.String); !ok {
				all = true
				return false
			} else if string(f) != FormMatch {
				return false
			}
			var p []string
			for _, t := range r[3:] {
				s, ok := t.Value.(ast.String)
				if !ok {
					break
				}
				p = append(p, string(s))
			}
			prefixes = append(prefixes, p)
			return false
		})
	}
	return func(path []string) bool {
		if all {
			return true
		}
		for _, p := range prefixes {
			if len(p) <= len(path) && slices.Equal(p, path[:len(p)]) {
				return true
			}
		}
		return false
	}
}

// setPath sets v at path in m, creating objects on the way.
func setPath(m map[string]any, path []string, v any) error {
	if len(path) == 0 {
		return fmt.Errorf("a list at the root of the data")
	}
	cur := m
	for _, k := range path[:len(path)-1] {
		next, ok := cur[k]
		if !ok {
			n := map[string]any{}
			cur[k] = n
			cur = n
			continue
		}
		n, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("defined twice (a list and a document holding %s)", k)
		}
		cur = n
	}
	last := path[len(path)-1]
	if _, ok := cur[last]; ok {
		return fmt.Errorf("defined twice (by the data and by a module constant)")
	}
	cur[last] = v
	return nil
}
