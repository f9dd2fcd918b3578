package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gowebpki/jcs"
)

// Decision is the payload of a TypeDecision record. Member names are API.
//
// Arguments holds the call's arguments after redaction; ArgsHash is the hex SHA-256 of the
// RFC 8785 form of the original arguments, so a holder of the original call can prove it is the
// one decided while the log never stores the secrets in it. Redacted lists the JSON pointers
// (RFC 6901) of the values that were replaced.
type Decision struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	ActionClass string          `json:"action_class"`
	ActionHash  string          `json:"action_hash"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	ArgsHash    string          `json:"args_hash,omitempty"`
	// ArgsInvalid is set when the arguments were not valid JSON: they are not stored, and
	// ArgsHash is the SHA-256 of their raw bytes.
	ArgsInvalid    bool     `json:"args_invalid,omitempty"`
	Redacted       []string `json:"redacted,omitempty"`
	Decision       string   `json:"decision"` // ALLOW | BLOCK | ESCALATE
	Tier           int      `json:"tier"`
	Rules          []string `json:"rules,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	Confidence     float64  `json:"confidence,omitempty"`
	BundleDigest   string   `json:"bundle_digest,omitempty"`
	BundleRevision string   `json:"bundle_revision,omitempty"`
	SessionID      string   `json:"session_id,omitempty"`
	AgentID        string   `json:"agent_id,omitempty"`
	Runtime        string   `json:"runtime,omitempty"`
	Caller         string   `json:"caller,omitempty"`
	DecisionID     string   `json:"decision_id,omitempty"`
	EscalationID   string   `json:"escalation_id,omitempty"`
	Judge          string   `json:"judge,omitempty"`
	Cached         bool     `json:"cached,omitempty"`
	Error          string   `json:"error,omitempty"`
}

// Redaction configures how secret-looking argument values are masked before a decision is
// written. The zero value redacts with the default patterns; Disable must be set to store
// arguments verbatim.
type Redaction struct {
	// Disable stores arguments unredacted.
	Disable bool
	// Keys are extra regular expressions (case-insensitive) over object member names whose
	// values are replaced whole.
	Keys []string
	// Values are extra regular expressions over string values; each match is replaced.
	Values []string
	// NoDefaults drops the built-in key and value patterns.
	NoDefaults bool
}

// RedactedMark replaces a redacted value or match.
const RedactedMark = "[REDACTED]"

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
		`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,}`,
		`(?i)(password|passwd|pwd|secret|token|api[_-]?key)=[^\s&'"]+`,
		`://[^/\s:@]+:[^/\s@]+@`, // credentials in URLs
	}
)

// redactor is a compiled Redaction.
type redactor struct {
	off    bool
	keys   []*regexp.Regexp
	values []*regexp.Regexp
}

func (r Redaction) compile() (*redactor, error) {
	if r.Disable {
		return &redactor{off: true}, nil
	}
	var keys, values []string
	if !r.NoDefaults {
		keys = append(keys, defaultKeyPatterns...)
		values = append(values, defaultValuePatterns...)
	}
	keys = append(keys, r.Keys...)
	values = append(values, r.Values...)
	out := &redactor{}
	for _, k := range keys {
		re, err := regexp.Compile("(?i)" + k)
		if err != nil {
			return nil, fmt.Errorf("redaction key pattern %q: %w", k, err)
		}
		out.keys = append(out.keys, re)
	}
	for _, v := range values {
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, fmt.Errorf("redaction value pattern %q: %w", v, err)
		}
		out.values = append(out.values, re)
	}
	return out, nil
}

// ArgsHash is the hex SHA-256 of the RFC 8785 form of a JSON arguments document.
func ArgsHash(args json.RawMessage) (string, error) {
	c, err := jcs.Transform(args)
	if err != nil {
		return "", fmt.Errorf("canonicalize arguments: %w", err)
	}
	s := sha256.Sum256(c)
	return hex.EncodeToString(s[:]), nil
}

// prepare fills ArgsHash from the original arguments and replaces Arguments by their redacted
// form. It works on a copy; d is not modified.
func (r *redactor) prepare(d *Decision) (*Decision, error) {
	out := *d
	if len(d.Arguments) == 0 {
		return &out, nil
	}
	h, err := ArgsHash(d.Arguments)
	if err != nil {
		sum := sha256.Sum256(d.Arguments)
		out.ArgsHash, out.ArgsInvalid, out.Arguments = hex.EncodeToString(sum[:]), true, nil
		return &out, nil
	}
	out.ArgsHash = h
	if r.off {
		return &out, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(d.Arguments)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode arguments: %w", err)
	}
	var paths []string
	v = r.walk(v, "", false, &paths)
	if len(paths) == 0 {
		return &out, nil
	}
	red, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal redacted arguments: %w", err)
	}
	sort.Strings(paths)
	out.Arguments = red
	out.Redacted = paths
	return &out, nil
}

// walk redacts v in place. Under a member whose name looks secret (secret is true), every
// string leaf is replaced whole; elsewhere value patterns are replaced inside strings.
func (r *redactor) walk(v any, path string, secret bool, paths *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = r.walk(e, path+"/"+pointerEscape(k), secret || r.secretKey(k), paths)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = r.walk(e, path+"/"+strconv.Itoa(i), secret, paths)
		}
		return x
	case string:
		if secret {
			*paths = append(*paths, path)
			return RedactedMark
		}
		s := x
		for _, re := range r.values {
			s = re.ReplaceAllString(s, RedactedMark)
		}
		if s != x {
			*paths = append(*paths, path)
		}
		return s
	default:
		return v
	}
}

func (r *redactor) secretKey(k string) bool {
	for _, re := range r.keys {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
