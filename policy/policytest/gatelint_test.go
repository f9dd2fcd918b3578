package policytest

import (
	"strings"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
)

// TestGateNotes: the default bundle's rules the gate cannot index are listed (general.truncated
// reads a bare bool no atom covers), and indexed ones are not.
func TestGateNotes(t *testing.T) {
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range GateNotes(b) {
		all = append(all, p.String())
	}
	text := strings.Join(all, "\n")
	if !strings.Contains(text, `rule "general.truncated": the gate cannot index it`) {
		t.Errorf("notes do not list general.truncated:\n%s", text)
	}
	if strings.Contains(text, "exec.reverse-shell") || strings.Contains(text, "gating is off") {
		t.Errorf("notes list an indexed rule or gating off:\n%s", text)
	}
}
