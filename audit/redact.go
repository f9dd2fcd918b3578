package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gowebpki/jcs"
)

// The built-in patterns. Key patterns match member names (case-insensitive) whose values are
// replaced whole. Value patterns match inside any string; a pattern may keep a prefix (the
// named group "keep", e.g. the variable name of AWS_SECRET_ACCESS_KEY=…, or "curl -u admin:")
// and a suffix (group "tail", the "@" of a URL's user:password@) so that an analyst still sees
// what was there: only the secret itself becomes [REDACTED].
var (
	defaultKeyPatterns = []string{
		`passw(or)?d`, `passphrase`, `secret`, `token`, `api[_-]?key`, `access[_-]?key`,
		`private[_-]?key`, `authorization`, `credential`, `cookie`, `session[_-]?key`, `^auth$`,
	}
	defaultValuePatterns = []string{
		`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`,
		`\bAKIA[0-9A-Z]{16}\b`,                                            // AWS access key id
		`\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}`,            // GitHub tokens
		`\bxox[abprs]-[A-Za-z0-9-]{10,}`,                                  // Slack tokens
		`\bsk-[A-Za-z0-9_-]{20,}`,                                         // OpenAI / Anthropic style keys
		`\bglpat-[A-Za-z0-9_-]{20,}`,                                      // GitLab tokens
		`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, // JWT
		// HTTP credential headers: the whole value (Authorization: Basic …, Cookie: …).
		`(?i)(?P<keep>\b(?:proxy-)?authorization[ \t]*:[ \t]*|\b(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|cookie|set-cookie)[ \t]*:[ \t]*)[^\r\n'"]+`,
		`(?i)(?P<keep>\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{12,}`,
		// NAME=value where NAME looks secret: environment assignments (AWS_SECRET_ACCESS_KEY=…,
		// export GITHUB_TOKEN=…, docker -e DB_PASSWORD=…), flags (--password=…), query strings
		// (?access_token=…) and source code (password = "…").
		`(?i)(?P<keep>\b[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)[A-Za-z0-9_.-]*[ \t]*=[ \t]*)(?:"[^"]*"|'[^']*'|[^\s&'";|]+)`,
		// Flags with a separate value: --password hunter2, --token abc.
		`(?i)(?P<keep>(?:^|\s)--?(?:password|passwd|pass|passphrase|token|secret|api-key|apikey|access-key|secret-key|client-secret|auth-token)[ \t]+)(?:"[^"]*"|'[^']*'|[^\s'"]+)`,
		// Basic-auth credentials on a command line: curl -u admin:hunter2, --user=admin:pw,
		// --proxy-user u:p (the user name is kept).
		`(?P<keep>(?:^|\s)(?:-u|-U|--user|--proxy-user)(?:[ \t]+|=)?['"]?[^\s:'"]*:)[^\s'"/][^\s'"]*`,
		// Credentials in URLs: scheme://user:password@host (the password may be empty or hold "@").
		`(?P<keep>://[^/\s:@'"]*:)[^/\s'"]*(?P<tail>@)`,
		// A secret-looking member inside JSON text held in a string ("client_secret": "…").
		`(?i)(?P<keep>"[A-Za-z0-9_.-]*(?:passw(?:or)?d|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_.-]*"\s*:\s*)"(?:[^"\\]|\\.)*"`,
		// The same in YAML-like text: a line "  db_password: hunter2".
		`(?im)(?P<keep>^[ \t-]*[A-Za-z0-9_.-]*(?:passw(?:or)?d|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)[A-Za-z0-9_.-]*[ \t]*:[ \t]+)[^\s#'"]+`,
	}
	// defaultReplacement keeps the named groups around the mark.
	defaultReplacement = "${keep}" + RedactedMark + "${tail}"
)

// defaultTriggers: every match of a default value pattern contains one of these (ASCII case
// folded) substrings. (The NAME=value patterns need one of their key words, credentials in a URL
// need "@", basic-auth flags "-u" or "--user"/"--proxy-user", which contain it.)
var defaultTriggers = []string{"-----begin", "akia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"xox", "sk-", "glpat-", "eyj", "bearer", "basic", "pass", "pwd", "secret", "token", "api", "@",
	"authorization", "cookie", "access", "private", "credential", "auth", "-u"}

// defaultKeyTriggers: every member name a default key pattern matches contains one of these
// (ASCII case folded).
var defaultKeyTriggers = []string{"pass", "secret", "token", "api", "access", "private", "auth", "credential", "cookie", "session"}

// text redacts the value patterns in one free-text string (a reason, an error, a comment).
func (r *redactor) text(s string) string {
	if r == nil || r.off || s == "" {
		return s
	}
	if len(s) > textCacheLen {
		return r.redactText(s)
	}
	if v, ok := r.textCache.Load(s); ok {
		return v.(string)
	}
	out := r.redactText(s)
	if r.textCount.Load() < textCacheMax {
		r.textCount.Add(1)
		r.textCache.Store(strings.Clone(s), out)
	}
	return out
}

// redactText is text without the cache.
func (r *redactor) redactText(s string) string {
	out := s
	if r.defaults != nil && hasTrigger(out) {
		out = r.defaults.ReplaceAllString(out, defaultReplacement)
	}
	for _, re := range r.values {
		out = re.ReplaceAllLiteralString(out, RedactedMark)
	}
	return out
}

// Redactor redacts call arguments exactly as the log redacts a decision's, for the other
// records that hold a call's arguments (approval requests, their notices and API views): one
// redaction for every record type.
type Redactor struct{ r *redactor }

// NewRedactor compiles c (the zero value redacts with the built-in patterns).
func NewRedactor(c Redaction) (*Redactor, error) {
	r, err := c.compile()
	if err != nil {
		return nil, err
	}
	return &Redactor{r: r}, nil
}

// RedactedArgs is the result of Redactor.Arguments.
type RedactedArgs struct {
	// Arguments is the redacted RFC 8785 form (nil when Invalid).
	Arguments json.RawMessage
	// Hash is the hex SHA-256 of the original arguments' RFC 8785 form (of the raw bytes when
	// Invalid), as in a decision's args_hash.
	Hash string
	// Paths are the JSON pointers of the replaced values, sorted.
	Paths []string
	// Invalid is set when the arguments were not valid JSON: they are dropped, never stored.
	Invalid bool
}

// Arguments redacts args. It never returns the original bytes of an invalid document.
func (x *Redactor) Arguments(args json.RawMessage) (RedactedArgs, error) {
	if x == nil || x.r == nil {
		return RedactedArgs{}, errors.New("redact arguments: no redactor")
	}
	d, err := x.r.prepare(&Decision{Arguments: args})
	if err != nil {
		return RedactedArgs{}, err
	}
	return RedactedArgs{Arguments: d.Arguments, Hash: d.ArgsHash, Paths: d.Redacted, Invalid: d.ArgsInvalid}, nil
}

// Text redacts the value patterns in a free-text field (a reason, a comment, an error) as they
// are redacted inside arguments.
func (x *Redactor) Text(s string) string {
	if x == nil {
		return s
	}
	return x.r.text(s)
}

// Payload redacts a whole record payload of any type: values under secret-looking member names
// are replaced, and value patterns inside every other string. It returns the payload unchanged
// (the same bytes) when nothing matched, else its redacted RFC 8785 form and the JSON pointers
// of the replaced values. Redacting a redacted payload changes nothing, so a decision's
// already-redacted arguments pass through as stored.
func (x *Redactor) Payload(p json.RawMessage) (json.RawMessage, []string, error) {
	if x == nil || x.r == nil {
		return nil, nil, errors.New("redact payload: no redactor")
	}
	if !json.Valid(p) {
		return nil, nil, errors.New("redact payload: not valid JSON")
	}
	if x.r.off || !x.r.mayMatch(p) {
		return p, nil, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("decode payload: %w", err)
	}
	var paths []string
	v = x.r.walk(v, "", false, &paths)
	if len(paths) == 0 {
		return p, nil, nil
	}
	red, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal redacted payload: %w", err)
	}
	out, err := jcs.Transform(red)
	if err != nil {
		return nil, nil, fmt.Errorf("canonicalize redacted payload: %w", err)
	}
	sort.Strings(paths)
	return out, paths, nil
}
