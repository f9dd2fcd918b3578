package activate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// The default bundle's Rego with its hottest helpers reshaped (testdata/regoshape, a copy: the
// shipped bundle is unchanged). What costs in the default Rego is not evaluation machinery but
// loops over data lists with a built-in call or two per element: protected_path, readable,
// writable and confined_path call under(p, root) for each configured root (trim_suffix, concat,
// startswith per root: 7–19 roots), user_cache calls contains per cache directory (11), and
// host_in_list splits the host, builds numbers.range and an array.slice plus a concat per
// parent domain. The copy answers each with one or two built-in calls over lists precomputed in
// its data.json: `p in roots` or strings.any_prefix_match(p, roots each with one trailing "/"),
// one regular expression for the cache directories, and for host_in_list names[host] (when the
// host has a dot) or strings.any_suffix_match(host, "." + each key that has a dot). Each is
// equivalent to the original for every string (the test below checks the verdicts on the
// corpora and the bundle's own Rego tests pass on the copy).

// reshapedBundle is the default bundle with testdata/regoshape's Rego and data.
func reshapedBundle(tb testing.TB) *policy.Bundle {
	tb.Helper()
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string][]byte{}
	for k, v := range b.Files {
		files[k] = v
	}
	for dst, src := range map[string]string{"rego/effects.rego": "effects.rego", "rego/shield.rego": "shield.rego", "data.json": "data.json"} {
		if _, ok := files[dst]; !ok {
			tb.Fatalf("the default bundle has no %s", dst)
		}
		data, err := os.ReadFile("testdata/regoshape/" + src)
		if err != nil {
			tb.Fatal(err)
		}
		files[dst] = data
	}
	b.Files = files
	return b
}

func regoTier(tb testing.TB, pol *shield.Policy) shield.Tier {
	tb.Helper()
	for _, t := range pol.Tiers {
		if _, ok := t.(*regoeval.Engine); ok {
			return t
		}
	}
	tb.Fatal("no rego tier")
	return nil
}

// TestRegoShapeSameVerdicts: the reshaped copy passes the bundle's own tests (Activate runs
// them) and its Rego tier answers exactly what the default bundle's does on every call of the
// corpora.
func TestRegoShapeSameVerdicts(t *testing.T) {
	opt := Options{Workspace: ExampleWorkspace, Home: ExampleHome}
	def, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Activate(def, opt)
	if err != nil {
		t.Fatal(err)
	}
	shaped, err := Activate(reshapedBundle(t), opt)
	if err != nil {
		t.Fatalf("the reshaped copy: %v", err)
	}
	rt, st := regoTier(t, ref), regoTier(t, shaped)
	n := 0
	for _, path := range []string{"../../policies/testdata/corpus/families.jsonl", "../../policies/testdata/holdout/holdout.jsonl"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var c struct {
				ID        string          `json:"id"`
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				continue
			}
			args, err := normalize.DecodeArguments(c.Arguments, normalize.Limits{})
			if err != nil {
				continue
			}
			in := &shield.Input{Call: &shield.Call{Tool: c.Tool, Arguments: c.Arguments}, Action: ref.Normalizer.Normalize(c.Tool, args, "")}
			r, rerr := rt.Evaluate(context.Background(), in)
			s, serr := st.Evaluate(context.Background(), in)
			if (rerr == nil) != (serr == nil) || !reflect.DeepEqual(r, s) {
				t.Errorf("%s: default %+v (%v), reshaped %+v (%v)", c.ID, r, rerr, s, serr)
			}
			n++
		}
		f.Close()
	}
	if n < 500 {
		t.Fatalf("only %d corpus calls compared", n)
	}
}

// BenchmarkRegoShape: the Rego tier of the default bundle and of the reshaped copy on the
// benchmark calls, one by one.
func BenchmarkRegoShape(b *testing.B) {
	opt := Options{Workspace: ExampleWorkspace, Home: ExampleHome}
	def, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ref, err := Activate(def, opt)
	if err != nil {
		b.Fatal(err)
	}
	shaped, err := Activate(reshapedBundle(b), opt)
	if err != nil {
		b.Fatal(err)
	}
	for i, c := range benchCalls {
		args, err := normalize.DecodeArguments(json.RawMessage(c.args), normalize.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		in := &shield.Input{Call: &shield.Call{Tool: c.tool, Arguments: json.RawMessage(c.args)}, Action: ref.Normalizer.Normalize(c.tool, args, "")}
		for _, v := range []struct {
			name string
			pol  *shield.Policy
		}{{"default", ref}, {"reshaped", shaped}} {
			t := regoTier(b, v.pol)
			b.Run(fmt.Sprintf("call%d/%s", i, v.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := t.Evaluate(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestRegoShapeHelpers: each reshaped helper answers what the original answers, on strings
// built around every configured root, cache directory and host (prefix, suffix, near misses).
func TestRegoShapeHelpers(t *testing.T) {
	data, err := os.ReadFile("testdata/regoshape/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Shield struct {
			Effects map[string]any `json:"effects"`
			Lists   map[string]any `json:"lists"`
		} `json:"shield"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	eff, lists := d.Shield.Effects, d.Shield.Lists
	var seeds []string
	for _, k := range []string{"protected_paths", "read_roots", "write_roots", "user_cache_dirs"} {
		for _, r := range eff[k].([]any) {
			seeds = append(seeds, r.(string))
		}
	}
	for _, o := range []map[string]any{eff["egress_hosts"].(map[string]any), lists["exfil_domains"].(map[string]any), lists["internal_email_domains"].(map[string]any)} {
		for h := range o {
			seeds = append(seeds, h)
		}
	}
	var strs []string
	for _, s := range seeds {
		for _, v := range []string{s, s + "/", s + "/x", s + "x", "/home/u" + s + "a", s[:len(s)-1], "x." + s, "a.b." + s, "x" + s, "." + s, s + ".", "/" + s} {
			strs = append(strs, v)
		}
	}
	strs = append(strs, "", "/", "a", ".", "..", "a..b", "localhost")
	module := `package t

import rego.v1

under(p, root) if p == root

under(p, root) if startswith(p, concat("", [trim_suffix(root, "/"), "/"]))

old_under(p, roots) if {
	some root in roots
	under(p, root)
}

new_under(p, roots, _) if p in roots

new_under(p, _, prefixes) if strings.any_prefix_match(p, prefixes)

old_cache(p) if {
	some d in data.shield.effects.user_cache_dirs
	contains(p, d)
}

new_cache(p) if regex.match(data.shield.effects.user_cache_re, p)

old_host(host, names) if {
	labels := split(host, ".")
	count(labels) > 1
	some i in numbers.range(0, count(labels) - 2)
	names[concat(".", array.slice(labels, i, count(labels)))]
}

new_host(host, names, _) if {
	contains(host, ".")
	names[host]
}

new_host(host, _, suffixes) if strings.any_suffix_match(host, suffixes)

e := data.shield.effects

l := data.shield.lists
`
	for _, p := range [][2]string{
		{"old_under(s, e.protected_paths)", "new_under(s, e.protected_paths, e.protected_prefixes)"},
		{"old_under(s, e.read_roots)", "new_under(s, e.read_roots, e.read_prefixes)"},
		{"old_under(s, e.write_roots)", "new_under(s, e.write_roots, e.write_prefixes)"},
		{"old_cache(s)", "new_cache(s)"},
		{"old_host(s, e.egress_hosts)", "new_host(s, e.egress_hosts, e.egress_suffixes)"},
		{"old_host(s, l.exfil_domains)", "new_host(s, l.exfil_domains, l.exfil_suffixes)"},
		{"old_host(s, l.internal_email_domains)", "new_host(s, l.internal_email_domains, l.internal_email_suffixes)"},
	} {
		module += fmt.Sprintf("\ndiff contains [%q, s] if {\n\tsome s in input\n\t%s\n\tnot %s\n}\n", p[0], p[0], p[1])
		module += fmt.Sprintf("\ndiff contains [%q, s] if {\n\tsome s in input\n\tnot %s\n\t%s\n}\n", p[1], p[0], p[1])
	}
	var store map[string]any
	if err := json.Unmarshal(data, &store); err != nil {
		t.Fatal(err)
	}
	rs, err := rego.New(rego.Query("data.t.diff"), rego.Module("t.rego", module), rego.Store(inmem.NewFromObject(store)), rego.Input(strs)).Eval(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("eval: %v (%d results)", err, len(rs))
	}
	res := rs[0].Expressions[0].Value.([]any)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 {
		t.Fatalf("reshaped helpers differ from the originals on %d strings: %v", len(res), res)
	}
	t.Logf("%d strings, identical answers", len(strs))
}
