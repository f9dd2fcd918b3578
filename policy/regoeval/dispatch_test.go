package regoeval

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// TestDispatch: a function whose bodies start with a test of an argument's field is served
// through the dispatch helper, and decides exactly as the function written out: equality and set
// tests, an argument the rest of a body does not use, a body without a test, an effect without
// the field's value among the constants, several effects.
func TestDispatch(t *testing.T) {
	files := map[string]string{"rego/p.rego": `package shield

import rego.v1

decision := {"deny": deny, "escalate": escalate, "allow": set()}

ok(e) if e.kind == "read"

ok(e) if {
	e.kind in {"write", "delete"}
	startswith(e.target, "/w/")
}

ok(e) if {
	"exec" == e.kind
	e.program == "go"
}

ok(e) if e.kind == "listen"

ok(e) if e.target == "/tmp/x"

deny contains {"rule": "outside", "reason": sprintf("%s %s", [e.kind, e.target])} if {
	some e in input.effects
	not ok(e)
}

escalate contains {"rule": "all-ok", "reason": "every effect ok"} if {
	count(input.effects) > 0
	every e in input.effects {
		ok(e)
	}
}
`, "rego/q.rego": `package shield

import rego.v1

ok(e) if {
	e.kind == "connect"
	e.target == "api.example"
}
`}
	b := bundleOf(t, files)
	served, err := Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	if served.dispatched != 1 {
		t.Fatalf("dispatched %d functions, want 1", served.dispatched)
	}
	plain, err := CompileOptions(b, Options{NoDispatch: true, NoGate: true, CallerGoroutine: true})
	if err != nil {
		t.Fatal(err)
	}
	if plain.dispatched != 0 {
		t.Fatalf("NoDispatch dispatched %d functions", plain.dispatched)
	}
	effects := [][]normalize.Effect{
		{{Kind: "read", Target: "/etc/passwd"}},
		{{Kind: "write", Target: "/w/a"}, {Kind: "delete", Target: "/etc/x"}},
		{{Kind: "exec", Target: "go", Program: "go"}, {Kind: "exec", Target: "sh", Program: "sh"}},
		{{Kind: "listen", Target: ":80"}},
		{{Kind: "persistence", Target: "/tmp/x"}},
		{{Kind: "connect", Target: "api.example"}, {Kind: "connect", Target: "evil.example"}},
		{{Kind: "", Target: "/w/a"}},
		{{Kind: "Read", Target: "/w/a"}},
	}
	want := []int{1, 1, 1, 1, 1, 1, 1, 1} // every case decides something
	for i, effs := range effects {
		in := &shield.Input{Call: &shield.Call{Tool: "Bash"}, Action: &normalize.Action{Tool: "Bash", Class: "exec", Args: map[string]any{}, Effects: effs}}
		got, err := served.Evaluate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := plain.Evaluate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(ref, got); diff != "" {
			t.Errorf("case %d %+v: (-written +dispatched)\n%s", i, effs, diff)
		}
		if len(got.Findings) < want[i] {
			t.Errorf("case %d: no finding", i)
		}
	}
}
