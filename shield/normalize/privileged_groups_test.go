package normalize

import "testing"

func TestPrivilegedGroups(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := map[string]string{
		"newgrp docker":            "group:docker",
		"newgrp - lxd":             "group:lxd",
		"sg docker -c 'docker ps'": "group:docker",
		"sg disk -c 'id'":          "group:disk",
		"newgrp dev":               "",
		"sg audio -c 'aplay x'":    "",
	}
	for cmd, want := range cases {
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		got := ""
		for _, e := range a.Effects {
			if e.Kind == EffectPrivilege {
				got = e.Target
			}
		}
		if got != want {
			t.Errorf("%s: privilege %q, want %q (%+v)", cmd, got, want, a.Effects)
		}
	}
}
