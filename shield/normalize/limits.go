package normalize

import (
	"fmt"
	"strings"
)

// Input limits of shell parsing. The shell parser (mvdan.cc/sh) is recursive: a deep enough input
// overflows the goroutine stack, which ends the process and cannot be recovered. Every shell
// string is therefore pre-scanned, in linear time and constant stack, before the parser sees it:
// the top-level command, and every string parsed again (bash -c, eval, su -c, env -S, watch, a
// here-document fed to a shell, echo … | sh, base64 payloads). A string over a limit is not parsed
// and the Action is marked (Action.OverLimit), which the pipeline turns into a BLOCK.
//
// The values are far above what a real command needs (see policy/README.md, "Input limits") and
// keep the parser's stack below a few megabytes.
const (
	// MaxShellBytes is the size of one shell string: Linux refuses a single execve argument
	// longer than 128 KiB (MAX_ARG_STRLEN), so a longer "sh -c" script cannot run anyway.
	MaxShellBytes = 128 << 10
	// MaxShellNesting bounds the nesting of ( ) { } [ ] $( ) $(( )) ${ } ` ` "…", <( ) and
	// if/case/do blocks in one shell string.
	MaxShellNesting = 128
	// MaxShellChain bounds the operators the parser handles by recursion, summed over the
	// enclosing levels: && || | chains, "!" and "time" prefixes, function definitions in a row,
	// and the assignment, ternary, power and unary operators of arithmetic.
	MaxShellChain = 1024
	// MaxShellHeredocs bounds the here-documents (<<, <<-) of one shell string.
	MaxShellHeredocs = 64
	// MaxShellParseBytes bounds the shell source parsed for one call, nested scripts included
	// (bash -c "…" parses its script a second time).
	MaxShellParseBytes = 1 << 20
)

// LimitPrefix starts Action.ParseError when the call was not normalised because it is over an
// input limit (Action.OverLimit). No parse error of the shell parser starts with it.
const LimitPrefix = "input limit: "

// OverLimit reports whether the call is over an input limit: a shell string too large or too
// deep, too much shell source in total, or normalisation stopped by its context. Such a call is
// blocked, not reviewed: it is not a command anyone runs, and parsing it would cost the service.
// Truncated and ParseError are set as well, so a caller that ignores OverLimit still never allows it.
func (a *Action) OverLimit() bool {
	return a != nil && a.Truncated && strings.HasPrefix(a.ParseError, LimitPrefix)
}

// overLimit marks the action as over an input limit; the first limit found is kept.
func (s *state) overLimit(format string, args ...any) {
	s.act.Truncated = true
	if !strings.HasPrefix(s.act.ParseError, LimitPrefix) {
		s.act.ParseError = LimitPrefix + fmt.Sprintf(format, args...)
	}
	s.stop = true
}

// Kinds of scan levels.
const (
	lvParen    = iota // ( … ) subshell, <( … ), >( … ), a parenthesis in a test or arithmetic
	lvBrace           // { … } a group: closed by a "}" where a command starts
	lvBraceLit        // { … } in a word (brace expansion): closed by any "}"
	lvBrack           // [ … ]
	lvSubst           // $( … )
	lvBacktick        // ` … `
	lvDQ              // " … "
	lvParam           // ${ … }
	lvArith           // $(( … )) or (( … ))
	lvArithB          // $[ … ]
	lvArithP          // ( … ) inside arithmetic
	lvIf              // if … fi
	lvCase            // case … esac
	lvDo              // do … done
)

type scanLevel struct {
	kind  uint8
	chain int // the enclosing level's chain when this level opened
}

// scanShell checks src against MaxShellNesting, MaxShellChain and MaxShellHeredocs in one pass
// with a heap-allocated stack. It models bash's quoting closely enough to count what the parser
// recurses on; where the two readings could differ (quotes inside ${…}, arithmetic, here-document
// bodies), it reads the text as code, which can only count more. It returns "" or the reason.
func scanShell(src string) string {
	_, reason := scanShellStats(src)
	return reason
}

// scanStats are the largest nesting and chain scanShell counted (FuzzShell compares them with the
// depth of the parsed syntax tree).
type scanStats struct{ nesting, chain int }

func scanShellStats(src string) (st scanStats, reason string) {
	// No argv or script can hold a NUL (execve ends strings there), and the parser skips it where
	// this scan would not: refuse it (DecodeArguments already does for call arguments).
	if i := strings.IndexByte(src, 0); i >= 0 {
		return st, fmt.Sprintf("NUL byte in a shell string at byte %d", i)
	}
	var stack []scanLevel
	chain, chainSum := 0, 0 // chain of the current level; sum over the enclosing levels
	heredocs := 0
	// Here-documents: their delimiters wait for the end of the line; while a body is read (hdoc),
	// nothing is skipped as quoted or commented and nothing below floor is closed, so that a body
	// read as code by the parser (or code read as a body by this scan) can only count more.
	var pending []heredoc
	hdoc, floor := false, 0
	cmdPos := true // at the start of a command (where reserved words count)
	afterOp := false
	prevFor := false // the last word was "for" (for ((…)) is arithmetic)
	inLet := false   // in the arguments of let
	blank := false   // the previous byte, in code, was an unescaped blank
	top := func() int {
		if len(stack) == 0 {
			return -1
		}
		return int(stack[len(stack)-1].kind)
	}
	push := func(k uint8, at int) string {
		stack = append(stack, scanLevel{kind: k, chain: chain})
		chainSum += chain
		chain = 0
		st.nesting = max(st.nesting, len(stack))
		if len(stack) > MaxShellNesting {
			return fmt.Sprintf("shell nesting deeper than %d at byte %d", MaxShellNesting, at)
		}
		return ""
	}
	pop := func() {
		if len(stack) <= floor {
			return
		}
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		chainSum -= l.chain
		chain = l.chain
	}
	link := func(at int) string {
		chain++
		st.chain = max(st.chain, chain+chainSum)
		if chain+chainSum > MaxShellChain {
			return fmt.Sprintf("more than %d chained shell operators (&&, ||, |, !, arithmetic) at byte %d", MaxShellChain, at)
		}
		return ""
	}
	// dollar handles "$(", "$((", "${" and "$[" at src[i] == '$'; it returns the new index and
	// whether it opened a level.
	dollar := func(i int) (int, string, bool) {
		if i+1 >= len(src) {
			return i, "", false
		}
		switch src[i+1] {
		case '(':
			if i+2 < len(src) && src[i+2] == '(' {
				return i + 2, push(lvArith, i), true
			}
			return i + 1, push(lvSubst, i), true
		case '{':
			return i + 1, push(lvParam, i), true
		case '[':
			return i + 1, push(lvArithB, i), true
		}
		return i, "", false
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		var err string
		wasBlank := blank
		blank = false
		if c == '\n' && hdoc {
			i = endHeredocLine(src, i, &pending)
			if len(pending) == 0 {
				hdoc, floor = false, 0
			}
			continue
		}
		switch k := top(); k {
		case lvDQ:
			switch c {
			case '\\':
				i++
			case '"':
				pop()
			case '`':
				err = push(lvBacktick, i)
			case '$':
				i, err, _ = dollar(i)
			}
		case lvArith, lvArithB, lvArithP, lvParam:
			switch c {
			case '\\':
				i++
			case '"':
				if !hdoc {
					err = push(lvDQ, i)
				}
			case '`':
				err = push(lvBacktick, i)
			case '$':
				i, err, _ = dollar(i)
			case '(':
				err = push(lvArithP, i)
			case ')':
				switch k {
				case lvArithP:
					pop()
				case lvArith:
					pop()
					if i+1 < len(src) && src[i+1] == ')' {
						i++
					}
				}
			case ']':
				if k == lvArithB {
					pop()
				}
			case '}':
				if k == lvParam {
					pop()
				}
			case '=', '?', '!', '~', '+', '-', '*', ':': // in ${a:…} too: an offset is arithmetic
				err = link(i)
			}
		default: // code: the top level, ( ), { }, [ ], $( ), ` `, if/case/do blocks
			if hdoc { // a body: only brackets, substitutions and here-document operators count
				switch c {
				case '\\', '$', '`', '(', ')', '{', '}', '[', ']', '<':
					cmdPos = false
				default:
					continue
				}
			}
			op := false
			switch c {
			case '\\':
				i++
				cmdPos = false
			case '\'':
				if hdoc {
					break
				}
				if j := strings.IndexByte(src[i+1:], '\''); j >= 0 {
					i += j + 1
				} else {
					i = len(src)
				}
				cmdPos = false
			case '"':
				if !hdoc {
					err = push(lvDQ, i)
				}
				cmdPos = false
			case '`':
				if k == lvBacktick {
					pop()
				} else {
					err = push(lvBacktick, i)
					cmdPos = true
				}
			case '$':
				if i+1 < len(src) && src[i+1] == '\'' && !hdoc { // $'…' with backslash escapes
					j := i + 2
					for j < len(src) && src[j] != '\'' {
						if src[j] == '\\' {
							j++
						}
						j++
					}
					i = j
					cmdPos = false
					break
				}
				var opened bool
				i, err, opened = dollar(i)
				if opened {
					cmdPos = src[i] == '('
				}
			case '(':
				switch {
				case (cmdPos || prevFor) && i+1 < len(src) && src[i+1] == '(':
					err = push(lvArith, i)
					i++
				case !hdoc && closesEmpty(src, i): // f() : a function definition, recursive in the parser
					err = link(i)
					i = strings.IndexByte(src[i:], ')') + i
					cmdPos = true
				default:
					err = push(lvParen, i)
					cmdPos = true
				}
			case ')':
				if k == lvParen || k == lvSubst {
					pop()
				}
				cmdPos = k == lvCase // after a case pattern comes a command
			case '{':
				if cmdPos {
					err = push(lvBrace, i)
				} else {
					err = push(lvBraceLit, i)
				}
			case '}':
				if k == lvBraceLit || (k == lvBrace && cmdPos) { // "{ echo }" leaves the group open
					pop()
				}
				cmdPos = false
			case '[':
				err = push(lvBrack, i)
			case ']':
				if k == lvBrack {
					pop()
				}
			case '<', '>':
				if i+1 < len(src) && src[i+1] == '(' { // process substitution
					err = push(lvParen, i)
					i++
					cmdPos = true
					break
				}
				if c == '<' && !inLet && strings.HasPrefix(src[i:], "<<") && !strings.HasPrefix(src[i:], "<<<") {
					heredocs++
					if heredocs > MaxShellHeredocs {
						err = fmt.Sprintf("more than %d here-documents at byte %d", MaxShellHeredocs, i)
					}
					i++
					if d := heredocDelim(src, i+1); d != "" {
						pending = append(pending, heredoc{delim: d, dash: i+1 < len(src) && src[i+1] == '-'})
					}
					if hdoc {
						// A here-document opened inside what the scan reads as a body: where the
						// parser reads it as code, its own body cannot close what is open here.
						floor = len(stack)
					}
				}
			case '&', '|':
				if c == '&' && (i+1 >= len(src) || src[i+1] != '&') {
					if i > 0 && (src[i-1] == '>' || src[i-1] == '<') {
						break // >&, <&
					}
					if i+1 < len(src) && src[i+1] == '>' {
						i++ // &>
						break
					}
					if !afterOp {
						chain = 0 // a command in the background ends the list element
					}
					cmdPos = true
					break
				}
				if i+1 < len(src) && (src[i+1] == c || (c == '|' && src[i+1] == '&')) {
					i++
				}
				err = link(i)
				cmdPos, op, inLet = true, true, false
			case ';', '\n':
				if c == '\n' && len(pending) > 0 {
					hdoc, floor = true, len(stack)
					i = endHeredocLine(src, i, &pending) // the body may end at once
					if len(pending) == 0 {
						hdoc, floor = false, 0
					}
				}
				if !afterOp {
					chain = 0
				}
				if c == ';' && i+1 < len(src) && (src[i+1] == ';' || src[i+1] == '&') {
					i++
				}
				cmdPos, inLet = true, false
				op = afterOp
			case ' ', '\t', '\r':
				op = afterOp
			case '#':
				if !hdoc && (i == 0 || wasBlank) { // not after an escaped blank: "a\ #b" is one word
					if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
						i += j - 1
					} else {
						i = len(src)
					}
					op = afterOp
				}
			default:
				if cmdPos && isWordByte(c) {
					j := i
					for j < len(src) && isWordByte(src[j]) {
						j++
					}
					if j == len(src) || isWordEnd(src[j]) {
						prevFor = src[i:j] == "for"
						inLet = src[i:j] == "let" // its arguments are arithmetic: << is a shift
						err = reserved(src[i:j], i, push, pop, top, link)
						switch src[i:j] {
						case "if", "then", "else", "elif", "do", "while", "until", "!", "time", "coproc":
						default:
							cmdPos = false
						}
					} else {
						cmdPos = false
					}
					i = j - 1
					break
				}
				cmdPos = false
			}
			afterOp = op
			blank = c == ' ' || c == '\t' || c == '\n'
		}
		if err != "" {
			return st, err
		}
	}
	return st, ""
}

// reserved handles a word in command position: block openers and closers, and prefixes the
// parser recurses on.
func reserved(w string, at int, push func(uint8, int) string, pop func(), top func() int, link func(int) string) string {
	switch w {
	case "if":
		return push(lvIf, at)
	case "case":
		return push(lvCase, at)
	case "do":
		return push(lvDo, at)
	case "fi":
		if top() == lvIf {
			pop()
		}
	case "esac":
		if top() == lvCase {
			pop()
		}
	case "done":
		if top() == lvDo {
			pop()
		}
	case "time", "coproc", "function", "!":
		return link(at)
	}
	return ""
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '!'
}

func isWordEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// closesEmpty reports whether the "(" at src[i] is followed, after blanks, by ")": "f()".
func closesEmpty(src string, i int) bool {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case ' ', '\t':
			continue
		case ')':
			return true
		}
		return false
	}
	return false
}

// heredocDelim reads the delimiter word of a here-document starting at src[i] (after "<<" and an
// optional "-"), with quotes removed; "" when there is none. A word with an expansion or an
// ANSI-C quote gives neverDelim: the scan then reads the rest of the input as a body (nothing
// skipped), rather than risk ending the body where the parser does not.
func heredocDelim(src string, i int) string {
	if i < len(src) && src[i] == '-' {
		i++
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	var sb strings.Builder
	for ; i < len(src) && sb.Len() < 1024; i++ {
		switch c := src[i]; c {
		case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
			return sb.String()
		case '$', '`':
			return neverDelim
		case '\\':
			if i+1 < len(src) {
				i++
				sb.WriteByte(src[i])
			}
		case '\'', '"':
			j := strings.IndexByte(src[i+1:], c)
			if j < 0 {
				return neverDelim
			}
			if c == '"' && strings.ContainsAny(src[i+1:i+1+j], "\\$`") {
				return neverDelim
			}
			sb.WriteString(src[i+1 : i+1+j])
			i += j + 1
		default:
			sb.WriteByte(c)
		}
	}
	if i < len(src) {
		return neverDelim
	}
	return sb.String()
}

// neverDelim matches no line: arguments never hold NUL (DecodeArguments refuses it).
const neverDelim = "\x00"

// heredoc is a here-document whose body is to come: its delimiter, and whether it was opened by
// "<<-" (leading tabs are stripped, the delimiter line included).
type heredoc struct {
	delim string
	dash  bool
}

// endHeredocLine is called at a newline src[i] inside a here-document body: when the next line is
// the current delimiter, that body ends and the index of the line's end is returned, else i.
func endHeredocLine(src string, i int, pending *[]heredoc) int {
	for len(*pending) > 0 {
		line := src[i+1:]
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		h := (*pending)[0]
		l := line
		if h.dash {
			l = strings.TrimLeft(l, "\t")
		}
		if l != h.delim {
			return i
		}
		*pending = (*pending)[1:]
		i += 1 + len(line)
		if i >= len(src) {
			return i
		}
	}
	return i
}
