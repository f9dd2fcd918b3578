package server

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzArgumentsPreview: a preview is the whole input when it fits, else a prefix of at most n
// bytes cut at a character boundary plus the marker; valid UTF-8 stays valid.
func FuzzArgumentsPreview(f *testing.F) {
	for _, s := range []string{"", `{"command":"ls"}`, strings.Repeat("é", 700), strings.Repeat("x", 5000), "\xff\xfe" + strings.Repeat("€", 400)} {
		f.Add(s, previewBytes)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		p, cut := argumentsPreview(s, n)
		if !cut {
			if p != s || len(s) > n {
				t.Fatalf("uncut preview %q of %q (n %d)", p, s, n)
			}
			return
		}
		prefix, _, ok := strings.Cut(p, "…[truncated: ")
		if !ok || len(prefix) > n || !strings.HasPrefix(s, prefix) || len(p) > n+80 {
			t.Fatalf("preview %q of %d bytes (n %d)", p, len(s), n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("preview of valid UTF-8 is not: %q", p)
		}
	})
}
