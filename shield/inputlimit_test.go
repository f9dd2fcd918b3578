package shield

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield/normalize"
)

// TestInputOverLimitBlockedAndAudited: a command over a normaliser input limit (issue 10, C1) is
// blocked by the pipeline whatever the tiers say, with the limit as the reason, and audited.
func TestInputOverLimitBlockedAndAudited(t *testing.T) {
	rec := &recorder{}
	allow := &fakeTier{level: 0, name: "cel", fn: says(Allow, "allow-all")}
	pol := newPolicy(allow)
	pol.Normalizer = normalize.New(nil, normalize.Options{})
	p, err := New(Config{Recorder: rec}, pol)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		strings.Repeat("(", 160000) + "ls" + strings.Repeat(")", 160000), // the C1 input, 320 KB
		strings.Repeat("$(", 300) + "id" + strings.Repeat(")", 300),      // deep, 1.2 KB
	} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		v, err := p.Evaluate(context.Background(), call("exec", string(args)), EvalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Decision != Block || len(v.Rules) != 1 || v.Rules[0] != RuleInputLimit || !strings.Contains(v.Reason, "input limit") {
			t.Fatalf("verdict %s rules %v reason %q", v.Decision, v.Rules, v.Reason)
		}
	}
	if len(rec.recs) != 2 || rec.recs[1].Verdict.Decision != Block || !rec.recs[1].Action.OverLimit() {
		t.Fatalf("%d audit records", len(rec.recs))
	}
}
