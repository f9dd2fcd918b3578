package shield

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// actionHashDecoded is ActionHash computed from the arguments already decoded by
// normalize.DecodeArguments (which rejects duplicate keys, invalid UTF-8 and NUL characters):
// the RFC 8785 form is written straight from the decoded tree into a pooled buffer, without
// re-tokenising the raw text. Whatever this fast path does not handle (a number that does not
// parse as a finite float64, a key outside the Basic Multilingual Plane, whose UTF-16 order
// differs from byte order, a tool name that is not valid UTF-8) falls back to ActionHash on the
// raw arguments. TestActionHashDecoded and FuzzActionHashDecoded check both agree.
//
// canon is the RFC 8785 form of the arguments alone when the fast path produced it (nil on the
// fallback): the audit record reuses it instead of canonicalising the arguments again.
func actionHashDecoded(tool string, args map[string]any, raw json.RawMessage) (hash string, canon []byte, err error) {
	bp := canonPool.Get().(*[]byte)
	defer canonPool.Put(bp)
	const prefix = `{"arguments":`
	b := append((*bp)[:0], prefix...)
	b, ok := appendCanonical(b, args, 0)
	if ok && utf8.ValidString(tool) {
		end := len(b)
		b = append(b, `,"tool":`...)
		b = appendCanonicalString(b, tool)
		b = append(b, '}')
		*bp = b
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:]), slices.Clone(b[len(prefix):end]), nil
	}
	*bp = b
	hash, err = ActionHash(tool, raw)
	return hash, nil, err
}

var canonPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxCanonDepth matches the decoder's default nesting bound; deeper trees take the slow path.
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
		return appendCanonicalString(b, x), true
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
			b = appendCanonicalString(b, k)
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

// appendCanonicalString writes s as RFC 8785 does: only " and \ and control characters are
// escaped (the short forms \b \t \n \f \r, else \u00xx in lower-case hex); everything else,
// U+2028 and U+2029 included, literally. s must be valid UTF-8.
func appendCanonicalString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
