package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/shieldsec/shield/audit"
)

// TestEventNames: every engine event has its own name, and each name is one the audit trail
// already holds (audit/testdata/events.jsonl was written before events were typed), so existing
// trails and queries keep their meaning.
func TestEventNames(t *testing.T) {
	f, err := os.Open("../audit/testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	onDisk := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, err := audit.DecodeRecord(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		switch r.Type {
		case audit.TypeSandboxCanaryResult:
			onDisk[string(r.Type)] = true
		case audit.TypeAgentEvent:
			var p audit.AgentEvent
			if err := json.Unmarshal(r.Payload, &p); err != nil {
				t.Fatal(err)
			}
			onDisk[p.Event] = true
		}
	}
	seen := map[string]Event{}
	for ev := EventCanaryResult; ev <= EventEngineStopped; ev++ {
		name := ev.Name()
		if name == "" {
			t.Errorf("event %d has no name", ev)
			continue
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("events %d and %d are both %q", prev, ev, name)
		}
		seen[name] = ev
		if !onDisk[name] {
			t.Errorf("event %q is not in the testdata trail", name)
		}
		typ, payload := ev.Record(map[string]any{"k": 1})
		switch {
		case ev == EventCanaryResult && typ != audit.TypeSandboxCanaryResult:
			t.Errorf("canary result written as %s", typ)
		case ev != EventCanaryResult && (typ != audit.TypeAgentEvent || payload.(audit.AgentEvent).Event != name):
			t.Errorf("%s written as %s %+v", name, typ, payload)
		}
	}
	if Event(0).Name() != "" || Event(200).Name() != "" {
		t.Error("a value that is not an Event has a name")
	}
}
