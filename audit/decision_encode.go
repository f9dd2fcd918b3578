package audit

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// appendDecision appends the RFC 8785 form of d, whose Arguments must already be canonical (as
// prepare leaves them), to dst. It writes what canonicalDecision's reference (encoding/json,
// then RFC 8785 for the characters encoding/json escapes) writes, member by member in the
// struct's (sorted) order with the same omitempty rules, without reflection;
// TestAppendDecisionDifferential and FuzzAppendDecision compare the two.
func appendDecision(dst []byte, d *Decision) ([]byte, error) {
	dst = append(dst, `{"action_class":`...)
	dst = appendJCSString(dst, d.ActionClass)
	dst = append(dst, `,"action_hash":`...)
	dst = appendJCSString(dst, d.ActionHash)
	dst = appendOptString(dst, `,"agent_id":`, d.AgentID)
	dst = appendOptString(dst, `,"args_hash":`, d.ArgsHash)
	if d.ArgsInvalid {
		dst = append(dst, `,"args_invalid":true`...)
	}
	if len(d.Arguments) > 0 {
		dst = append(dst, `,"arguments":`...)
		dst = append(dst, d.Arguments...)
	}
	dst = appendOptString(dst, `,"bundle_digest":`, d.BundleDigest)
	dst = appendOptString(dst, `,"bundle_revision":`, d.BundleRevision)
	if d.Cached {
		dst = append(dst, `,"cached":true`...)
	}
	dst = append(dst, `,"call_id":`...)
	dst = appendJCSString(dst, d.CallID)
	dst = appendOptString(dst, `,"caller":`, d.Caller)
	if d.Confidence != 0 {
		if math.IsNaN(d.Confidence) || math.IsInf(d.Confidence, 0) {
			return nil, errors.New("marshal decision: confidence is not a finite number")
		}
		dst = append(dst, `,"confidence":`...)
		dst = appendFloat(dst, d.Confidence)
	}
	dst = append(dst, `,"decision":`...)
	dst = appendJCSString(dst, d.Decision)
	dst = appendOptString(dst, `,"decision_id":`, d.DecisionID)
	dst = appendOptString(dst, `,"error":`, d.Error)
	dst = appendOptString(dst, `,"escalation_id":`, d.EscalationID)
	dst = appendOptString(dst, `,"judge":`, d.Judge)
	dst = appendOptString(dst, `,"reason":`, d.Reason)
	dst = appendOptStrings(dst, `,"redacted":`, d.Redacted)
	dst = appendOptStrings(dst, `,"rules":`, d.Rules)
	dst = appendOptString(dst, `,"runtime":`, d.Runtime)
	dst = appendOptString(dst, `,"session_id":`, d.SessionID)
	dst = append(dst, `,"tier":`...)
	dst = strconv.AppendInt(dst, int64(d.Tier), 10)
	dst = append(dst, `,"tool":`...)
	dst = appendJCSString(dst, d.Tool)
	return append(dst, '}'), nil
}

func appendOptString(dst []byte, member, s string) []byte {
	if s == "" {
		return dst
	}
	return appendJCSString(append(dst, member...), s)
}

func appendOptStrings(dst []byte, member string, l []string) []byte {
	if len(l) == 0 {
		return dst
	}
	dst = append(dst, member...)
	dst = append(dst, '[')
	for i, s := range l {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJCSString(dst, s)
	}
	return append(dst, ']')
}

// appendFloat writes a finite float64 as encoding/json does (the ECMAScript form RFC 8785
// requires).
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	dst = strconv.AppendFloat(dst, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJCSString writes s as an RFC 8785 string: `"` and `\` escaped, control characters as
// \b \t \n \f \r or \u00xx, everything else literal; each byte of invalid UTF-8 becomes U+FFFD
// (as encoding/json, which the records always went through, replaces it).
func appendJCSString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// canonical is canonicalPayload(c) written by hand (one per commit: encoding/json and a JCS
// re-parse cost ~40 allocations each time): members in RFC 8785 order, the size as the integer
// it is below 2^53 (beyond, the general path). TestCheckpointPayloadCanonical compares both.
func (c checkpointPayload) canonical() ([]byte, error) {
	if c.Size >= 1<<53 {
		return canonicalPayload(c)
	}
	b := make([]byte, 0, len(c.Note)+len(c.Root)+48)
	b = append(b, `{"note":`...)
	b = appendJCSString(b, c.Note)
	b = append(b, `,"root":`...)
	b = appendJCSString(b, c.Root)
	b = append(b, `,"size":`...)
	b = strconv.AppendUint(b, c.Size, 10)
	return append(b, '}'), nil
}
