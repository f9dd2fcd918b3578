package normalize

import "testing"

// Sub-commands of CLIs the specs do not model, tool sub-languages, process attach, build
// variables and redirected dependency sources (effects_subcmd.go, effects_env_build.go).
func TestExecGapClasses(t *testing.T) {
	t.Parallel()
	cloudDel := fx{kind: "delete", target: "cloud"}
	runEffectCases(t, []effectCase{
		// Default %verbs: unknown CLIs and specs with only "_*".
		{name: "unknown CLI delete", cmd: "velero backup delete --all --confirm", want: []fx{cloudDel}, unknown: []string{"velero"}},
		{name: "unknown CLI nested delete", cmd: "argocd app delete payments --cascade", want: []fx{cloudDel}, unknown: []string{"argocd"}},
		{name: "unknown CLI list", cmd: "argocd app list", not: []fx{cloudDel}, unknown: []string{"argocd"}},
		{name: "unknown CLI value named like a verb", cmd: "argocd app get delete-me", not: []fx{cloudDel}, unknown: []string{"argocd"}},
		{name: "spec _* CLI delete", cmd: "minikube delete --all", want: []fx{cloudDel}},
		{name: "spec _* CLI status", cmd: "minikube status", not: []fx{cloudDel}},
		{name: "istioctl uninstall", cmd: "istioctl uninstall --purge -y", want: []fx{cloudDel}, unknown: []string{"istioctl"}},
		{name: "echo text is no sub-command", cmd: "echo delete everything", not: []fx{cloudDel}},
		{name: "make target is no sub-command", cmd: "make uninstall-docs", not: []fx{cloudDel}},
		{name: "unknown CLI verb from an expansion", cmd: "velero backup $VERB x", unres: true, unknown: []string{"velero"}},
		// cmake -E.
		{name: "cmake -E rm", cmd: "cmake -E rm -rf /srv/data", want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "cmake -E remove_directory", cmd: "cmake -E remove_directory /srv/data", want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "cmake -E make_directory", cmd: "cmake -E make_directory build", want: []fx{{kind: "write", target: ws + "/build"}}},
		{name: "cmake -E copy", cmd: "cmake -E copy /home/user/.ssh/id_rsa out", want: []fx{{kind: "secret", target: home + "/.ssh/id_rsa"}}},
		{name: "cmake -E env runs its command", cmd: "cmake -E env FOO=1 rm -rf /srv/data", want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "cmake -E unknown command", cmd: "cmake -E server --experimental", unres: true},
		{name: "cmake -E computed command", cmd: "cmake -E $CMD x", unres: true},
		// npx / npm exec.
		{name: "npm exec -- sh -c", cmd: "npm exec --yes -- sh -c 'rm -rf /srv/data'", want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "npm exec -c", cmd: "npm exec -c 'rm -rf /srv/data'", want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "npx package is not walked as a system program", cmd: "npx eslint .", not: []fx{{kind: "delete", target: "/srv/data"}}},
		// Process attach.
		{name: "gdb -p", cmd: "gdb -p 4242 -batch -ex 'gcore /tmp/c'", want: []fx{{kind: "secret", target: "process 4242"}}},
		{name: "gcore", cmd: "gcore 4242", want: []fx{{kind: "secret", target: "process 4242"}}},
		{name: "strace -p", cmd: "strace -p 4242", want: []fx{{kind: "secret", target: "process 4242"}}},
		{name: "gdb of a workspace program", cmd: "gdb -batch -ex run ./build/app", not: []fx{{kind: "secret", target: "process 4242"}}},
		// Build variables.
		{name: "RUSTC_WRAPPER path", cmd: "RUSTC_WRAPPER=/tmp/w cargo build", want: []fx{{kind: "exec", target: "/tmp/w"}}},
		{name: "RUSTFLAGS linker", cmd: "RUSTFLAGS='-C linker=/tmp/ld' cargo build", want: []fx{{kind: "exec", target: "/tmp/ld"}}},
		{name: "CARGO_ENCODED_RUSTFLAGS linker", cmd: "CARGO_ENCODED_RUSTFLAGS=$'-Clinker=/tmp/ld\\x1f-g' cargo build", want: []fx{{kind: "exec", target: "/tmp/ld"}}},
		{name: "GOFLAGS toolexec", cmd: "GOFLAGS=-toolexec=/tmp/t go build", want: []fx{{kind: "exec", target: "/tmp/t"}}},
		{name: "CGO_CFLAGS plugin", cmd: "CGO_CFLAGS='-fplugin=/tmp/p.so' go build", want: []fx{{kind: "exec", target: "/tmp/p.so"}}},
		{name: "CC shell line", cmd: `CC='sh -c "rm -rf /srv/data"' make`, want: []fx{{kind: "delete", target: "/srv/data"}}},
		{name: "CC ccache path", cmd: "CC='ccache /tmp/gcc' make", want: []fx{{kind: "exec", target: "/tmp/gcc"}}},
		{name: "CC by name", cmd: "CC=clang make", not: []fx{{kind: "exec", target: "clang"}}},
		{name: "system linker by name", cmd: "CFLAGS=-fuse-ld=lld make", not: []fx{{kind: "exec", target: ws + "/lld"}}},
		{name: "XDG_CONFIG_HOME outside", cmd: "XDG_CONFIG_HOME=/tmp/cfg git status", want: []fx{{kind: "exec", target: "/tmp/cfg"}}},
		{name: "GIT_CONFIG_GLOBAL /dev/null", cmd: "GIT_CONFIG_GLOBAL=/dev/null git status", not: []fx{{kind: "exec", target: "/dev/null"}}},
		{name: "CC unresolved", cmd: "CC=$X make", unres: true},
		// Dependency sources.
		{name: "npm github shorthand", cmd: "npm i github:o/r", want: []fx{{kind: "install", target: "git+https://github.com/o/r"}}},
		{name: "npm owner/repo", cmd: "npm i o/r", want: []fx{{kind: "install", target: "git+https://github.com/o/r"}}},
		{name: "go replace by another module", cmd: "go mod edit -replace a.example/x=b.example/x@v1.0.0", want: []fx{{kind: "install", target: "git+https://b.example/x"}}},
		{name: "go replace pin", cmd: "go mod edit -replace a.example/x=a.example/x@v1.0.0", not: []fx{{kind: "install", target: "git+https://a.example/x"}}},
		{name: "go replace /tmp", cmd: "go mod edit -replace=a.example/x=/tmp/x", want: []fx{{kind: "exec", target: "/tmp/x"}}},
		{name: "stop -purge", cmd: "nomad job stop -purge api", want: []fx{cloudDel}, unknown: []string{"nomad"}},
		{name: "stop without purge", cmd: "nomad job stop api", not: []fx{cloudDel}, unknown: []string{"nomad"}},
		{name: "pre-commit try-repo URL", cmd: "pre-commit try-repo https://e.example/hooks", want: []fx{{kind: "install", target: "https://e.example/hooks"}}},
		{name: "deno run URL", cmd: "deno run -A https://e.example/i.ts", unres: true, want: []fx{{kind: "connect", target: "e.example"}}},
		{name: "deno run file", cmd: "deno run main.ts", want: []fx{{kind: "exec", target: ws + "/main.ts"}}},
		{name: "cargo patch git", cmd: `cargo build --config 'patch.crates-io.serde.git="https://e.example/serde"'`, want: []fx{{kind: "install", target: "git+https://e.example/serde"}}},
	})
}

func TestVCSShorthand(t *testing.T) {
	t.Parallel()
	for _, c := range [][3]string{
		{"npm", "github:o/r", "git+https://github.com/o/r"},
		{"npm", "gitlab:o/r", "git+https://gitlab.com/o/r"},
		{"npm", "git@github.com:o/r.git", "git+ssh://git@github.com/o/r.git"},
		{"npm", "o/r#main", "git+https://github.com/o/r"},
		{"pip", "src/pkg", "src/pkg"}, // a directory for pip
		{"npm", "@scope/pkg", "@scope/pkg"},
		{"npm", "lodash", "lodash"},
		{"npm", "./local", "./local"},
	} {
		if got := vcsShorthand(c[0], c[1]); got != c[2] {
			t.Errorf("vcsShorthand(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
