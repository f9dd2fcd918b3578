package normalize

import (
	"regexp"
	"strings"
)

// Code in a language read without a grammar (issue 11, wave 8): gnuplot -e, dc -e, nix eval
// --expr, and the code options of programs without a spec. Such a language is a small
// expression language whose only reach outside itself is through a few primitives: a shell
// escape (gnuplot system("…") and `…`, dc and ed "!CMD", Octave system, nix builtins.exec), a
// file read (a path literal: nix /home/u/.netrc, readFile "~/.npmrc") or a fetch (a URL). The
// escape primitives are bundle data (inline.yaml shell_escapes). The code is judged as what those
// primitives would do:
//
//   - the string literal given to an escape primitive is walked as a shell command line;
//   - an escape primitive given anything else (a variable, a concatenation, a list) is code this
//     reading cannot follow: unresolved, so never allowed without review;
//   - a path literal (absolute, ~/, $HOME/) is read, a URL is connected to;
//   - nothing else leaves the program: the expression is confined.
//
// Without an allow list (no inline.yaml) no primitive is known: the code is unresolved.

// escapeNameRE: what a shell_escapes entry may be.
var escapeNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.>-]{0,63}$`)

var (
	// exprBacktickRE: a backquoted command (gnuplot, Perl-like languages).
	exprBacktickRE = regexp.MustCompile("`([^`\n]+)`")
	// exprBangRE: "!CMD" at the start of a line or after ';' (gnuplot, dc, ed, ex, bc-like
	// shells); "!=" is a comparison.
	exprBangRE = regexp.MustCompile(`(?m)(?:^|;)[ \t]*!([^=\n;][^\n;]*)`)
	// exprPathRE: a path literal: absolute, ~/ or $HOME/ (quoted or, as Nix writes them, bare).
	exprPathRE = regexp.MustCompile(`(?:^|[\s"'(\[{=,:;])((?:~|\$HOME|\$\{HOME\})/[A-Za-z0-9._/+@-]*|/[A-Za-z0-9._+@-][A-Za-z0-9._/+@-]*)`)
	exprURLRE  = regexp.MustCompile(`[a-z][a-z0-9+.-]{1,15}://[^\s"'<>()\[\]{}]+`)
)

// escapeCallRE compiles the call forms of the escape names: NAME, optional "(", spaces, then a
// literal in double or single quotes (group 2 or 3) or something else (group 4).
func escapeCallRE(names []string) *regexp.Regexp {
	if len(names) == 0 {
		return nil
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])(` + strings.Join(q, "|") + `)\b\s*(?:\(\s*|\s)\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s)"']))`)
}

// escapes returns the compiled call forms of the allow list's escape names (cached).
func (al *InlineAllowList) escapeRE() *regexp.Regexp {
	if al == nil {
		return nil
	}
	al.escOnce.Do(func() { al.escRE = escapeCallRE(al.escapes) })
	return al.escRE
}

// exprCode judges code of the "expr" role (see above).
func (w *walker) exprCode(f frame, prog, via, code string, dyn bool) {
	s := w.s
	if strings.TrimSpace(code) == "" {
		return
	}
	if dyn && isUnresolvedText(code) || len(code) > maxExpandedWord {
		w.opaque(prog, via, code)
		return
	}
	re := s.n.opt.Inline.escapeRE()
	if re == nil {
		w.opaque(prog, via, code)
		return
	}
	w.exprEscapes(f, prog, via, code, re, true)
	for _, m := range exprPathRE.FindAllStringSubmatch(code, 64) {
		p := strings.TrimRight(m[1], ".,;:")
		if p == "/" || strings.HasPrefix(p, "//") {
			continue
		}
		w.pathEffect(EffectRead, prog, p, false)
		s.addPath(p, RoleRead)
	}
	for _, u := range exprURLRE.FindAllString(code, 16) {
		w.urlEffect(prog, u, false)
	}
}

// exprEscapes walks the shell escapes in code; bang and backticks only when forms is true (a
// language read as code, not free text on an unknown program's input).
func (w *walker) exprEscapes(f frame, prog, via, code string, re *regexp.Regexp, forms bool) {
	s := w.s
	if re != nil {
		for _, m := range re.FindAllStringSubmatch(code, 32) {
			lit := m[2]
			if lit == "" {
				lit = m[3]
			}
			if lit == "" {
				s.addUnresolved("code that runs a command it builds (" + via + " " + m[1] + ")")
				s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: m[1] + " " + m[4], Unresolved: true})
				continue
			}
			w.shellValue(f, prog, via+" "+m[1], unescapeLiteral(lit), false)
		}
	}
	if !forms {
		return
	}
	for _, m := range exprBacktickRE.FindAllStringSubmatch(code, 16) {
		w.shellValue(f, prog, via+" `…`", m[1], false)
	}
	for _, m := range exprBangRE.FindAllStringSubmatch(code, 16) {
		w.shellValue(f, prog, via+" !", strings.TrimSpace(m[1]), false)
	}
}

// unescapeLiteral undoes backslash escapes of a quoted literal (\" \' \\).
func unescapeLiteral(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"'\`, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// barePathReads: code of any language that names a credential location as a path word, quoted
// or bare (Tcl "open ~/.netrc", a Nix path), reads it as far as this reading can tell: the read
// is recorded so the credential rules judge it. Paths that are no credential location are left to
// the language's own reading.
func (w *walker) barePathReads(prog, code string) {
	s := w.s
	if len(code) > maxExpandedWord {
		return
	}
	for _, m := range exprPathRE.FindAllStringSubmatch(code, 64) {
		p := strings.TrimRight(m[1], ".,;:")
		clean, ok := resolvePath(p, s.cwd, s.n.opt.Home)
		if !ok || s.n.sens.classify(clean) == "" || inDir(clean, s.n.opt.Workspace) {
			continue
		}
		w.pathEffect(EffectRead, prog, p, false)
		s.addPath(p, RoleArg)
	}
}
