package shield

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/shieldsec/shield/audit"
)

// actionHashDecoded is ActionHash computed from the arguments already decoded by
// normalize.DecodeArguments (which rejects duplicate keys, invalid UTF-8 and NUL characters):
// the audit package writes their RFC 8785 form straight from the decoded tree
// (audit.CanonicalArguments), and the hash is taken over {"arguments":…,"tool":…} built around
// it in a pooled buffer, without re-tokenising the raw text. Whatever that path does not handle
// (a number that does not parse as a finite float64, a key outside the Basic Multilingual Plane,
// whose UTF-16 order differs from byte order, a tool name that is not valid UTF-8) falls back to
// ActionHash on the raw arguments. TestActionHashDecoded and FuzzActionHashDecoded check both
// agree.
//
// canon is the canonical arguments when that path produced them (zero on the fallback): the
// audit record reuses them instead of canonicalising the arguments again.
func actionHashDecoded(tool string, args map[string]any, raw json.RawMessage) (hash string, canon audit.CanonicalArgs, err error) {
	c, ok := audit.CanonicalArguments(args)
	if !ok || !utf8.ValidString(tool) {
		hash, err = ActionHash(tool, raw)
		return hash, audit.CanonicalArgs{}, err
	}
	bp := canonPool.Get().(*[]byte)
	defer canonPool.Put(bp)
	b := append((*bp)[:0], `{"arguments":`...)
	b = c.AppendTo(b)
	b = append(b, `,"tool":`...)
	b = appendCanonicalString(b, tool)
	b = append(b, '}')
	*bp = b
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), c, nil
}

var canonPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

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
