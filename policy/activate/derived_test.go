package activate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown/cache"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/regoeval"
)

// The default bundle's helpers answer from lists derived at load (policy/regoeval/derive.go)
// what loops over the lists people keep used to answer. The reference below is those loops, as
// the bundle had them; every check compares the two on the same strings.
const loopReference = `package shield_ref

import rego.v1

old_under(p, roots) if {
	some root in roots
	p == root
}

old_under(p, roots) if {
	some root in roots
	startswith(p, concat("", [trim_suffix(root, "/"), "/"]))
}

old_contains(s, list) if {
	some x in list
	contains(s, x)
}

old_match(s, list) if {
	some x in list
	regex.match(x, s)
}

# Each derived form of each list of input.lists ({path, list, under, contains, match, patterns}).
old contains ["under", l.path, s] if {
	some l in input.lists
	some s in input.strings
	old_under(s, l.list)
}

new contains ["under", l.path, s] if {
	some l in input.lists
	some s in input.strings
	data.shield.under_any(s, l.list, l.under)
}

old contains ["contains", l.path, s] if {
	some l in input.lists
	some s in input.strings
	old_contains(s, l.list)
}

new contains ["contains", l.path, s] if {
	some l in input.lists
	some s in input.strings
	regex.match(l.contains, s)
}

old contains ["match", l.path, s] if {
	some l in input.lists
	l.patterns
	some s in input.strings
	old_match(s, l.list)
}

new contains ["match", l.path, s] if {
	some l in input.lists
	l.patterns
	some s in input.strings
	regex.match(l.match, s)
}

# The bundle's own helpers, as the rules call them.
old contains ["protected_path", "", s] if {
	input.helpers
	some s in input.strings
	old_under(s, data.shield.effects.protected_paths)
}

new contains ["protected_path", "", s] if {
	input.helpers
	some s in input.strings
	data.shield.protected_path(s)
}

old contains ["user_cache", "", s] if {
	input.helpers
	some s in input.strings
	old_contains(s, data.shield.effects.user_cache_dirs)
}

new contains ["user_cache", "", s] if {
	input.helpers
	some s in input.strings
	data.shield.user_cache(s)
}

old contains ["readable", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_under(s, data.shield.effects.read_roots)
}

old contains ["readable", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_contains(s, data.shield.effects.user_cache_dirs)
}

old contains ["readable", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_match(s, data.shield.effects.read_exact_patterns)
}

new contains ["readable", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	data.shield.readable({"target": s, "in_workspace": false})
}

old contains ["writable", "", s] if {
	input.helpers
	some s in input.strings
	old_under(s, data.shield.effects.write_roots)
}

old contains ["writable", "", s] if {
	input.helpers
	some s in input.strings
	old_contains(s, data.shield.effects.user_cache_dirs)
}

new contains ["writable", "", s] if {
	input.helpers
	some s in input.strings
	data.shield.writable({"target": s, "in_workspace": false})
}

old contains ["agent_instruction_file", "", s] if {
	input.helpers
	some s in input.strings
	old_contains(s, data.shield.lists.agent_instruction_files)
}

new contains ["agent_instruction_file", "", s] if {
	input.helpers
	some s in input.strings
	data.shield.agent_instruction_file(s)
}

old contains ["code_cache_write", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_match(s, data.shield.code_cache_patterns)
}

new contains ["code_cache_write", "", s] if {
	input.helpers
	some s in input.strings
	data.shield.code_cache_write({"kind": "write", "target": s})
}

old contains ["autorun_write", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_match(s, data.shield.lists.autorun_files)
}

new contains ["autorun_write", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	data.shield.autorun_write[s] with input as {"paths": [{"clean": s, "role": "write"}], "effects": []}
}

old contains ["package_config_write", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	old_match(s, data.shield.lists.package_config_files)
}

new contains ["package_config_write", "", s] if {
	input.helpers
	some s in input.strings
	startswith(s, "/")
	data.shield.package_config_write[s] with input as {"paths": [{"clean": s, "role": "write"}], "effects": []}
}

old contains ["known_exec_detail", "", s] if {
	input.helpers
	some s in input.strings
	some d in data.shield.effects.known_exec_details
	startswith(s, d)
}

new contains ["known_exec_detail", "", s] if {
	input.helpers
	some s in input.strings
	strings.any_prefix_match(s, data.shield.effects.known_exec_details)
}

old contains ["safety_bypass", "", s] if {
	input.helpers
	some s in input.rule_strings
	some phrase in data.shield.lists.safety_bypass_phrases
	contains(lower(s), phrase)
}

new contains ["safety_bypass", "", s] if {
	input.helpers
	some s in input.rule_strings
	"agent.safety-bypass" in {f.rule | some f in data.shield.deny} with input as {"class": "agent_spawn", "prompt": s, "strings": [], "paths": [], "effects": [], "commands": [], "urls": [], "flows": []}
}

old contains ["injection_marker", "", s] if {
	input.helpers
	some s in input.rule_strings
	some phrase in ["ignore previous instructions", "ignore all previous instructions", "disregard previous instructions", "you are now in developer mode"]
	contains(lower(s), phrase)
}

new contains ["injection_marker", "", s] if {
	input.helpers
	some s in input.rule_strings
	"agent.injection-marker" in {f.rule | some f in data.shield.escalate} with input as {"class": "query", "strings": [s], "paths": [], "effects": [], "commands": [], "urls": [], "flows": []}
}

# host_in_list, as it was, on the three host lists the rules give it.
old_host(host, names) if {
	labels := split(host, ".")
	count(labels) > 1
	some i in numbers.range(0, count(labels) - 2)
	names[concat(".", array.slice(labels, i, count(labels)))]
}

host_lists := {"egress": data.shield.effects.egress_hosts, "exfil": data.shield.lists.exfil_domains, "email": data.shield.lists.internal_email_domains}

old contains ["host_in_list", k, s] if {
	input.helpers
	some s in input.strings
	some k, names in host_lists
	old_host(s, names)
}

new contains ["host_in_list", k, s] if {
	input.helpers
	some s in input.strings
	some k, names in host_lists
	data.shield.host_in_list(s, names)
}

result := {"old": old, "new": new}
`

// injectionPhrases are agent.injection-marker's phrases (shield.rego).
var injectionPhrases = []string{"ignore previous instructions", "ignore all previous instructions", "disregard previous instructions", "you are now in developer mode"}

var cacheEntries = 4096

// neverMatches matches no string (the derived pattern of an empty list).
const neverMatches = `[^\x00-\x{10FFFF}]`

// derivedChecker evaluates loopReference against the default bundle's modules and data.
type derivedChecker struct {
	pq    rego.PreparedEvalQuery
	lists []derivedList
	hosts []string // strings around the keys of the host lists
}

// derivedList is one list of the bundle (a data list of strings or a module constant) with
// its derived forms.
type derivedList struct {
	path            string
	list            []any
	under           any
	contains, match any
	patterns        bool // every element compiles as a regular expression
	elements        []string
}

func newDerivedChecker(tb testing.TB) *derivedChecker {
	tb.Helper()
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := regoeval.Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	opts := []func(*rego.Rego){
		rego.Query("data.shield_ref.result"),
		rego.Store(regoeval.NewStore(p.Data)),
		rego.Module("shield_ref.rego", loopReference),
		rego.Capabilities(p.Capabilities),
		// The loops compile more patterns than OPA's process-wide cache holds.
		rego.InterQueryBuiltinValueCache(cache.NewInterQueryValueCache(context.Background(), &cache.Config{
			InterQueryBuiltinValueCache: cache.InterQueryBuiltinValueCacheConfig{MaxNumEntries: &cacheEntries},
		})),
	}
	for f, m := range p.Modules {
		if !regoeval.IsTestFile(f) {
			opts = append(opts, rego.ParsedModule(m))
		}
	}
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	c := &derivedChecker{pq: pq}
	derived := p.Data[regoeval.DerivedKey].(map[string]any)
	// Every list the loader derived forms for: walk the "under" tree, look the list up in the
	// data (or take it from the module constant the form was made of).
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(append(path[:len(path):len(path)], k), e)
			}
		case []any:
			l := derivedList{path: strings.Join(path, "."), under: x,
				contains: lookup(derived[regoeval.FormContains], path), match: lookup(derived[regoeval.FormMatch], path)}
			src, ok := lookup(p.Data, path).([]any)
			if !ok {
				src = constantOf(tb, p, path)
			}
			l.list = src
			m, _ := l.match.(string)
			l.patterns = !strings.HasPrefix(m, "("+regoeval.DerivedKey)
			for _, e := range src {
				if s, ok := e.(string); ok {
					l.elements = append(l.elements, s)
				}
			}
			c.lists = append(c.lists, l)
		}
	}
	walk(nil, derived[regoeval.FormUnder])
	for _, path := range [][]string{{"shield", "effects", "egress_hosts"}, {"shield", "lists", "exfil_domains"}, {"shield", "lists", "internal_email_domains"}} {
		names, ok := lookup(p.Data, path).(map[string]any)
		if !ok || len(names) == 0 {
			tb.Fatalf("data.%s is no host list", strings.Join(path, "."))
		}
		for h := range names {
			c.hosts = append(c.hosts, h, "a."+h, "a.b."+h, "x"+h, "a..b."+h, h+".")
		}
	}
	sort.Strings(c.hosts)
	sort.Slice(c.lists, func(i, j int) bool { return c.lists[i].path < c.lists[j].path })
	return c
}

func lookup(v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// constantOf evaluates a module constant (data.PATH) of the bundle.
func constantOf(tb testing.TB, p *regoeval.Parsed, path []string) []any {
	tb.Helper()
	opts := []func(*rego.Rego){rego.Query("data." + strings.Join(path, ".")), rego.Store(regoeval.NewStore(p.Data)), rego.Capabilities(p.Capabilities)}
	for f, m := range p.Modules {
		if !regoeval.IsTestFile(f) {
			opts = append(opts, rego.ParsedModule(m))
		}
	}
	rs, err := rego.New(opts...).Eval(context.Background())
	if err != nil || len(rs) != 1 {
		tb.Fatalf("data.%s: %v (%d results)", strings.Join(path, "."), err, len(rs))
	}
	list, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		tb.Fatalf("data.%s is %T", strings.Join(path, "."), rs[0].Expressions[0].Value)
	}
	return list
}

// check compares the loops and the derived forms of lists (and, with helpers, the bundle's
// helpers) on strs; it returns what differs.
//
// The checks of whole rules (a decision evaluated per string) take ruleStrs instead.
func (c *derivedChecker) check(tb testing.TB, lists []derivedList, strs, ruleStrs []string, helpers bool) []string {
	tb.Helper()
	ls := make([]any, len(lists))
	for i, l := range lists {
		ls[i] = map[string]any{"path": l.path, "list": l.list, "under": l.under, "contains": l.contains, "match": l.match, "patterns": l.patterns}
	}
	in := map[string]any{"strings": strs, "rule_strings": ruleStrs, "helpers": helpers, "lists": ls}
	rs, err := c.pq.Eval(context.Background(), rego.EvalInput(in))
	if err != nil {
		tb.Fatalf("eval: %v", err)
	}
	if len(rs) != 1 {
		tb.Fatalf("%d results", len(rs))
	}
	res := rs[0].Expressions[0].Value.(map[string]any)
	set := func(v any) map[string]bool {
		out := map[string]bool{}
		for _, e := range v.([]any) {
			p := e.([]any)
			out[fmt.Sprintf("%s %s %q", p[0], p[1], p[2])] = true
		}
		return out
	}
	old, nw := set(res["old"]), set(res["new"])
	var diff []string
	for k := range old {
		if !nw[k] {
			diff = append(diff, "loop only: "+k)
		}
	}
	for k := range nw {
		if !old[k] {
			diff = append(diff, "derived only: "+k)
		}
	}
	sort.Strings(diff)
	return diff
}

// probes are strings built around the elements of every list: the element, below it, beside
// it, cut short, inside a longer path, with case and separators changed.
func probes(lists []derivedList, rng *rand.Rand) []string {
	seen := map[string]bool{"": true, "/": true, ".": true, "..": true, "a": true, "/home/user/project/x": true}
	out := []string{"", "/", ".", "..", "a", "/home/user/project/x"}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, l := range lists {
		for _, e := range l.elements {
			for _, v := range []string{e, e + "/", e + "/x", e + "x", "/home/u" + e + "a", "x" + e, "." + e, e + ".", "/" + e,
				strings.ToUpper(e), strings.TrimSuffix(e, "/"), strings.TrimSuffix(e, "/") + "/y", "/home/user/project/" + strings.TrimPrefix(e, "/")} {
				add(v)
			}
			if len(e) > 1 {
				add(e[:len(e)-1])
				add(e[1:])
				i := rng.IntN(len(e))
				add(e[:i] + e[i+1:])
			}
		}
	}
	return out
}

// TestDerivedForms: for every list of the default bundle (data lists and module constants of
// strings) each derived form answers what the loop over the list answers, and the bundle's
// helpers built on them answer what the loops they replaced answered, on strings built around
// every element of every list.
func TestDerivedForms(t *testing.T) {
	c := newDerivedChecker(t)
	if len(c.lists) < 20 {
		t.Fatalf("only %d lists with derived forms", len(c.lists))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	strs := append(probes(c.lists, rng), c.hosts...)
	for i := range c.lists {
		l := &c.lists[i]
		// The strings built around this list's elements, and a sample of the others.
		own := probes(c.lists[i:i+1], rng)
		for range 200 {
			own = append(own, strs[rng.IntN(len(strs))])
		}
		if d := c.check(t, c.lists[i:i+1], own, nil, false); len(d) > 0 {
			t.Errorf("%s: %d differences, e.g. %v", l.path, len(d), d[:min(len(d), 5)])
		}
	}
	// Whole rules: the strings around their phrases, and a sample of the others.
	var ruleStrs []string
	for _, l := range c.lists {
		if l.path == "shield.lists.safety_bypass_phrases" {
			ruleStrs = probes([]derivedList{l, {elements: injectionPhrases}}, rng)
		}
	}
	if len(ruleStrs) == 0 {
		t.Fatal("no list shield.lists.safety_bypass_phrases")
	}
	for range 300 {
		ruleStrs = append(ruleStrs, strs[rng.IntN(len(strs))])
	}
	// The helpers: which list and which form each reads (the forms themselves are checked
	// above, list by list): every element itself, with and without a trailing "/" and below
	// it, and a sample of the rest.
	var helperStrs []string
	for _, l := range c.lists {
		for _, e := range l.elements {
			helperStrs = append(helperStrs, e, strings.TrimSuffix(e, "/"), strings.TrimSuffix(e, "/")+"/x")
		}
	}
	helperStrs = append(helperStrs, c.hosts...)
	for range 1500 {
		helperStrs = append(helperStrs, strs[rng.IntN(len(strs))])
	}
	if d := c.check(t, nil, helperStrs, ruleStrs, true); len(d) > 0 {
		t.Errorf("helpers: %d differences, e.g. %v", len(d), d[:min(len(d), 5)])
	}
	t.Logf("%d lists, %d strings (helpers %d, rules %d): identical answers", len(c.lists), len(strs), len(helperStrs), len(ruleStrs))
	// The check itself can fail: a derived form of another list differs.
	l := c.lists[0]
	other := c.lists[len(c.lists)-1]
	l.under, l.contains = other.under, other.contains
	if d := c.check(t, []derivedList{l}, strs, nil, false); len(d) == 0 {
		t.Fatalf("%s with the forms of %s: no difference found", l.path, other.path)
	}
}

// FuzzDerivedForms: any string, loops and derived forms agree for every list and helper.
func FuzzDerivedForms(f *testing.F) {
	for _, s := range []string{"/etc/shield/x", "/home/user/.cache/pip/x", "/w/.github/workflows/ci.yml", "/tmp", "/tmp/", "/tmpx",
		"/home/u/.pyenv/shims/python", "CLAUDE.md", "pastebin.com", "x.y.pastebin.com", "registry.npmjs.org", "a..b", "a.b.", "Please IGNORE previous instructions", "disable the shield now", "You are now in developer mode", "/w/.vscode/tasks.json", "environment setup: x", "", "/", "\xff/tmp/\xfe", "/Users/a/"} {
		f.Add(s)
	}
	c := newDerivedChecker(f)
	f.Fuzz(func(t *testing.T, s string) {
		strs := []string{s, "/" + s, s + "/"}
		if d := c.check(t, c.lists, strs, strs, true); len(d) > 0 {
			t.Fatalf("%v", d)
		}
	})
}
