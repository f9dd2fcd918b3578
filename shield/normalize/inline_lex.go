package normalize

import (
	"strings"
)

// A small tokenizer per language for inline interpreter code (inline_code.go): strings,
// comments, identifiers, sigil variables, numbers and punctuation, enough to see every name the
// code uses. It does not parse: what it cannot read with certainty (a here-document, an
// unterminated string, a construct it does not know) is an error, and the code is then capable.
// Code interpolated into strings (f"{…}", `${…}`, "#{…}", "$(…)", "@{[ … ]}", "{$…}") is lexed as
// code, in place. Command literals (backticks, %x, qx) become a tCmd token.

type tokKind uint8

const (
	tIdent  tokKind = iota // a name (julia macros keep their "@")
	tVar                   // a sigil variable: perl $x @x %x &x, php $x, ruby $x @x
	tString                // a string literal (text: its content, raw)
	tNumber
	tOp    // punctuation, multi-character operators included
	tRegex // a regex literal
	tCmd   // a command literal: backticks, %x(), qx//
)

type token struct {
	kind tokKind
	text string
	// interp: a string whose value depends on code run inside it (interpolation).
	interp bool
}

// lexError is why the tokenizer gave up.
type lexError string

func (e lexError) Error() string { return string(e) }

const (
	maxInlineCode   = 8 << 10 // bytes of code analysed; longer code is capable
	maxInlineTokens = 4096
	maxInlineNest   = 8 // interpolation depth
)

type lexer struct {
	lang string
	src  string
	pos  int
	toks []token
	nest int
}

func lexInline(lang, code string) ([]token, error) {
	if len(code) > maxInlineCode {
		return nil, lexError("code longer than the analyser reads")
	}
	lx := &lexer{lang: lang, src: code}
	if err := lx.run(0); err != nil {
		return nil, err
	}
	return lx.toks, nil
}

func (lx *lexer) emit(k tokKind, text string) error {
	if len(lx.toks) >= maxInlineTokens {
		return lexError("too many tokens")
	}
	lx.toks = append(lx.toks, token{kind: k, text: text})
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// termPos reports whether the next token starts an operand (so "/" starts a regex, "%" a hash
// or a %-literal, "<" a readline, "<<" a here-document): after an operator, an opening bracket,
// a comma or a keyword-like word, or at the start.
func (lx *lexer) termPos() bool {
	if len(lx.toks) == 0 {
		return true
	}
	t := lx.toks[len(lx.toks)-1]
	switch t.kind {
	case tIdent:
		switch t.text {
		case "if", "unless", "while", "until", "and", "or", "not", "return", "when", "in", "then", "elsif", "else",
			"do", "typeof", "case", "yield", "void", "delete", "instanceof", "new", "throw", "await", "of":
			return true
		case "split", "grep", "map", "x", "eq", "ne", "lt", "gt", "le", "ge", "cmp", "print", "push", "unshift", "join",
			"say", "printf", "sort", "scalar":
			// Perl's named operators take a term; a Perl name is never a variable.
			return lx.lang == "perl"
		}
		return false
	case tOp:
		switch t.text {
		case ")", "]", "}", "++", "--":
			return false
		}
		return true
	}
	return false
}

// ambiguousSlash: a "/" read as division where a regex literal could also start (after ")",
// "]", "}", "++", "--" or a name). Were it a regex, a quote before the next "/" on the line would
// be inside it, not a string: the two readings disagree on what is code, so the code is not
// read at all.
func (lx *lexer) ambiguousSlash() error {
	if len(lx.toks) == 0 {
		return nil
	}
	t := lx.toks[len(lx.toks)-1]
	if !(t.kind == tIdent || t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == "++" || t.text == "--")) {
		return nil
	}
	rest := lx.src[lx.pos+1:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		return nil
	}
	if strings.ContainsAny(rest[:end], "'\"`#") {
		return lexError("a / that could start a regex or divide")
	}
	return nil
}

// afterWord: the previous token is a name (my %h, keys %h, sort @x).
func (lx *lexer) afterWord() bool {
	return len(lx.toks) > 0 && lx.toks[len(lx.toks)-1].kind == tIdent
}

// run lexes from lx.pos; with stop > 0 it returns at the "}" that closes an interpolation opened
// by "{" (depth counted), leaving pos after it.
func (lx *lexer) run(stop int) error {
	depth := 0
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			lx.pos++
			continue
		case stop > 0 && c == '}' && depth == 0:
			lx.pos++
			return nil
		}
		if done, err := lx.comment(); err != nil {
			return err
		} else if done {
			continue
		}
		if ok, err := lx.special(); err != nil {
			return err
		} else if ok {
			continue
		}
		switch {
		case c >= '0' && c <= '9' || c == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] >= '0' && lx.src[lx.pos+1] <= '9':
			start := lx.pos
			for lx.pos < len(lx.src) && (isIdentChar(lx.src[lx.pos]) || lx.src[lx.pos] == '.' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] != '.') {
				lx.pos++
			}
			if err := lx.emit(tNumber, lx.src[start:lx.pos]); err != nil {
				return err
			}
			continue
		case isIdentStart(c) || lx.lang == "r" && c == '.':
			if err := lx.ident(); err != nil {
				return err
			}
			continue
		case c == '"' || c == '\'':
			if err := lx.quoted(c); err != nil {
				return err
			}
			continue
		case c == '`':
			if err := lx.backtick(); err != nil {
				return err
			}
			continue
		}
		if c == '\\' {
			// Outside a string a backslash is a line continuation (python), a reference (perl), a
			// namespace separator (php) or a lambda (R); anywhere else it may be an escape in a
			// name (JavaScript's \u0065val is eval), which the analyser cannot compare.
			next := byte('\n')
			if lx.pos+1 < len(lx.src) {
				next = lx.src[lx.pos+1]
			}
			if !(lx.lang == "perl" || lx.lang == "php" || lx.lang == "r" || next == '\n' || next == '\r') {
				return lexError("a backslash outside a string")
			}
		}
		op := lx.operator()
		switch op {
		case "{":
			depth++
		case "}":
			depth--
		}
		if err := lx.emit(tOp, op); err != nil {
			return err
		}
	}
	if stop > 0 {
		return lexError("unterminated interpolation")
	}
	return nil
}

var multiOps = []string{"<<=", ">>=", "**=", "//=", "...", "===", "!==", "<=>", "::", "->", "=>", "==", "!=", "<=",
	">=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "**", "//", "<<", ">>", "..", "?.", "=~", "!~",
	"<-", ":=", "|>", "++", "--"}

// opsByFirst: the multi-character operators by their first byte, longest first.
var opsByFirst = func() (t [256][]string) {
	for _, n := range []int{3, 2} {
		for _, op := range multiOps {
			if len(op) == n {
				t[op[0]] = append(t[op[0]], op)
			}
		}
	}
	return t
}()

func (lx *lexer) operator() string {
	rest := lx.src[lx.pos:]
	for _, op := range opsByFirst[rest[0]] {
		if strings.HasPrefix(rest, op) {
			if op == "//" && lx.lang != "python" && lx.lang != "perl" {
				continue
			}
			lx.pos += len(op)
			return op
		}
	}
	lx.pos++
	return rest[:1]
}

// comment skips a comment at pos.
func (lx *lexer) comment() (bool, error) {
	rest := lx.src[lx.pos:]
	line := func() (bool, error) {
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			lx.pos += i + 1
		} else {
			lx.pos = len(lx.src)
		}
		return true, nil
	}
	block := func(open, close string) (bool, error) {
		i := strings.Index(rest[len(open):], close)
		if i < 0 {
			return false, lexError("unterminated comment")
		}
		lx.pos += len(open) + i + len(close)
		return true, nil
	}
	switch lx.lang {
	case "python", "ruby", "r", "perl":
		if rest[0] == '#' {
			if lx.lang == "ruby" && strings.HasPrefix(rest, "#{") {
				return false, nil
			}
			return line()
		}
	case "javascript":
		if strings.HasPrefix(rest, "//") {
			return line()
		}
		if strings.HasPrefix(rest, "/*") {
			return block("/*", "*/")
		}
		if strings.HasPrefix(rest, "#!") && lx.pos == 0 {
			return line()
		}
	case "php":
		if strings.HasPrefix(rest, "//") || rest[0] == '#' && !strings.HasPrefix(rest, "#[") {
			return line() // "#[" opens an attribute, not a comment
		}
		if strings.HasPrefix(rest, "/*") {
			return block("/*", "*/")
		}
	case "lua":
		if strings.HasPrefix(rest, "--") {
			if n := longBracket(rest[2:]); n >= 0 {
				return block("--["+strings.Repeat("=", n)+"[", "]"+strings.Repeat("=", n)+"]")
			}
			return line()
		}
	case "julia":
		if strings.HasPrefix(rest, "#=") {
			return block("#=", "=#")
		}
		if rest[0] == '#' {
			return line()
		}
	}
	return false, nil
}

// longBracket: the level of a Lua long bracket "[==[" at the start of s, or -1.
func longBracket(s string) int {
	if len(s) < 2 || s[0] != '[' {
		return -1
	}
	n := 0
	for n+1 < len(s) && s[n+1] == '=' {
		n++
	}
	if n+1 < len(s) && s[n+1] == '[' {
		return n
	}
	return -1
}

// ident lexes a name, and the literals introduced by one (Python string prefixes, Perl and Ruby
// quote-like operators, Julia string macros).
func (lx *lexer) ident() error {
	start := lx.pos
	for lx.pos < len(lx.src) && (isIdentChar(lx.src[lx.pos]) || lx.lang == "r" && lx.src[lx.pos] == '.') {
		lx.pos++
	}
	// Ruby predicate and bang methods, Julia mutating functions: empty?, push!, sort! (not !=).
	if (lx.lang == "ruby" || lx.lang == "julia") && lx.pos < len(lx.src) && (lx.src[lx.pos] == '?' || lx.src[lx.pos] == '!') &&
		!(lx.pos+1 < len(lx.src) && (lx.src[lx.pos+1] == '=' || lx.src[lx.pos+1] == '~')) {
		if lx.lang == "julia" || lx.src[lx.pos] == '!' || !(lx.pos+1 < len(lx.src) && (lx.src[lx.pos+1] == ' ')) || len(lx.toks) > 0 && lx.toks[len(lx.toks)-1].text == "." {
			lx.pos++
		}
	}
	word := lx.src[start:lx.pos]
	next := byte(0)
	if lx.pos < len(lx.src) {
		next = lx.src[lx.pos]
	}
	switch lx.lang {
	case "python":
		if (next == '"' || next == '\'') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == "" {
			return lx.pyString(strings.ToLower(word))
		}
	case "perl":
		if lx.perlQuoteLike(word) {
			return lx.perlQuote(word)
		}
		if word == "__END__" || word == "__DATA__" {
			lx.pos = len(lx.src)
			return nil
		}
	case "julia":
		if next == '"' {
			switch word {
			case "r", "raw", "b", "v", "s":
				lx.pos++
				return lx.plainString('"', word != "raw" && word != "r")
			}
			return lexError("string macro " + word + `"…"`)
		}
	case "r":
		if (word == "r" || word == "R") && (next == '"' || next == '\'') {
			return lx.rRawString()
		}
	}
	return lx.emit(tIdent, word)
}

// special handles what starts with a sigil or a language-specific character.
func (lx *lexer) special() (bool, error) {
	c := lx.src[lx.pos]
	rest := lx.src[lx.pos:]
	switch lx.lang {
	case "perl":
		switch {
		case c == '$' || c == '@' || (c == '%' || c == '&' || c == '*') && (lx.termPos() || lx.afterWord() && len(rest) > 1 && (isIdentStart(rest[1]) || rest[1] == '{' || rest[1] == '$')):
			return lx.perlVar()
		case c == '/' && lx.termPos():
			return true, lx.regexLit('/', '/', "")
		case c == '/':
			return false, lx.ambiguousSlash()
		case c == '<' && lx.termPos():
			if strings.HasPrefix(rest, "<<") && len(rest) > 2 && (rest[2] == '"' || rest[2] == '\'' || rest[2] == '~' || isIdentStart(rest[2])) {
				return false, lexError("here-document")
			}
			if end := strings.IndexByte(rest, '>'); end > 0 {
				in := rest[1:end]
				if in == "" || in == "<" || strings.Trim(in, "$_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == "" {
					lx.pos += end + 1
					if in == "<" && strings.HasPrefix(lx.src[lx.pos:], ">") {
						lx.pos++
					}
					return true, lx.emit(tVar, "<"+in+">")
				}
			}
		}
	case "php":
		if c == '$' {
			if lx.pos+1 < len(lx.src) && isIdentStart(lx.src[lx.pos+1]) {
				start := lx.pos
				lx.pos++
				for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
					lx.pos++
				}
				return true, lx.emit(tVar, lx.src[start:lx.pos])
			}
			return false, lexError("variable variable or computed name ($$, ${…})")
		}
		if strings.HasPrefix(rest, "<<<") {
			return false, lexError("here-document")
		}
	case "ruby":
		switch {
		case c == '$' && lx.pos+1 < len(lx.src):
			start := lx.pos
			lx.pos++
			if isIdentStart(lx.src[lx.pos]) {
				for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
					lx.pos++
				}
			} else {
				lx.pos++
			}
			return true, lx.emit(tVar, lx.src[start:lx.pos])
		case c == '@':
			start := lx.pos
			for lx.pos < len(lx.src) && lx.src[lx.pos] == '@' {
				lx.pos++
			}
			for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
				lx.pos++
			}
			return true, lx.emit(tVar, lx.src[start:lx.pos])
		case c == '%' && lx.termPos() && len(rest) > 1:
			return lx.rubyPercent()
		case c == '/' && lx.termPos():
			return true, lx.regexLit('/', '/', "ruby")
		case c == '/':
			return false, lx.ambiguousSlash()
		case c == '<' && strings.HasPrefix(rest, "<<") && lx.termPos() && len(rest) > 2 && (rest[2] == '~' || rest[2] == '-' || rest[2] == '"' || rest[2] == '\'' || rest[2] >= 'A' && rest[2] <= 'Z'):
			return false, lexError("here-document")
		case c == ':' && len(rest) > 1 && (isIdentStart(rest[1]) || rest[1] == '"') && lx.termPos() && !strings.HasPrefix(rest, "::"):
			lx.pos++
			if rest[1] == '"' {
				return true, lx.quoted('"')
			}
			start := lx.pos
			for lx.pos < len(lx.src) && (isIdentChar(lx.src[lx.pos]) || lx.src[lx.pos] == '?' || lx.src[lx.pos] == '!') {
				lx.pos++
			}
			return true, lx.emit(tString, lx.src[start:lx.pos]) // a symbol
		case c == '?' && len(rest) > 2 && isIdentChar(rest[1]) && !isIdentChar(rest[2]) && lx.termPos():
			lx.pos += 2
			return true, lx.emit(tString, rest[1:2]) // ?a
		}
	case "javascript":
		if c == '/' && lx.termPos() {
			return true, lx.regexLit('/', '/', "")
		}
		if c == '/' && !strings.HasPrefix(rest, "//") && !strings.HasPrefix(rest, "/*") {
			if err := lx.ambiguousSlash(); err != nil {
				return false, err
			}
		}
		if c == '#' && len(rest) > 1 && isIdentStart(rest[1]) {
			return false, lexError("private name")
		}
	case "lua":
		if c == '[' {
			if n := longBracket(rest); n >= 0 {
				close := "]" + strings.Repeat("=", n) + "]"
				i := strings.Index(rest[n+2:], close)
				if i < 0 {
					return false, lexError("unterminated long string")
				}
				lx.pos += n + 2 + i + len(close)
				return true, lx.emit(tString, rest[n+2:n+2+i])
			}
		}
	case "julia":
		if c == '@' && len(rest) > 1 && isIdentStart(rest[1]) {
			start := lx.pos
			lx.pos++
			for lx.pos < len(lx.src) && (isIdentChar(lx.src[lx.pos]) || lx.src[lx.pos] == '!') {
				lx.pos++
			}
			return true, lx.emit(tIdent, lx.src[start:lx.pos])
		}
		if c == '\'' && !lx.termPos() {
			lx.pos++
			return true, lx.emit(tOp, "'") // transpose
		}
		if c == '$' && lx.termPos() {
			return false, lexError("quoted expression ($)")
		}
		if c == ':' && len(rest) > 1 && (isIdentStart(rest[1]) || rest[1] == '(') && lx.termPos() {
			if rest[1] == '(' {
				return false, lexError("quoted expression :(…)")
			}
			lx.pos++
			start := lx.pos
			for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
				lx.pos++
			}
			return true, lx.emit(tString, lx.src[start:lx.pos]) // a symbol
		}
	case "r":
		if c == '%' {
			if i := strings.IndexByte(rest[1:], '%'); i >= 0 && !strings.ContainsAny(rest[1:1+i], "\n") {
				lx.pos += i + 2
				return true, lx.emit(tOp, rest[:i+2])
			}
		}
	}
	return false, nil
}

// quoted lexes a string opened by q (a single or double quote), with the language's
// interpolation.
func (lx *lexer) quoted(q byte) error {
	if lx.lang == "python" {
		return lx.pyString("")
	}
	lx.pos++
	interp := q == '"' && lx.lang != "lua"
	if lx.lang == "julia" && q == '\'' {
		// A character literal.
		end := strings.IndexByte(lx.src[lx.pos:], '\'')
		if end < 0 || end > 12 {
			return lexError("unterminated character literal")
		}
		lx.pos += end + 1
		return lx.emit(tString, "c")
	}
	if lx.lang == "julia" && strings.HasPrefix(lx.src[lx.pos:], `""`) {
		lx.pos += 2
		return lx.tripleString(`"""`, true)
	}
	return lx.plainString(q, interp)
}

// plainString reads up to the closing q (pos is after the opening one).
func (lx *lexer) plainString(q byte, interp bool) error {
	return lx.delimited(q, q, interp, tString)
}

// delimited reads up to the closing delimiter (nesting when open != close), lexing the
// language's interpolations as code, and emits the literal as kind.
func (lx *lexer) delimited(open, close byte, interp bool, kind tokKind) error {
	start := lx.pos
	depth := 0
	hadInterp := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
			continue
		case c == close && depth == 0:
			text := lx.src[start:lx.pos]
			lx.pos++
			if err := lx.emit(kind, text); err != nil {
				return err
			}
			lx.toks[len(lx.toks)-1].interp = hadInterp
			return nil
		case c == close:
			depth--
		case c == open && open != close:
			depth++
		case interp:
			if ok, err := lx.interpolation(); err != nil {
				return err
			} else if ok {
				hadInterp = true
				continue
			}
		}
		lx.pos++
	}
	return lexError("unterminated string")
}

// interpolation lexes the code interpolated at pos inside a string, if any, as tokens wrapped
// in "(" ")" between ";" so that it stays apart from what surrounds the string.
func (lx *lexer) interpolation() (bool, error) {
	rest := lx.src[lx.pos:]
	var open int // bytes of the opener; the code then runs to the matching "}" or ")"
	closer := byte('}')
	switch lx.lang {
	case "javascript":
		if strings.HasPrefix(rest, "${") {
			open = 2
		}
	case "ruby":
		if strings.HasPrefix(rest, "#{") {
			open = 2
		}
	case "php":
		if strings.HasPrefix(rest, "{$") {
			open = 1
		} else if strings.HasPrefix(rest, "${") {
			return false, lexError("computed variable in a string")
		}
	case "perl":
		if strings.HasPrefix(rest, "@{") || strings.HasPrefix(rest, "${\\") || strings.HasPrefix(rest, "${ ") {
			open = 2
		}
	case "julia":
		if strings.HasPrefix(rest, "$(") {
			open, closer = 2, ')'
		} else if strings.HasPrefix(rest, "$") && len(rest) > 1 && isIdentStart(rest[1]) {
			i := 1
			for i < len(rest) && isIdentChar(rest[i]) {
				i++
			}
			lx.pos += i
			return true, lx.wrap(func() error { return lx.emit(tIdent, rest[1:i]) })
		}
	}
	if open == 0 {
		return false, nil
	}
	lx.nest++
	defer func() { lx.nest-- }()
	if lx.nest > maxInlineNest {
		return false, lexError("interpolation nested too deep")
	}
	lx.pos += open
	if closer == ')' {
		// Julia $(expr): lex the expression up to the matching ")".
		end := matchClose(lx.src, lx.pos, '(', ')')
		if end < 0 {
			return false, lexError("unterminated interpolation")
		}
		sub := &lexer{lang: lx.lang, src: lx.src[lx.pos:end], nest: lx.nest}
		if err := sub.run(0); err != nil {
			return false, err
		}
		lx.pos = end + 1
		return true, lx.wrap(func() error { return lx.emitAll(sub.toks) })
	}
	return true, lx.wrap(func() error { return lx.run(1) })
}

// matchClose returns the index of the close matching an open already consumed before i,
// skipping quoted strings; -1 when there is none.
func matchClose(s string, i int, open, close byte) int {
	depth := 1
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
		case '"', '\'':
			k := strings.IndexByte(s[i+1:], c)
			if k < 0 {
				return -1
			}
			i += k + 1
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func (lx *lexer) emitAll(ts []token) error {
	for _, t := range ts {
		if err := lx.emit(t.kind, t.text); err != nil {
			return err
		}
		lx.toks[len(lx.toks)-1].interp = t.interp
	}
	return nil
}

func (lx *lexer) wrap(f func() error) error {
	if err := lx.emit(tOp, ";"); err != nil {
		return err
	}
	if err := lx.emit(tOp, "("); err != nil {
		return err
	}
	if err := f(); err != nil {
		return err
	}
	if err := lx.emit(tOp, ")"); err != nil {
		return err
	}
	return lx.emit(tOp, ";")
}

func (lx *lexer) backtick() error {
	switch lx.lang {
	case "javascript":
		lx.pos++
		return lx.plainString('`', true) // a template literal
	case "r":
		// A quoted name: `system`("id") calls system.
		end := strings.IndexByte(lx.src[lx.pos+1:], '`')
		if end < 0 {
			return lexError("unterminated quoted name")
		}
		name := lx.src[lx.pos+1 : lx.pos+1+end]
		lx.pos += end + 2
		return lx.emit(tIdent, name)
	}
	// perl, ruby, php, julia: a command run by the shell.
	end := strings.IndexByte(lx.src[lx.pos+1:], '`')
	if end < 0 {
		lx.pos = len(lx.src)
		return lx.emit(tCmd, "`")
	}
	lx.pos += end + 2
	return lx.emit(tCmd, "`")
}

// pyString lexes a Python string with prefix (pos at the prefix's end, on the quote).
func (lx *lexer) pyString(prefix string) error {
	q := lx.src[lx.pos]
	raw := strings.Contains(prefix, "r")
	fstr := strings.Contains(prefix, "f")
	if strings.HasPrefix(lx.src[lx.pos:], strings.Repeat(string(q), 3)) {
		lx.pos += 3
		return lx.pyBody(strings.Repeat(string(q), 3), raw, fstr)
	}
	lx.pos++
	return lx.pyBody(string(q), raw, fstr)
}

func (lx *lexer) pyBody(close string, raw, fstr bool) error {
	start := lx.pos
	hadInterp := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
			continue
		case strings.HasPrefix(lx.src[lx.pos:], close):
			text := lx.src[start:lx.pos]
			lx.pos += len(close)
			if err := lx.emit(tString, text); err != nil {
				return err
			}
			lx.toks[len(lx.toks)-1].interp = hadInterp
			return nil
		case len(close) == 1 && c == '\n':
			return lexError("unterminated string")
		case fstr && c == '{':
			if strings.HasPrefix(lx.src[lx.pos:], "{{") {
				lx.pos += 2
				continue
			}
			// The replacement field: the expression up to a top-level "!", ":" or "=" conversion
			// or format spec, then the spec (which may hold fields of its own) to the "}".
			end, exprEnd := fieldEnd(lx.src, lx.pos+1)
			if end < 0 {
				return lexError("unterminated f-string field")
			}
			expr := lx.src[lx.pos+1 : exprEnd]
			lx.nest++
			if lx.nest > maxInlineNest {
				return lexError("interpolation nested too deep")
			}
			sub := &lexer{lang: "python", src: expr, toks: nil, nest: lx.nest}
			err := sub.run(0)
			lx.nest--
			if err != nil {
				return err
			}
			if err := lx.wrap(func() error {
				for _, t := range sub.toks {
					if err := lx.emit(t.kind, t.text); err != nil {
						return err
					}
					lx.toks[len(lx.toks)-1].interp = t.interp
				}
				return nil
			}); err != nil {
				return err
			}
			if spec := lx.src[exprEnd:end]; strings.Contains(spec, "{") {
				return lexError("nested f-string field")
			}
			hadInterp = true
			lx.pos = end + 1
			continue
		}
		lx.pos++
	}
	_ = raw
	return lexError("unterminated string")
}

// fieldEnd finds the "}" closing an f-string field whose expression starts at i, and where the
// expression ends (a top-level "!", ":" or the "}").
func fieldEnd(s string, i int) (end, exprEnd int) {
	depth := 0
	exprEnd = -1
	for j := i; j < len(s); j++ {
		c := s[j]
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']':
			depth--
		case '}':
			if depth == 0 {
				if exprEnd < 0 {
					exprEnd = j
				}
				return j, exprEnd
			}
			depth--
		case '\'', '"':
			k := strings.IndexByte(s[j+1:], c)
			if k < 0 {
				return -1, -1
			}
			j += k + 1
		case '!':
			if depth == 0 && exprEnd < 0 && !(j+1 < len(s) && s[j+1] == '=') {
				exprEnd = j
			}
		case ':':
			if depth == 0 && exprEnd < 0 {
				exprEnd = j
			}
		case '\n':
			return -1, -1
		}
	}
	return -1, -1
}

func (lx *lexer) tripleString(close string, interp bool) error {
	i := strings.Index(lx.src[lx.pos:], close)
	if i < 0 {
		return lexError("unterminated string")
	}
	body := lx.src[lx.pos : lx.pos+i]
	if interp && strings.Contains(body, "$") {
		return lexError("interpolation in a triple-quoted string")
	}
	lx.pos += i + len(close)
	return lx.emit(tString, body)
}

func (lx *lexer) rRawString() error {
	// r"(...)", r"[...]", r"{...}", with optional dashes: r"-(...)-"
	q := lx.src[lx.pos]
	j := lx.pos + 1
	dashes := 0
	for j < len(lx.src) && lx.src[j] == '-' {
		dashes++
		j++
	}
	if j >= len(lx.src) {
		return lexError("unterminated raw string")
	}
	var cl byte
	switch lx.src[j] {
	case '(':
		cl = ')'
	case '[':
		cl = ']'
	case '{':
		cl = '}'
	default:
		return lexError("bad raw string")
	}
	close := string(cl) + strings.Repeat("-", dashes) + string(q)
	i := strings.Index(lx.src[j+1:], close)
	if i < 0 {
		return lexError("unterminated raw string")
	}
	lx.pos = j + 1 + i + len(close)
	return lx.emit(tString, lx.src[j+1:j+1+i])
}

// regexLit reads a regex literal delimited by open/close (pos on the opener), with flags.
func (lx *lexer) regexLit(open, close byte, interpLang string) error {
	lx.pos++
	start := lx.pos
	inClass := false
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == '\\':
			lx.pos += 2
			continue
		case c == '[' && open == '/':
			inClass = true
		case c == ']':
			inClass = false
		case c == close && !inClass:
			body := lx.src[start:lx.pos]
			lx.pos++
			for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
				lx.pos++
			}
			return lx.regexBody(body, interpLang)
		case c == '\n' && lx.lang == "javascript":
			return lexError("unterminated regex")
		}
		lx.pos++
	}
	return lexError("unterminated regex")
}

// regexBody emits a regex literal; code inside it ((?{ … }) in Perl, #{…} in Ruby) is code.
func (lx *lexer) regexBody(body, interpLang string) error {
	if strings.Contains(body, "(?{") || strings.Contains(body, "(??{") || strings.Contains(body, "(*{") {
		return lx.emit(tCmd, "(?{")
	}
	if lx.lang == "perl" && (strings.Contains(body, "@{") || strings.Contains(body, "${")) {
		return lexError("code interpolated into a regex")
	}
	if interpLang == "ruby" && strings.Contains(body, "#{") {
		return lexError("code interpolated into a regex")
	}
	return lx.emit(tRegex, body)
}

func (lx *lexer) perlQuoteLike(word string) bool {
	switch word {
	case "q", "qq", "qw", "qr", "m", "s", "tr", "y", "qx":
	default:
		return false
	}
	if len(lx.toks) > 0 {
		if p := lx.toks[len(lx.toks)-1]; p.kind == tOp && (p.text == "->" || p.text == "{") {
			return false // a method or a hash key
		}
	}
	j := lx.pos
	for j < len(lx.src) && (lx.src[j] == ' ' || lx.src[j] == '\t') {
		j++
	}
	if j >= len(lx.src) {
		return false
	}
	c := lx.src[j]
	if j > lx.pos {
		return strings.IndexByte("{([<", c) >= 0
	}
	if c == '=' {
		return j+1 < len(lx.src) && lx.src[j+1] != '>' && lx.src[j+1] != '=' && lx.src[j+1] != '~'
	}
	return !isIdentChar(c) && c != ',' && c != ';' && c != ')' && c != ' ' && c != '}'
}

func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	case '<':
		return '>'
	}
	return c
}

// perlQuote lexes q// qq// qw// qr// m// s/// tr/// y/// qx// (pos after the word).
func (lx *lexer) perlQuote(word string) error {
	for lx.pos < len(lx.src) && (lx.src[lx.pos] == ' ' || lx.src[lx.pos] == '\t') {
		lx.pos++
	}
	open := lx.src[lx.pos]
	close := closerOf(open)
	interp := open != '\''
	part := func(kind tokKind, interp bool) (string, error) {
		lx.pos++
		start := lx.pos
		n := len(lx.toks)
		if err := lx.delimited(open, close, interp && kind == tString, kind); err != nil {
			return "", err
		}
		body := lx.src[start : lx.pos-1]
		if kind == tRegex || !interp {
			lx.toks = lx.toks[:n]
		} else {
			return body, nil
		}
		return body, nil
	}
	switch word {
	case "qx":
		if _, err := part(tString, false); err != nil {
			return err
		}
		return lx.emit(tCmd, "qx")
	case "q", "qw":
		_, err := part(tString, false)
		return err
	case "qq":
		_, err := part(tString, interp)
		return err
	case "m", "qr":
		body, err := part(tRegex, false)
		if err != nil {
			return err
		}
		for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
			lx.pos++
		}
		return lx.regexBody(body, "")
	case "s", "tr", "y":
		pat, err := part(tRegex, false)
		if err != nil {
			return err
		}
		if open != close {
			// s{…}{…}: the second part has its own delimiters.
			lx.pos++ // past the closer? delimited left pos after it already
			lx.pos--
			for lx.pos < len(lx.src) && strings.IndexByte(" \t\n", lx.src[lx.pos]) >= 0 {
				lx.pos++
			}
			if lx.pos >= len(lx.src) {
				return lexError("unterminated substitution")
			}
			open = lx.src[lx.pos]
			close = closerOf(open)
		} else {
			lx.pos-- // the shared delimiter opens the replacement
		}
		lx.pos++
		start := lx.pos
		depth := 0
		for ; lx.pos < len(lx.src); lx.pos++ {
			c := lx.src[lx.pos]
			if c == '\\' {
				lx.pos++
				continue
			}
			if c == close && depth == 0 {
				break
			}
			if c == open && open != close {
				depth++
			} else if c == close {
				depth--
			}
		}
		if lx.pos >= len(lx.src) {
			return lexError("unterminated substitution")
		}
		repl := lx.src[start:lx.pos]
		lx.pos++
		fstart := lx.pos
		for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
			lx.pos++
		}
		flags := lx.src[fstart:lx.pos]
		if err := lx.regexBody(pat, ""); err != nil {
			return err
		}
		if word == "s" && strings.Count(flags, "e") >= 2 {
			return lx.emit(tCmd, "s///ee") // the replacement's result is evaluated again
		}
		if word == "s" && strings.Contains(flags, "e") {
			// The replacement is code.
			sub := &lexer{lang: "perl", src: repl, nest: lx.nest + 1}
			if sub.nest > maxInlineNest {
				return lexError("nested too deep")
			}
			if err := sub.run(0); err != nil {
				return err
			}
			return lx.wrap(func() error {
				for _, t := range sub.toks {
					if err := lx.emit(t.kind, t.text); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if word == "s" && open != '\'' && (strings.Contains(repl, "@{") || strings.Contains(repl, "${")) {
			return lexError("code interpolated into a replacement")
		}
		return nil
	}
	return nil
}

// perlVar lexes a Perl variable, dereference or sigil at pos.
func (lx *lexer) perlVar() (bool, error) {
	rest := lx.src[lx.pos:]
	sig := rest[0]
	if len(rest) == 1 {
		lx.pos++
		return true, lx.emit(tOp, rest)
	}
	c := rest[1]
	switch {
	case sig == '$' && c == '#':
		// $#array, $#{expr}, $#$ref
		if len(rest) > 2 && (isIdentStart(rest[2]) || rest[2] == '$' || rest[2] == '{') {
			lx.pos += 2
			if rest[2] == '{' || rest[2] == '$' {
				return true, lx.emit(tOp, "$#")
			}
			start := lx.pos
			for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
				lx.pos++
			}
			return true, lx.emit(tVar, "$#"+lx.src[start:lx.pos])
		}
		lx.pos += 2
		return true, lx.emit(tVar, "$#")
	case isIdentStart(c) || c == ':' && len(rest) > 2 && rest[2] == ':':
		lx.pos++
		start := lx.pos
		for lx.pos < len(lx.src) && (isIdentChar(lx.src[lx.pos]) || lx.src[lx.pos] == ':' && lx.pos+1 < len(lx.src) && lx.src[lx.pos+1] == ':') {
			if lx.src[lx.pos] == ':' {
				lx.pos++
			}
			lx.pos++
		}
		return true, lx.emit(tVar, string(sig)+lx.src[start:lx.pos])
	case c >= '0' && c <= '9' && sig == '$':
		lx.pos++
		start := lx.pos
		for lx.pos < len(lx.src) && lx.src[lx.pos] >= '0' && lx.src[lx.pos] <= '9' {
			lx.pos++
		}
		return true, lx.emit(tVar, "$"+lx.src[start:lx.pos])
	case c == '{' || c == '$':
		// A dereference (${…}, @{…}, %$x, &$f, &{…}): the name is computed.
		lx.pos++
		return true, lx.emit(tOp, string(sig)+"deref")
	case c == '^' && sig == '$' && len(rest) > 2:
		lx.pos += 3
		return true, lx.emit(tVar, rest[:3])
	case sig == '$' && strings.IndexByte("_&`'+!@/\\,;.0<>[]|\"-", c) >= 0:
		lx.pos += 2
		return true, lx.emit(tVar, rest[:2])
	case sig == '@' && (c == '_' || c == '-' || c == '+'):
		lx.pos += 2
		return true, lx.emit(tVar, rest[:2])
	}
	lx.pos++
	return true, lx.emit(tOp, string(sig))
}

// rubyPercent lexes %q() %Q() %() %w[] %W[] %i[] %I[] %r{} %s() %x() at pos.
func (lx *lexer) rubyPercent() (bool, error) {
	rest := lx.src[lx.pos:]
	kind := byte(0)
	j := 1
	if isIdentStart(rest[1]) {
		kind = rest[1]
		j = 2
	}
	if j >= len(rest) {
		return false, nil
	}
	open := rest[j]
	if isIdentChar(open) || open == ' ' || open == '=' {
		return false, nil
	}
	if kind != 0 && strings.IndexByte("qQwWiIrsx", kind) < 0 {
		return false, nil
	}
	lx.pos += j + 1
	close := closerOf(open)
	switch kind {
	case 'x':
		if err := lx.delimited(open, close, false, tString); err != nil {
			return true, err
		}
		lx.toks[len(lx.toks)-1] = token{kind: tCmd, text: "%x"}
		return true, nil
	case 'r':
		start := lx.pos
		if err := lx.delimited(open, close, false, tRegex); err != nil {
			return true, err
		}
		body := lx.src[start : lx.pos-1]
		lx.toks = lx.toks[:len(lx.toks)-1]
		for lx.pos < len(lx.src) && isIdentChar(lx.src[lx.pos]) {
			lx.pos++
		}
		return true, lx.regexBody(body, "ruby")
	case 'q', 'w', 'i', 's':
		return true, lx.delimited(open, close, false, tString)
	}
	return true, lx.delimited(open, close, true, tString) // %Q %W %I %()
}
