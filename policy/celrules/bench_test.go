package celrules

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// benchRules writes n rules shaped like real ones: about half apply to exec, the rest to other
// classes or to every class.
func benchRules(n int) string {
	var b strings.Builder
	b.WriteString("rules:\n")
	shapes := []struct{ classes, when string }{
		{"[exec]", `commands.exists(c, c.name == "rm%d" && c.args.exists(a, a == "-rf" || a == "/"))`},
		{"[exec]", `command.matches("(?i)curl[^|]*\\|\\s*(ba|z)?sh%d")`},
		{"[exec]", `commands.exists(c, c.name in ["nc%d", "ncat", "socat"] && c.args.exists(a, a == "-e"))`},
		{"[exec]", `commands.exists(c, c.sudo && c.name == "chmod%d")`},
		{"[exec, file_write]", `paths.exists(p, p.sensitive && p.kind == "ssh_key%d")`},
		{"[file_read]", `paths.exists(p, p.clean.startsWith("/etc/shadow%d"))`},
		{"[net_request]", `urls.exists(u, u.ip_class == "metadata" && u.port == %d)`},
		{"[]", `strings.exists(s, s.contains("ignore previous instructions %d"))`},
	}
	for i := range n {
		s := shapes[i%len(shapes)]
		fmt.Fprintf(&b, "  - id: bench.r%d\n    classes: %s\n    when: '%s'\n    decision: block\n    message: m\n", i, s.classes, fmt.Sprintf(s.when, i))
	}
	return b.String()
}

func benchNormalizer(b *testing.B) *normalize.Normalizer {
	data, err := policies.Default.ReadFile("default/" + policy.CatalogFile)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := normalize.ParseCatalog("catalog.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	return normalize.New(cat, normalize.Options{Workspace: "/home/user/project", Home: "/home/user"})
}

// BenchmarkEvaluate40Rules evaluates 40 rules (30 apply to exec) on a typical exec call that no
// rule matches, so every applicable rule runs.
//
//	go test ./policy/celrules -run '^$' -bench . -benchmem
func BenchmarkEvaluate40Rules(b *testing.B) {
	bundle := bundleOf(b, map[string]string{"rules/bench.yaml": benchRules(40)})
	e, err := Compile(bundle, testNorm)
	if err != nil {
		b.Fatal(err)
	}
	n := benchNormalizer(b)
	for _, tc := range []struct{ name, cmd string }{
		{"simple", "go test ./... -run TestFoo"},
		{"pipeline", "cd src && grep -rn 'TODO' . | sort | uniq -c | head -20 > /tmp/todo.txt"},
	} {
		in := &shield.Input{
			Call:   &shield.Call{Tool: "Bash", Context: shield.CallContext{SessionID: "s", Labels: map[string]string{"team": "a"}}},
			Action: n.Normalize("Bash", map[string]any{"command": tc.cmd, "description": "run it"}, "/home/user/project"),
		}
		if got := len(e.rulesFor(in.Action.Class)); got != 30 {
			b.Fatalf("%d rules apply to %s, want 30", got, in.Action.Class)
		}
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Evaluate(ctx, in)
				if err != nil || len(res.Findings) != 0 {
					b.Fatalf("Evaluate = %+v, %v", res, err)
				}
			}
		})
	}
}
