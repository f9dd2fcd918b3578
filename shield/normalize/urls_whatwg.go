package normalize

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// URL parsing as browsers (the WHATWG URL standard) and curl read a URL, so that a host written to
// slip past a lexical check is classified as the address a client would really reach:
//   - leading and trailing C0 controls and spaces are stripped, tabs and newlines removed;
//   - in special schemes (http, https, ws, wss, ftp, file) a backslash is a slash, and any number of
//     slashes after "scheme:" starts the authority ("http:\\169.254.169.254", "http:/evil.com");
//   - the host is percent-decoded and mapped through IDNA (UTS #46, non-transitional, no STD3
//     rules, as browsers do): "①⑥⑨.②⑤④.①⑥⑨.②⑤④" is 169.254.169.254, "pastebin。com" is
//     pastebin.com, fullwidth letters fold to ASCII;
//   - a host whose last label is numeric is parsed as an IPv4 address in every inet_aton form.
//
// Where curl would reach another host than a browser (curl keeps a backslash as data, so
// "http://evil.com\@good.com" is good.com to curl and evil.com to a browser), the URL records the
// browser's host and the more dangerous of the two classes.

// specialSchemes are the WHATWG special schemes (backslash is a path separator in them).
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// whatwgIDNA is the UTS #46 profile browsers use for hosts ("domain to ASCII", beStrict = false).
var whatwgIDNA = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.CheckHyphens(false),
	idna.CheckJoiners(true), idna.StrictDomainName(false), idna.VerifyDNSLength(false), idna.BidiRule())

// whatwgPrepare applies the WHATWG pre-processing to a URL string: it strips C0 controls and spaces
// at both ends, removes ASCII tabs and newlines anywhere, and in a special scheme turns backslashes
// into slashes and makes the authority start with exactly "//".
func whatwgPrepare(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(s)
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || !validScheme(s[:i]) {
		return s
	}
	scheme := strings.ToLower(s[:i])
	if !specialSchemes[scheme] {
		return s
	}
	rest := strings.ReplaceAll(s[i+1:], `\`, "/")
	if scheme == "file" {
		return scheme + ":" + rest
	}
	rest = strings.TrimLeft(rest, "/")
	return scheme + "://" + rest
}

func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// whatwgHost turns a URL host as written into the host a browser connects to: percent-decoded,
// IDNA-mapped (Unicode digits, fullwidth dots and letters to ASCII), lower case, without a trailing
// dot. An IPv6 literal is returned as is. ok is false when the host cannot be mapped (a browser
// refuses such a URL).
func whatwgHost(h string) (out string, ok bool) {
	if strings.HasPrefix(h, "[") || strings.Count(h, ":") >= 2 {
		return strings.ToLower(h), true
	}
	if strings.Contains(h, "%") {
		if d, err := url.PathUnescape(h); err == nil {
			h = d
		}
	}
	if !isASCII(h) || strings.ContainsAny(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		m, err := whatwgIDNA.ToASCII(h)
		if err != nil {
			// Map what can be mapped (digits, dots, width) even when a label is refused: the
			// classification must not fall back to the unmapped text.
			if m == "" {
				return strings.ToLower(h), false
			}
			h = m
		} else {
			h = m
		}
	}
	return strings.TrimSuffix(strings.ToLower(h), "."), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// curlHost returns the host curl would connect to for a prepared-but-not-backslash-converted URL:
// the authority runs to the first '/', '?' or '#', and the userinfo ends at its last '@'. ok is
// false when s has no "scheme://".
func curlHost(s string) (string, bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", false
	}
	rest := s[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if k := strings.LastIndexByte(rest, '@'); k >= 0 {
		rest = rest[k+1:]
	}
	if h, _, ok := cutHostPort(rest); ok {
		rest = h
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
	h, _ := whatwgHost(rest)
	return h, true
}

// classRank orders host classes by danger, so that where two clients disagree the URL keeps the
// more dangerous class.
var classRank = map[string]int{IPPublic: 1, IPHostname: 2, IPInternal: 3, IPInvalid: 3, IPPrivate: 4, IPLoopback: 5, IPLinkLocal: 6, IPMetadata: 7}

func moreDangerous(a, b string) string {
	if classRank[b] > classRank[a] {
		return b
	}
	return a
}

// hasSpecialScheme reports whether s starts with "scheme:" for a special scheme ("http:/x",
// "http:\\\\x" and "http:x" are all URLs of host x to a browser).
func hasSpecialScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && specialSchemes[strings.ToLower(s[:i])]
}
