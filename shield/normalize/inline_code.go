package normalize

import (
	"regexp"
	"strings"
)

// Inline interpreter code (python -c, node -e, perl -e, ruby -e, lua -e, julia -e, Rscript -e,
// php -r, deno eval, code on stdin or in a here-document) is judged by a positive model: the
// code is "confined" only when every module it imports, every global name it uses, every member
// chain it reads or calls and every method it calls on a value is in the bundle's allow list
// (inline.yaml, InlineAllowList), and it has no dynamic access: no computed member of a module
// or global, no call of a computed member or of an expression's result, no command literal, no
// string evaluation. Anything else is "capable": its exec effect leaves the envelope, with the
// reason in Effect.Inline. What the code reads through an allow-listed read call (open("x"),
// fs.readFileSync("x"), File.read("x")) becomes a read effect of that path, so the envelope
// judges the path. The work is bounded (maxInlineCode, maxInlineTokens); code over a bound or
// that the tokenizer cannot read is capable.

// Values of Effect.Inline.
const (
	InlineConfined = "confined"
	inlineCapable  = "capable: "
)

// InlineVerdict is what the analyser found in one piece of inline code.
type InlineVerdict struct {
	Language string   // the language of the allow list used, "" when none
	Confined bool     // every name, import and member it uses is allow-listed
	Reason   string   // why it is capable (the first thing found)
	Reads    []string // literal paths read through allow-listed read calls
}

// Field is the value of Effect.Inline for v.
func (v InlineVerdict) Field() string {
	if v.Confined {
		return InlineConfined
	}
	return inlineCapable + v.Reason
}

// Handles reports whether the allow list knows the language prog runs, or says that prog's code
// is always capable.
func (al *InlineAllowList) Handles(prog string) bool {
	return al != nil && (al.language(prog) != nil || al.capable[baseProg(prog)])
}

// Analyse judges code run by prog. Without an allow list for prog's language the code is capable.
func (al *InlineAllowList) Analyse(prog, code string) InlineVerdict {
	l := al.language(prog)
	if l == nil {
		return InlineVerdict{Reason: "no allow list for " + baseProg(prog) + " code"}
	}
	toks, err := lexInline(l.name, code)
	if err != nil {
		return InlineVerdict{Language: l.name, Reason: "code the analyser cannot read (" + err.Error() + ")"}
	}
	a := &analysis{l: l, toks: toks, bind: map[string]binding{}, bare: map[string]string{}, bound: map[int]bool{}}
	a.collectLocals()
	a.walk()
	if a.reason != "" {
		return InlineVerdict{Language: l.name, Reason: a.reason}
	}
	return InlineVerdict{Language: l.name, Confined: true, Reads: a.reads}
}

func baseProg(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 {
		prog = prog[i+1:]
	}
	return prog
}

// binding: what an imported name stands for: a namespace (ns) and a member path under it
// (path), callOnly when the member came from a "*" (it may only be called).
type binding struct {
	ns       string
	path     []string
	callOnly bool
}

type analysis struct {
	l      *inlineLang
	toks   []token
	locals map[string]bool
	bind   map[string]binding // imported names
	bare   map[string]string  // bare function names imported from a module (perl use, julia using, R library): name → ns
	bound  map[int]bool       // token indexes that are binding occurrences (x = …, keyword arguments, object keys)
	reads  []string
	reason string
}

func (a *analysis) fail(format string, args ...string) {
	if a.reason != "" {
		return
	}
	r := format
	for _, s := range args {
		r = strings.Replace(r, "%s", s, 1)
	}
	a.reason = r
}

func (a *analysis) tok(i int) token {
	if i < 0 || i >= len(a.toks) {
		return token{kind: tOp, text: ""}
	}
	return a.toks[i]
}

func (a *analysis) isOp(i int, ops ...string) bool {
	t := a.tok(i)
	if t.kind != tOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

var inlineKeywords = map[string]map[string]bool{
	"python": set("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
		"elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not",
		"or", "pass", "raise", "return", "try", "while", "with", "yield"),
	"javascript": set("break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
		"export", "extends", "finally", "for", "function", "if", "in", "instanceof", "let", "new", "of", "return", "static",
		"switch", "throw", "try", "typeof", "var", "void", "while", "yield", "async", "await", "null", "true", "false", "import", "with"),
	"perl": set("my", "our", "local", "sub", "if", "unless", "else", "elsif", "while", "until", "for", "foreach", "do", "eval",
		"last", "next", "redo", "return", "and", "or", "not", "xor", "eq", "ne", "lt", "gt", "le", "ge", "cmp", "x", "use", "no",
		"require", "package", "BEGIN", "END", "__FILE__", "__LINE__", "__PACKAGE__"),
	"ruby": set("alias", "and", "begin", "break", "case", "class", "def", "defined?", "do", "else", "elsif", "end", "ensure",
		"false", "for", "if", "in", "module", "next", "nil", "not", "or", "redo", "rescue", "retry", "return", "self", "super",
		"then", "true", "undef", "unless", "until", "when", "while", "yield", "__FILE__", "__LINE__", "__ENCODING__", "BEGIN", "END"),
	"lua": set("and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
		"not", "or", "repeat", "return", "then", "true", "until", "while"),
	"julia": set("begin", "break", "catch", "const", "continue", "do", "else", "elseif", "end", "export", "false", "finally",
		"for", "function", "global", "if", "import", "let", "local", "module", "return", "struct", "true", "try", "using",
		"while", "where", "in", "isa", "mutable", "abstract", "primitive", "type", "baremodule", "quote", "macro"),
	"r": set("if", "else", "repeat", "while", "function", "for", "next", "break", "TRUE", "FALSE", "NULL", "Inf", "NaN", "NA",
		"NA_integer_", "NA_real_", "NA_character_", "in", "return"),
	"php": set("echo", "print", "if", "else", "elseif", "foreach", "as", "for", "while", "do", "switch", "case", "default",
		"break", "continue", "return", "function", "fn", "use", "new", "array", "list", "isset", "unset", "empty", "true",
		"false", "null", "and", "or", "xor", "instanceof", "static", "const", "match", "global", "include", "include_once",
		"require", "require_once", "eval", "exit", "die"),
}

// Keywords that are capabilities in themselves.
var inlineCapableKeywords = map[string]map[string]string{
	"javascript": {"with": "a with statement (dynamic scope)"},
	"ruby":       {"alias": "alias (rebinds a method)", "undef": "undef (removes a method)"},
	"julia":      {"macro": "a macro definition", "quote": "a quoted expression"},
	"php": {"include": "include (runs a file)", "include_once": "include (runs a file)", "require": "require (runs a file)",
		"require_once": "require (runs a file)", "eval": "eval", "global": "global"},
}

var assignOps = set("=", ":=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "|=", "&=", "^=", "<<=", ">>=", "||=", "&&=", "??=", "<-", "<<-", ".=")

// memberOp reports whether the token at i is a member access operator of the language.
func (a *analysis) memberOp(i int) bool {
	t := a.tok(i)
	if t.kind != tOp {
		return false
	}
	switch t.text {
	case ".", "?.":
		return a.l.name != "perl" && a.l.name != "php" && a.l.name != "r"
	case "->":
		return a.l.name == "perl" || a.l.name == "php"
	case "::":
		return a.l.name == "ruby" || a.l.name == "perl" || a.l.name == "php" || a.l.name == "r"
	case "$", "@":
		return a.l.name == "r"
	case ":":
		return a.l.name == "lua" && a.tok(i+1).kind == tIdent && (a.isOp(i+2, "(", "{") || a.tok(i+2).kind == tString)
	}
	return false
}

// collectLocals finds the names the code binds (assignments, loop variables, parameters,
// destructuring) and marks binding occurrences. A bound name is a local only when the runtime
// does not define it (inline.yaml runtime), so a builtin can never hide behind a local.
func (a *analysis) collectLocals() {
	bound := map[string]bool{}
	kw := inlineKeywords[a.l.name]
	mark := func(i int) {
		if t := a.tok(i); t.kind == tIdent && !kw[t.text] {
			bound[t.text] = true
			a.bound[i] = true
		}
	}
	for i, t := range a.toks {
		if t.kind != tIdent || a.memberOp(i-1) {
			continue
		}
		next := a.tok(i + 1)
		switch {
		case next.kind == tOp && assignOps[next.text] && !(a.l.name == "ruby" && next.text == "<-"):
			mark(i)
		case next.kind == tOp && next.text == "=>" && a.l.name == "javascript":
			mark(i)
		case a.isOp(i-1, "->") && a.l.name == "r":
			mark(i)
		case next.kind == tOp && next.text == ":" && a.isOp(i-1, "{", ",") && (a.l.name == "javascript" || a.l.name == "ruby"):
			a.bound[i] = true // an object key or a keyword label, not a name
		case next.kind == tOp && next.text == "=>" && a.l.name != "javascript":
			a.bound[i] = true // a hash key
		case a.l.name == "perl" && a.isOp(i-1, "{") && a.isOp(i+1, "}") && i >= 2 && (a.tok(i-2).kind == tVar || a.isOp(i-2, "->", "}", "]")):
			a.bound[i] = true // $h{key}
		case a.l.name == "perl" && len(t.text) == 1 && a.isOp(i-1, "-"):
			a.bound[i] = true // a file test: -e $f
		}
		switch t.text {
		case "for", "lambda", "let", "const", "var", "local", "as", "global", "nonlocal":
			if !kw[t.text] {
				continue
			}
			stop := map[string]bool{"for": true, "lambda": true}[t.text]
			depth := 0
			for j := i + 1; j < len(a.toks) && j < i+64; j++ {
				u := a.toks[j]
				if u.kind == tOp {
					switch u.text {
					case "(", "[", "{":
						depth++
						continue
					case ")", "]", "}":
						depth--
						if depth < 0 {
							j = len(a.toks)
						}
						continue
					case ",", "*", "**", "...":
						continue
					}
					if u.text == ":" && t.text == "lambda" || u.text == "=" || u.text == ";" {
						break
					}
					if depth == 0 {
						break
					}
					continue
				}
				if u.kind == tIdent && (u.text == "in" || u.text == "of") && stop {
					break
				}
				if u.kind == tIdent && !kw[u.text] && !a.isOp(j+1, ".", "(") {
					mark(j)
					if t.text == "as" || t.text == "global" || t.text == "nonlocal" {
						break
					}
					continue
				}
				if u.kind != tIdent {
					break
				}
			}
		case "def", "function", "sub", "fn":
			if !kw[t.text] && t.text != "sub" {
				continue
			}
			j := i + 1
			if a.tok(j).kind == tIdent {
				j++
			}
			if a.isOp(j, "(") {
				a.params(j, mark)
			}
		}
		if a.isOp(i+1, "=>") && a.l.name == "javascript" {
			continue
		}
	}
	// Arrow parameters: (a, b) => …; block parameters: { |a, b| … }, do |a| … end.
	for i, t := range a.toks {
		if t.kind == tOp && t.text == "=>" && a.l.name == "javascript" && a.isOp(i-1, ")") {
			depth := 0
			for j := i - 1; j >= 0; j-- {
				if a.isOp(j, ")") {
					depth++
				} else if a.isOp(j, "(") {
					depth--
					if depth == 0 {
						a.params(j, mark)
						break
					}
				}
			}
		}
		if t.kind == tOp && t.text == "|" && (a.l.name == "ruby" || a.l.name == "julia") && (a.isOp(i-1, "{") || a.tok(i-1).kind == tIdent && a.tok(i-1).text == "do") {
			for j := i + 1; j < len(a.toks) && !a.isOp(j, "|"); j++ {
				if a.tok(j).kind == tIdent && a.isOp(j-1, "|", ",", "(", "*", "&") {
					mark(j)
				}
			}
		}
		if t.kind == tOp && t.text == "->" && a.l.name == "julia" && a.tok(i-1).kind == tIdent {
			mark(i - 1)
		}
	}
	a.locals = map[string]bool{}
	if a.l.runtime == nil {
		return
	}
	for n := range bound {
		if !isASCII(n) {
			continue // Python folds names (NFKC): ｅｘｅｃ is exec; a non-ASCII name is never a local
		}
		if !a.l.runtime[n] && !a.l.functions[n] && a.l.namespaces[n] == nil && !strings.HasPrefix(n, "__") {
			a.locals[n] = true
		}
	}
}

// params marks the parameter names of the list opening at i.
func (a *analysis) params(i int, mark func(int)) {
	depth := 0
	for j := i; j < len(a.toks); j++ {
		if a.isOp(j, "(", "[", "{") {
			depth++
		} else if a.isOp(j, ")", "]", "}") {
			depth--
			if depth == 0 {
				return
			}
		} else if a.tok(j).kind == tIdent && a.isOp(j-1, "(", ",", "*", "**", "...", "&", "{", "[") {
			mark(j)
		}
	}
}

// walk checks every token.
func (a *analysis) walk() {
	kw := inlineKeywords[a.l.name]
	for i := 0; i < len(a.toks) && a.reason == ""; i++ {
		t := a.toks[i]
		switch t.kind {
		case tCmd:
			a.fail("runs a command (%s)", t.text)
		case tVar:
			a.variable(i)
			i = a.valueChain(i + 1)
		case tString, tNumber, tRegex:
			if t.kind == tString && a.l.name == "ruby" && a.isOp(i-1, "&") {
				// &:name calls name on each value.
				if !a.l.methods[t.text] {
					a.fail("calls %s on values (&:%s), which is not allow-listed", t.text, t.text)
				}
			}
			i = a.valueChain(i + 1)
		case tOp:
			switch t.text {
			case ")", "]", "}":
				if a.isOp(i+1, "(") && !(t.text == "}" && a.l.name != "javascript") {
					a.fail("calls the result of an expression")
					continue
				}
				i = a.valueChain(i + 1)
			case "&deref", "*deref":
				a.fail("calls or reaches code through a computed symbol")
			case "$deref", "@deref", "%deref":
				if a.isOp(i+1, "{") && (a.tok(i+2).kind == tString || a.tok(i+2).kind == tIdent) {
					a.fail("uses a symbolic reference")
				}
			case "::":
				if a.l.name == "r" && a.isOp(i+1, ":") {
					a.fail("reaches a package's internals (:::)")
				}
			}
		case tIdent:
			if a.memberOp(i-1) || a.bound[i] {
				continue
			}
			if why, ok := inlineCapableKeywords[a.l.name][t.text]; ok {
				a.fail("uses %s", why)
				continue
			}
			if kw[t.text] {
				i = a.keyword(i)
				continue
			}
			i = a.name(i)
		}
	}
}

// variable checks a sigil variable: the environment and the globals table are capabilities.
func (a *analysis) variable(i int) {
	v := a.tok(i).text
	switch a.l.name {
	case "perl":
		name := strings.TrimLeft(v, "$@%&")
		if strings.HasPrefix(v, "&") {
			a.checkBare(i, name, true)
			return
		}
		if name == "ENV" || name == "INC" || strings.HasPrefix(name, "main::") || strings.HasPrefix(name, "::") || strings.Contains(name, "::") {
			a.fail("reads %s", v)
		}
		if strings.HasPrefix(v, "$") && name == "ENV" || v == "$ENV" {
			a.fail("reads the environment")
		}
	case "php":
		switch v {
		case "$_SERVER", "$_ENV", "$GLOBALS", "$_REQUEST", "$_GET", "$_POST", "$_COOKIE", "$_FILES", "$_SESSION", "$http_response_header":
			a.fail("reads %s", v)
		}
		if a.isOp(i+1, "(") {
			a.fail("calls a function by a variable's value (%s())", v)
		}
	case "ruby":
		switch v {
		case "$_", "$~", "$stdin", "$stdout", "$stderr", "$.", "$/", "$,", "$;", "$0", "$F", "$<", "$>", "$!", "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$&":
		default:
			if strings.HasPrefix(v, "@") {
				return
			}
			a.fail("uses the global %s", v)
		}
	}
}

// valueChain checks member accesses on a value starting at i; it returns the index of the last
// token it consumed.
func (a *analysis) valueChain(i int) int {
	for a.reason == "" && a.memberOp(i) {
		op := a.tok(i).text
		n := a.tok(i + 1)
		if n.kind != tIdent {
			if op == "->" && a.l.name == "perl" && (a.isOp(i+1, "[", "{")) {
				return i
			}
			if op == "->" && a.l.name == "perl" && a.isOp(i+1, "(") {
				a.fail("calls a code reference")
				return i
			}
			if op == "$" && a.l.name == "r" && n.kind == tString {
				return i + 1
			}
			if n.kind == tVar || a.isOp(i+1, "$deref", "[", "(") {
				a.fail("reaches a member whose name is computed")
			}
			return i
		}
		name := n.text
		if a.reflective(name) {
			a.fail("reaches %s", name)
			return i + 1
		}
		called := a.isOp(i+2, "(") || a.l.name == "ruby" || op == "->" && a.l.name == "perl" || op == ":" && a.l.name == "lua"
		if op == "::" && a.l.name == "php" {
			a.fail("reaches a static member of a value")
			return i + 1
		}
		if a.l.name == "r" && called {
			a.fail("calls a function stored in a value")
			return i + 1
		}
		if called && !a.l.methods[name] {
			a.fail("calls %s on a value, which is not allow-listed", name)
			return i + 1
		}
		i += 2
	}
	return i - 1
}

func (a *analysis) reflective(name string) bool {
	if a.l.reflective[name] {
		return true
	}
	switch a.l.name {
	case "python", "javascript", "ruby", "lua":
		return strings.HasPrefix(name, "_")
	}
	return false
}

// keyword handles the keywords that import or evaluate; it returns the last index consumed.
func (a *analysis) keyword(i int) int {
	t := a.tok(i).text
	switch a.l.name {
	case "python":
		switch t {
		case "import":
			return a.pyImport(i)
		case "from":
			return a.pyFrom(i)
		}
	case "javascript":
		if t == "import" {
			return a.jsImport(i)
		}
	case "perl":
		switch t {
		case "use", "no":
			return a.perlUse(i, t == "use")
		case "require":
			if a.tok(i+1).kind == tIdent || a.tok(i+1).kind == tString && false {
				return a.perlUse(i, false)
			}
			a.fail("requires a file or an expression")
		case "do", "eval":
			if !a.isOp(i+1, "{") {
				a.fail("%s of a string or a file", t)
			}
		case "sub":
			if a.tok(i+1).kind == tIdent {
				return i + 1 // a named sub: its calls are not allow-listed, its body is walked
			}
		}
	case "julia":
		if t == "using" || t == "import" {
			return a.juliaUsing(i)
		}
	}
	return i
}

// name checks a bare name at i and the chain it starts; it returns the last index consumed.
func (a *analysis) name(i int) int {
	t := a.tok(i)
	called := a.isOp(i+1, "(")
	// Imports that look like calls.
	switch {
	case t.text == "require" && a.l.name == "javascript":
		return a.jsRequire(i)
	case t.text == "require" && (a.l.name == "ruby" || a.l.name == "lua"):
		j := i + 1
		if a.isOp(j, "(") {
			j++
		}
		s := a.tok(j)
		if s.kind != tString || s.interp {
			a.fail("requires a library named at run time")
			return i
		}
		if !a.l.modules[s.text] {
			a.fail("requires %s, which is not allow-listed", s.text)
		}
		return j
	case a.l.name == "r" && (t.text == "library" || t.text == "require" || t.text == "requireNamespace" || t.text == "loadNamespace"):
		j := i + 2
		s := a.tok(j)
		if !called || s.kind != tIdent && (s.kind != tString || s.interp) {
			a.fail("loads a package named at run time")
			return i
		}
		if !a.l.modules[s.text] {
			a.fail("loads package %s, which is not allow-listed", s.text)
			return j
		}
		a.importAll(s.text)
		return j
	}
	if a.locals[t.text] && !called {
		return a.valueChain(i + 1)
	}
	// A qualified name: perl A::B::c, ruby A::B, R pkg::fn.
	segs := []string{t.text}
	j := i
	for (a.l.name == "perl" || a.l.name == "ruby" || a.l.name == "r") && a.isOp(j+1, "::") && a.tok(j+2).kind == tIdent {
		segs = append(segs, a.tok(j+2).text)
		j += 2
	}
	if len(segs) > 1 {
		return a.qualified(i, segs, j)
	}
	if b, ok := a.bind[t.text]; ok {
		return a.chain(i, b.ns, b.path, b.callOnly)
	}
	if a.l.namespaces[t.text] != nil && !a.l.modules[t.text] && (a.memberOp(i+1) || a.isOp(i+1, "[") || !a.l.functions[t.text]) {
		return a.chain(i, t.text, nil, false)
	}
	if a.l.functions[t.text] || a.l.reads[t.text] {
		a.checkRead(t.text, i)
		return a.valueChain(i + 1)
	}
	if ns, ok := a.bare[t.text]; ok {
		a.checkRead(ns+a.sep()+t.text, i)
		return a.valueChain(i + 1)
	}
	a.checkBare(i, t.text, called)
	return i
}

func (a *analysis) sep() string {
	if a.l.name == "perl" || a.l.name == "r" {
		return "::"
	}
	return "."
}

// checkBare fails for a bare name that is not allow-listed.
func (a *analysis) checkBare(i int, name string, called bool) {
	if a.l.functions[name] {
		return
	}
	if _, ok := a.bare[name]; ok {
		return
	}
	if called {
		a.fail("calls %s, which is not allow-listed", name)
		return
	}
	if a.locals[name] {
		return
	}
	a.fail("uses %s, which is not allow-listed", name)
}

// qualified checks perl A::B::c / ruby A::B / R pkg::fn (segs, ending at token j).
func (a *analysis) qualified(i int, segs []string, j int) int {
	for k := len(segs); k >= 1; k-- {
		ns := strings.Join(segs[:k], "::")
		if a.l.namespaces[ns] == nil {
			continue
		}
		if a.l.name == "ruby" {
			// Ruby: A::B then .member
			if k < len(segs) {
				break
			}
			return a.chain(j, ns, nil, false)
		}
		rest := segs[k:]
		if len(rest) == 0 {
			if a.isOp(j+1, "->") && a.tok(j+2).kind == tIdent {
				// Class->method
				m := a.tok(j + 2).text
				if !a.l.namespaces[ns].explicit[m] {
					a.fail("calls %s->%s, which is not allow-listed", ns, m)
					return j + 2
				}
				return a.valueChain(j + 3)
			}
			a.fail("uses the package %s as a value", ns)
			return j
		}
		full := strings.Join(rest, "::")
		m := a.l.namespaces[ns]
		if !m.explicit[full] && !(m.anyCall && len(rest) == 1 && a.isOp(j+1, "(") && !strings.HasPrefix(full, "_")) {
			a.fail("calls %s, which is not allow-listed", ns+"::"+full)
			return j
		}
		a.checkRead(ns+"::"+full, j)
		return a.valueChain(j + 1)
	}
	a.fail("uses %s, which is not allow-listed", strings.Join(segs, "::"))
	return j
}

// chain checks a namespace member chain starting at the name token i (ns with member path
// prefix); it returns the last index consumed.
func (a *analysis) chain(i int, ns string, prefix []string, callOnly bool) int {
	// Collect the member names: .x, ['x'].
	type seg struct {
		name string
		end  int // index of the segment's last token
	}
	var segs []seg
	j := i
	for {
		if a.memberOp(j+1) && a.tok(j+2).kind == tIdent {
			segs = append(segs, seg{a.tok(j + 2).text, j + 2})
			j += 2
			continue
		}
		if a.isOp(j+1, "[") {
			s := a.tok(j + 2)
			if s.kind == tString && !s.interp && a.isOp(j+3, "]") {
				segs = append(segs, seg{s.text, j + 3})
				j += 3
				continue
			}
			if len(prefix) == 0 && len(segs) == 0 || a.l.namespaces[ns] != nil && len(segs) == 0 {
				a.fail("reaches a member of %s whose name is computed", ns)
				return j
			}
		}
		break
	}
	if callOnly {
		if len(segs) > 0 || !a.isOp(j+1, "(") {
			a.fail("uses %s other than by calling it", ns+"."+strings.Join(prefix, "."))
			return j
		}
		a.checkRead(ns+"."+strings.Join(prefix, "."), j)
		return a.valueChain(j + 1)
	}
	names := append(append([]string{}, prefix...), func() []string {
		out := make([]string, len(segs))
		for k, s := range segs {
			out[k] = s.name
		}
		return out
	}()...)
	// Submodules: os.path, urllib.parse.
	k := 0
	for k < len(names) && a.l.modules[ns+"."+names[k]] {
		ns += "." + names[k]
		k++
	}
	m := a.l.namespaces[ns]
	if m == nil {
		a.fail("uses %s, which is not allow-listed", ns)
		return j
	}
	rest := names[k:]
	if len(rest) == 0 {
		if k > len(prefix) || len(prefix) == 0 {
			a.fail("uses the namespace %s as a value", ns)
		}
		return j
	}
	matched := 0
	for n := len(rest); n >= 1; n-- {
		if m.explicit[strings.Join(rest[:n], ".")] {
			matched = n
			break
		}
	}
	endTok := func(n int) int {
		// The token index of the n-th member of rest (1-based) among segs.
		idx := k + n - 1 - len(prefix)
		if idx < 0 {
			return i
		}
		return segs[idx].end
	}
	if matched == 0 {
		first := endTok(1)
		if m.anyCall && !strings.HasPrefix(rest[0], "_") && a.isOp(first+1, "(") {
			matched = 1
		} else {
			a.fail("uses %s, which is not allow-listed", ns+a.sep()+strings.Join(rest, "."))
			return j
		}
	}
	last := endTok(matched)
	a.checkRead(ns+"."+strings.Join(rest[:matched], "."), last)
	// The remaining members are on the value the chain gave.
	for _, s := range rest[matched:] {
		if a.reflective(s) {
			a.fail("reaches %s", s)
			return j
		}
	}
	if matched < len(rest) {
		// Re-check the remaining members with value rules (calls must be allow-listed methods).
		return a.valueChain(last + 1)
	}
	return a.valueChain(last + 1)
}

// checkRead: when the chain ending at token j names a read call, its first argument must be a
// string literal (recorded as a read) and no mode argument may write.
func (a *analysis) checkRead(full string, j int) {
	if !a.l.reads[full] && !(a.l.name == "perl" && full == "open") {
		return
	}
	if !a.isOp(j+1, "(") {
		if a.l.name == "perl" || a.l.name == "ruby" {
			if a.l.name == "perl" {
				a.perlOpen(j + 1)
				return
			}
		}
		if a.l.name == "ruby" && a.tok(j+1).kind == tString {
			a.litRead(j+1, full)
			return
		}
		a.fail("uses %s other than by calling it on a path", full)
		return
	}
	if a.l.name == "perl" && full == "open" {
		a.perlOpen(j + 2)
		return
	}
	a.litRead(j+2, full)
}

// maxInlineReads bounds the reads one piece of code may make and stay confined: each is recorded
// as a read effect, and code that reads more is capable rather than partly recorded.
const maxInlineReads = 16

func (a *analysis) addRead(p string) {
	if len(a.reads) >= maxInlineReads {
		a.fail("reads more files than the analyser records")
		return
	}
	a.reads = append(a.reads, p)
}

var writeModeRE = regexp.MustCompile(`^[rwxabtU+]{1,4}$`)

func (a *analysis) litRead(k int, full string) {
	p := a.tok(k)
	if p.kind != tString || p.interp || !a.isOp(k+1, ",", ")") {
		a.fail("%s reads a path built at run time", full)
		return
	}
	if strings.Contains(p.text, "://") || strings.Contains(p.text, ":/") && !strings.HasPrefix(p.text, "/") || strings.HasPrefix(p.text, "data:") {
		a.fail("%s reads a URL or a stream wrapper (%s)", full, p.text)
		return
	}
	a.addRead(p.text)
	if a.isOp(k+1, ",") {
		m := a.tok(k + 2)
		switch {
		case m.kind == tString && writeModeRE.MatchString(m.text) && strings.ContainsAny(m.text, "wax+"):
			a.fail("%s opens %s for writing", full, p.text)
		case m.kind != tString && a.l.name == "python" && !(m.kind == tIdent && a.bound[k+2]) && !a.isOp(k+2, ")"):
			a.fail("%s opens %s with a mode chosen at run time", full, p.text)
		case m.kind == tIdent && a.bound[k+2] && m.text == "mode" && a.tok(k+4).kind == tString && strings.ContainsAny(a.tok(k+4).text, "wax+"):
			a.fail("%s opens %s for writing", full, p.text)
		}
	}
}

// perlOpen checks the arguments of open starting at k: (FH, '<', 'path') only.
func (a *analysis) perlOpen(k int) {
	// FH: my $fh | $fh | BAREWORD
	if a.tok(k).kind == tIdent && a.tok(k).text == "my" {
		k++
	}
	if a.tok(k).kind != tVar && a.tok(k).kind != tIdent {
		a.fail("open with a handle the analyser cannot read")
		return
	}
	if !a.isOp(k+1, ",") {
		a.fail("open without a mode (two-argument open can run commands)")
		return
	}
	m := a.tok(k + 2)
	if m.kind != tString || !strings.HasPrefix(m.text, "<") || strings.ContainsAny(m.text, "|>+") {
		a.fail("open with a mode other than read")
		return
	}
	if !a.isOp(k+3, ",") {
		a.fail("open without a path")
		return
	}
	a.litRead(k+4, "open")
}

// importAll makes every listed member of module ns a bare name.
func (a *analysis) importAll(ns string) {
	if m := a.l.namespaces[ns]; m != nil {
		for n := range m.explicit {
			if !strings.Contains(n, ".") {
				a.bare[n] = ns
			}
		}
	}
}

// pyImport: import a.b [as c], d
func (a *analysis) pyImport(i int) int {
	j := i + 1
	for {
		var parts []string
		for a.tok(j).kind == tIdent {
			parts = append(parts, a.tok(j).text)
			if !a.isOp(j+1, ".") {
				break
			}
			j += 2
		}
		if len(parts) == 0 {
			a.fail("an import the analyser cannot read")
			return j
		}
		mod := strings.Join(parts, ".")
		if !a.l.modules[mod] {
			a.fail("imports %s, which is not allow-listed", mod)
			return j
		}
		if a.tok(j+1).kind == tIdent && a.tok(j+1).text == "as" && a.tok(j+2).kind == tIdent {
			a.bind[a.tok(j+2).text] = binding{ns: mod}
			delete(a.locals, a.tok(j+2).text)
			j += 2
		} else {
			a.bind[parts[0]] = binding{ns: parts[0]}
			delete(a.locals, parts[0])
		}
		if !a.isOp(j+1, ",") {
			return j
		}
		j += 2
	}
}

// pyFrom: from a.b import c [as d], e | (c, e) | *
func (a *analysis) pyFrom(i int) int {
	j := i + 1
	var parts []string
	for a.tok(j).kind == tIdent {
		parts = append(parts, a.tok(j).text)
		if !a.isOp(j+1, ".") {
			break
		}
		j += 2
	}
	mod := strings.Join(parts, ".")
	if mod == "" || !(a.tok(j+1).kind == tIdent && a.tok(j+1).text == "import") {
		a.fail("a relative or unreadable import")
		return j
	}
	if !a.l.modules[mod] {
		a.fail("imports from %s, which is not allow-listed", mod)
		return j
	}
	j += 2
	paren := a.isOp(j, "(")
	if paren {
		j++
	}
	if a.isOp(j, "*") {
		a.fail("imports every name of %s", mod)
		return j
	}
	m := a.l.namespaces[mod]
	for a.tok(j).kind == tIdent {
		name := a.tok(j).text
		as := name
		if a.tok(j+1).kind == tIdent && a.tok(j+1).text == "as" && a.tok(j+2).kind == tIdent {
			as = a.tok(j + 2).text
			j += 2
		}
		switch {
		case a.l.modules[mod+"."+name]:
			a.bind[as] = binding{ns: mod + "." + name}
		case m.explicit[name]:
			a.bind[as] = binding{ns: mod, path: []string{name}}
		case m.anyCall && !strings.HasPrefix(name, "_"):
			a.bind[as] = binding{ns: mod, path: []string{name}, callOnly: true}
		default:
			a.fail("imports %s from %s, which is not allow-listed", name, mod)
			return j
		}
		delete(a.locals, as)
		if !a.isOp(j+1, ",") {
			break
		}
		j += 2
	}
	if paren && a.isOp(j+1, ")") {
		j++
	}
	return j
}

// jsModule checks a module specifier; it reports whether the module may be used and records a
// relative JSON file as a read.
func (a *analysis) jsModule(spec string) (string, bool) {
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
		if strings.HasSuffix(spec, ".json") {
			a.addRead(spec)
			return "", true
		}
		a.fail("loads code from %s", spec)
		return "", false
	}
	mod := strings.TrimPrefix(spec, "node:")
	if !a.l.modules[mod] {
		a.fail("imports %s, which is not allow-listed", spec)
		return "", false
	}
	return mod, true
}

// jsRequire: require('m') with what surrounds it (const x = …, const {a, b: c} = …, ….member).
func (a *analysis) jsRequire(i int) int {
	if a.isOp(i+1, ".") && a.tok(i+2).text == "resolve" && a.isOp(i+3, "(") {
		return i + 2 // require.resolve('m'): where a module is, not loading it
	}
	s := a.tok(i + 2)
	if !a.isOp(i+1, "(") || s.kind != tString || s.interp || !a.isOp(i+3, ")") {
		a.fail("requires a module named at run time")
		return i
	}
	mod, ok := a.jsModule(s.text)
	if !ok {
		return i + 3
	}
	end := i + 3
	if mod == "" {
		return a.valueChain(end + 1) // a JSON document
	}
	if a.isOp(i-1, "=") {
		switch {
		case a.tok(i-2).kind == tIdent:
			a.bind[a.tok(i-2).text] = binding{ns: mod}
			delete(a.locals, a.tok(i-2).text)
		case a.isOp(i-2, "}"):
			a.destructure(i-2, mod)
		}
	}
	if a.memberOp(end + 1) {
		// require('m').member …: check as a chain rooted at the module.
		return a.chain(end, mod, nil, false)
	}
	if !a.isOp(i-1, "=") {
		a.fail("uses the module %s as a value", mod)
	}
	return end
}

// destructure binds the names of {a, b: c} ending at token end to members of mod.
func (a *analysis) destructure(end int, mod string) {
	m := a.l.namespaces[mod]
	start := end
	for start >= 0 && !a.isOp(start, "{") {
		start--
	}
	for j := start + 1; j < end; j++ {
		if a.tok(j).kind != tIdent {
			continue
		}
		name, as := a.tok(j).text, a.tok(j).text
		if a.isOp(j+1, ":") && a.tok(j+2).kind == tIdent {
			as = a.tok(j + 2).text
			j += 2
		}
		switch {
		case m.explicit[name]:
			a.bind[as] = binding{ns: mod, path: []string{name}}
		case m.anyCall && !strings.HasPrefix(name, "_"):
			a.bind[as] = binding{ns: mod, path: []string{name}, callOnly: true}
		default:
			a.fail("imports %s from %s, which is not allow-listed", name, mod)
			return
		}
		delete(a.locals, as)
	}
}

// jsImport: import x from 'm'; import {a as b} from 'm'; import * as x from 'm'; import('m').
func (a *analysis) jsImport(i int) int {
	if a.isOp(i+1, ".") {
		return i + 2 // import.meta
	}
	if a.isOp(i+1, "(") {
		s := a.tok(i + 2)
		if s.kind != tString || s.interp || !a.isOp(i+3, ")") {
			a.fail("imports a module named at run time")
			return i
		}
		if mod, ok := a.jsModule(s.text); ok && mod != "" && a.memberOp(i+4) {
			return a.valueChain(i + 4)
		}
		return i + 3
	}
	j := i + 1
	for j < len(a.toks) && !(a.tok(j).kind == tString) && j < i+64 {
		j++
	}
	s := a.tok(j)
	if s.kind != tString || s.interp {
		a.fail("an import the analyser cannot read")
		return j
	}
	mod, ok := a.jsModule(s.text)
	if !ok || mod == "" {
		return j
	}
	m := a.l.namespaces[mod]
	for k := i + 1; k < j; k++ {
		t := a.tok(k)
		if t.kind != tIdent || t.text == "from" || t.text == "as" {
			continue
		}
		as := t.text
		if a.tok(k+1).kind == tIdent && a.tok(k+1).text == "as" && a.tok(k+2).kind == tIdent {
			as = a.tok(k + 2).text
		}
		inBraces := false
		for b := k; b > i; b-- {
			if a.isOp(b, "{") {
				inBraces = true
			}
		}
		switch {
		case !inBraces:
			a.bind[as] = binding{ns: mod}
		case m.explicit[t.text]:
			a.bind[as] = binding{ns: mod, path: []string{t.text}}
		case m.anyCall && !strings.HasPrefix(t.text, "_"):
			a.bind[as] = binding{ns: mod, path: []string{t.text}, callOnly: true}
		default:
			a.fail("imports %s from %s, which is not allow-listed", t.text, mod)
			return j
		}
		delete(a.locals, as)
		if as != t.text {
			k += 2
		}
	}
	return j
}

// perlUse: use Module [LIST]; no Module; require Module.
func (a *analysis) perlUse(i int, use bool) int {
	j := i + 1
	if a.tok(j).kind == tNumber || a.tok(j).kind == tIdent && len(a.tok(j).text) > 1 && a.tok(j).text[0] == 'v' && strings.Trim(a.tok(j).text[1:], "0123456789") == "" {
		return j // use 5.010, use v5.36
	}
	var parts []string
	for a.tok(j).kind == tIdent {
		parts = append(parts, a.tok(j).text)
		if !a.isOp(j+1, "::") {
			break
		}
		j += 2
	}
	mod := strings.Join(parts, "::")
	if mod == "" {
		a.fail("a use or require the analyser cannot read")
		return j
	}
	if !a.l.modules[mod] {
		a.fail("uses the module %s, which is not allow-listed", mod)
		return j
	}
	if !use || a.tok(i).text == "no" {
		return j
	}
	// The import list: qw(a b), 'a', ("a", "b"), or nothing (the module's default exports).
	var names []string
	k := j + 1
	explicitList := false
	for ; k < len(a.toks) && !a.isOp(k, ";"); k++ {
		t := a.tok(k)
		if t.kind == tString {
			explicitList = true
			names = append(names, strings.Fields(t.text)...)
		} else if a.isOp(k, "(") || a.isOp(k, ")") || a.isOp(k, ",") {
			explicitList = true
		} else {
			break
		}
	}
	if !explicitList {
		a.importAll(mod)
		return j
	}
	m := a.l.namespaces[mod]
	for _, n := range names {
		n = strings.TrimPrefix(n, "&")
		if strings.HasPrefix(n, ":") || strings.HasPrefix(n, "-") {
			continue // a tag or an option: the listed members still decide what is called
		}
		if !m.explicit[n] {
			a.fail("imports %s from %s, which is not allow-listed", n, mod)
			return k - 1
		}
		a.bare[n] = mod
	}
	return k - 1
}

// juliaUsing: using A, B; using A: x, y; import A; import A.B
func (a *analysis) juliaUsing(i int) int {
	import_ := a.tok(i).text == "import"
	j := i + 1
	for {
		var parts []string
		for a.tok(j).kind == tIdent {
			parts = append(parts, a.tok(j).text)
			if !a.isOp(j+1, ".") {
				break
			}
			j += 2
		}
		mod := strings.Join(parts, ".")
		if mod == "" {
			a.fail("a using the analyser cannot read")
			return j
		}
		if !a.l.modules[mod] {
			a.fail("uses the module %s, which is not allow-listed", mod)
			return j
		}
		a.bind[parts[len(parts)-1]] = binding{ns: mod}
		delete(a.locals, parts[len(parts)-1])
		if a.isOp(j+1, ":") {
			j += 2
			for a.tok(j).kind == tIdent {
				n := a.tok(j).text
				if !a.l.namespaces[mod].explicit[n] {
					a.fail("imports %s from %s, which is not allow-listed", n, mod)
					return j
				}
				a.bare[n] = mod
				if !a.isOp(j+1, ",") {
					break
				}
				j += 2
			}
			return j
		}
		if !import_ {
			a.importAll(mod)
		}
		if !a.isOp(j+1, ",") {
			return j
		}
		j += 2
	}
}
