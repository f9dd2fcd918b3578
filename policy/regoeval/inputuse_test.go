package regoeval

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// TestInputKeys: the top-level keys built for each evaluation are exactly those the modules
// name as constants; a whole or computed use of the input builds everything (nil).
func TestInputKeys(t *testing.T) {
	const head = "package shield\n\nimport rego.v1\n\ndecision := {\"deny\": deny, \"escalate\": set(), \"allow\": set()}\n\n"
	for _, tc := range []struct {
		name string
		rego string
		want []string // nil: whole input
	}{
		{"refs", `deny contains "x" if { input.class == "exec"; some e in input.effects; e.kind == input["method"] }`, []string{"class", "effects", "method"}},
		{"object.get constant key", `deny contains "x" if { object.get(input, "context", {}).runtime == "r" }`, []string{"context"}},
		{"nested input key", `deny contains "x" if { input.effects[input.flows[0].to].kind == "exec" }`, []string{"effects", "flows"}},
		{"import", "import input.urls as us\n\ndeny contains \"x\" if { some u in us; u.host == \"h\" }", []string{"urls"}},
		{"function argument", "f(x) := x.tool\n\ndeny contains \"x\" if { f(input) == \"Bash\" }", nil},
		{"object.get computed key", "k := \"class\"\n\ndeny contains \"x\" if { object.get(input, k, \"\") == \"exec\" }", nil},
		{"walk", `deny contains "x" if { walk(input, [_, v]); v == "secret" }`, nil},
		{"computed key", `deny contains "x" if { some k in ["class", "tool"]; input[k] == "exec" }`, nil},
		{"some k, v in input", `deny contains "x" if { some k, v in input; k == "class"; v == "exec" }`, nil},
		{"count", `deny contains "x" if { count(input) > 3 }`, nil},
		{"input bound to a local", `deny contains "x" if { x := input; x.class == "exec" }`, nil},
		{"object.get on a local, then other use", `deny contains "x" if { x := input; object.get(x, "class", "") == "exec"; count(x) > 1 }`, nil},
		{"with input", "p if input.class == \"exec\"\n\ndeny contains \"x\" if { p with input as {\"class\": \"exec\"} }", nil},
		{"no input", `deny contains "x" if { false }`, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Compile(bundleOf(t, map[string]string{"rego/p.rego": head + tc.rego + "\n"}))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got := e.InputKeys()
			if (got == nil) != (tc.want == nil) || len(got) != len(tc.want) || len(got) > 0 && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("InputKeys = %#v, want %#v", got, tc.want)
			}
		})
	}
}

// TestInputPrunedSameVerdict: on a policy that reads part of the input, the pruned engine and
// the full-input reference decide the same on calls that do and do not fire, and the pruned
// input really lacks the unreferenced keys.
func TestInputPrunedSameVerdict(t *testing.T) {
	b := bundleOf(t, map[string]string{"rego/p.rego": `package shield

import rego.v1

decision := {"deny": deny, "escalate": escalate, "allow": set()}

deny contains {"rule": "net", "reason": "r"} if {
	some u in input.urls
	u.host == "evil.example"
}

escalate contains {"rule": "label", "reason": "r"} if {
	object.get(input.context.labels, "team", "") == "red"
}
`})
	pruned, err := Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	full, err := CompileOptions(b, Options{FullInput: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := pruned.InputKeys(); !reflect.DeepEqual(got, []string{"context", "urls"}) {
		t.Fatalf("InputKeys = %v", got)
	}
	if full.InputKeys() != nil {
		t.Fatalf("FullInput engine prunes: %v", full.InputKeys())
	}
	in, err := inputValue(richAction(), nil, pruned.keep)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(in.(ast.Object).Keys()); n != 2 {
		t.Fatalf("pruned input has %d keys, want 2", n)
	}
	for _, tc := range []struct {
		name  string
		in    *shield.Input
		finds int
	}{
		{"deny", netInput("evil.example", normalize.IPHostname), 1},
		{"none", netInput("good.example", normalize.IPHostname), 0},
		{"label", &shield.Input{Call: &shield.Call{Context: shield.CallContext{Labels: map[string]string{"team": "red"}}}, Action: richAction()}, 1},
		{"rich", &shield.Input{Action: richAction()}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, perr := pruned.Evaluate(ctx, tc.in)
			f, ferr := full.Evaluate(ctx, tc.in)
			if perr != nil || ferr != nil {
				t.Fatalf("errors: pruned %v, full %v", perr, ferr)
			}
			if diff := cmp.Diff(f, p); diff != "" {
				t.Fatalf("pruned differs from full (-full +pruned):\n%s", diff)
			}
			if len(p.Findings) != tc.finds {
				t.Fatalf("findings = %+v, want %d", p.Findings, tc.finds)
			}
		})
	}
}
