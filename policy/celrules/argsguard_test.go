package celrules

import (
	"strings"
	"testing"
)

func TestUnguardedArgs(t *testing.T) {
	tests := []struct {
		name  string
		when  string
		tools []string
		want  []string // keys reported, in order
	}{
		{"unguarded select", `args.command.startsWith("rm ")`, nil, []string{"command"}},
		{"unguarded index", `args["command"] == "x"`, nil, []string{"command"}},
		{"has() in the conjunction", `has(args.command) && args.command.startsWith("rm ")`, nil, nil},
		{"has() after the read (&& is commutative)", `args.command.startsWith("rm ") && has(args.command)`, nil, nil},
		{"in args", `"command" in args && args["command"] == "x"`, nil, nil},
		{"has() of another key", `has(args.cmd) && args.command == "x"`, nil, []string{"command"}},
		{"has() only in one branch of ||", `(has(args.a) && args.a == "x") || args.a == "y"`, nil, []string{"a"}},
		{"negated guard in ||", `!has(args.a) || args.a == "x"`, nil, nil},
		{"ternary", `has(args.a) ? args.a == "x" : args.b == "y"`, nil, []string{"b"}},
		{"tools filter", `args.command == "x"`, []string{"Bash"}, nil},
		{"tool equality", `tool == "Bash" && args.command == "x"`, nil, nil},
		{"tool in list", `tool in ["Bash", "shell"] && args.command == "x"`, nil, nil},
		{"class is not a guard", `class == "exec" && args.command == "x"`, nil, []string{"command"}},
		{"inside a macro", `commands.exists(c, c.name == args.prog)`, nil, []string{"prog"}},
		{"guard outside the macro", `has(args.prog) && commands.exists(c, c.name == args.prog)`, nil, nil},
		{"iterating keys", `args.exists(k, k.startsWith("x"))`, nil, nil},
		{"has() itself", `has(args.command)`, nil, nil},
		{"no args", `commands.exists(c, c.name == "rm")`, nil, nil},
		{"two reads", `args.a == "x" || args.b == "y"`, nil, []string{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := UnguardedArgs(RuleSpec{ID: "r", When: tc.when, Tools: tc.tools, File: "rules/r.yaml", Line: 3, WhenLine: 7, WhenCol: 10})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, a := range got {
				keys = append(keys, a.Key)
				if a.Line != 7 || a.Col <= 10 {
					t.Errorf("%s at %d:%d, want line 7 past column 10", a.Key, a.Line, a.Col)
				}
			}
			if strings.Join(keys, ",") != strings.Join(tc.want, ",") {
				t.Errorf("UnguardedArgs(%s) = %v, want %v", tc.when, keys, tc.want)
			}
		})
	}
}
