package normalize

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// What a request target carries besides its own host. Two principles, for every tool that makes a
// request and for the URLs curl, wget and friends are given:
//
//   - Every URL inside a URL is a target. A query value, the fragment or a path segment that is
//     (once percent-, base64- or hex-decoded) a URL or an address is where an open redirect, a
//     proxy or a link-follower sends the request next: it is added as a URL of role URLNested and
//     classified like any request target (metadata, loopback, internal, egress). Redirectors are
//     not listed: any nested URL counts. A DNS name that spells an address in its labels (a hex
//     label a9fea9fe, dotted or dashed quads as nip.io and sslip.io use) is classified by that
//     address (hostClass).
//   - Data in a request target is data sent. A query, fragment or path value to a host that is not
//     this one, that decodes (base64, base32, hex) to text, or that is cookie or session material
//     (sessionid=…), is an upload: a send effect of detail DetailURLData (rules escalate it beyond
//     the allowed egress); when the value is secret material (a credential format, a secret word,
//     a key-shaped token, a sensitive path) it is also a carried secret, which effects.secret-egress
//     blocks. A body that templates a file's contents ({{file:/p}}, ${file("/p")}, @/p, file:///p)
//     reads that file.

// URLNested is the role of a URL found inside a request URL (an open redirect's target, a proxied
// or archived page, a URL in a base64 query value). Rules judge it as a request target. It is API.
const URLNested = "nested"

// DetailURLData is the detail of the send effect of data carried in a request URL. It is API.
const DetailURLData = "url data"

// Bounds: nested URLs per call, how deep a nested URL is searched for more, values looked at.
const (
	maxNestedURLs   = 8
	maxNestedDepth  = 2
	maxTargetValues = 32
	maxPercentRound = 3
)

// nestedURLRE finds a URL inside a decoded value ("…/web/2020/https://x/", "to=http://y").
var nestedURLRE = regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp|gopher|dict|file|ldap)s?:/{1,3}[^\s"'<>\x60]+`)

// targetValues returns the values a request URL carries: each query value, the fragment (and its
// own key=value parts), each path segment, percent-decoded (repeatedly, bounded), at most
// maxTargetValues.
func targetValues(u URL) (vals []string, query []string) {
	raw := u.Raw
	frag := ""
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		frag = raw[i+1:]
	}
	add := func(v string, q bool) {
		if len(vals) >= maxTargetValues || v == "" {
			return
		}
		v = percentDecode(v)
		vals = append(vals, v)
		if q {
			query = append(query, v)
		}
	}
	for _, part := range strings.FieldsFunc(u.Query, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			v = k
		}
		add(strings.ReplaceAll(v, "+", " "), true)
	}
	if frag != "" {
		add(frag, true)
		for _, part := range strings.FieldsFunc(frag, func(r rune) bool { return r == '&' || r == ';' }) {
			if _, v, ok := strings.Cut(part, "="); ok {
				add(v, true)
			}
		}
	}
	if u.Path != "" {
		add(u.Path, false) // whole: a URL in a path spans segments ("/web/2020/https://x/y")
		for _, seg := range strings.Split(u.Path, "/") {
			if len(seg) >= 8 {
				add(seg, false)
			}
		}
	}
	return vals, query
}

// percentDecode undoes percent-encoding, repeatedly (double encoding), bounded.
func percentDecode(v string) string {
	for i := 0; i < maxPercentRound && strings.Contains(v, "%"); i++ {
		d, err := url.PathUnescape(v)
		if err != nil || d == v {
			break
		}
		v = d
	}
	return v
}

// nestedTargets lists the URLs and addresses a request URL carries in its values (see the file
// comment), as raw URLs.
func nestedTargets(u URL) []string {
	vals, _ := targetValues(u)
	var out []string
	seen := map[string]bool{}
	push := func(r string) {
		r = strings.TrimRight(r, ".,;)")
		if r == "" || r == u.Raw || seen[r] || len(out) >= maxNestedURLs+1 {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	for _, v := range vals {
		t := strings.TrimSpace(v)
		if d := decodePrintable(t); d != "" && strings.Contains(d, ":/") {
			t = d // a URL base64- or hex-encoded in the value
		}
		found := false
		for _, m := range nestedURLRE.FindAllString(t, 4) {
			if j := strings.Index(m, ":/"); j > 0 && !strings.HasPrefix(m[j:], "://") {
				m = m[:j] + "://" + strings.TrimLeft(m[j+1:], "/") // "https:/x" collapsed by a path
			}
			push(m)
			found = true
		}
		if found {
			continue
		}
		if strings.HasPrefix(t, "//") && len(t) > 2 && t[2] != '/' { // protocol-relative
			push("http:" + t)
			continue
		}
		if h := bareAddress(t); h != "" {
			push("http://" + t)
		}
	}
	return out
}

// bareAddress returns the host of a value that is an address with no scheme: an IP literal
// (with a port or a path), a loopback or metadata name. A plain name ("vault", "example.com") is
// a word, not a target.
func bareAddress(v string) string {
	if v == "" || len(v) > 255 || strings.ContainsAny(v, " \t\n@") {
		return ""
	}
	h := v
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	if hh, _, ok := cutHostPort(h); ok {
		h = hh
	}
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "" {
		return ""
	}
	if metadataHosts[h] || h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return h
	}
	if strings.Count(h, ".") == 3 || strings.Contains(h, ":") {
		if _, err := netip.ParseAddr(h); err == nil {
			return h
		}
	}
	return ""
}

// nestedURLs adds the URLs nested in u (role URLNested), and theirs, bounded.
func (s *state) nestedURLs(u URL, depth int) {
	if depth >= maxNestedDepth || u.Role == URLText {
		return
	}
	for _, raw := range nestedTargets(u) {
		if s.nested >= maxNestedURLs {
			s.act.Truncated = true // fails closed: general.truncated escalates
			return
		}
		if s.urlSeen[raw] {
			continue
		}
		if len(s.act.URLs) >= s.n.opt.MaxStrings {
			s.act.Truncated = true
			return
		}
		n := parseURL(raw, URLNested, true)
		if oauthCallback(u, n) {
			continue
		}
		s.urlSeen[raw] = true
		s.nested++
		s.act.URLs = append(s.act.URLs, n)
		s.nestedURLs(n, depth+1)
	}
}

// oauthCallback: a login flow's redirect_uri to this host (a CLI's local callback listener, as
// gh, gcloud and az use) is where the browser hands the code back, not a target of the request.
func oauthCallback(outer, inner URL) bool {
	if inner.IPClass != IPLoopback {
		return false
	}
	q := strings.ToLower(outer.Query)
	if !strings.Contains(q, "redirect_uri=") && !strings.Contains(q, "redirect_url=") && !strings.Contains(q, "callback") {
		return false
	}
	return strings.Contains(q, "client_id=") || strings.Contains(q, "response_type=")
}

// nestedConnectEffects adds the connection of every nested URL (the target a redirect or a
// link-follower reaches), for calls whose connections are not added from their URLs otherwise.
func (s *state) nestedConnectEffects() {
	for _, u := range s.act.URLs {
		if u.Role == URLNested {
			s.connectEffect(u)
		}
	}
}

// ---- embedded addresses

// dashedQuadRE: four decimal octets joined by dots or dashes inside a name (10-0-0-1.sslip.io,
// app.127.0.0.1.nip.io); hexLabelRE: a label of exactly eight hex digits (a9fea9fe.rbndr.us).
var (
	dashedQuadRE = regexp.MustCompile(`(?:^|[.-])((?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)[.-](?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)[.-](?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)[.-](?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?:[.-]|$)`)
	hexLabelRE   = regexp.MustCompile(`^[0-9a-f]{8}$`)
)

// embeddedClass returns the class of an address a DNS name spells in its labels, when that class
// is not public ("" otherwise): the name resolves there by construction (wildcard DNS services,
// rebinding services). The most dangerous of several wins.
func embeddedClass(host string) string {
	if len(host) > 253 {
		return ""
	}
	best := ""
	consider := func(a netip.Addr) {
		c := addrClass(a)
		if c == IPPublic {
			return
		}
		if best == "" {
			best = c
		} else {
			best = moreDangerous(best, c)
		}
	}
	for _, m := range dashedQuadRE.FindAllStringSubmatch(host, 4) {
		if a, err := netip.ParseAddr(strings.ReplaceAll(m[1], "-", ".")); err == nil {
			consider(a)
		}
	}
	labels := strings.Split(host, ".")
	if len(labels) >= 3 { // a hex label under a registrable name, not the name itself
		for _, l := range labels[:len(labels)-2] {
			if hexLabelRE.MatchString(l) {
				b, err := hex.DecodeString(l)
				if err == nil && len(b) == 4 {
					consider(netip.AddrFrom4([4]byte{b[0], b[1], b[2], b[3]}))
				}
			}
		}
	}
	return best
}

// ---- data in request targets

// cookieMaterialRE: a value that is a cookie or session assignment (sessionid=…, PHPSESSID=…).
var cookieMaterialRE = regexp.MustCompile(`(?i)(?:^|[;&\s])(?:[a-z0-9_.-]*(?:session|sess|sid|cookie|csrf|xsrf|jwt|auth|token|bearer)[a-z0-9_.-]*|phpsessid|jsessionid|aspsessionid[a-z]*|connect\.sid)\s*[=:]\s*([^;&\s]{4,})`)

// secretWordRE: decoded data that names a secret or is shaped like a key.
var secretWordRE = regexp.MustCompile(`(?i)secret|passw|passphrase|private[ _-]?key|credential|api[_-]?key|token|cookie|session|-----BEGIN|^(?:sk|pk|rk|ghp|gho|ghs|ghu|glpat|xox[abprs]|akia|asia|hvs|npm|pypi|shpat|sq0csp|key)[-_.]`)

// decodeData returns the text a value encodes in base64 (standard or URL alphabet), base32 or hex,
// when it decodes to mostly printable text of at least six bytes; "" otherwise. Plain words (all
// lower-case letters) are words, not encodings.
func decodeData(v string) string {
	d := decodePrintable(v)
	letters := 0
	for i := 0; i < len(d); i++ {
		if c := d[i] | 0x20; c >= 'a' && c <= 'z' {
			letters++
		}
	}
	if letters*4 < len(d) { // mostly digits and punctuation: a number, not text
		return ""
	}
	return d
}

// decodePrintable returns what v encodes (base64, base32, hex) when it is printable text of at
// least six bytes; "" otherwise.
func decodePrintable(v string) string {
	v = strings.TrimSpace(v)
	if len(v) < 8 || len(v) > maxDataScan {
		return ""
	}
	var b []byte
	switch {
	case len(v)%2 == 0 && len(v) >= 12 && isHex(v):
		b, _ = hex.DecodeString(v)
	case len(v) >= 16 && isBase32(v):
		t := strings.TrimRight(v, "=")
		b, _ = base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(t)
	case isBase64(v) && !plainWord(v):
		t := strings.TrimRight(v, "=")
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
	for _, c := range b {
		if !(c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
			return "" // binary: an id, a hash, a nonce — not text
		}
	}
	return string(b)
}

func isHex(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isBase32(v string) bool {
	t := strings.TrimRight(v, "=")
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return len(t) > 0
}

func isBase64(v string) bool {
	t := strings.TrimRight(v, "=")
	if len(v)-len(t) > 2 || len(t)%4 == 1 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// plainWord: only lower-case letters, or only letters with one leading capital (a word).
func plainWord(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || (i == 0 && c >= 'A' && c <= 'Z') {
			continue
		}
		return false
	}
	return true
}

// urlDataEffects: data carried in a request URL to a host other than this one (file comment).
func (s *state) urlDataEffects(u URL) {
	if u.Host == "" || u.IPClass == IPLoopback || u.Role == URLText {
		return
	}
	vals, query := targetValues(u)
	target := u.Host
	if u.Port != 0 {
		target = hostForTarget(u.Host) + ":" + portString(u.Port)
	}
	sent, secret := false, ""
	for _, v := range vals {
		if strings.Contains(v, "://") {
			continue // a nested URL: a target of its own
		}
		if d := decodeData(v); d != "" {
			sent = true
			if secret == "" && s.secretData(d) {
				secret = "encoded"
			}
		}
	}
	for _, v := range query {
		if strings.Contains(v, "://") {
			continue
		}
		if m := cookieMaterialRE.FindStringSubmatch(v); m != nil && !placeholderValue(m[1]) {
			sent = true
			if secret == "" {
				secret = "cookie"
			}
		}
		if (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/")) && s.sensitivePathValue(v) {
			sent = true
			if secret == "" {
				secret = "path"
			}
		}
	}
	for _, l := range strings.Split(u.Host, ".") { // data in the labels of a name (DNS-style)
		if len(l) >= 16 && decodeData(strings.ToUpper(l)) != "" || len(l) >= 16 && isHex(l) && decodeData(l) != "" {
			sent = true
		}
	}
	if !sent {
		return
	}
	s.addToolEffect(Effect{Kind: EffectSend, Target: target, Detail: DetailURLData})
	if secret != "" {
		s.addToolEffect(Effect{Kind: EffectSecret, Target: "url data (" + secret + ") to " + u.Host, Detail: DetailContent, Sensitive: true})
	}
}

// secretData: decoded data that is secret material: a credential, a secret word or key shape,
// cookie material, a sensitive path.
func (s *state) secretData(d string) bool {
	if secretWordRE.MatchString(d) || s.n.cat.carriesCredential(d) || cookieMaterialRE.MatchString(d) {
		return true
	}
	t := strings.TrimSpace(d)
	return (strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~/")) && s.sensitivePathValue(t)
}

// sensitivePathValue: a path value that names a sensitive location or a directory holding one.
func (s *state) sensitivePathValue(v string) bool {
	if len(v) > 4096 || strings.ContainsAny(v, "\n\x00") {
		return false
	}
	clean, ok := resolvePath(v, "/", s.n.opt.Home)
	if !ok {
		return false
	}
	return s.n.sens.classify(clean) != "" || s.n.sens.classify(path.Join(clean, "x")) != ""
}

func portString(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// ---- file contents templated into a body

// bodyFileRE: a body that templates a file's contents: {{file:/p}}, {{ file "/p" }},
// ${file("/p")}, @/p (curl and httpie), <@/p, file:///p.
var bodyFileRE = regexp.MustCompile(`\{\{-?\s*(?:file|include|readFile|read_file)\s*[:(]?\s*["']?((?:/|~/|\$HOME/)[^}"'\s)]+)|\$\{\s*file\(\s*["']?((?:/|~/|\$HOME/)[^"')\s]+)|(?:^|[\s=:"'(<])<?@((?:/|~/|\$HOME/)[^\s"',;)]+)|\bfile://((?:/|~/)[^\s"'<>)]+)`)

// bodyFileEffects reads the files a request or message body templates in.
func (s *state) bodyFileEffects() {
	switch s.act.Class {
	case ClassExec, ClassFileRead, ClassFileList, ClassFileSearch, ClassFileWrite, ClassMemoryRead:
		return
	}
	leaves, _ := stringLeaves(s.act.Args)
	for _, t := range leaves {
		if len(t) > maxDataScan {
			t = t[:maxDataScan]
		}
		for _, m := range bodyFileRE.FindAllStringSubmatch(t, 8) {
			raw := m[1] + m[2] + m[3] + m[4]
			raw = strings.Replace(raw, "$HOME", "~", 1)
			before := len(s.act.Paths)
			s.addPath(raw, RoleRead)
			for i := before; i < len(s.act.Paths); i++ {
				s.pathEffects(s.act.Paths[i])
			}
		}
	}
}

// ---- schemes that are no network address

// opaqueSchemes are schemes of URLs without "//" that name no host: a bare string starting with
// one is that URL, not a host name ("about:logins" is no http://about).
var opaqueSchemes = set("about", "view-source", "javascript", "data", "blob", "mailto", "tel", "chrome", "edge", "brave",
	"opera", "vivaldi", "chrome-extension", "moz-extension", "chrome-untrusted", "devtools", "resource", "filesystem")

// opaqueScheme reports whether s starts with one of opaqueSchemes and a colon.
func opaqueScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && i < 24 && opaqueSchemes[strings.ToLower(s[:i])]
}
