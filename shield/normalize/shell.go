package normalize

import (
	"encoding/base64"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// frame is where a piece of shell source sits: its text, nesting depth, how it was reached.
type frame struct {
	src   string
	depth int
	via   string
	sudo  bool
}

type walker struct {
	s *state
	// listedInput: the statement being walked reads, on standard input, the output of the
	// pipeline stage before it, which is a listing command (listingStmts).
	listedInput bool
	vars        map[string]string // variables assigned literal values earlier in the script
	inSubst     int               // > 0 while walking a command or process substitution
	// substBytes: bytes of known variable values substituted into the current statement's words,
	// bounded by maxExpandedArgv.
	substBytes int
	funcs      map[string]bool   // functions defined in the script (their bodies are walked where defined)
	globVars   map[string]string // loop variables bound to a glob pattern (for f in src/*.go)
	// aliases defined earlier in the script (alias ll='rm -rf ~'); a later command named so is
	// walked as the alias text with its arguments. Bash only expands them with expand_aliases and
	// on a later line; the walker expands them always (the stricter reading).
	aliases map[string]string
	// ifsUnknown: IFS was assigned a value the walker could not resolve, so how an unquoted
	// expansion splits is unknown.
	ifsUnknown bool
	// filteredDelete: the deletes being recorded remove what a filter matches under a directory
	// (find -name … -delete), not the directory itself.
	filteredDelete bool
	// cdpath: CDPATH was assigned, so cd NAME may go anywhere (effects_state.go).
	cdpath bool
	// reach: the command being read reads every file under its directory operands (reach.go).
	reach bool
	// piped: text a pipeline stage prints for a later stage to write into a file (shell_writes.go:
	// jq's assignments, sponge or tee write them).
	piped string
	// trunc: the truncating redirections of the statement whose redirections were read last
	// (emptied.go).
	trunc []truncRedir
}

// defaultIFS is the shell's field separators when IFS is not set.
const defaultIFS = " \t\n"

// ifs is the current field separators: IFS when the script assigned it a literal value.
func (w *walker) ifs() string {
	if v, ok := w.vars["IFS"]; ok {
		return v
	}
	return defaultIFS
}

// splitFields splits the value of an unquoted expansion on the separators of ifs, as the shell
// does (empty fields dropped).
func splitFields(v, ifs string) []string {
	if ifs == "" {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	return strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(ifs, r) })
}

// Bounds of the work on one call beyond the command count, the depth and the input limits of
// limits.go: the size of a word and of a command after variable substitution, and the variables
// tracked.
const (
	maxExpandedWord = 64 << 10
	maxExpandedArgv = 256 << 10 // bytes substituted into one command's words, all words together
	maxTrackedVars  = 64
)

func (s *state) walker() *walker { return &walker{s: s, vars: map[string]string{}} }

// words is an argv with, per word, whether it came from an expansion.
type words struct {
	argv []string
	dyn  []bool
}

// script parses src as bash and walks it. A parse error is recorded in ParseError and the text is
// split on whitespace and control operators so rules still see its words.
//
// Before the parser sees src, it is checked against the input limits (limits.go): a string over
// one is not parsed and the action is marked OverLimit.
func (w *walker) script(src string, depth int, via string, sudo bool) {
	s := w.s
	if s.stop {
		return
	}
	if s.ctx != nil && s.ctx.Err() != nil {
		s.overLimit("normalisation stopped: %v", s.ctx.Err())
		return
	}
	if depth > s.n.opt.MaxDepth {
		s.act.Truncated = true
		return
	}
	if len(src) > MaxShellBytes {
		s.overLimit("a shell command of %d bytes; the limit is %d", len(src), MaxShellBytes)
		return
	}
	if s.parsed+len(src) > MaxShellParseBytes {
		s.overLimit("more than %d bytes of shell source to parse, nested scripts included", MaxShellParseBytes)
		return
	}
	if reason := scanShell(src); reason != "" {
		s.overLimit("%s", reason)
		return
	}
	s.parsed += len(src)
	p := w.s.n.parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	w.s.n.parsers.Put(p)
	fr := frame{src: src, depth: depth, via: via, sudo: sudo}
	if err != nil {
		if w.s.act.ParseError == "" {
			w.s.act.ParseError = err.Error()
		}
		w.fallback(fr)
		return
	}
	w.stmts(fr, f.Stmts)
}

var quoteRemover = strings.NewReplacer(`"`, "", `'`, "", `\`, "")

// fallback splits unparseable source into commands on ; & | and newlines, and into words on
// blanks, with quote characters dropped.
func (w *walker) fallback(f frame) {
	seps := func(r rune) bool {
		return r == ';' || r == '&' || r == '|' || r == '\n' || r == '(' || r == ')' || r == '`'
	}
	for _, seg := range strings.FieldsFunc(f.src, seps) {
		fields := strings.Fields(seg)
		if len(fields) == 0 {
			continue
		}
		ws := words{}
		for _, fl := range fields {
			t := quoteRemover.Replace(fl)
			ws.argv = append(ws.argv, t)
			ws.dyn = append(ws.dyn, strings.ContainsAny(fl, "$*?["))
		}
		if !w.emit(f, ws, strings.TrimSpace(seg), nil, nil, false, 0, false, "") {
			return
		}
	}
}

func (w *walker) stmts(f frame, ss []*syntax.Stmt) {
	for _, st := range ss {
		w.stmt(f, st, false, 0, false)
	}
}

// stmt walks one statement; bg is set when an enclosing pipeline or list runs in the background.
func (w *walker) stmt(f frame, st *syntax.Stmt, pipe bool, idx int, bg bool) {
	if st == nil || w.full() {
		return
	}
	bg = bg || st.Background
	effStart := len(w.s.act.Effects)
	redirs, stdin := w.redirects(f, st.Redirs)
	trunc := w.trunc // emptied.go
	if st.Cmd == nil {
		w.emptiedByRedirects(words{}, trunc) // "> f" alone empties f
	}
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		w.substBytes = 0
		var env []string
		for _, a := range c.Assigns {
			kv := w.assign(f, a)
			env = append(env, kv)
			if a.Name != nil && a.Name.Value == "CDPATH" {
				w.cdpath = true
			}
			if len(c.Args) == 0 && a.Name != nil {
				delete(w.vars, a.Name.Value) // reassigned: an earlier literal value no longer holds
			}
			known := false
			if len(c.Args) == 0 && a.Name != nil && a.Value != nil && a.Array == nil && !a.Append {
				if v, dyn := w.word(f, a.Value); !dyn && len(w.vars) < maxTrackedVars && len(v) <= maxExpandedWord {
					w.vars[a.Name.Value] = v
					known = true
				}
			}
			if len(c.Args) == 0 && a.Name != nil && a.Name.Value == "IFS" {
				w.ifsUnknown = !known && a.Value != nil
				if a.Value == nil && !a.Naked { // IFS= : no splitting at all
					w.vars["IFS"] = ""
					w.ifsUnknown = false
				}
			}
		}
		ws := words{}
		for _, wd := range c.Args {
			t, d := w.word(f, wd)
			ws.argv = append(ws.argv, t)
			ws.dyn = append(ws.dyn, d)
		}
		raw := slice(f.src, st.Pos(), st.End())
		w.builtinAssigns(ws)
		w.emit(f, ws, raw, redirs, env, pipe, idx, bg, stdin)
		w.emptiedByRedirects(ws, trunc)      // emptied.go: : > f, > f
		w.downloadRedirects(effStart, trunc) // later_downloads.go: curl URL > file
		carried := w.linkCmd(effStart, raw)
		if len(c.Args) == 0 {
			for _, a := range c.Assigns {
				w.taintVar(a, carried)
			}
		}
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			parts := flattenPipe(st)
			starts := make([]int, len(parts))
			effStarts := make([]int, len(parts))
			x := w.s.fx()
			prevRoots, prevGlobs := x.pipeRoots, x.pipeGlobs
			for i, p := range parts {
				starts[i] = len(w.s.act.Commands)
				effStarts[i] = len(w.s.act.Effects)
				x.pipeRoots, x.pipeGlobs, x.pipeFiltered = nil, nil, false
				if i > 0 {
					x.pipeRoots = w.listedRoots(effStarts[i-1], len(w.s.act.Effects))
					x.pipeGlobs, x.pipeFiltered = x.stageGlobs, x.stageFiltered
				}
				x.stageGlobs, x.stageFiltered = nil, false
				w.listedInput = i > 0 && w.listingStmts(parts[i-1:i])
				w.stmt(f, p, true, i, bg)
				w.listedInput = false
			}
			x.pipeRoots, x.pipeGlobs, x.stageGlobs = prevRoots, prevGlobs, nil
			x.pipeFiltered, x.stageFiltered = false, false
			w.pipedScripts(f, starts)
			w.linkPipe(effStarts, len(w.s.act.Effects))
			return
		}
		w.stmt(f, c.X, false, 0, bg)
		w.stmt(f, c.Y, false, 0, bg)
	case *syntax.Subshell:
		// A subshell's cd does not move the commands after it.
		cwd := w.s.cwd
		for _, x := range c.Stmts {
			w.stmt(f, x, pipe, idx, bg)
		}
		w.s.cwd = cwd
	case *syntax.Block:
		for _, x := range c.Stmts {
			w.stmt(f, x, pipe, idx, bg)
		}
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(f, ic.Cond)
			w.stmts(f, ic.Then)
		}
	case *syntax.WhileClause:
		w.stmts(f, c.Cond)
		if name := w.readLoopOverListing(c, st); name != "" { // local_targets.go
			// while read -r f; do …; done < <(git ls-files): the variable stands for the names
			// the listing prints, as in a for loop over $(git ls-files).
			delete(w.vars, name)
			if w.globVars == nil {
				w.globVars = map[string]string{}
			}
			w.globVars[name] = "*"
			w.stmts(f, c.Do)
			delete(w.globVars, name)
			break
		}
		w.stmts(f, c.Do)
	case *syntax.ForClause:
		w.forLoop(f, c)
	case *syntax.CaseClause:
		w.word(f, c.Word)
		for _, it := range c.Items {
			w.stmts(f, it.Stmts)
		}
	case *syntax.FuncDecl:
		if c.Name != nil && len(w.funcs) < maxTrackedVars {
			if w.funcs == nil {
				w.funcs = map[string]bool{}
			}
			w.funcs[c.Name.Value] = true
			if callsItself(c) {
				// Recursion (a fork bomb when piped or backgrounded): its effects are unbounded.
				w.s.addUnresolved("recursive function " + c.Name.Value)
				w.s.addEffect(Effect{Kind: EffectExec, Target: c.Name.Value, Program: c.Name.Value, Detail: "recursive function", Unresolved: true})
			}
		}
		w.stmt(f, c.Body, false, 0, false)
	case *syntax.DeclClause:
		ws := words{argv: []string{c.Variant.Value}, dyn: []bool{false}}
		nameref := false
		for _, a := range c.Args {
			if a.Naked && a.Name == nil && a.Value != nil {
				if o, ok := w.litWord(a.Value); ok && len(o) > 1 && o[0] == '-' && strings.ContainsRune(o[1:], 'n') {
					nameref = true // declare -n / typeset -n / local -n: NAME=TARGET names a variable
				}
			}
		}
		for _, a := range c.Args {
			ws.argv = append(ws.argv, w.assign(f, a))
			ws.dyn = append(ws.dyn, false)
			if a.Name != nil && !a.Naked {
				delete(w.vars, a.Name.Value)
				if a.Name.Value == "IFS" {
					w.ifsUnknown = true
				}
				if nameref {
					// The value is the name of another variable: NAME stands for that variable's
					// value when it is known, and is unknown otherwise (never the name's text).
					if a.Value != nil {
						if t, ok := w.litWord(a.Value); ok {
							if v, ok := w.varValue(t); ok && len(w.vars) < maxTrackedVars {
								w.vars[a.Name.Value] = v
							}
						}
					}
					continue
				}
				if a.Value != nil && a.Array == nil && !a.Append {
					if v, ok := w.litWord(a.Value); ok && len(w.vars) < maxTrackedVars && len(v) <= maxExpandedWord {
						w.vars[a.Name.Value] = v
					}
				}
			}
		}
		raw := slice(f.src, st.Pos(), st.End())
		w.emit(f, ws, raw, redirs, nil, pipe, idx, bg, stdin)
		carried := w.linkCmd(effStart, raw)
		for _, a := range c.Args {
			w.taintVar(a, carried)
		}
	case *syntax.TimeClause:
		w.stmt(f, c.Stmt, pipe, idx, bg)
	case *syntax.CoprocClause:
		w.stmt(f, c.Stmt, pipe, idx, true)
	case *syntax.LetClause, *syntax.ArithmCmd, *syntax.TestClause:
		// Walk for command substitutions inside.
		syntax.Walk(c, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CmdSubst:
				w.nested(f, x.Stmts, "subst")
				return false
			case *syntax.ProcSubst:
				w.nested(f, x.Stmts, "procsubst")
				return false
			}
			return true
		})
	}
}

func flattenPipe(st *syntax.Stmt) []*syntax.Stmt {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(st.Redirs) == 0 {
		return append(flattenPipe(b.X), flattenPipe(b.Y)...)
	}
	return []*syntax.Stmt{st}
}

func (w *walker) full() bool {
	if w.s.stopped() {
		return true
	}
	if len(w.s.act.Commands) >= w.s.n.opt.MaxCommands {
		w.s.act.Truncated = true
		return true
	}
	return false
}

func (w *walker) nested(f frame, ss []*syntax.Stmt, via string) {
	if f.depth+1 > w.s.n.opt.MaxDepth {
		w.s.act.Truncated = true
		return
	}
	if via == "subst" || via == "procsubst" {
		w.inSubst++
		defer func() { w.inSubst-- }()
	}
	w.stmts(frame{src: f.src, depth: f.depth + 1, via: via, sudo: f.sudo}, ss)
}

func (w *walker) assign(f frame, a *syntax.Assign) string {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	val := ""
	if a.Value != nil {
		val, _ = w.word(f, a.Value)
	}
	if a.Array != nil {
		var parts []string
		for _, el := range a.Array.Elems {
			if el.Value != nil {
				t, _ := w.word(f, el.Value)
				parts = append(parts, t)
			}
		}
		val = "(" + strings.Join(parts, " ") + ")"
	}
	if a.Naked {
		if name == "" {
			return val // an option of a declaration builtin (export -p, declare -x)
		}
		return name
	}
	if a.Append {
		return name + "+=" + val
	}
	return name + "=" + val
}

// redirects converts a statement's redirections, records their file targets as paths, and returns
// the here-document or here-string text (what a shell reading stdin would run).
func (w *walker) redirects(f frame, rs []*syntax.Redirect) ([]Redirect, string) {
	var out []Redirect
	w.trunc = nil
	stdin := ""
	for _, r := range rs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.Fd = r.N.Value
		}
		target, tdyn := "", false
		if r.Word != nil {
			target, tdyn = w.word(f, r.Word)
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				stdin, _ = w.word(f, r.Hdoc)
			}
			target = ""
		case syntax.WordHdoc:
			stdin = target + "\n"
			target = ""
		case syntax.DplIn, syntax.DplOut:
			if isFdWord(target) {
				rd.Path = target
				out = append(out, rd)
				continue
			}
		}
		if target != "" {
			role := RoleWrite
			if r.Op == syntax.RdrIn {
				role = RoleRead
			}
			rd.Path = w.fileTarget(target, role)
			kind := EffectWrite
			if r.Op == syntax.RdrIn {
				kind = EffectRead
			}
			from := len(w.s.act.Effects)
			w.pathEffect(kind, "redirect", target, tdyn)
			for i := from; i < len(w.s.act.Effects); i++ {
				w.s.fx().origin[i] = "redirect"
			}
			if r.Op == syntax.RdrOut || r.Op == syntax.ClbOut || r.Op == syntax.RdrAll || r.Op == syntax.AppOut || r.Op == syntax.AppAll {
				if rd.Fd == "" || rd.Fd == "1" {
					w.trunc = append(w.trunc, truncRedir{raw: target, dyn: tdyn, from: from, to: len(w.s.act.Effects), appends: r.Op == syntax.AppOut || r.Op == syntax.AppAll})
				}
			}
		}
		out = append(out, rd)
	}
	return out, stdin
}

func isFdWord(s string) bool {
	if s == "-" {
		return true
	}
	if s == "" {
		return false
	}
	for _, r := range strings.TrimSuffix(s, "-") {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// fileTarget records a redirection target: /dev/tcp and /dev/udp become connect URLs, the standard
// streams are ignored, anything else is a path. It returns the cleaned path or the target as is.
func (w *walker) fileTarget(t, role string) string {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero":
		return t
	}
	if strings.HasPrefix(t, "/dev/tcp/") || strings.HasPrefix(t, "/dev/udp/") {
		rest := strings.SplitN(t[len("/dev/tcp/"):], "/", 2)
		port := ""
		if len(rest) == 2 {
			port = rest[1]
		}
		w.s.addConnect(rest[0], port)
		return t
	}
	w.s.addPath(t, role)
	clean, _ := resolvePath(t, w.s.cwd, w.s.n.opt.Home)
	return clean
}

// word returns a word's text after quote removal, and whether any part of it is an expansion (whose
// source text is kept: "$HOME", "${IFS}", "$(id)"). Command and process substitutions are walked.
func (w *walker) word(f frame, wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", false
	}
	var sb strings.Builder
	dyn := false
	for _, p := range wd.Parts {
		w.part(f, &sb, p, false, &dyn)
	}
	return sb.String(), dyn
}

func (w *walker) part(f frame, sb *strings.Builder, p syntax.WordPart, inDQ bool, dyn *bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		if inDQ {
			sb.WriteString(unescapeDQ(x.Value))
		} else {
			if hasGlob(x.Value) || hasBraces(x.Value) {
				*dyn = true
			}
			sb.WriteString(unescapeUnquoted(x.Value))
		}
	case *syntax.SglQuoted:
		if x.Dollar {
			sb.WriteString(ansiC(x.Value))
		} else {
			sb.WriteString(x.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			w.part(f, sb, q, true, dyn)
		}
	case *syntax.CmdSubst:
		if v, ok := w.evalSubst(x); ok {
			sb.WriteString(v)
			return
		}
		*dyn = true
		if !inDQ && w.listingSubst(x) {
			// $(git ls-files …), $(find . -name …): relative names under the working directory,
			// which lies in the workspace; they stand as a glob of it (globEffect: every match in
			// the workspace), so the word counts as resolved there.
			sb.WriteString("*")
			w.nested(f, x.Stmts, "subst")
			return
		}
		sb.WriteString(slice(f.src, x.Pos(), x.End()))
		w.nested(f, x.Stmts, "subst")
	case *syntax.ProcSubst:
		*dyn = true
		sb.WriteString(slice(f.src, x.Pos(), x.End()))
		w.nested(f, x.Stmts, "procsubst")
	case *syntax.ParamExp:
		if g, ok := w.globVars[paramName(x)]; ok && g != "" {
			*dyn = true // a glob: its matches are unknown (globEffect bounds them)
			sb.WriteString(g)
			return
		}
		if v, ok := w.paramValue(x); ok {
			// The budget is checked before the value is scanned: a large value referenced many
			// times must not be scanned each time.
			if w.substBytes+len(v) > maxExpandedArgv || sb.Len()+len(v) > maxExpandedWord {
				w.s.act.Truncated = true
			} else if inDQ || (!w.ifsUnknown && !strings.ContainsAny(v, w.ifs()+"*?[")) {
				w.substBytes += len(v)
				sb.WriteString(v)
				return
			}
		}
		*dyn = true
		sb.WriteString(slice(f.src, p.Pos(), p.End()))
	default: // ArithmExp, ExtGlob, BraceExp
		*dyn = true
		sb.WriteString(slice(f.src, p.Pos(), p.End()))
	}
}

func slice(src string, a, b syntax.Pos) string {
	if !a.IsValid() || !b.IsValid() {
		return ""
	}
	i, j := int(a.Offset()), int(b.Offset())
	if i < 0 || j > len(src) || i > j {
		return ""
	}
	return src[i:j]
}

func hasGlob(lit string) bool {
	for i := 0; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			// A bracket expression needs its closing ']' ("[ -f x ]"'s "[" is a literal word).
			if strings.IndexByte(lit[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func unescapeDQ(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes the escapes of a $'…' string.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte(8)
		case 'e', 'E':
			sb.WriteByte(27)
		case 'f':
			sb.WriteByte(12)
		case 'v':
			sb.WriteByte(11)
		case 'x':
			v, n := hexDigits(s[i+1:], 2)
			if n == 0 {
				sb.WriteString(`\x`)
				continue
			}
			sb.WriteByte(byte(v))
			i += n
		case 'u', 'U':
			max := 4
			if s[i] == 'U' {
				max = 8
			}
			v, n := hexDigits(s[i+1:], max)
			if n == 0 {
				sb.WriteByte('\\')
				sb.WriteByte(s[i])
				continue
			}
			sb.WriteRune(rune(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := 0, 0
			for n < 3 && i+n < len(s) && s[i+n] >= '0' && s[i+n] <= '7' {
				v = v*8 + int(s[i+n]-'0')
				n++
			}
			sb.WriteByte(byte(v))
			i += n - 1
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

func hexDigits(s string, max int) (int, int) {
	v, n := 0, 0
	for n < max && n < len(s) {
		c := s[n]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return v, n
		}
		v = v*16 + d
		n++
	}
	return v, n
}

// emit records one simple command, extracts its paths and URLs, and follows what it runs (bash -c,
// eval, sudo, env, xargs, find -exec, …). It returns false when the command budget is spent.
func (w *walker) emit(f frame, ws words, raw string, redirs []Redirect, env []string, pipe bool, idx int, bg bool, stdin string) bool {
	if w.full() {
		return false
	}
	c := Command{Argv: ws.argv, Raw: raw, Depth: f.depth, Via: f.via, Pipe: pipe, PipeIndex: idx,
		Redirects: redirs, Env: env, Sudo: f.sudo, Background: bg}
	for _, d := range ws.dyn {
		if d {
			c.Dynamic = true
		}
	}
	if len(ws.argv) > 0 {
		c.Name = path.Base(ws.argv[0])
		if ws.argv[0] == "" || ws.dyn[0] {
			c.Name = ws.argv[0] // an expansion: keep its text ("$P", "rm${IFS}-rf${IFS}/")
		}
		c.Args = ws.argv[1:]
	}
	if c.Argv == nil {
		c.Argv = []string{}
	}
	if c.Args == nil {
		c.Args = []string{}
	}
	w.s.act.Commands = append(w.s.act.Commands, c)
	if w.inSubst > 0 {
		x := w.s.fx()
		if x.subst == nil {
			x.subst = map[int]bool{}
		}
		x.subst[len(w.s.act.Commands)-1] = true
	}
	w.envEffects(f, &c) // effects_env.go; a bare assignment too (set -a, PROMPT_COMMAND)
	w.routingEnv(&c)    // routing.go: proxies set in the environment
	if len(ws.argv) == 0 {
		return true
	}
	w.extract(c.Name, ws)
	switch c.Name {
	case "cd", "pushd", "popd":
		w.chdir(c.Name, ws) // effects_state.go
	case "export", "declare", "typeset", "local", "readonly":
		for _, a := range c.Args {
			if strings.HasPrefix(a, "CDPATH=") {
				w.cdpath = true
			}
		}
	}
	if v, ok := w.aliases[ws.argv[0]]; ok && !ws.dyn[0] && f.depth+1 <= w.s.n.opt.MaxDepth {
		// An alias defined earlier in the script: the command is the alias text followed by the
		// arguments. The alias is not expanded again inside its own text (as in bash).
		delete(w.aliases, ws.argv[0])
		src := v
		for i, a := range ws.argv[1:] {
			if ws.dyn[i+1] {
				src += " " + a // keep the expansion's text: walked as unresolved
			} else {
				src += " " + quoteWord(a)
			}
		}
		w.script(src, f.depth+1, "alias", f.sudo)
		w.aliases[ws.argv[0]] = v
		return true
	}
	x := w.s.fx()
	prevRoots, prevFiltered, prevGlobs := x.roots, x.rootsFiltered, x.findGlobs
	if c.Name == "find" {
		x.roots = findRoots(ws.sub(1)) // "{}" in -exec stands for what find walks
		x.rootsFiltered = findFilters(ws.argv[1:])
		x.findGlobs = w.s.findNameGlobs(x.roots, ws.argv[1:]) // find_secrets.go
		if pipe {
			x.stageGlobs = x.findGlobs
			x.stageFiltered = x.rootsFiltered
		}
	}
	w.follow(f, c.Name, ws, pipe, idx, stdin)
	replaced := false
	if c.Dynamic {
		replaced = w.expand(f, ws, raw, pipe, idx, stdin)
	}
	if !replaced {
		before := len(w.s.act.Effects)
		prevEnv := x.curEnv
		x.curEnv = c.Env
		w.commandEffects(f, &c, ws, pipe, idx, stdin)
		x.curEnv = prevEnv
		w.requestSecrets(before, c.Name, raw)
		w.recordWritten(&c, stdin)              // sessions.go
		w.shellWrites(&c, ws, pipe, idx, stdin) // shell_writes.go: jq, yq, sponge, perl -i, dd, ed
	}
	x.roots, x.rootsFiltered, x.findGlobs = prevRoots, prevFiltered, prevGlobs
	return true
}

// varRE matches $NAME and ${NAME} (plain parameter expansions only).
var varRE = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// expand emits, one level deeper with Via "expand", the command a dynamic argv most likely runs:
// variables assigned earlier in the same script to literal values (and HOME, IFS) substituted, and
// words containing $IFS split on blanks. It is a best-effort reading for rules; the original
// command with Dynamic set is kept as well.
func (w *walker) expand(f frame, ws words, raw string, pipe bool, idx int, stdin string) bool {
	if f.depth+1 > w.s.n.opt.MaxDepth {
		w.s.act.Truncated = true
		return false
	}
	out := words{}
	changed := false
	total := 0 // bytes substituted over all words: bounded by maxExpandedArgv
	ifs := w.ifs()
	for i, a := range ws.argv {
		if ws.dyn[i] && hasBraces(a) && !strings.Contains(a, "$") {
			if alts, ok := braceExpand(a, 64); ok && len(alts) > 1 {
				changed = true
				for _, x := range alts {
					out.argv = append(out.argv, x)
					out.dyn = append(out.dyn, hasGlob(x))
				}
				continue
			}
		}
		if !ws.dyn[i] || !strings.Contains(a, "$") || w.ifsUnknown {
			// (With IFS unknown, how an unquoted expansion splits is unknown: the word stays as
			// written, unresolved.)
			out.argv = append(out.argv, a)
			out.dyn = append(out.dyn, ws.dyn[i])
			continue
		}
		// A word that is one variable reference is split into fields, as an unquoted expansion is.
		if sm := varRE.FindStringSubmatch(a); sm != nil && sm[0] == a {
			if v, ok := w.vars[sm[1]+sm[2]]; ok {
				total += len(v)
				if len(out.argv)+len(v)/2 > 4096 || total > maxExpandedArgv {
					w.s.act.Truncated = true
					return false
				}
				changed = true
				for _, fld := range splitFields(v, ifs) {
					out.argv = append(out.argv, fld)
					out.dyn = append(out.dyn, w.ifsUnknown)
				}
				continue
			}
		}
		// Otherwise the word is rebuilt field by field: literal text joins the current field, a
		// known value is split on IFS (the text in the word is an unquoted expansion: a quoted one
		// was substituted by part), $IFS itself separates.
		still := false
		grown := len(a)
		var flds []string
		var cur strings.Builder
		open := false // cur holds a field (possibly empty text from a literal)
		sep := func() {
			if open && cur.Len() > 0 {
				flds = append(flds, cur.String())
			}
			cur.Reset()
			open = false
		}
		last := 0
		for _, m := range varRE.FindAllStringSubmatchIndex(a, -1) {
			if m[0] > last {
				cur.WriteString(a[last:m[0]])
				open = true
			}
			last = m[1]
			var name string
			if m[2] >= 0 {
				name = a[m[2]:m[3]]
			} else {
				name = a[m[4]:m[5]]
			}
			v, ok := w.varValue(name)
			if name == "IFS" && !ok {
				v, ok = defaultIFS, true
			}
			if !ok || grown > maxExpandedWord {
				still = true
				cur.WriteString(a[m[0]:m[1]])
				open = true
				continue
			}
			grown += len(v)
			changed = true
			if w.ifsUnknown {
				still = true
			}
			// Split v: a separator ends the current field.
			for _, r := range v {
				if strings.ContainsRune(ifs, r) {
					sep()
					continue
				}
				cur.WriteRune(r)
				open = true
			}
		}
		if last < len(a) {
			cur.WriteString(a[last:])
			open = true
		}
		sep()
		total += grown - len(a)
		if grown > maxExpandedWord || total > maxExpandedArgv {
			w.s.act.Truncated = true
			return false
		}
		for _, fld := range flds {
			out.argv = append(out.argv, fld)
			out.dyn = append(out.dyn, still || strings.Contains(fld, "$(") || strings.Contains(fld, "`") || strings.Contains(fld, "$"))
		}
	}
	if !changed || len(out.argv) == 0 {
		return false
	}
	child := frame{src: f.src, depth: f.depth + 1, via: "expand", sudo: f.sudo}
	return w.emit(child, out, raw, nil, nil, pipe, idx, false, stdin)
}

// sub returns argv[i:] as words.
func (ws words) sub(i int) words {
	if i >= len(ws.argv) {
		return words{}
	}
	return words{argv: ws.argv[i:], dyn: ws.dyn[i:]}
}

// follow runs the nested command of a wrapper.
func (w *walker) follow(f frame, name string, ws words, pipe bool, idx int, stdin string) {
	args := ws.sub(1)
	child := frame{src: "", depth: f.depth + 1, via: name, sudo: f.sudo}
	if child.depth > w.s.n.opt.MaxDepth {
		if isRunner(name, args) {
			w.s.act.Truncated = true
		}
		return
	}
	switch {
	case shells[name] || (name == "busybox" && len(args.argv) > 0 && shells[args.argv[0]]):
		if name == "busybox" {
			name = args.argv[0]
			args = args.sub(1)
		}
		script, hasC, file := shellScript(args.argv)
		switch {
		case hasC:
			w.script(bindPositional(script, args.argv), child.depth, name+" -c", f.sudo)
		case file != "":
			w.s.addPath(file, RoleExec)
		case stdin != "":
			w.script(stdin, child.depth, name+" <<", f.sudo)
		}
	case name == "script":
		// script [-q…] -c CMD [FILE]: CMD is run by a shell.
		if cmd, ok := optionValue(args.argv, 'c', "--command"); ok {
			w.script(cmd, child.depth, "script -c", f.sudo)
		}
	case name == "busybox" && len(args.argv) > 0:
		w.emit(child, args, strings.Join(args.argv, " "), nil, nil, pipe, idx, false, stdin)
	case name == "eval":
		joined := strings.Join(args.argv, " ")
		if t := strings.TrimSpace(joined); strings.HasPrefix(t, "$(") && strings.HasSuffix(t, ")") && evalSafe[substProgram(t)] {
			return // eval "$(ssh-agent -s)": the output of an environment-setup program (walked as a substitution)
		}
		w.script(joined, child.depth, "eval", f.sudo)
	case name == "su" || name == "runuser":
		for i := 0; i < len(args.argv); i++ {
			a := args.argv[i]
			if (a == "-c" || a == "--command") && i+1 < len(args.argv) {
				w.script(args.argv[i+1], child.depth, name+" -c", true)
				return
			}
			if strings.HasPrefix(a, "--command=") {
				w.script(strings.TrimPrefix(a, "--command="), child.depth, name+" -c", true)
				return
			}
		}
	case name == "parallel":
		w.parallel(f, child, args, pipe, idx)
	case configReaders[name].grammar != "":
		w.configArgs(f, name, args, stdin, pipe, idx) // config_args.go
	case deferredShell[name]:
		w.deferred(name, args, child.depth, f.sudo, stdin) // deferred_shell.go
	case name == "watch":
		rest := skipOptions(args, wrappers["watch"].valueOpts, 0)
		if len(rest.argv) > 0 {
			w.script(strings.Join(rest.argv, " "), child.depth, "watch", f.sudo)
		}
	case name == "find":
		for i := 0; i < len(args.argv); i++ {
			switch args.argv[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(args.argv) && args.argv[j] != ";" && args.argv[j] != "+" {
					j++
				}
				sub := words{argv: args.argv[i+1 : j], dyn: args.dyn[i+1 : j]}
				if len(sub.argv) > 0 {
					child.via = "find " + args.argv[i]
					w.emit(child, sub, strings.Join(sub.argv, " "), nil, nil, false, 0, false, "")
				}
				i = j
			}
		}
	case name == "command" && len(args.argv) > 0 && (args.argv[0] == "-v" || args.argv[0] == "-V"):
		// command -v NAME only looks NAME up.
	case name == "env":
		rest := skipOptions(args, wrappers["env"].valueOpts, 0)
		// env -S "cmd args" splits its argument.
		for i := 0; i < len(args.argv); i++ {
			a := args.argv[i]
			switch {
			case (a == "-S" || a == "--split-string") && i+1 < len(args.argv):
				w.script(args.argv[i+1], child.depth, "env -S", f.sudo)
				return
			case strings.HasPrefix(a, "--split-string="):
				w.script(strings.TrimPrefix(a, "--split-string="), child.depth, "env -S", f.sudo)
				return
			case strings.HasPrefix(a, "-S") && len(a) > 2:
				w.script(a[2:], child.depth, "env -S", f.sudo)
				return
			}
		}
		var env []string
		for len(rest.argv) > 0 && strings.Contains(rest.argv[0], "=") && !strings.HasPrefix(rest.argv[0], "=") {
			env = append(env, rest.argv[0])
			rest = rest.sub(1)
		}
		if len(rest.argv) > 0 {
			w.emit(child, rest, strings.Join(rest.argv, " "), nil, env, pipe, idx, false, stdin)
		}
	default:
		wr, ok := wrappers[name]
		if !ok {
			return
		}
		if wr.sudo {
			child.sudo = true
		}
		operands := wr.operands
		if name == "taskset" && len(args.argv) > 0 && (args.argv[0] == "-c" || args.argv[0] == "--cpu-list" || strings.HasPrefix(args.argv[0], "-c") && len(args.argv[0]) > 2 && !strings.HasPrefix(args.argv[0], "--")) {
			operands = 0 // taskset -c LIST CMD: the list is the option's value
		}
		rest := skipOptions(args, wr.valueOpts, operands)
		if name == "nice" && len(args.argv) > 0 && len(args.argv[0]) > 1 && args.argv[0][0] == '-' && isFdWord(args.argv[0][1:]) {
			rest = args.sub(1)
		}
		// sudo VAR=value CMD: the assignments are the command's environment.
		var env []string
		for wr.sudo && len(rest.argv) > 0 && !rest.dyn[0] && isAssignment(rest.argv[0]) {
			env = append(env, rest.argv[0])
			rest = rest.sub(1)
		}
		if len(rest.argv) > 0 {
			w.emit(child, rest, strings.Join(rest.argv, " "), nil, env, pipe, idx, false, stdin)
		}
	}
}

// optionValue finds the value of a short option (also inside a cluster: -qc VALUE) or its long form
// (--long VALUE, --long=VALUE) among leading options.
func optionValue(args []string, short byte, long string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", false
		case a == long && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, long+"="):
			return a[len(long)+1:], true
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-':
			if k := strings.IndexByte(a[1:], short); k >= 0 {
				if rest := a[k+2:]; rest != "" {
					return rest, true
				}
				if i+1 < len(args) {
					return args[i+1], true
				}
				return "", false
			}
		}
	}
	return "", false
}

// quoteWord quotes s for the shell when it needs it.
func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}[]*?!#~=%") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isAssignment: NAME=value.
func isAssignment(a string) bool {
	name, _, ok := strings.Cut(a, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isRunner(name string, args words) bool {
	_, wr := wrappers[name]
	return wr || shells[name] || name == "eval" || name == "su" || name == "find" || name == "busybox" || name == "script"
}

// skipOptions drops leading options (and the values of valueOpts), then n operands.
func skipOptions(ws words, valueOpts map[string]bool, n int) words {
	i := 0
	for i < len(ws.argv) {
		a := ws.argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if valueOpts[a] {
			i += 2
			continue
		}
		i++
	}
	for k := 0; k < n && i < len(ws.argv); k++ {
		i++
	}
	return ws.sub(i)
}

// shellScript reads a shell's argv (without argv[0]): the -c script, or the script file operand.
func shellScript(args []string) (script string, hasC bool, file string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) && !hasC {
				return "", false, args[i+1]
			}
			if hasC && i+1 < len(args) {
				return args[i+1], true, ""
			}
			return "", hasC, ""
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if strings.ContainsRune(a[1:], 'c') {
				hasC = true
			} else if a[0] == '-' && strings.ContainsRune(a[1:], 's') {
				return "", false, "" // -s: the script is standard input; the operands are its arguments
			}
		default:
			if hasC {
				return a, true, ""
			}
			return "", false, a
		}
	}
	return "", hasC, ""
}

// extract records the paths and URLs of one command's operands.
func (w *walker) extract(name string, ws words) {
	s := w.s
	if strings.ContainsRune(ws.argv[0], '/') && !ws.dyn[0] {
		s.addPath(ws.argv[0], RoleExec)
	}
	args := ws.sub(1)
	if _, ok := netCmds[name]; ok {
		w.netOperands(name, args)
		return
	}
	if opts, ok := connectCmds[name]; ok {
		rest := skipAllOptions(args, opts)
		if len(rest) >= 1 && !strings.HasPrefix(rest[0], "-") {
			port := ""
			if len(rest) >= 2 {
				port = rest[1]
			}
			s.addConnect(rest[0], port)
		}
	}
	if name == "socat" {
		for _, a := range args.argv {
			la := strings.ToLower(a)
			for _, pre := range []string{"tcp:", "tcp4:", "tcp6:", "udp:", "openssl:", "tcp-connect:", "ssl:"} {
				if strings.HasPrefix(la, pre) {
					hp := strings.SplitN(a[len(pre):], ",", 2)[0]
					if i := strings.LastIndexByte(hp, ':'); i > 0 {
						s.addConnect(hp[:i], hp[i+1:])
					}
				}
			}
		}
	}
	if name == "dd" {
		for _, a := range args.argv {
			switch {
			case strings.HasPrefix(a, "if="):
				s.addPath(a[3:], RoleRead)
			case strings.HasPrefix(a, "of="):
				s.addPath(a[3:], RoleWrite)
			}
		}
		return
	}
	if shells[name] || name == "eval" || name == "su" || name == "runuser" || name == "watch" || name == "busybox" {
		return // their operands are scripts or commands, walked by follow
	}
	if name == "openssl" {
		for i := 0; i+1 < len(args.argv); i++ {
			if args.argv[i] == "-connect" {
				if h, p, ok := cutHostPort(args.argv[i+1]); ok {
					s.addConnect(h, p)
				}
			}
		}
	}
	if hostCmds[name] {
		for _, a := range skipAllOptions(args, hostCmdOpts) {
			if at := strings.LastIndexByte(a, '@'); at >= 0 {
				a = a[at+1:]
			}
			if looksLikeHost(a) {
				h, p, ok := cutHostPort(a)
				if !ok {
					h, p = a, ""
				}
				if i := strings.IndexByte(h, '/'); i >= 0 { // CIDR or path
					h = h[:i]
				}
				s.addConnect(h, p)
			}
		}
	}
	if name == "git" {
		for _, a := range args.argv {
			if strings.Contains(a, "://") {
				s.addURL(a, URLRequest, false)
			}
		}
	}
	if isInterpreter(name) {
		w.interpreterOperands(args)
		return
	}
	if name == "find" {
		for _, a := range args.argv {
			if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
				break
			}
			s.addPath(a, RoleList)
		}
		return
	}
	fc, isFile := fileCmds[name]
	var operands []string
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if j := strings.Index(a, "/dev/tcp/"); j >= 0 || strings.Contains(a, "/dev/udp/") {
			if j < 0 {
				j = strings.Index(a, "/dev/udp/")
			}
			t := a[j:]
			if k := strings.IndexAny(t, " \t\n'\"<>;|&"); k >= 0 {
				t = t[:k]
			}
			w.fileTarget(t, RoleArg)
			continue
		}
		if ws.dyn[i+1] && (strings.Contains(a, "$(") || strings.Contains(a, "`") || strings.Contains(a, "<(") || strings.Contains(a, ">(")) {
			continue // a substitution: its commands were walked
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if isFile && fc.valueOpts[a] {
				i++
				continue
			}
			if j := strings.IndexByte(a, '='); j > 0 && looksLikePathArg(a[j+1:]) {
				s.addPath(a[j+1:], RoleArg)
			}
			continue
		}
		operands = append(operands, a)
	}
	if !isFile {
		for _, a := range operands {
			if k := strings.IndexByte(a, '='); k > 0 && looksLikePathArg(a[k+1:]) {
				a = a[k+1:] // key=/path
			}
			if strings.Contains(a, ":") && !strings.Contains(a, "://") {
				for _, part := range strings.Split(a, ":") { // -v /:/rootfs:rw, PATH-like lists
					if strings.HasPrefix(part, "/") || strings.HasPrefix(part, "~") {
						s.addPath(part, RoleArg)
					}
				}
				continue
			}
			if looksLikePathArg(a) {
				s.addPath(a, RoleArg)
			}
		}
		return
	}
	if fc.skipFirst && len(operands) > 0 {
		operands = operands[1:]
	}
	for i, a := range operands {
		if a == "{}" || a == "-" {
			continue
		}
		if strings.Contains(a, "://") {
			continue
		}
		if (name == "scp" || name == "rsync") && strings.Contains(a, ":") && !strings.HasPrefix(a, "/") {
			host := a[:strings.IndexByte(a, ':')]
			if at := strings.LastIndexByte(host, '@'); at >= 0 {
				host = host[at+1:]
			}
			if host != "" && !strings.Contains(host, "/") {
				s.addConnect(host, "") // remote operand: user@host:path
			}
			continue
		}
		role := fc.role
		if role == "copy" {
			role = RoleSource
			if i == len(operands)-1 && len(operands) > 1 {
				role = RoleDest
			}
		}
		s.addPath(a, role)
	}
}

func skipAllOptions(ws words, valueOpts map[string]bool) []string {
	var out []string
	for i := 0; i < len(ws.argv); i++ {
		a := ws.argv[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			if valueOpts[a] {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// netOperands reads curl/wget-style operands: URLs (bare hosts read as http), upload and output files.
func (w *walker) netOperands(name string, args words) {
	s := w.s
	valueOpts := netCmds[name]
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			opt, val, hasEq := strings.Cut(a, "=")
			if !hasEq {
				if !valueOpts[a] {
					continue
				}
				if i+1 >= len(args.argv) {
					continue
				}
				i++
				val = args.argv[i]
			}
			switch opt {
			case "-o", "--output", "-O", "--output-document", "--out", "-D", "--dump-header", "-c", "--cookie-jar":
				if val != "-" && !(name == "wget" && opt == "-o") {
					s.addPath(val, RoleWrite)
				}
			case "-T", "--upload-file", "--post-file", "--body-file", "-K", "--config", "-i", "--input-file":
				s.addPath(val, RoleRead)
			case "-d", "--data", "--data-binary", "--data-ascii", "--data-urlencode", "--json", "-F", "--form":
				if k := strings.IndexByte(val, '@'); k >= 0 && (k == 0 || val[k-1] == '=') {
					f := val[k+1:]
					if j := strings.IndexByte(f, ';'); j >= 0 {
						f = f[:j]
					}
					if f != "-" && f != "" {
						s.addPath(f, RoleRead)
					}
				}
			case "-x", "--proxy":
				s.addURL(val, URLRequest, true)
			}
			continue
		}
		if strings.Contains(a, "://") || looksLikeHost(a) {
			s.addURL(a, URLRequest, true)
		}
	}
}

// hostCmds take host operands (scanners, remote shells, ping).
var hostCmds = set("nmap", "masscan", "zmap", "ping", "ping6", "ssh", "mosh", "traceroute", "hping3", "rustscan", "sftp", "ftp")

var hostCmdOpts = set("-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-W", "-b", "-c", "-e", "-E", "-m", "-O", "-Q", "-S", "-w",
	"-oN", "-oX", "-oG", "-oA", "--top-ports", "--rate", "-iL", "-sS", "--exclude", "--max-rate", "-t", "-s", "-I")

func cutHostPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 0 {
			host = s[1:i]
			rest := s[i+1:]
			if strings.HasPrefix(rest, ":") {
				port = rest[1:]
			}
			return host, port, true
		}
		return "", "", false
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || strings.Count(s, ":") > 1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// hasBraces: an unquoted literal that bash brace-expands ({a,b} or {1..3}).
func hasBraces(lit string) bool {
	i := strings.IndexByte(lit, '{')
	if i < 0 {
		return false
	}
	j := strings.IndexByte(lit[i:], '}')
	return j > 0 && (strings.Contains(lit[i:i+j], ",") || strings.Contains(lit[i:i+j], ".."))
}

// braceExpand expands the comma forms of brace expansion ("{rm,-rf,/}", "/etc/pass{w,}d"),
// giving up (ok false) beyond max results or on nested braces.
func braceExpand(w string, max int) ([]string, bool) {
	out := []string{w}
	for round := 0; round < 16; round++ {
		var next []string
		expanded := false
		for _, x := range out {
			i := strings.IndexByte(x, '{')
			j := -1
			if i >= 0 {
				j = strings.IndexByte(x[i:], '}')
			}
			if i < 0 || j < 0 || !strings.Contains(x[i:i+j], ",") {
				next = append(next, x)
				continue
			}
			j += i
			if strings.IndexByte(x[i+1:j], '{') >= 0 {
				return nil, false
			}
			expanded = true
			for _, alt := range strings.Split(x[i+1:j], ",") {
				next = append(next, x[:i]+alt+x[j+1:])
			}
			if len(next) > max {
				return nil, false
			}
		}
		out = next
		if !expanded {
			return out, true
		}
	}
	return nil, false
}

// pipedScripts parses what a pipeline feeds to a shell reading its standard input, when it is a
// literal: "echo 'rm -rf /' | sh" (Via "stdin"), "echo cm0gLXJmIC8= | base64 -d | bash" (Via
// "base64"). starts[i] is the index in Commands of stage i's first command.
func (w *walker) pipedScripts(f frame, starts []int) {
	cmds := w.s.act.Commands
	first := func(i int) *Command {
		if i < 0 || starts[i] >= len(cmds) || (i+1 < len(starts) && starts[i] >= starts[i+1]) {
			return nil
		}
		// The stage's own command is the first one emitted at this depth.
		for k := starts[i]; k < len(cmds) && (i+1 >= len(starts) || k < starts[i+1]); k++ {
			if cmds[k].Depth == f.depth {
				return &cmds[k]
			}
		}
		return nil
	}
	for i := 1; i < len(starts); i++ {
		sh := first(i)
		if sh != nil && configReaders[sh.Name].grammar != "" {
			w.pipedConfig(f, sh, first(i-1)) // config_args.go
			continue
		}
		if sh != nil && !shells[sh.Name] {
			// echo 'DELETE FROM t;' | psql …: a database client reads statements from stdin.
			if sp := w.s.n.opt.Commands.lookup(sh.Name); sp != nil && sp.handler == "db" {
				if prev := first(i - 1); prev != nil && !prev.Dynamic && isEcho(prev.Name) {
					args := words{argv: sh.Args, dyn: make([]bool, len(sh.Args))}
					w.db(parseArgs(sp, sh.Name, args), sh.Name, args, echoText(prev))
				}
			}
			continue
		}
		if sh == nil {
			continue
		}
		if _, hasC, file := shellScript(sh.Args); hasC || file != "" {
			continue
		}
		prev := first(i - 1)
		if prev == nil || prev.Dynamic {
			continue
		}
		var text, via string
		switch {
		case isEcho(prev.Name):
			text, via = echoText(prev), "stdin"
		case prev.Name == "base64" && hasDecodeFlag(prev.Args):
			src := first(i - 2)
			if src == nil || src.Dynamic || !isEcho(src.Name) {
				continue
			}
			dec, ok := decodeBase64(echoText(src))
			if !ok {
				continue
			}
			text, via = dec, "base64"
		default:
			continue
		}
		w.script(text, f.depth+1, via, f.sudo)
	}
}

func isEcho(name string) bool { return name == "echo" || name == "printf" }

func echoText(c *Command) string {
	args := c.Args
	for len(args) > 0 && c.Name == "echo" && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
		args = args[1:]
	}
	return strings.Join(args, " ")
}

func hasDecodeFlag(args []string) bool {
	for _, a := range args {
		if a == "-d" || a == "--decode" || a == "-D" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'd')) {
			return true
		}
	}
	return false
}

// decodeBase64 decodes standard or URL-safe base64, padded or not, to valid UTF-8 text.
func decodeBase64(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), "")
	if s == "" || len(s) > maxExpandedWord {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && utf8.Valid(b) {
			return string(b), true
		}
	}
	return "", false
}

// isInterpreter: python*, node, ruby, perl, php, … (their first operand is a script file).
func isInterpreter(name string) bool {
	switch name {
	case "node", "nodejs", "ruby", "perl", "php", "lua", "Rscript", "tclsh", "deno", "bun", "osascript", "pwsh", "powershell":
		return true
	}
	return strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy")
}

// interpreterOperands records an interpreter's script file (role exec), or, for inline code
// (-c, -e, -r, eval), the absolute and home-relative paths quoted in the code (role arg).
func (w *walker) interpreterOperands(args words) {
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		switch a {
		case "-c", "-e", "-E", "-r", "--eval", "-p", "--print", "eval":
			if i+1 < len(args.argv) {
				w.s.codePaths(args.argv[i+1])
			}
			return
		case "-m", "run":
			if a == "run" && i > 0 {
				continue
			}
			if a == "-m" {
				return // a module, not a file
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !(args.dyn[i] && strings.Contains(a, "$(")) {
			w.s.addPath(a, RoleExec)
		}
		return
	}
}

// paramValue is the value of a plain parameter expansion ($X, ${X}) when it is known: a variable
// assigned a literal earlier in the script, a loop variable over literals, HOME, PWD.
func (w *walker) paramValue(x *syntax.ParamExp) (string, bool) {
	if x.Param != nil && x.Excl && !x.Length && !x.Width && x.Index == nil && x.Slice == nil && x.Repl == nil && x.Names == 0 && x.Exp == nil {
		// ${!NAME}: the value of the variable whose name NAME holds.
		if t, ok := w.vars[x.Param.Value]; ok {
			return w.varValue(t)
		}
		return "", false
	}
	if x.Param == nil || x.Excl || x.Length || x.Width || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Names != 0 || x.Exp != nil {
		return "", false
	}
	return w.varValue(x.Param.Value)
}

// varValue is the value of the variable name when the walker knows it.
func (w *walker) varValue(name string) (string, bool) {
	if v, ok := w.vars[name]; ok {
		return v, true
	}
	switch name {
	case "HOME":
		return w.s.n.opt.Home, true
	case "PWD":
		return w.s.cwd, true
	}
	return "", false
}

// builtinAssigns records the variables a builtin sets: printf -v NAME (its value when the format
// is literal %s text, unknown otherwise), read and mapfile (unknown), and alias definitions.
func (w *walker) builtinAssigns(ws words) {
	if len(ws.argv) == 0 || ws.dyn[0] {
		return
	}
	args := ws.sub(1)
	switch ws.argv[0] {
	case "printf":
		for i := 0; i+1 < len(args.argv); i++ {
			a := args.argv[i]
			if a == "--" || len(a) < 2 || a[0] != '-' {
				return
			}
			if a != "-v" {
				continue
			}
			name := args.argv[i+1]
			delete(w.vars, name)
			if name == "IFS" {
				w.ifsUnknown = true
			}
			rest := args.sub(i + 2)
			if v, ok := printfValue(rest); ok && len(w.vars) < maxTrackedVars && len(v) <= maxExpandedWord {
				w.vars[name] = v
			}
			return
		}
	case "read", "mapfile", "readarray", "getopts":
		for i, a := range args.argv {
			if !args.dyn[i] && isName(a) {
				delete(w.vars, a)
				if a == "IFS" {
					w.ifsUnknown = true
				}
			}
		}
	case "unset":
		for _, a := range args.argv {
			delete(w.vars, a)
			if a == "IFS" {
				w.ifsUnknown = false
			}
		}
	case "alias":
		for i, a := range args.argv {
			name, val, ok := strings.Cut(a, "=")
			if !ok || args.dyn[i] || name == "" {
				continue
			}
			if w.aliases == nil {
				w.aliases = map[string]string{}
			}
			if len(w.aliases) < maxTrackedVars && len(val) <= maxExpandedWord {
				w.aliases[name] = val
			}
		}
	case "unalias":
		for _, a := range args.argv {
			delete(w.aliases, a)
		}
	}
}

// isName: a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// printfValue is the output of printf with a literal format of text, %s and %% directives and
// literal arguments (the format reused while arguments remain, as printf does); ok is false for
// any other directive or an expansion.
func printfValue(args words) (string, bool) {
	if len(args.argv) == 0 {
		return "", false
	}
	for _, d := range args.dyn {
		if d {
			return "", false
		}
	}
	format := ansiC(args.argv[0])
	vals := args.argv[1:]
	var sb strings.Builder
	for pass := 0; ; pass++ {
		used := 0
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' {
				sb.WriteByte(c)
				continue
			}
			if i+1 >= len(format) {
				return "", false
			}
			i++
			switch format[i] {
			case '%':
				sb.WriteByte('%')
			case 's':
				if used < len(vals) {
					sb.WriteString(vals[used])
				}
				used++
			default:
				return "", false
			}
			if sb.Len() > maxExpandedWord {
				return "", false
			}
		}
		if used == 0 || used >= len(vals) || pass > 64 {
			break
		}
		vals = vals[used:]
	}
	return sb.String(), true
}

// litWord is the value of a word made only of literals, quotes and known parameters (no
// substitution is walked); ok is false otherwise.
func (w *walker) litWord(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", false
	}
	var sb strings.Builder
	var lit func(p syntax.WordPart, inDQ bool) bool
	lit = func(p syntax.WordPart, inDQ bool) bool {
		switch x := p.(type) {
		case *syntax.Lit:
			if !inDQ && (hasGlob(x.Value) || hasBraces(x.Value)) {
				return false
			}
			if inDQ {
				sb.WriteString(unescapeDQ(x.Value))
			} else {
				sb.WriteString(unescapeUnquoted(x.Value))
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if !lit(q, true) {
					return false
				}
			}
		case *syntax.ParamExp:
			v, ok := w.paramValue(x)
			if !ok {
				return false
			}
			sb.WriteString(v)
		case *syntax.CmdSubst:
			v, ok := w.evalSubst(x)
			if !ok {
				return false
			}
			sb.WriteString(v)
		default:
			return false
		}
		return sb.Len() <= maxExpandedWord
	}
	for _, p := range wd.Parts {
		if !lit(p, false) {
			return "", false
		}
	}
	return sb.String(), true
}

// listingSubst: a command substitution whose output is a list of names relative to the working
// directory, below it, and the working directory lies in the workspace: git ls-files (git diff
// --name-only, git ls-tree --name-only) and find without actions, over literal operands that
// neither are absolute nor climb ("..", ":/").
func (w *walker) listingSubst(x *syntax.CmdSubst) bool {
	return w.listingStmts(x.Stmts)
}

// listingStmts: the statements of a substitution are one listing command (see listingSubst).
func (w *walker) listingStmts(stmts []*syntax.Stmt) bool {
	if len(stmts) != 1 || stmts[0].Background || stmts[0].Negated || len(stmts[0].Redirs) > 0 || !inDir(w.s.cwd, w.s.n.opt.Workspace) {
		return false
	}
	call, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 || len(call.Args) > 16 {
		return false
	}
	argv := make([]string, 0, len(call.Args))
	for _, a := range call.Args {
		v, ok := w.litWord(a)
		if !ok {
			return false
		}
		argv = append(argv, v)
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || strings.Contains(a, "..") || strings.HasPrefix(a, ":") || strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "-C") || strings.HasPrefix(a, "--git-dir") || strings.HasPrefix(a, "--work-tree") {
			return false
		}
	}
	switch argv[0] {
	case "git":
		switch argv[1] {
		case "ls-files":
			return true
		case "diff", "ls-tree":
			for _, a := range argv[2:] {
				if a == "--name-only" {
					return true
				}
			}
		}
	case "find":
		for _, a := range argv[1:] {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L", "-follow":
				return false
			}
		}
		return true
	}
	return false
}

// evalSubst evaluates command substitutions whose output is known without running anything:
// $(pwd), $(dirname X), $(basename X [SUFFIX]), $(echo X) over literal operands.
func (w *walker) evalSubst(x *syntax.CmdSubst) (string, bool) {
	if len(x.Stmts) != 1 || x.Stmts[0].Background || len(x.Stmts[0].Redirs) > 0 {
		return "", false
	}
	call, ok := x.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 || len(call.Args) > 3 {
		return "", false
	}
	argv := make([]string, 0, len(call.Args))
	for _, a := range call.Args {
		v, ok := w.litWord(a)
		if !ok {
			return "", false
		}
		argv = append(argv, v)
	}
	switch argv[0] {
	case "pwd":
		if len(argv) == 1 {
			return w.s.cwd, true
		}
	case "git":
		// The repository's top level from a directory of the workspace: the workspace is the
		// repository (a nested repository's top lies inside it too).
		if len(argv) == 3 && argv[1] == "rev-parse" && argv[2] == "--show-toplevel" && inDir(w.s.cwd, w.s.n.opt.Workspace) {
			return w.s.n.opt.Workspace, true
		}
	case "dirname":
		if len(argv) == 2 && argv[1] != "" {
			p := strings.TrimRight(argv[1], "/")
			if p == "" {
				return "/", true
			}
			return path.Dir(p), true
		}
	case "basename":
		if len(argv) >= 2 && argv[1] != "" {
			b := path.Base(argv[1])
			if len(argv) == 3 {
				b = strings.TrimSuffix(b, argv[2])
			}
			return b, true
		}
	case "echo":
		if len(argv) == 2 && !strings.HasPrefix(argv[1], "-") {
			return argv[1], true
		}
	}
	return "", false
}

// maxLoopItems bounds the literal items a for loop is walked with, one pass per item.
const maxLoopItems = 8

// forLoop walks a for loop's body once per literal item with the loop variable bound to it ("for
// d in /srv/data; do rm -rf "$d"; done" deletes /srv/data); with items that are not literal, or
// too many, once with the variable unknown.
func (w *walker) forLoop(f frame, c *syntax.ForClause) {
	wi, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.stmts(f, c.Do)
		return
	}
	var items, globs []string
	literal := true
	for _, wd := range wi.Items {
		v, dyn := w.word(f, wd)
		if dyn {
			if !isUnresolvedText(v) && hasGlob(v) && !strings.ContainsAny(v, " \t\n") {
				globs = append(globs, v)
				continue
			}
			literal = false
			continue
		}
		items = append(items, strings.Fields(v)...)
	}
	name := ""
	if wi.Name != nil {
		name = wi.Name.Value
	}
	if literal && len(items) == 0 && len(globs) == 1 && name != "" {
		// for f in src/*.go: the variable stands for the glob's matches.
		delete(w.vars, name)
		if w.globVars == nil {
			w.globVars = map[string]string{}
		}
		w.globVars[name] = globs[0]
		w.stmts(f, c.Do)
		delete(w.globVars, name)
		return
	}
	literal = literal && len(globs) == 0
	if !literal || len(items) == 0 || len(items) > maxLoopItems || name == "" {
		delete(w.vars, name)
		w.stmts(f, c.Do)
		return
	}
	for _, it := range items {
		if w.full() {
			return
		}
		w.vars[name] = it
		w.stmts(f, c.Do)
	}
	delete(w.vars, name)
}

// taintVar marks a variable assigned in a statement as carrying the statement's sources.
func (w *walker) taintVar(a *syntax.Assign, sources []int) {
	if a == nil || a.Name == nil {
		return
	}
	x := w.s.fx()
	if len(sources) == 0 {
		delete(x.varTaint, a.Name.Value)
		return
	}
	if len(x.varTaint) < maxTrackedVars {
		if x.varTaint == nil {
			x.varTaint = map[string][]int{}
		}
		x.varTaint[a.Name.Value] = dedupeInts(sources)
	}
}

// findRoots are the starting points of a find command (before the first expression word).
func findRoots(args words) []string {
	var roots []string
	for i, a := range args.argv {
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" {
			break
		}
		if args.dyn[i] && isUnresolvedText(a) {
			return nil
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []string{"."}
	}
	return roots
}

var positionalRE = regexp.MustCompile(`"\$\{?([@*0-9])\}?"|\$\{?([@*0-9])\}?`)

// bindPositional substitutes the positional parameters of "sh -c SCRIPT NAME ARG…" into SCRIPT,
// shell-quoted ("bash -c '"$@"' _ rm -rf x" runs rm -rf x). args is the shell's argv without
// argv[0]; SCRIPT is found after its -c option.
func bindPositional(script string, args []string) string {
	at := -1
	seenC := false
	for i, a := range args {
		if !seenC {
			if len(a) > 1 && a[0] == '-' && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'c') {
				seenC = true
			}
			continue
		}
		if a == script {
			at = i
			break
		}
	}
	if at < 0 || at+1 >= len(args) || !strings.Contains(script, "$") {
		return script
	}
	pos := args[at+1:] // $0, $1, …
	total := len(script)
	for _, p := range pos {
		total += len(p) + 3
	}
	if total > maxExpandedWord {
		return script
	}
	q := func(v string) string {
		out, err := syntax.Quote(v, syntax.LangBash)
		if err != nil {
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
		return out
	}
	return positionalRE.ReplaceAllStringFunc(script, func(m string) string {
		sm := positionalRE.FindStringSubmatch(m)
		c := sm[1] + sm[2]
		switch c {
		case "@", "*":
			var parts []string
			for _, p := range pos[1:] {
				parts = append(parts, q(p))
			}
			if c == "*" && sm[1] != "" {
				return q(strings.Join(pos[1:], " "))
			}
			return strings.Join(parts, " ")
		default:
			n := int(c[0] - '0')
			if n < len(pos) {
				return q(pos[n])
			}
			return `""`
		}
	})
}

// parallel walks GNU parallel's command once per literal input given after ":::" (bounded), "{}"
// replaced by the input; without ":::" its inputs come from standard input (Via "parallel").
func (w *walker) parallel(f frame, child frame, args words, pipe bool, idx int) {
	sp := w.s.n.opt.Commands.lookup("parallel")
	i := 0
	for i < len(args.argv) {
		a := args.argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		if sp != nil && sp.opts[a] != "" {
			i++
		}
		i++
	}
	cmd := words{}
	var inputs []string
	sep := false
	for ; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == ":::" || a == "::::" {
			sep = true
			continue
		}
		if sep {
			inputs = append(inputs, a)
			continue
		}
		cmd.argv = append(cmd.argv, a)
		cmd.dyn = append(cmd.dyn, args.dyn[i])
	}
	if len(cmd.argv) == 0 {
		return
	}
	if len(cmd.argv) == 1 && strings.ContainsAny(cmd.argv[0], " \t;|&") {
		// One word: parallel runs it as a shell command line.
		if !sep || len(inputs) == 0 || len(inputs) > maxLoopItems {
			w.script(cmd.argv[0], child.depth, "parallel", f.sudo)
			return
		}
		for _, in := range inputs {
			q, err := syntax.Quote(in, syntax.LangBash)
			if err != nil {
				continue
			}
			line := cmd.argv[0]
			if strings.Contains(line, "{}") {
				line = strings.ReplaceAll(line, "{}", q)
			} else {
				line += " " + q
			}
			w.script(line, child.depth, "parallel :::", f.sudo)
		}
		return
	}
	if !sep || len(inputs) == 0 || len(inputs) > maxLoopItems {
		w.emit(child, cmd, strings.Join(cmd.argv, " "), nil, nil, pipe, idx, false, "")
		return
	}
	child.via = "parallel :::"
	for _, in := range inputs {
		one := words{}
		replaced := false
		for k, a := range cmd.argv {
			if strings.Contains(a, "{}") {
				a = strings.ReplaceAll(a, "{}", in)
				replaced = true
			}
			one.argv = append(one.argv, a)
			one.dyn = append(one.dyn, cmd.dyn[k])
		}
		if !replaced {
			one.argv = append(one.argv, in)
			one.dyn = append(one.dyn, false)
		}
		if !w.emit(child, one, strings.Join(one.argv, " "), nil, nil, pipe, idx, false, "") {
			return
		}
	}
}

func paramName(x *syntax.ParamExp) string {
	if x.Param == nil || x.Excl || x.Length || x.Width || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Names != 0 || x.Exp != nil {
		return ""
	}
	return x.Param.Value
}

// callsItself reports whether a function's body runs the function.
func callsItself(fd *syntax.FuncDecl) bool {
	name := fd.Name.Value
	found := false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			if lit := ce.Args[0].Lit(); lit == name {
				found = true
			}
		}
		return !found
	})
	return found
}
