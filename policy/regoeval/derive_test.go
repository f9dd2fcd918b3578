package regoeval

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// TestDeriveForms: the loader derives each form of each list of the data and of the modules'
// constant lists, and nothing for anything else.
func TestDeriveForms(t *testing.T) {
	b := bundleOf(t, map[string]string{
		"data.json": `{"shield": {"x": {"roots": ["/a", "/b/", "/"], "subs": ["a.b", "(c"], "pats": ["^a$", "(?i)b"], "empty": [], "mixed": ["a", 1], "host": {"k": true}}}}`,
		"rego/p.rego": `package shield

import rego.v1

consts := ["x+", "y"]

set_consts := {"b", "a"}

twice := ["a"] if input.a

twice := ["b"] if input.b

computed := [lower("A")]

decision := {}
`,
	})
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Data[DerivedKey]
	want := map[string]any{
		FormUnder: map[string]any{"shield": map[string]any{
			"x":          map[string]any{"roots": []any{"/a/", "/b/", "/"}, "subs": []any{"a.b/", "(c/"}, "pats": []any{"^a$/", "(?i)b/"}, "empty": []any{}, "mixed": []any{"a/"}},
			"consts":     []any{"x+/", "y/"},
			"set_consts": []any{"a/", "b/"},
		}},
		FormContains: map[string]any{"shield": map[string]any{
			"x":          map[string]any{"roots": `/a|/b/|/`, "subs": `a\.b|\(c`, "pats": `\^a\$|\(\?i\)b`, "empty": neverMatches, "mixed": `a`},
			"consts":     `x\+|y`,
			"set_consts": `a|b`,
		}},
		FormMatch: map[string]any{"shield": map[string]any{
			"x":          map[string]any{"roots": `(?:/a)|(?:/b/)|(?:/)`, "subs": `(?:a.b)`, "pats": `(?:^a$)|(?:(?i)b)`, "empty": neverMatches, "mixed": `(?:a)`},
			"consts":     `(?:x+)|(?:y)`,
			"set_consts": `(?:a)|(?:b)`,
		}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("derived data (-want +got):\n%s", d)
	}
}

// TestDeriveReserved: a bundle may not define the derived key itself.
func TestDeriveReserved(t *testing.T) {
	_, err := Parse(bundleOf(t, map[string]string{"data.json": `{"` + DerivedKey + `": {}}`}))
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("err = %v, want the key refused as reserved", err)
	}
}

// TestDerivedBadPatterns: a pattern that does not compile never matched in the loop (OPA's
// regex.match is undefined on it) and is left out of the match form, so the others still match;
// a pattern that cannot be combined refuses the bundle when a module uses the form, and only
// then.
func TestDerivedBadPatterns(t *testing.T) {
	module := `package shield

import rego.v1

decision := {"deny": deny}

deny contains {"rule": "r"} if regex.match(data.shield_derived.match.shield.pats, input.tool)
`
	e, err := Compile(bundleOf(t, map[string]string{"data.json": `{"shield": {"pats": ["(bad", "^zz$"]}}`, "rego/p.rego": module}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), &shield.Input{Call: &shield.Call{Tool: "zz"}, Action: &normalize.Action{Tool: "zz"}})
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("findings %+v, err %v; want rego:r from the valid pattern", res.Findings, err)
	}
	_, err = Parse(bundleOf(t, map[string]string{"data.json": `{"shield": {"pats": ["^ok$", "\\Qa.b"]}}`, "rego/p.rego": module}))
	if err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Fatalf("err = %v, want the bundle refused", err)
	}
	// The same list, its match form unused: loads.
	if _, err := Parse(bundleOf(t, map[string]string{"data.json": `{"shield": {"pats": ["^ok$", "\\Qa.b"]}}`})); err != nil {
		t.Fatalf("unused form: %v", err)
	}
}
