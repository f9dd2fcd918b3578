package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gowebpki/jcs"
)

// Type is a record type. Types are API: they are never renamed, only added.
type Type string

// Record types.
const (
	TypeDecision            Type = "decision"
	TypeBundleActivated     Type = "bundle_activated"
	TypeSandboxCanaryResult Type = "sandbox_canary_result"
	TypeApprovalRequested   Type = "approval_requested"
	TypeApprovalResolved    Type = "approval_resolved"
	TypeServiceStart        Type = "service_start"
	TypeServiceStop         Type = "service_stop"
	// TypeCheckpoint records carry a signed checkpoint of the tree of all records before them.
	TypeCheckpoint Type = "checkpoint"
	// TypeRecovered is written at open when a torn tail was moved to a quarantine file.
	TypeRecovered Type = "recovered"
	// TypeAnchored records that a checkpoint was anchored in a transparency log.
	TypeAnchored Type = "anchored"
	// TypeAgentEvent records an agent's lifecycle in the engine (ready, refused, started,
	// crashed, unsandboxed, sub-agent started); payload {"event": name, "detail": …}.
	TypeAgentEvent Type = "agent_event"
)

// validType reports whether t is a well-formed type name: 1–64 of [a-z0-9_]. Any such name may
// be appended; the constants above are the ones Shield writes.
func validType(t Type) bool {
	if len(t) == 0 || len(t) > 64 {
		return false
	}
	for _, c := range []byte(t) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// TimeFormat is the layout of record times: UTC with nine fractional digits, so that times sort
// as strings.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// ZeroHash is the prev hash of record 0.
const ZeroHash = "0000000000000000000000000000000000000000000000000000000000000000"

// maxLine bounds one record line (and so one payload) in bytes.
const maxLine = 4 << 20

// Record is one decoded audit record.
type Record struct {
	Seq     uint64          `json:"seq"`
	Time    time.Time       `json:"-"`
	Type    Type            `json:"type"`
	Payload json.RawMessage `json:"payload"` // canonical JSON
	Prev    string          `json:"prev"`    // hex hash of record Seq-1
	Hash    string          `json:"hash"`    // hex leaf hash of this record
}

// wireRecord is the JSON shape of a record line.
type wireRecord struct {
	Hash    *string          `json:"hash"`
	Payload *json.RawMessage `json:"payload"`
	Prev    *string          `json:"prev"`
	Seq     *uint64          `json:"seq"`
	Time    *string          `json:"time"`
	Type    *string          `json:"type"`
}

// canonicalPayload returns the JCS form of v (marshalled with encoding/json first). A nil v is
// the empty object.
func canonicalPayload(v any) ([]byte, error) {
	var raw []byte
	switch p := v.(type) {
	case nil:
		return []byte("{}"), nil
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("marshal payload: %w", err)
		}
	}
	c, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalize payload: %w", err)
	}
	if len(c) == 0 || c[0] != '{' {
		return nil, errors.New("payload must be a JSON object")
	}
	return c, nil
}

// appendBody appends the canonical body (the record without "hash") to dst. payload must already
// be canonical and typ valid; member names are written in JCS (UTF-16 code unit) order.
func appendBody(dst []byte, seq uint64, t time.Time, typ Type, payload []byte, prev string) []byte {
	dst = append(dst, `{"payload":`...)
	dst = append(dst, payload...)
	dst = append(dst, `,"prev":"`...)
	dst = append(dst, prev...)
	dst = append(dst, `","seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"time":"`...)
	dst = t.UTC().AppendFormat(dst, TimeFormat)
	dst = append(dst, `","type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `"}`...)
	return dst
}

// LeafHash is the RFC 6962 leaf hash of a canonical record body.
func LeafHash(body []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(body)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// appendLine appends the full record line (with "hash" first, as JCS orders it, and a trailing
// newline) given its body.
func appendLine(dst, body []byte, hash [32]byte) []byte {
	dst = append(dst, `{"hash":"`...)
	dst = hex.AppendEncode(dst, hash[:])
	dst = append(dst, `",`...)
	dst = append(dst, body[1:]...)
	return append(dst, '\n')
}

const linePrefix = `{"hash":"`

// DecodeRecord parses one record line (without its newline) and checks that it is canonical
// and that its hash is the leaf hash of its body. It does not check the chain.
func DecodeRecord(line []byte) (*Record, error) {
	if len(line) > maxLine {
		return nil, fmt.Errorf("record is %d bytes, over the %d byte limit", len(line), maxLine)
	}
	// {"hash":"<64 hex>",<rest of body>
	const hlen = len(linePrefix) + 64 + 2
	if len(line) < hlen+2 || !bytes.HasPrefix(line, []byte(linePrefix)) || string(line[hlen-2:hlen]) != `",` {
		return nil, errors.New("record does not start with its hash member")
	}
	var w wireRecord
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after record")
	}
	if w.Hash == nil || w.Payload == nil || w.Prev == nil || w.Seq == nil || w.Time == nil || w.Type == nil {
		return nil, errors.New("record lacks a member (hash, payload, prev, seq, time, type are required)")
	}
	if len(*w.Payload) == 0 || (*w.Payload)[0] != '{' {
		return nil, errors.New("payload is not an object")
	}
	if !validType(Type(*w.Type)) {
		return nil, fmt.Errorf("invalid record type %q", *w.Type)
	}
	if !isHex64(*w.Prev) || !isHex64(*w.Hash) {
		return nil, errors.New("hash or prev is not 64 lower-case hex digits")
	}
	t, err := time.Parse(TimeFormat, *w.Time)
	if err != nil || t.Format(TimeFormat) != *w.Time {
		return nil, fmt.Errorf("time %q is not in the record time format", *w.Time)
	}
	body := make([]byte, 0, len(line)-hlen+1)
	body = append(body, '{')
	body = append(body, line[hlen:]...)
	canon, err := jcs.Transform(body)
	if err != nil {
		return nil, fmt.Errorf("canonicalize record: %w", err)
	}
	if !bytes.Equal(canon, body) {
		return nil, errors.New("record is not in canonical (RFC 8785) form")
	}
	sum := LeafHash(body)
	if hex.EncodeToString(sum[:]) != *w.Hash {
		return nil, errors.New("hash does not match the record's contents")
	}
	return &Record{Seq: *w.Seq, Time: t, Type: Type(*w.Type), Payload: *w.Payload, Prev: *w.Prev, Hash: *w.Hash}, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// MarshalJSON writes the record as it is stored (canonical, with its hash).
func (r *Record) MarshalJSON() ([]byte, error) {
	body := appendBody(nil, r.Seq, r.Time, r.Type, r.Payload, r.Prev)
	var out bytes.Buffer
	out.WriteString(`{"hash":"`)
	out.WriteString(r.Hash)
	out.WriteString(`",`)
	out.Write(body[1:])
	return out.Bytes(), nil
}
