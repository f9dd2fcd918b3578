package gate

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Regular-expression prefilters, for both tiers (CEL's matches, Rego's regex.match). Most rule
// patterns can only match a string that contains one of a few literals (`(?i)(curl|wget)`,
// `\$\{?IFS`); Go's RE2 engine has no such shortcut for unanchored patterns and runs its matcher
// over every string. NewRegexFilter derives the literals any match must contain (necessary,
// never sufficient); a string that contains none of them cannot match, any other string goes to
// the regular expression. The analysis is conservative: a construct it does not understand
// contributes no requirement, and a pattern with no requirement has no filter. Case-insensitive
// literals are compared ASCII-folded, and a string with a non-ASCII byte always passes a filter
// with such a literal (Unicode folding equates ſ with s and K with k).

// maxAlternatives bounds the literals of one requirement (an alternation of more branches is
// checked by the regular expression alone).
const maxAlternatives = 64

// lit is one literal of a requirement. A folded literal is lower-case ASCII and compared
// ASCII-case-insensitively.
type lit struct {
	s    string
	fold bool
}

// RegexFilter is a necessary condition for a pattern to match: the string contains one of any.
// Its zero value is not used; NewRegexFilter returns nil when no requirement is known.
type RegexFilter struct {
	any []lit
	// fold: some literal is folded. A string with a byte ≥ 0x80 then always passes (Unicode
	// case folding equates ſ with s and K (U+212A) with k, which ASCII folding does not).
	fold bool
	// first marks the bytes a literal can start with (both cases for a folded one): one pass
	// over the string finds the candidate positions.
	first [256]bool
}

func (f *RegexFilter) init() *RegexFilter {
	f.fold = false
	f.first = [256]bool{}
	for _, l := range f.any {
		c := l.s[0]
		f.first[c] = true
		if l.fold {
			f.fold = true
			if 'a' <= c && c <= 'z' {
				f.first[c-('a'-'A')] = true
			}
		}
	}
	return f
}

// MayMatch reports false only when no string the pattern matches can be s.
func (f *RegexFilter) MayMatch(s string) bool {
	if f.fold {
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return true
			}
		}
	}
	for i := 0; i < len(s); i++ {
		if !f.first[s[i]] {
			continue
		}
		for _, l := range f.any {
			if l.fold {
				if hasPrefixFoldASCII(s[i:], l.s) {
					return true
				}
			} else if strings.HasPrefix(s[i:], l.s) {
				return true
			}
		}
	}
	return false
}

// hasPrefixFoldASCII reports whether s starts with p (lower-case ASCII) ignoring ASCII case.
func hasPrefixFoldASCII(s, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for j := 0; j < len(p); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[j] {
			return false
		}
	}
	return true
}

// NewRegexFilter returns the prefilter of a pattern as regexp.Compile parses it, or nil when no
// useful requirement is known.
func NewRegexFilter(pattern string) *RegexFilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var best *RegexFilter
	for _, r := range requirements(re) {
		if best == nil || minLen(r.any) > minLen(best.any) {
			best = r
		}
	}
	if best == nil {
		return nil
	}
	return best.init()
}

func minLen(l []lit) int {
	m := -1
	for _, x := range l {
		if m < 0 || len(x.s) < m {
			m = len(x.s)
		}
	}
	return m
}

// requirements returns a conjunction of requirements: every string re matches satisfies each.
// The empty list means nothing is known.
func requirements(re *syntax.Regexp) []*RegexFilter {
	switch re.Op {
	case syntax.OpLiteral:
		if f := literalFilter(re.Rune, re.Flags&syntax.FoldCase != 0); f != nil {
			return []*RegexFilter{f}
		}
		return nil
	case syntax.OpCapture:
		return requirements(re.Sub[0])
	case syntax.OpPlus:
		return requirements(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requirements(re.Sub[0])
		}
		return nil
	case syntax.OpConcat:
		var out []*RegexFilter
		// Adjacent literals with the same case folding must appear together.
		var run []rune
		runFold := false
		flush := func() {
			if len(run) > 0 {
				if f := literalFilter(run, runFold); f != nil {
					out = append(out, f)
				}
			}
			run = nil
		}
		for _, s := range re.Sub {
			if s.Op == syntax.OpLiteral {
				fold := s.Flags&syntax.FoldCase != 0
				if len(run) > 0 && fold != runFold {
					flush()
				}
				runFold = fold
				run = append(run, s.Rune...)
				continue
			}
			flush()
			out = append(out, requirements(s)...)
		}
		flush()
		return out
	case syntax.OpAlternate:
		// Each branch's best requirement; their union is required of the alternation when
		// every branch has one.
		var union RegexFilter
		for _, s := range re.Sub {
			var best *RegexFilter
			for _, r := range requirements(s) {
				if best == nil || minLen(r.any) > minLen(best.any) {
					best = r
				}
			}
			if best == nil {
				return nil
			}
			union.any = append(union.any, best.any...)
			if len(union.any) > maxAlternatives {
				return nil
			}
		}
		return []*RegexFilter{&union}
	default:
		// Anchors, classes, any character, empty matches, star and quest: no requirement.
		return nil
	}
}

// literalFilter returns the requirement "contains this literal", or nil when the literal cannot
// be checked byte-wise: U+FFFD (the regexp matches it against invalid UTF-8) and, under case
// folding, anything other than ASCII.
func literalFilter(runes []rune, fold bool) *RegexFilter {
	var b strings.Builder
	for _, r := range runes {
		if r == utf8.RuneError {
			return nil
		}
		if fold {
			if r >= utf8.RuneSelf {
				return nil
			}
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return nil
	}
	return &RegexFilter{any: []lit{{s: b.String(), fold: fold}}}
}

// Literals returns the literals of the filter (a string must contain one of them) and whether
// some are compared ASCII-case-insensitively (those are lower case).
func (f *RegexFilter) Literals() (lits []string, fold bool) {
	for _, l := range f.any {
		lits = append(lits, l.s)
	}
	return lits, f.fold
}
