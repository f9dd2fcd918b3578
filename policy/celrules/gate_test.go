package celrules

import (
	"testing"

	"github.com/shieldsec/shield/shield/normalize"
)

// TestCondOf: the condition derived from each shape, rendered, and whether it holds on a call.
func TestCondOf(t *testing.T) {
	env, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	exec := &normalize.Action{Tool: "Bash", Class: "exec", Commands: []normalize.Command{{Name: "curl"}, {Name: "sh"}},
		Effects: []normalize.Effect{{Kind: "connect"}}, Strings: []string{"x"}}
	read := &normalize.Action{Tool: "Read", Class: "file_read", Paths: []normalize.Path{{Clean: "/etc/passwd"}}, Strings: []string{"/etc/passwd"}}
	for _, tc := range []struct {
		name, when string
		want       string
		onExec     bool
		onRead     bool
	}{
		{"class equality", `class == 'exec'`, "class in [exec]", true, false},
		{"class list", `class in ['file_read', 'file_write']`, "class in [file_read, file_write]", false, true},
		{"negated class", `!(class in ['exec'])`, "class not in [exec]", false, true},
		{"class inequality", `class != 'exec'`, "class not in [exec]", false, true},
		{"names", `sets.intersects(names, ['curl', 'wget'])`, "names in [curl, wget]", true, false},
		{"name in names", `'sh' in names`, "names in [sh]", true, false},
		{"exists over commands", `commands.exists(c, c.name == 'nc' && c.args.exists(a, a == '-e'))`, "commands not empty && names in [nc]", false, false},
		{"effect kinds", `effects.exists(e, e.kind in ['connect', 'send'])`, "effects not empty && effect kinds in [connect, send]", true, false},
		{"or", `class == 'exec' || paths.exists(p, p.sensitive)`, "class in [exec] || paths not empty", true, true},
		{"or with an unknown side is unknown", `class == 'exec' || size(strings) > 3`, "always", true, true},
		{"and keeps the known side", `size(strings) > 3 && class == 'exec'`, "class in [exec]", true, false},
		{"string not empty", `parse_error != ''`, "parse_error not empty", false, false},
		{"matches", `command.matches('rm -rf')`, "command matches rm -rf", false, false},
		{"shadowed variable is not the action's", `strings.exists(class, class == 'exec')`, "strings not empty", true, true},
		{"comprehension over a non-variable is unknown", `['a'].exists(x, class == 'exec')`, "always", true, true},
		{"all is unknown", `commands.all(c, c.name == 'ls')`, "always", true, true},
		{"negation of anything else is unknown", `!commands.exists(c, c.name == 'ls')`, "always", true, true},
		{"map key error is not assumed away", `args.x == 'y' || class == 'exec'`, "always", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ast, iss := env.Compile(tc.when)
			if iss != nil && iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			c := condOf(ast.NativeRep().Expr())
			if got := c.String(); got != tc.want {
				t.Errorf("cond = %q, want %q", got, tc.want)
			}
			if got := c.Holds(exec); got != tc.onExec {
				t.Errorf("holds on exec = %v, want %v", got, tc.onExec)
			}
			if got := c.Holds(read); got != tc.onRead {
				t.Errorf("holds on read = %v, want %v", got, tc.onRead)
			}
		})
	}
}
