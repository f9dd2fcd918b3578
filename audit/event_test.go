package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestEventPayloadsByteIdentical reads a trail written before the payloads were typed (the
// lifecycle records as map literals): each payload decodes into its type with no member left
// over, and the typed value's canonical form is the stored payload, byte for byte.
func TestEventPayloadsByteIdentical(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[Type]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		r, err := DecodeRecord(sc.Bytes())
		if err != nil {
			t.Fatalf("testdata record: %v", err)
		}
		var v any
		switch r.Type {
		case TypeServiceStart:
			v = &ServiceStart{}
		case TypeServiceStop:
			v = &ServiceStop{}
		case TypeBundleActivated:
			v = &BundleActivated{}
		case TypeAgentEvent:
			v = &AgentEvent{}
		case TypeAnchored:
			v = &Anchored{}
		default:
			continue
		}
		seen[r.Type]++
		dec := json.NewDecoder(bytes.NewReader(r.Payload))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("record %d (%s): payload does not fit its type: %v", r.Seq, r.Type, err)
		}
		got, err := canonicalPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, r.Payload) {
			t.Errorf("record %d (%s): typed payload\n%s\nstored\n%s", r.Seq, r.Type, got, r.Payload)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []Type{TypeServiceStart, TypeServiceStop, TypeBundleActivated, TypeAgentEvent, TypeAnchored} {
		if seen[typ] == 0 {
			t.Errorf("testdata holds no %s record", typ)
		}
	}
}

// TestEventPayloadsAsWritten: the values the appliance builds encode as the map literals did.
func TestEventPayloadsAsWritten(t *testing.T) {
	t.Parallel()
	rules := map[string]int{"cel": 41, "rego": 7}
	tests := []struct {
		name       string
		typed, old any
	}{
		{"service_start", ServiceStart{Version: "0.9.0", PID: 4242, BundleRevision: "r17", BundleDigest: "sha256:ab12", Rules: rules},
			map[string]any{"version": "0.9.0", "pid": 4242, "bundle_revision": "r17", "bundle_digest": "sha256:ab12", "rules": rules}},
		{"service_start zero", ServiceStart{},
			map[string]any{"version": "", "pid": 0, "bundle_revision": "", "bundle_digest": "", "rules": map[string]int(nil)}},
		{"service_stop", ServiceStop{Version: "v", PID: 7}, map[string]any{"version": "v", "pid": 7}},
		{"bundle_activated", BundleActivated{BundleRevision: "r", BundleDigest: "d", Rules: rules},
			map[string]any{"bundle_revision": "r", "bundle_digest": "d", "rules": rules}},
		{"agent_event", AgentEvent{Event: "agent_exited", Detail: map[string]any{"status": 0}},
			map[string]any{"event": "agent_exited", "detail": map[string]any{"status": 0}}},
		{"anchored", Anchored{API: "v2", Size: 1000, LogIndex: 123456789},
			map[string]any{"api": "v2", "size": uint64(1000), "log_index": int64(123456789)}},
		{"agent_event nil detail", AgentEvent{Event: "x"}, map[string]any{"event": "x", "detail": nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := canonicalPayload(tc.typed)
			if err != nil {
				t.Fatal(err)
			}
			b, err := canonicalPayload(tc.old)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("typed %s, map literal %s", a, b)
			}
		})
	}
}
