package normalize

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
)

// Data that structured tools carry, judged like the shell engine judges a command's operands:
// SQL a database tool runs (sqlscan.go), and credentials in a request's URL, body or a tracker
// post, also when hex- or base64-encoded. Credential formats are bundle data (catalog.yaml
// secret_formats, by issuer); without a catalog only the shapes of secretTextRE are known.

// credentialTextRE: a credential written as an assignment in configuration or environment form
// (aws_secret_access_key = …, client-key-data: …, DB_PASSWORD=…), or a URL with a password.
var credentialTextRE = regexp.MustCompile(`(?i)(?:secret|passw(?:or)?d|pwd|token|api[_-]?key|private[_-]?key|client-key-data|access[_-]?key|credential)[a-z_-]*["']?\s*[:=]\s*\S{4,}|-----BEGIN [A-Z ]*PRIVATE KEY|[a-z][a-z0-9+.-]{1,15}://[^\s:/@'"]+:[^\s:/@'"]{3,}@`)

// credentialParams: query parameters that carry a credential by name.
var credentialParams = set("password", "passwd", "pass", "pwd", "secret", "client_secret", "token", "access_token",
	"refresh_token", "id_token", "auth", "auth_token", "api_key", "apikey", "api-key", "key", "private_key",
	"session", "sessionid", "credential", "credentials", "sig", "signature", "x-amz-credential", "passphrase")

var hexRunRE = regexp.MustCompile(`^[0-9a-fA-F]{16,}$`)
var b64RunRE = regexp.MustCompile(`^[A-Za-z0-9+/_-]{16,}={0,2}$`)

// maxDataScan bounds the text decoded per value.
const maxDataScan = 16 << 10

// decodedText returns s decoded from hex or base64 when it is one and the result is mostly text.
func decodedText(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxDataScan {
		s = s[:maxDataScan]
	}
	var b []byte
	switch {
	case hexRunRE.MatchString(s) && len(s)%2 == 0:
		b, _ = hex.DecodeString(s)
	case b64RunRE.MatchString(s):
		t := strings.TrimRight(s, "=")
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if d, err := enc.DecodeString(t); err == nil {
				b = d
				break
			}
		}
	}
	if len(b) < 6 {
		return ""
	}
	printable := 0
	for _, c := range b {
		if c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f) {
			printable++
		}
	}
	if printable*10 < len(b)*9 {
		return ""
	}
	return string(b)
}

// carriesCredential reports whether text holds a credential of a known format, or encodes (hex,
// base64, one level, also inside a KEY=VALUE or JSON string) one written as an assignment.
// The format union is run only on token-shaped words its issuers' prefixes match: its counted
// repetitions make a large program.
func (c *Catalog) carriesCredential(text string) bool {
	if len(text) > maxDataScan {
		text = text[:maxDataScan]
	}
	var tokenRE, prefixRE *regexp.Regexp
	if c != nil {
		tokenRE, prefixRE = c.tokenRE, c.tokenPrefixRE
	}
	if secretTextRE.MatchString(text) {
		return true
	}
	decoded := 0
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && isTokenByte(text[j]) {
			j++
		}
		if j == i {
			i++
			continue
		}
		word := text[i:j]
		i = j
		if len(word) < 12 {
			continue
		}
		// The small prefix union selects the words the large whole-token union is run on.
		if tokenRE != nil && prefixRE.MatchString(word) && tokenRE.MatchString(word) {
			return true
		}
		// base64 and hex runs, and VALUE of KEY=VALUE inside them.
		for _, f := range strings.Split(word, "=") {
			if len(f) < 16 || decoded >= maxDecodedWords {
				continue
			}
			decoded++
			if d := decodedText(f); d != "" && ((prefixRE != nil && prefixRE.MatchString(d)) || credentialTextRE.MatchString(d) || secretTextRE.MatchString(d)) {
				return true
			}
		}
	}
	return false
}

// maxDecodedWords bounds the words of one text decoded from hex or base64.
const maxDecodedWords = 64

// isTokenByte: a byte of a token, a hex or a base64 run.
func isTokenByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || b == '+' || b == '/' || b == '=' ||
		(b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

// structuredEffects adds the effects of the data a structured (non-exec) call carries.
func (s *state) structuredEffects() {
	a := s.act
	// Credentials in what leaves: a request's URLs (query values and path segments, decoded),
	// whatever tool or command makes the request; its body, a message.
	for _, u := range a.URLs {
		if u.Role == URLText {
			continue
		}
		s.urlCredentialEffects(u)
		s.urlDataEffects(u) // urls_nested.go: data carried in the target
	}
	s.urlReadingEffects() // urls_readings.go: hosts other clients read in the same URL
	if a.Class == ClassExec {
		return
	}
	if a.Class == ClassDatabase {
		s.databaseToolEffects()
	}
	switch a.Class {
	case ClassFileRead, ClassFileList, ClassFileSearch, ClassMemoryRead, "agent_state":
		return
	}
	// The body and content only: a token in a request header goes to the service it authenticates.
	for _, t := range []string{a.Body, a.Content, a.Prompt} {
		if t != "" && s.n.cat.carriesCredential(t) {
			s.addToolEffect(Effect{Kind: EffectSecret, Target: a.Tool, Detail: DetailContent})
			return
		}
	}
}

// urlCredentialEffects: a credential in a request URL's query. A known token format or an encoded
// credential is carried content (judged wherever it goes); a parameter named for a credential is
// a secret in the request (judged when the host is beyond the allowed egress).
func (s *state) urlCredentialEffects(u URL) {
	if u.Path != "" && s.n.cat.carriesCredential(strings.ReplaceAll(u.Path, "/", " ")) {
		s.addToolEffect(Effect{Kind: EffectSecret, Target: u.Host, Detail: DetailContent})
		return
	}
	if u.Query == "" {
		return
	}
	q, err := url.ParseQuery(u.Query)
	if err != nil {
		q = url.Values{"": {u.Query}}
	}
	named := false
	for k, vs := range q {
		lk := strings.ToLower(k)
		for _, v := range vs {
			if s.n.cat.carriesCredential(v) {
				s.addToolEffect(Effect{Kind: EffectSecret, Target: u.Host, Detail: DetailContent})
				return
			}
			if len(v) >= 6 && (credentialParams[lk] || (lk == "p" && (q.Has("u") || q.Has("user")))) && !placeholderValue(v) {
				named = true
			}
		}
	}
	if named {
		s.addToolEffect(Effect{Kind: EffectSecret, Target: "url query of " + u.Host, Detail: "request"})
	}
}

// placeholderValue: a value that is plainly no credential (a template, a mask, a word repeated).
func placeholderValue(v string) bool {
	lv := strings.ToLower(v)
	return strings.ContainsAny(v, "{}<>$*") || strings.Trim(lv, "x") == "" || lv == "redacted" || lv == "changeme" || lv == "password"
}
