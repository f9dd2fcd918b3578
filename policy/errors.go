package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a bundle, located as precisely as the parser allows.
type Problem struct {
	File string // path relative to the bundle root ("" when it concerns the whole bundle)
	Line int    // 1-based; 0 when unknown
	Col  int    // 1-based; 0 when unknown
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
			if p.Col > 0 {
				fmt.Fprintf(&b, ":%d", p.Col)
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a bundle. As an error it lists them one per line, sorted by
// file and line, so a policy author sees all of them at once.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 0 {
		return "no problems"
	}
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	if len(ps) == 1 {
		return lines[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(ps), strings.Join(lines, "\n  "))
}

// Sort orders problems by file, line and column, keeping the order of equal positions.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Err returns ps sorted as an error, or nil when there are none.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	ps.Sort()
	return ps
}

// AsProblems returns the problems an error carries (a Problems anywhere in its chain), or a single
// problem with the error's text.
func AsProblems(err error) Problems {
	if err == nil {
		return nil
	}
	var ps Problems
	if errors.As(err, &ps) {
		return ps
	}
	return Problems{{Msg: err.Error()}}
}

// Sentinel errors.
var (
	// ErrUnsafePath is wrapped by load errors for absolute paths, "..", symlinks and
	// non-regular files.
	ErrUnsafePath = errors.New("unsafe path in bundle")
	// ErrTooLarge is wrapped by load errors when a bound of LoadOptions is exceeded.
	ErrTooLarge = errors.New("bundle too large")
	// ErrSignature is wrapped by load errors for a missing or bad signature.
	ErrSignature = errors.New("bundle signature")
)
