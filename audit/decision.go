package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gowebpki/jcs"
)

// Decision is the payload of a TypeDecision record. Member names are API.
//
// Arguments holds the call's arguments after redaction; ArgsHash is the hex SHA-256 of the
// RFC 8785 form of the original arguments, so a holder of the original call can prove it is the
// one decided while the log never stores the secrets in it. Redacted lists the JSON pointers
// (RFC 6901) of the values that were replaced.
type Decision struct {
	// Fields are in RFC 8785 member order (sorted names), which canonicalDecision relies on.
	ActionClass string `json:"action_class"`
	ActionHash  string `json:"action_hash"`
	AgentID     string `json:"agent_id,omitempty"`
	ArgsHash    string `json:"args_hash,omitempty"`
	// ArgsInvalid is set when the arguments were not valid JSON: they are not stored, and
	// ArgsHash is the SHA-256 of their raw bytes.
	ArgsInvalid    bool            `json:"args_invalid,omitempty"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	BundleDigest   string          `json:"bundle_digest,omitempty"`
	BundleRevision string          `json:"bundle_revision,omitempty"`
	Cached         bool            `json:"cached,omitempty"`
	CallID         string          `json:"call_id"`
	Caller         string          `json:"caller,omitempty"`
	Confidence     float64         `json:"confidence,omitempty"`
	Decision       string          `json:"decision"` // ALLOW | BLOCK | ESCALATE
	DecisionID     string          `json:"decision_id,omitempty"`
	Error          string          `json:"error,omitempty"`
	EscalationID   string          `json:"escalation_id,omitempty"`
	Judge          string          `json:"judge,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	Redacted       []string        `json:"redacted,omitempty"`
	Rules          []string        `json:"rules,omitempty"`
	Runtime        string          `json:"runtime,omitempty"`
	SessionID      string          `json:"session_id,omitempty"`
	Tier           int             `json:"tier"`
	Tool           string          `json:"tool"`

	// CanonicalArguments, when set, is the RFC 8785 form of Arguments as this package wrote it
	// (CanonicalArguments, while the pipeline hashed the call): the log hashes and redacts it
	// instead of canonicalising Arguments again. Not written to the record.
	CanonicalArguments CanonicalArgs `json:"-"`
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

// redactor is a compiled Redaction.
type redactor struct {
	off    bool
	keys   []*regexp.Regexp
	values []*regexp.Regexp
	// defaults is the built-in value patterns, run only on strings that contain one of their
	// literal triggers (defaultTriggers); values holds the configured ones, run on every string.
	defaults *regexp.Regexp
	// onlyDefaults is set when no pattern was configured: mayMatch can then prefilter.
	onlyDefaults bool
	keyCache     sync.Map // member name → bool, bounded by keyCacheMax
	keyCount     atomic.Int64
	// textCache holds text's answers for short strings (a rule's reason recurs on every call
	// it decides: running the patterns on it took 7 % of the server's CPU under load).
	textCache sync.Map // string → redacted string, bounded by textCacheMax
	textCount atomic.Int64
}

const (
	keyCacheMax = 4096
	// textCacheMax bounds the cached reasons; textCacheLen the length of one (2 MiB at most).
	textCacheMax = 4096
	textCacheLen = 512
)

func hasTrigger(s string) bool { return triggerSet.contains(s) }

var (
	triggerSet = newFoldSet(defaultTriggers)
	// mayMatchSet: a value trigger or a key trigger.
	mayMatchSet = newFoldSet(append(append([]string(nil), defaultTriggers...), defaultKeyTriggers...))
)

// foldSet finds any of a few lower-case ASCII literals in one pass: the literals are tried only
// at the bytes that can start one. It answers what a search for each literal in turn answered
// (TestFoldSetDifferential).
type foldSet struct {
	lits  []string
	first [256]bool
}

func newFoldSet(lits []string) *foldSet {
	f := &foldSet{lits: lits}
	for _, l := range lits {
		for c := 0; c < 256; c++ {
			if byte(c)|0x20 == l[0] || byte(c) == l[0] {
				f.first[c] = true
			}
		}
	}
	return f
}

func (f *foldSet) contains(s string) bool {
	for i := 0; i < len(s); i++ {
		if !f.first[s[i]] {
			continue
		}
		for _, l := range f.lits {
			if foldAt(s, i, l) {
				return true
			}
		}
	}
	return false
}

// foldAt reports whether sub (lower-case ASCII) occurs in s at i under ASCII case folding (the
// first byte is compared as c|0x20, the rest with A–Z lowered).
func foldAt(s string, i int, sub string) bool {
	if i+len(sub) > len(s) {
		return false
	}
	if c := s[i]; c|0x20 != sub[0] && c != sub[0] {
		return false
	}
	for j := 1; j < len(sub); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != sub[j] {
			return false
		}
	}
	return true
}

func (r Redaction) compile() (*redactor, error) {
	if r.Disable {
		return &redactor{off: true}, nil
	}
	var keys []string
	if !r.NoDefaults {
		keys = append(keys, defaultKeyPatterns...)
	}
	keys = append(keys, r.Keys...)
	out := &redactor{}
	for _, k := range keys {
		if _, err := regexp.Compile(k); err != nil {
			return nil, fmt.Errorf("redaction key pattern %q: %w", k, err)
		}
	}
	for _, v := range r.Values {
		if _, err := regexp.Compile(v); err != nil {
			return nil, fmt.Errorf("redaction value pattern %q: %w", v, err)
		}
	}
	// One alternation per kind: a single pass over each string.
	if len(keys) > 0 {
		out.keys = []*regexp.Regexp{regexp.MustCompile("(?i)(?:" + strings.Join(keys, ")|(?:") + ")")}
	}
	if len(r.Values) > 0 {
		out.values = []*regexp.Regexp{regexp.MustCompile("(?:" + strings.Join(r.Values, ")|(?:") + ")")}
	}
	out.onlyDefaults = !r.NoDefaults && len(r.Keys) == 0 && len(r.Values) == 0
	if !r.NoDefaults {
		out.defaults = regexp.MustCompile("(?:" + strings.Join(defaultValuePatterns, ")|(?:") + ")")
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

// prepare fills ArgsHash from the original arguments and replaces Arguments by their redacted,
// canonical form. It works on a copy; d is not modified.
func (r *redactor) prepare(d *Decision) (*Decision, error) {
	out := *d
	out.Redacted, out.CanonicalArguments = nil, CanonicalArgs{}
	out.Reason, out.Error = r.text(d.Reason), r.text(d.Error) // a judge may quote the call
	if len(d.Arguments) == 0 && d.CanonicalArguments.IsZero() {
		return &out, nil
	}
	canon := d.CanonicalArguments.b
	if canon == nil {
		var err error
		if canon, err = jcs.Transform(d.Arguments); err != nil {
			sum := sha256.Sum256(d.Arguments)
			out.ArgsHash, out.ArgsInvalid, out.Arguments = hex.EncodeToString(sum[:]), true, nil
			return &out, nil
		}
	}
	sum := sha256.Sum256(canon)
	out.ArgsHash, out.Arguments = hex.EncodeToString(sum[:]), canon
	if r.off || !r.mayMatch(canon) {
		return &out, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(canon))
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
	if out.Arguments, err = jcs.Transform(red); err != nil {
		return nil, fmt.Errorf("canonicalize redacted arguments: %w", err)
	}
	sort.Strings(paths)
	out.Redacted = paths
	return &out, nil
}

// canonicalDecision returns the RFC 8785 form of d, whose Arguments must already be canonical
// (decision_encode.go).
func canonicalDecision(d *Decision) ([]byte, error) {
	return appendDecision(make([]byte, 0, 256+len(d.Arguments)+len(d.Reason)+len(d.Error)), d)
}

// mayMatch is a conservative prefilter over the whole canonical arguments text: false only when
// no pattern can match any member name or string in it. With configured patterns (which may be
// anchored) it always says true; the built-in ones each require one of a few literals.
func (r *redactor) mayMatch(canon []byte) bool {
	if !r.onlyDefaults {
		return true
	}
	return mayMatchSet.contains(string(canon))
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
			if x != RedactedMark {
				*paths = append(*paths, path)
			}
			return RedactedMark
		}
		s := r.text(x)
		if s != x {
			*paths = append(*paths, path)
		}
		return s
	default:
		return v
	}
}

func (r *redactor) secretKey(k string) bool {
	if v, ok := r.keyCache.Load(k); ok {
		return v.(bool)
	}
	secret := false
	for _, re := range r.keys {
		if re.MatchString(k) {
			secret = true
		}
	}
	if r.keyCount.Load() < keyCacheMax {
		r.keyCount.Add(1)
		r.keyCache.Store(k, secret)
	}
	return secret
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
