package audit

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// CanonicalArgs is the RFC 8785 form of a decoded arguments document, written by this package
// (CanonicalArguments) and opaque to every other: the pipeline computes it once per call, hashes
// the call with it and hands it back in the decision (Decision.CanonicalArguments), and the log
// stores it without canonicalising the arguments a second time. The log thereby never trusts
// canonical bytes it did not write itself. The zero value holds nothing.
type CanonicalArgs struct{ b []byte }

// IsZero reports whether c holds nothing.
func (c CanonicalArgs) IsZero() bool { return c.b == nil }

// Equal reports whether c and o hold the same text (go-cmp uses it).
func (c CanonicalArgs) Equal(o CanonicalArgs) bool {
	return (c.b == nil) == (o.b == nil) && bytes.Equal(c.b, o.b)
}

// AppendTo appends the canonical text to dst (a copy: c cannot be changed through it).
func (c CanonicalArgs) AppendTo(dst []byte) []byte { return append(dst, c.b...) }

// CanonicalArguments writes the RFC 8785 form of args, a tree as encoding/json decodes it with
// UseNumber (map[string]any, []any, string, json.Number, bool, nil). It reports false for
// anything it does not handle the way RFC 8785 requires (a string or key that is not valid
// UTF-8, a member name outside the Basic Multilingual Plane, whose UTF-16 order differs from
// byte order, a number that is not a finite float64, another Go type, nesting over 128): the
// caller then canonicalises the raw text instead (jcs.Transform).
func CanonicalArguments(args map[string]any) (CanonicalArgs, bool) {
	bp := canonPool.Get().(*[]byte)
	defer canonPool.Put(bp)
	b, ok := appendCanonical((*bp)[:0], args, 0)
	*bp = b
	if !ok {
		return CanonicalArgs{}, false
	}
	return CanonicalArgs{b: slices.Clone(b)}, true
}

var canonPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxCanonDepth matches the argument decoder's default nesting bound.
const maxCanonDepth = 128

func appendCanonical(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxCanonDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if x {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case string:
		if !utf8.ValidString(x) {
			return b, false
		}
		return appendJCSString(b, x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return b, false
		}
		s, err := jcs.NumberToJSON(f)
		if err != nil {
			return b, false
		}
		return append(b, s...), true
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendCanonical(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if !utf8.ValidString(k) {
				return b, false
			}
			for _, r := range k {
				if r >= 0x10000 { // UTF-16 order differs from byte order for these
					return b, false
				}
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJCSString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendCanonical(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}
