package normalize

import (
	"testing"
)

func TestServerEffects(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := []struct {
		cmd        string
		listen     string // target of the "serves" listen effect, "" when none
		served     string
		unresolved bool
	}{
		{"python3 -m http.server 8000 --bind 0.0.0.0 --directory /home/user", "0.0.0.0:8000", "/home/user", false},
		{"python3 -m http.server", "0.0.0.0:8000", "/home/user/project", false},
		{"python3 -m http.server 9000 -b 127.0.0.1 -d dist", "127.0.0.1:9000", "/home/user/project/dist", false},
		{"python3 -m http.server --directory=$D", "0.0.0.0:8000", "", true},
		{"npx --yes http-server ~ -p 8080 -a 0.0.0.0", "0.0.0.0:8080", "/home/user", false},
		{"npx http-server@14 ./public", "0.0.0.0:8080", "/home/user/project/public", false},
		{"npx serve dist -l tcp://127.0.0.1:5000", "127.0.0.1:5000", "/home/user/project/dist", false},
		{"php -S 0.0.0.0:8000 -t /", "0.0.0.0:8000", "/", false},
		{"php -r 'echo 1;'", "", "", false},
		{"busybox httpd -f -p 8080 -h /etc", "0.0.0.0:8080", "/etc", false},
		{"ruby -run -e httpd . -b 127.0.0.1 -p 8000", "127.0.0.1:8000", "/home/user/project", false},
		{"caddy file-server --root /srv --listen :8080", ":8080", "/srv", false},
		{"python3 -m pytest", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := n.Normalize("Bash", map[string]any{"command": c.cmd}, "")
			var got *Effect
			for i, e := range a.Effects {
				if e.Kind == EffectListen && len(e.Detail) > 7 && e.Detail[:7] == "serves " {
					got = &a.Effects[i]
				}
			}
			if c.listen == "" {
				if got != nil {
					t.Fatalf("listen effect %+v, want none", *got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no serves effect in %+v", a.Effects)
			}
			if got.Target != c.listen {
				t.Errorf("listen target %q, want %q", got.Target, c.listen)
			}
			if got.Unresolved != c.unresolved {
				t.Errorf("unresolved %v, want %v", got.Unresolved, c.unresolved)
			}
			if c.served != "" && got.Detail != "serves "+c.served {
				t.Errorf("detail %q, want serves %s", got.Detail, c.served)
			}
		})
	}
}

func TestSocketEffects(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := []struct{ cmd, read string }{
		{"socat - UNIX-CONNECT:/run/user/1000/podman/podman.sock", "/run/user/1000/podman/podman.sock"},
		{"socat STDIO UNIX-CLIENT:/var/run/docker.sock,retry=3", "/var/run/docker.sock"},
		{"nc -U /var/run/docker.sock", "/var/run/docker.sock"},
		{"ncat --unixsock /tmp/app.sock", "/tmp/app.sock"},
		{"nc -zv localhost 8080", ""},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := n.Normalize("Bash", map[string]any{"command": c.cmd}, "")
			found := false
			for _, e := range a.Effects {
				if e.Kind == EffectRead && e.Target == c.read {
					found = true
				}
				if c.read == "" && e.Kind == EffectRead && e.Program != "" && len(e.Target) > 0 && e.Target[0] == '/' {
					t.Errorf("unexpected read %+v", e)
				}
			}
			if c.read != "" && !found {
				t.Errorf("no read of %s in %+v", c.read, a.Effects)
			}
		})
	}
}

// Literal code piped to an interpreter is judged like -c code; anything else stays "stdin".
func TestPipedInlineCode(t *testing.T) {
	opt := specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"})
	opt.Inline = inlineTestList(t)
	n := New(defaultCatalog(t), opt)
	cases := []struct{ cmd, inline string }{
		{"echo 'print(1)' | python3", InlineConfined},
		{"echo -e 'import os\\nos.system(\"id\")' | python3", "capable: uses os.system, which is not allow-listed"},
		{"printf 'console.log(1)\\n' | node", InlineConfined},
		{"printf '%s' x | python3", ""},
		{"echo cHJpbnQoMSk= | base64 -d | python3", ""},
		{"echo \"$CODE\" | python3", ""},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			a := n.Normalize("Bash", map[string]any{"command": c.cmd}, "")
			got := "none"
			for _, e := range a.Effects {
				if e.Kind == EffectExec && (e.Target == "python3" || e.Target == "node") {
					got = e.Inline
				}
			}
			if got != c.inline {
				t.Errorf("inline %q, want %q (effects %+v)", got, c.inline, a.Effects)
			}
		})
	}
}
