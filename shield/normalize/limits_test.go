package normalize

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv marks the re-executed test binary of TestHugeShellInputInChild.
const childEnv = "SHIELD_NORMALIZE_LIMITS_CHILD"

// hugeShellInputs are the inputs of the penetration test (issue 10, C1) and their relatives: before
// the pre-scan, the first one ended the process with "fatal error: stack overflow" inside the
// shell parser, which no recover can catch.
func hugeShellInputs() map[string]string {
	return map[string]string{
		"160 000 nested parentheses (C1)": strings.Repeat("(", 160000) + "ls" + strings.Repeat(")", 160000),
		"200 000 nested subshells":        strings.Repeat("( ", 200000) + "ls" + strings.Repeat(" )", 200000),
		"400 000 nested [[ ! ]]":          "[[ " + strings.Repeat("! ", 400000) + "a ]]",
		"340 000 && in a chain":           strings.Repeat("a&&", 340000) + "a",
	}
}

// TestHugeShellInputInChild normalises the huge inputs in a child process, since a stack overflow
// cannot be recovered: the child must exit normally and report every input over a limit.
func TestHugeShellInputInChild(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		n := New(nil, specOpts(t, Options{}))
		out := map[string]string{}
		for name, cmd := range hugeShellInputs() {
			a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
			out[name] = a.ParseError
		}
		b, _ := json.Marshal(out)
		os.Stdout.Write(append([]byte("RESULT "), b...))
		os.Stdout.Write([]byte("\n"))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugeShellInputInChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s := string(out)
		if i := strings.Index(s, "fatal error"); i >= 0 {
			s = s[i:min(len(s), i+300)]
		} else if len(s) > 600 {
			s = s[:600]
		}
		t.Fatalf("the child normalising huge shell input died (%v):\n%s", err, s)
	}
	var res map[string]string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			if err := json.Unmarshal([]byte(rest), &res); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(res) != len(hugeShellInputs()) {
		t.Fatalf("child reported %d results:\n%s", len(res), out)
	}
	for name, perr := range res {
		if !strings.HasPrefix(perr, "input limit: ") {
			t.Errorf("%s: parse_error %q, want an input limit", name, perr)
		}
	}
}

// adversarialShell are large inputs of every shape the pre-scan and the work bounds cover (0.2 to
// 1 MB, the size an Evaluate call may carry).
func adversarialShell() []struct{ name, cmd string } {
	nestedBashC := "ls"
	for i := 0; i < 4; i++ {
		nestedBashC = "bash -c " + shellQuote(nestedBashC+"; "+strings.Repeat("echo x; ", 8000))
	}
	return []struct{ name, cmd string }{
		{"deep_parens_200KB", strings.Repeat("(", 100000) + "ls" + strings.Repeat(")", 100000)},
		{"deep_subst_300KB", strings.Repeat("$(", 100000) + "ls" + strings.Repeat(")", 100000)},
		{"deep_param_480KB", "echo " + strings.Repeat("${a:-", 80000) + "x" + strings.Repeat("}", 80000)},
		{"deep_if_750KB", strings.Repeat("if a; then ", 50000) + "ls" + strings.Repeat("; fi", 50000)},
		{"and_chain_1MB", strings.Repeat("a&&", 340000) + "a"},
		{"wide_semicolons_1MB", strings.Repeat("ls a; ", 170000)},
		{"wide_pipes_1MB", strings.Repeat("ls a | ", 140000) + "ls"},
		{"long_word_1MB", "echo " + strings.Repeat("A", 1<<20)},
		{"many_substs_900KB", "echo " + strings.Repeat("$(ls) ", 150000)},
		{"heredocs_960KB", strings.Repeat("cat <<E\nx\nE\n", 80000)},
		{"nested_bash_c_260KB", nestedBashC},
		{"wide_semicolons_120KB", strings.Repeat("ls a; ", 20000)},
		{"wide_pipes_120KB", strings.Repeat("ls a | ", 17000) + "ls"},
		{"pipes_and_lines_120KB", strings.Repeat("ls a | ls b && ls c\n", 6000)},
		{"many_substs_120KB", "echo " + strings.Repeat("$(ls) ", 20000)},
		{"long_word_120KB", "echo " + strings.Repeat("A", 120<<10)},
		{"quoted_heredoc_120KB", "cat > f <<'E'\n" + strings.Repeat("x = f(a, [b]) # 'q' \"r\" | s && t\n", 3500) + "E\n"},
		{"deep_parens_126KB", strings.Repeat("(", 63<<10) + "ls" + strings.Repeat(")", 63<<10)},
		{"substituted_words_72KB", "c=" + strings.Repeat("a", 60000) + "; echo " + strings.Repeat("x$c ", 3000)},
	}
}

// shellQuote single-quotes s for bash.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// BenchmarkNormalizeAdversarial measures the whole normalisation of large adversarial commands
// (go test -run '^$' -bench Adversarial -benchtime 3x ./shield/normalize/).
func BenchmarkNormalizeAdversarial(b *testing.B) {
	n := New(nil, specOpts(b, Options{}))
	for _, c := range adversarialShell() {
		args := map[string]any{"command": c.cmd}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.cmd)))
			for b.Loop() {
				n.Normalize("Bash", args, "")
			}
		})
	}
}

func TestShellInputLimits(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	deepInner := deep("$(", "id", ")", 200)
	tests := []struct {
		name string
		args map[string]any
		over bool
	}{
		{"parentheses in arithmetic", map[string]any{"command": deep("(", "ls", ")", 20000)}, true},
		{"subshells", map[string]any{"command": deep("( ", "ls", " )", 200)}, true},
		{"command substitutions", map[string]any{"command": "echo " + deep("$(", "id", ")", 200)}, true},
		{"backticks in double quotes", map[string]any{"command": "echo " + deep("\"$(echo `", "id", "`)\"", 50)}, true},
		{"parameter expansions", map[string]any{"command": "echo " + deep("${a:-", "x", "}", 200)}, true},
		{"arithmetic in a parameter expansion", map[string]any{"command": "echo ${a:" + deep("(", "1", ")", 20000) + "}"}, true},
		{"unary minus in a parameter offset", map[string]any{"command": "echo ${a:" + strings.Repeat("- ", 20000) + "1}"}, true},
		{"} as an argument does not close a group", map[string]any{"command": strings.Repeat("{ echo }; ", 200)}, true},
		{"braces", map[string]any{"command": deep("{ ", "ls", "; }", 200)}, true},
		{"if blocks", map[string]any{"command": deep("if a; then ", "ls", "; fi", 200)}, true},
		{"while loops", map[string]any{"command": deep("while a; do ", "ls", "; done", 200)}, true},
		{"fi as an argument does not hide nesting", map[string]any{"command": deep("if a; then echo fi; ", "ls", "; fi", 200)}, true},
		{"negations in a test", map[string]any{"command": "[[ " + strings.Repeat("! ", 20000) + "a ]]"}, true},
		{"&& chain", map[string]any{"command": strings.Repeat("a&&", 20000) + "a"}, true},
		{"pipes over lines", map[string]any{"command": strings.Repeat("a |\n", 20000) + "a"}, true},
		{"function definitions in a row", map[string]any{"command": strings.Repeat("f() ", 20000) + "{ ls; }"}, true},
		{"unary minus in arithmetic", map[string]any{"command": "echo $((" + strings.Repeat("- ", 20000) + "1))"}, true},
		{"here-documents", map[string]any{"command": strings.Repeat("cat <<E\nx\nE\n", 100)}, true},
		{"over 128 KiB", map[string]any{"command": "echo " + strings.Repeat("a", 130<<10)}, true},
		{"an escaped blank does not start a comment", map[string]any{"command": "echo a\\ #" + deep("$(", "id", ")", 200)}, true},
		{"a closing quote does not start a comment", map[string]any{"command": "echo \"a\"#" + deep("$(", "id", ")", 200)}, true},
		{"quoted parentheses do not hide nesting", map[string]any{"command": deep("( echo ')' ", "ls", " )", 200)}, true},
		{"deep script in bash -c", map[string]any{"command": "bash -c " + shellQuote(deepInner)}, true},
		{"deep script in eval", map[string]any{"command": "eval " + shellQuote(deepInner)}, true},
		{"deep script in sudo sh -c", map[string]any{"command": "sudo -u root sh -c " + shellQuote(deepInner)}, true},
		{"deep script in env -S", map[string]any{"command": "env -S " + shellQuote(deepInner)}, true},
		{"deep script as an argv", map[string]any{"command": []any{"bash", "-lc", deepInner}}, true},
		{"deep here-document fed to a shell", map[string]any{"command": "bash <<'E'\n" + deepInner + "\nE"}, true},
		{"deep script piped to sh", map[string]any{"command": "echo " + shellQuote(deepInner) + " | sh"}, true},
		{"deep base64 payload piped to bash", map[string]any{"command": "echo " + base64.StdEncoding.EncodeToString([]byte(deepInner)) + " | base64 -d | bash"}, true},
		{"unbalanced parentheses in a here-document body do not close code", map[string]any{"command": deep("( cat <<'E'\n))\nE\n", "ls", ")", 200)}, true},
		{"a quote in a here-document body does not hide code", map[string]any{"command": "cat <<E\n'\nE\n" + deep("(", "ls", ")", 200) + "\n#'"}, true},
		{"a tab-indented delimiter does not end a << body", map[string]any{"command": "cat <<E\n\tE\n'\nE\n" + deep("(", "ls", ")", 200) + "\n#'"}, true},
		{"an escaped blank is part of a delimiter", map[string]any{"command": "cat <<E\\ F\nE\n'\nE F\n" + deep("(", "ls", ")", 200) + "\n#'"}, true},
		{"let with << is not read as a here-document", map[string]any{"command": strings.Repeat("let a<<b\n((((\nb\n", 60) + "ls" + strings.Repeat("))))", 60)}, true},

		{"ordinary nesting", map[string]any{"command": `for f in $(ls); do if [ -f "$f" ]; then echo "$(basename "$f" .go)" | (cat; echo) && x=$((1+(2*3))); fi; done`}, false},
		{"a long quoted here-document", map[string]any{"command": "cat > f.md <<'EOF'\n" + strings.Repeat("| it's | (b) | \"c | $x | `d` | }\n", 2000) + "EOF"}, false},
		{"a 100 KiB script of many commands", map[string]any{"command": strings.Repeat("make -C dir && echo ok || exit 1\n", 3000)}, false},
		{"a Python file in a here-document", map[string]any{"command": "cat > m.py <<'EOF'\n" + strings.Repeat("def f(x):\n    if x: print(f\"it's {x}\", [1, (2)])  # a | b && c\n", 1500) + "EOF\npython3 m.py"}, false},
		{"parentheses in single quotes", map[string]any{"command": "echo '" + strings.Repeat("(", 5000) + "'"}, false},
		{"64 nested subshells", map[string]any{"command": deep("(", " ls ", ")", 64)}, false},
	}
	n := New(defaultCatalog(t), specOpts(t, goldenOptions))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := n.Normalize("Bash", tc.args, "")
			if tc.name == "deep script as an argv" {
				a = n.Normalize("shell", tc.args, "")
			}
			if a.OverLimit() != tc.over {
				t.Fatalf("OverLimit %v, want %v (parse_error %.120q, truncated %v, %d commands)", a.OverLimit(), tc.over, a.ParseError, a.Truncated, len(a.Commands))
			}
			if tc.over && (!a.Truncated || !strings.HasPrefix(a.ParseError, LimitPrefix)) {
				t.Fatalf("truncated %v parse_error %q", a.Truncated, a.ParseError)
			}
		})
	}
}

// TestCorpusUnderLimits: no golden case, seed or developer corpus call is over an input limit.
func TestCorpusUnderLimits(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, goldenOptions))
	calls := corpusCalls(t)
	if data, err := os.ReadFile("../../../shared/corpus/dev.jsonl"); err == nil {
		for _, line := range splitLines(data) {
			var c struct {
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(line, &c); err == nil {
				calls = append(calls, seedCall{Tool: c.Tool, Args: c.Arguments})
			}
		}
	}
	for i, c := range calls {
		args, err := DecodeArguments(c.Args, Limits{})
		if err != nil {
			continue
		}
		if a := n.Normalize(c.Tool, args, c.Cwd); a.OverLimit() {
			t.Errorf("call %d (%s %s) over a limit: %s", i, c.Tool, c.Args, a.ParseError)
		}
	}
}

func TestNormalizeContext(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, goldenOptions))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := n.NormalizeContext(ctx, "Bash", map[string]any{"command": "ls -la"}, "")
	if !a.OverLimit() || !strings.Contains(a.ParseError, "context canceled") || len(a.Commands) != 0 {
		t.Fatalf("parse_error %q commands %d", a.ParseError, len(a.Commands))
	}
	a = n.NormalizeContext(context.Background(), "Bash", map[string]any{"command": "ls -la"}, "")
	if a.OverLimit() || len(a.Commands) != 1 {
		t.Fatalf("parse_error %q commands %d", a.ParseError, len(a.Commands))
	}
}
