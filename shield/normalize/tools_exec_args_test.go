package normalize

import "testing"

// TestExecFallback: an exec tool's argv in another field is walked (a program-named tool given
// its arguments without the program runs that program); an exec tool whose command cannot be read
// is unresolved (never allowed without a higher tier).
func TestExecFallback(t *testing.T) {
	t.Parallel()
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: ws, Home: home}))
	cases := []struct {
		tool       string
		args       map[string]any
		want       string // a command line walked; "" = none
		unresolved bool
	}{
		{"kubectl", map[string]any{"args": []any{"delete", "namespace", "prod"}}, "kubectl delete namespace prod", false},
		{"run_shell_command", map[string]any{"argv": []any{"rm", "-rf", "/srv/data"}}, "rm -rf /srv/data", false},
		{"container_exec", map[string]any{"arguments": []any{"cat", "/etc/shadow"}}, "cat /etc/shadow", false},
		{"execute_python", map[string]any{"source": "print(1)"}, "", true},
		{"sandbox_exec", map[string]any{"payload": map[string]any{"x": 1}}, "", true},
		{"run_shell_command", map[string]any{"argv": []any{"ls", 3.0}}, "", true},
		// An ordinary command where the catalog says.
		{"Bash", map[string]any{"command": "ls -la"}, "ls -la", false},
	}
	for _, tc := range cases {
		a := n.Normalize(tc.tool, tc.args, "")
		got := ""
		if len(a.Commands) > 0 {
			got = a.Commands[0].Raw
		}
		if got != tc.want {
			t.Errorf("%s %v: command %q, want %q", tc.tool, tc.args, got, tc.want)
		}
		if (len(a.Unresolved) > 0) != tc.unresolved {
			t.Errorf("%s %v: unresolved %v, want %v", tc.tool, tc.args, a.Unresolved, tc.unresolved)
		}
	}
}
