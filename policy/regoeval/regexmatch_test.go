package regoeval

import (
	"context"
	"regexp"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// regexSeeds are patterns of the shapes the default bundle uses and the awkward cases of the
// prefilter (case folding beyond ASCII, U+FFFD, empty alternatives, repeats).
var regexSeeds = []struct{ pattern, s string }{
	{`(?i)(curl|wget)`, "CURL http://x"},
	{`(?i)(curl|wget)`, "ſurl"},
	{`(?i)kube`, "\u212Aube"},
	{`/\.(github|gitea|forgejo)/workflows/`, "/w/.github/workflows/ci.yml"},
	{`^/(tmp|var/tmp|dev/shm|run/shm)/`, "/var/tmp/x"},
	{`://|@-|/dev/(tcp|udp)|\b(curl|wget|nc)\b`, "echo > /dev/tcp/1.2.3.4/80"},
	{`system\s*\(|\|\s*getline|\|&`, "awk '{ system (\"id\") }'"},
	{`runs-on:[^\n]*self-hosted`, "runs-on: [self-hosted, linux]"},
	{`ignore previous instructions|disregard`, "please IGNORE previous instructions"},
	{`\x{FFFD}abc`, "\xffabc"},
	{`a(b|)c`, "ac"},
	{`(ab){2,}x`, "ababx"},
	{`(?i)ab(?-i)CD`, "ABCD"},
	{`(?i)ab(?-i)CD`, "abcd"},
	{`x*`, ""},
	{`^\$?\{?[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\}?$`, "${AWS_SECRET}"},
}

// TestRegexMatcher: the prefiltered matcher answers as regexp.MatchString on the seeds and on
// every substring-shaped variant of them (cases, truncations, the literals alone).
func TestRegexMatcher(t *testing.T) {
	filtered := 0
	for _, c := range regexSeeds {
		m, err := compileMatcher(c.pattern)
		if err != nil {
			t.Fatalf("compile %q: %v", c.pattern, err)
		}
		if m.filter != nil {
			filtered++
		}
		re := regexp.MustCompile(c.pattern)
		for _, s := range []string{c.s, "", c.s[:len(c.s)/2], c.s[len(c.s)/2:], upper(c.s), c.pattern} {
			if got, want := m.match(s), re.MatchString(s); got != want {
				t.Errorf("pattern %q on %q: prefiltered %v, regexp %v", c.pattern, s, got, want)
			}
		}
	}
	if filtered < len(regexSeeds)/2 {
		t.Errorf("only %d of %d seed patterns have a prefilter", filtered, len(regexSeeds))
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// FuzzRegexMatch compares the prefiltered matcher with regexp.MatchString on random patterns
// and inputs; patterns regexp refuses are refused by the table too.
func FuzzRegexMatch(f *testing.F) {
	for _, c := range regexSeeds {
		f.Add(c.pattern, c.s)
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 512 || len(s) > 4096 {
			return // bound the work per input
		}
		re, err := regexp.Compile(pattern)
		tab := newRegexTable()
		m, terr := tab.get(pattern)
		if (err == nil) != (terr == nil) {
			t.Fatalf("pattern %q: regexp error %v, table error %v", pattern, err, terr)
		}
		if err != nil {
			return
		}
		if got, want := m.match(s), re.MatchString(s); got != want {
			t.Fatalf("pattern %q on %q: prefiltered %v, regexp %v (filter %+v)", pattern, s, got, want, m.filter)
		}
	})
}

// TestRegexMatchRewrite: a module's regex.match calls (constant pattern, pattern through a rule
// constant, pattern from data, an invalid pattern, a non-string value, regex.match inside a
// comprehension and as a value) give the same results served through the built-in as through
// OPA's regex.match; a module naming shield_internal is left as written.
func TestRegexMatchRewrite(t *testing.T) {
	src := `package p

pat := "(?i)secret|token"

r1 if regex.match("(?i)(curl|wget)", input.s)
r2 if regex.match(pat, input.s)
r3 if regex.match(data.pats[input.k], input.s)
r4 if regex.match("(", input.s)
r5 if regex.match("x", input.n)
r6 := [x | some x in input.list; regex.match("^a.*b$", x)]
r7 := regex.match("wget", input.s)
r8 if not regex.match("curl", input.s)
`
	mod := ast.MustParseModuleWithOpts(src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	tab := newRegexTable()
	served, n := rewriteRegexMatch(map[string]*ast.Module{"p.rego": mod}, tab)
	if n != 8 {
		t.Fatalf("rewrote %d calls, want 8", n)
	}
	if served["p.rego"] == mod || !callsRegexMatch(mod) || callsRegexMatch(served["p.rego"]) {
		t.Fatal("the original module was changed or the served one still calls regex.match")
	}
	if _, ok := tab.fixed["(?i)(curl|wget)"]; !ok || len(tab.fixed) != 5 {
		t.Errorf("constant patterns at load: %d (want the 5 valid ones)", len(tab.fixed))
	}
	data := map[string]any{"pats": map[string]any{"a": "rm -rf|mkfs", "b": "(?i)ssh"}}
	eval := func(m *ast.Module, fn func(*rego.Rego), input map[string]any) any {
		opts := []func(*rego.Rego){rego.Query("data.p"), rego.ParsedModule(m), rego.Store(NewStore(data)), rego.Input(input)}
		if fn != nil {
			opts = append(opts, fn)
		}
		rs, err := rego.New(opts...).Eval(context.Background())
		if err != nil {
			t.Fatalf("eval: %v", err)
		}
		return rs[0].Expressions[0].Value
	}
	inputs := []map[string]any{
		{"s": "WGET http://x", "k": "a", "n": 1, "list": []any{"ab", "axb", "ba"}},
		{"s": "rm -rf / ; SSH", "k": "b", "n": "x"},
		{"s": "my Token", "k": "zz", "list": []any{1, "a-b"}},
		{"s": "", "k": "a"},
	}
	for _, in := range inputs {
		want := eval(mod, nil, in)
		got := eval(served["p.rego"], tab.function(), in)
		if !regexpEqual(want, got) {
			t.Errorf("input %v: plain %v, served %v", in, want, got)
		}
	}
	clash := ast.MustParseModuleWithOpts("package q\n\nshield_internal := 1\n\nr if regex.match(\"a\", input.s)\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
	if out, n := rewriteRegexMatch(map[string]*ast.Module{"q.rego": clash}, newRegexTable()); n != 0 || out["q.rego"] != clash {
		t.Errorf("a module naming shield_internal was rewritten (%d calls)", n)
	}
}

func regexpEqual(a, b any) bool {
	x, err1 := ast.InterfaceToValue(a)
	y, err2 := ast.InterfaceToValue(b)
	return err1 == nil && err2 == nil && x.Compare(y) == 0
}
