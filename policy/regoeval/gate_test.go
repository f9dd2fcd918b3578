package regoeval

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

const gatePrelude = `package shield

import rego.v1

decision := {"deny": deny, "escalate": escalate, "allow": allow}

deny contains "-" if input.class == "-"

escalate contains "-" if input.class == "-"

allow contains "-" if input.class == "-"

`

func gateInput(class string) *shield.Input {
	return &shield.Input{Call: &shield.Call{Tool: "t"}, Action: &normalize.Action{Tool: "t", Class: class, Args: map[string]any{}}}
}

// TestGateAnalysis: the gates derived from rule bodies, and when gating is off for a bundle.
func TestGateAnalysis(t *testing.T) {
	for _, tc := range []struct {
		name, rego string
		off        string            // substring of GateInfo.Off; "" when gating is on
		gates      []string          // rendered gates in rule order
		data       map[string]string // data files
	}{
		{
			name: "atoms",
			rego: gatePrelude + `deny contains "a" if input.class == "exec"
escalate contains "b" if {
	some e in input.effects
	e.kind in {"push", "delete"}
}
allow contains "c" if {
	not input.class in {"exec", "file_read"}
	some k, _ in input.args
	lower(k) == "role"
}
deny contains "d" if {
	some c in input.commands
	c.name == "nc"
	some u in input.urls
}`,
			gates: []string{"class in [exec]", "effects not empty && effect kinds in [delete, push]",
				"class not in [exec, file_read] && args not empty && arg keys (lower-cased) in [role]", "commands not empty && names in [nc] && urls not empty"},
		},
		{
			name: "path roles",
			rego: gatePrelude + `written contains p.clean if {
	some p in input.paths
	p.role in {"write", "dest"}
}
written contains e.target if {
	some e in input.effects
	e.kind == "write"
}
deny contains "a" if {
	some p in input.paths
	p.role == "write"
}
escalate contains "b" if {
	some p in written
}`,
			gates: []string{"paths not empty && path roles in [write]",
				"(paths not empty && path roles in [dest, write]) || (effects not empty && effect kinds in [write])"},
		},
		{
			name: "helpers are inlined",
			rego: gatePrelude + `sends if input.class == "message_send"
sends if input.method == "POST"
deny contains "a" if {
	sends
	count(input.recipients) > 0
}`,
			gates: []string{"(class in [message_send] || method in [POST]) && recipients not empty"},
		},
		{
			name: "an expression that can fail ends the gate",
			rego: gatePrelude + `f(x) := 1 if x
f(x) := 2 if x
deny contains "a" if {
	f(true) == 1
	input.class == "exec"
}
deny contains "b" if {
	input.class == "exec"
	f(true) == 1
}`,
			gates: []string{"always", "class in [exec]"},
		},
		{
			name: "a partial set referenced whole is always defined",
			rego: gatePrelude + `helper contains 1 if input.class == "exec"
deny contains "a" if count(helper) == 0
deny contains "b" if helper
deny contains "c" if {
	some x in helper
	x == 1
}`,
			gates: []string{"always", "always", "class in [exec]"},
		},
		{
			name: "function arguments",
			rego: gatePrelude + `cache_write(e) if {
	e.kind == "write"
	startswith(e.target, "/cache/")
}
named(n) if n in {"curl", "wget"}
deny contains "a" if {
	some e in input.effects
	cache_write(e)
}
deny contains "b" if {
	some c in input.commands
	named(c.name)
}
deny contains "c" if cache_write({"kind": "write", "target": input.tool})`,
			gates: []string{"effects not empty && effect kinds in [write]", "commands not empty && names in [curl, wget]", "always"},
		},
		{
			name: "elements of a set of names",
			rego: gatePrelude + `names contains c.name if some c in input.commands
mixed contains c.name if some c in input.commands
mixed contains input.tool if input.class == "exec"
deny contains "a" if {
	some n in names
	n in {"env", "printenv"}
}
deny contains "b" if {
	some n in mixed
	n == "env"
}`,
			gates: []string{"commands not empty && names in [env, printenv]", "commands not empty || class in [exec]"},
		},
		{
			name: "a constant alias of a data document",
			rego: gatePrelude + `tl := data.tools
deny contains "a" if {
	some c in input.commands
	tl.tunnels[c.name]
}`,
			data:  map[string]string{"tools/data.json": `{"tunnels": {"ngrok": true, "cloudflared": true, "off": false}}`},
			gates: []string{"commands not empty && names in [cloudflared, ngrok]"},
		},
		{
			name: "with turns gating off",
			rego: gatePrelude + `deny contains "a" if input.class == "exec"
escalate contains "b" if { "a" in deny with input.class as "exec" }`,
			off: "with",
		},
		{
			name: "another decision shape turns gating off",
			rego: `package shield

import rego.v1

decision := {"deny": deny, "escalate": set(), "allow": set(), "extra": true}

deny contains "a" if input.class == "exec"`,
			off: "not the plain",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"rego/p.rego": tc.rego}
			for k, v := range tc.data {
				files[k] = v
			}
			e, err := Compile(bundleOf(t, files))
			if err != nil {
				t.Fatal(err)
			}
			gi := e.Gates()
			if tc.off != "" {
				if !strings.Contains(gi.Off, tc.off) || e.gates != nil {
					t.Fatalf("Off = %q (gates %d), want gating off for %q", gi.Off, len(e.gates), tc.off)
				}
				return
			}
			if gi.Off != "" {
				t.Fatalf("gating off: %s", gi.Off)
			}
			var got []string
			for _, r := range gi.Rules {
				if s := r.Gate.String(); s != "class in [-]" { // the prelude's
					got = append(got, s)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.gates, "\n") {
				t.Errorf("gates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.gates, "\n"))
			}
		})
	}
}

// TestGateKeepsErrors: a rule failing with a conflict before any atom is never gated out: the
// call fails closed exactly as it does without the gate. (OPA's own rule index skips a body
// whose input.x == "lit" does not hold wherever it stands, so the atom here is one it does not
// index.)
func TestGateKeepsErrors(t *testing.T) {
	b := bundleOf(t, map[string]string{"rego/p.rego": gatePrelude + `v := x if {
	some x in [1, input.tool]
}

deny contains "a" if {
	v == 1
	count(input.recipients) > 0
}`})
	for _, opt := range []Options{{}, {NoGate: true}} {
		e, err := CompileOptions(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		if g := e.Gates(); !opt.NoGate && (len(g.Rules) != 4 || g.Rules[3].Gate != nil) {
			t.Fatalf("gates %+v, want the last rule ungated", g.Rules)
		}
		if res, err := e.Evaluate(context.Background(), gateInput("file_read")); err == nil {
			t.Errorf("NoGate=%v: Evaluate = %+v, want the conflict error", opt.NoGate, res)
		}
	}
}

// TestGateSkips: when no decision rule's gate holds, the engine answers without evaluating,
// with the same (empty) result as a full evaluation; when one holds, the rule fires.
func TestGateSkips(t *testing.T) {
	b := bundleOf(t, map[string]string{"rego/p.rego": gatePrelude + `deny contains {"rule": "a", "reason": "r"} if input.class == "exec"`})
	gated, err := Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := CompileOptions(b, Options{NoGate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"exec", "file_read"} {
		g, gerr := gated.Evaluate(context.Background(), gateInput(class))
		r, rerr := ref.Evaluate(context.Background(), gateInput(class))
		if gerr != nil || rerr != nil || len(g.Findings) != len(r.Findings) {
			t.Errorf("%s: gated %+v %v, ungated %+v %v", class, g, gerr, r, rerr)
		}
		if want := class == "exec"; (len(g.Findings) == 1) != want {
			t.Errorf("%s: findings %+v", class, g.Findings)
		}
	}
}

// TestGateCarrier: the gate bits travel in the input when the modules reach the input only by
// constant keys, through the gate built-in when they use it whole or name the gate's key; the
// verdicts, and those of the author paths (every gate open), are the ungated ones either way.
func TestGateCarrier(t *testing.T) {
	rules := `deny contains {"rule": "a", "reason": "r"} if input.class == "exec"

escalate contains {"rule": "b", "reason": "r"} if {
	input.class == "file_read"
	%s
}
`
	for _, tc := range []struct {
		name, extra string
		inInput     bool
	}{
		{"constant keys", `input.tool == "t"`, true},
		{"input whole", `count(input) > 1`, false},
		{"the gate key named", `not input.shield_internal_gate`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bundleOf(t, map[string]string{"rego/p.rego": gatePrelude + fmt.Sprintf(rules, tc.extra)})
			gated, err := Compile(b)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := CompileOptions(b, Options{NoGate: true, FullInput: true})
			if err != nil {
				t.Fatal(err)
			}
			if gated.gateInput != tc.inInput || len(gated.gates) != 5 {
				t.Fatalf("gates in the input = %v (%d gates), want %v", gated.gateInput, len(gated.gates), tc.inInput)
			}
			for _, class := range []string{"exec", "file_read", "net_request"} {
				ctx := context.Background()
				g, gerr := gated.Evaluate(ctx, gateInput(class))
				r, rerr := ref.Evaluate(ctx, gateInput(class))
				a, aerr := gated.EvalTraced(ctx, gateInput(class), topdown.NewBufferTracer())
				if gerr != nil || rerr != nil || aerr != nil {
					t.Fatalf("%s: errors %v, %v, %v", class, gerr, rerr, aerr)
				}
				if !reflect.DeepEqual(g, r) || !reflect.DeepEqual(a, r) {
					t.Fatalf("%s: gated %+v, author path %+v, ungated %+v", class, g, a, r)
				}
				if want := class != "net_request"; (len(g.Findings) == 1) != want {
					t.Fatalf("%s: findings %+v", class, g.Findings)
				}
			}
		})
	}
}
