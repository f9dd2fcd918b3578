package celrules

import (
	"io/fs"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"

	"github.com/shieldsec/shield/policies"
)

// bundlePatterns returns the constant patterns of `matches` in the default bundle's rules,
// unescaped by CEL itself.
func bundlePatterns(t testing.TB) []string {
	t.Helper()
	env, err := cel.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	lit := regexp.MustCompile(`matches\(('(?:[^'\\]|\\.)*')\)`)
	var out []string
	err = fs.WalkDir(policies.Default, "default/rules", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(policies.Default, p)
		if err != nil {
			return err
		}
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			ast, iss := env.Compile(m[1])
			if iss.Err() != nil {
				t.Fatalf("%s: %s: %v", p, m[1], iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			v, _, err := prg.Eval(cel.NoVars())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v.Value().(string))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d patterns in the default bundle", len(out))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var extraPatterns = []string{
	`(?i)(curl|wget)`, `\$\{?IFS\b`, `^-[a-zA-Z]*R$`, `(?i)secret|token`, `(?i)kelvin`, `(?i)(a|b)c`,
	`x+yz{2,}`, `(abc)*def`, `(abc)?`, `(?i:ab)CD`, `a\x{FFFD}b`, `(?s)a.b`, `(foo|)bar`, `é+tude`,
	`(?i)é`, `[ab]cd`, `(?i)ss|ſt`, `(?U)ab+?c`, `(?m)^abc$`, `\Qa.b\E`, `(?i)\bkey\b`,
}

// fragments for random strings: the patterns' own characters, case variants and the
// characters Unicode case folding equates with ASCII letters.
var fragments = []string{"ſ", "K", "k", "é", "É", "\xff", "\ufffd", "\n", " ", "$", "{", "IFS", "-R", "ss"}

func randomString(r *rand.Rand, pats []string) string {
	var b strings.Builder
	for n := r.Intn(6); n >= 0; n-- {
		switch r.Intn(4) {
		case 0:
			p := pats[r.Intn(len(pats))]
			i := r.Intn(len(p) + 1)
			j := i + r.Intn(len(p)-i+1)
			b.WriteString(p[i:j])
		case 1:
			b.WriteString(fragments[r.Intn(len(fragments))])
		case 2:
			p := []byte(pats[r.Intn(len(pats))])
			for i := range p {
				if r.Intn(2) == 0 && p[i] >= 'a' && p[i] <= 'z' {
					p[i] -= 'a' - 'A'
				}
			}
			b.Write(p)
		default:
			b.WriteByte(byte(r.Intn(256)))
		}
	}
	return b.String()
}

// literalsOf extracts the literal words of a pattern, so that random strings hit matches.
func literalsOf(p string) []string {
	return regexp.MustCompile(`[A-Za-z_]{2,}`).FindAllString(p, -1)
}

// TestPrefilterSound: on every pattern of the default bundle and some awkward ones, a string
// the prefilter rejects is never matched by the regular expression.
func TestPrefilterSound(t *testing.T) {
	pats := append(bundlePatterns(t), extraPatterns...)
	var words []string
	for _, p := range pats {
		words = append(words, literalsOf(p)...)
	}
	r := rand.New(rand.NewSource(14))
	filtered, matched, rejected := 0, 0, 0
	for _, p := range pats {
		re := regexp.MustCompile(p)
		f := newPrefilter(p)
		if f == nil {
			continue
		}
		filtered++
		for i := 0; i < 3000; i++ {
			s := randomString(r, words)
			if i%3 == 0 {
				s = randomString(r, []string{p})
			}
			m := re.MatchString(s)
			if m {
				matched++
			}
			if !f.MayMatch(s) {
				rejected++
				if m {
					t.Fatalf("pattern %q matches %q but its prefilter %+v rejects it", p, s, f)
				}
			}
		}
	}
	if filtered < len(pats)/2 || matched == 0 || rejected == 0 {
		t.Fatalf("weak test: %d of %d patterns filtered, %d matches, %d rejections", filtered, len(pats), matched, rejected)
	}
	t.Logf("%d of %d patterns have a prefilter; %d matches, %d rejections", filtered, len(pats), matched, rejected)
}

func TestPrefilterShapes(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    []string // nil: no prefilter
		fold    bool
	}{
		{`(?i)(curl|wget)`, []string{"curl", "wget"}, true},
		{`\$\{?IFS\b`, []string{"IFS"}, false},
		{`x(abc)*def`, []string{"def"}, false},
		{`(abc)?`, nil, false},
		{`(foo|)bar`, []string{"bar"}, false},
		{`a\x{FFFD}b`, nil, false},
		{`(?i)é+tude`, []string{"tude"}, true},
		{`[ab]`, nil, false},
		{`\$\{?IFS\b|\$\{?[@*]`, []string{"$"}, false}, // parsed as \$(?:…): the one literal
		{`(?i:ab)|cd`, []string{"ab", "cd"}, true},     // one folded literal makes the filter fold
	} {
		f := newPrefilter(tc.pattern)
		if tc.want == nil {
			if f != nil {
				t.Errorf("%q: prefilter %+v, want none", tc.pattern, f)
			}
			continue
		}
		var got []string
		fold := false
		if f != nil {
			got, fold = f.Literals()
		}
		if f == nil || !slices.Equal(got, tc.want) || fold != tc.fold {
			t.Errorf("%q: prefilter %q, want %q fold=%v", tc.pattern, got, tc.want, tc.fold)
		}
	}
	// Unicode folding: ſ and K (Kelvin) match s and k under (?i).
	f := newPrefilter(`(?i)secret`)
	if !f.MayMatch("ſecret") || !regexp.MustCompile(`(?i)secret`).MatchString("ſecret") {
		t.Fatal("non-ASCII input must pass a folded prefilter")
	}
	if f.MayMatch("public") || !f.MayMatch("SeCrEt") || !f.MayMatch("x:SECRET") || f.MayMatch("SECRE") {
		t.Fatal("folded prefilter")
	}
	f = newPrefilter(`(?i:ab)|cd`)
	if !f.MayMatch("xAB") || f.MayMatch("CD") || !f.MayMatch("cd") {
		t.Fatal("mixed prefilter: ab folded, cd exact")
	}
}

// FuzzPrefilter: any pattern and string; a string the prefilter rejects is never matched.
func FuzzPrefilter(f *testing.F) {
	for _, p := range append(bundlePatterns(f), extraPatterns...) {
		f.Add(p, "")
		for _, w := range literalsOf(p) {
			f.Add(p, "x "+w+" y")
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 512 || len(s) > 4096 {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		pf := newPrefilter(pattern)
		if pf != nil && !pf.MayMatch(s) && re.MatchString(s) {
			t.Fatalf("pattern %q matches %q but its prefilter %+v rejects it", pattern, s, pf)
		}
	})
}
