package policytest_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/policy/policytest"
)

const coverRules = gateRules + `  - id: exec.never
    classes: [exec]
    when: names.exists(n, n == "frobnicate-the-kernel")
    decision: escalate
    message: never seen
`

// Row 6 (deny for Write) is covered only by the labelled case; row 13 (metadata) by nothing.
const coverRego = `package shield

decision := {"deny": d}

d contains {"rule": "write-etc", "reason": "no"} if {
	input.tool == "Write"
	some p in input.paths
	startswith(p.path, "/etc/")
}

d contains {"rule": "metadata", "reason": "no"} if {
	some u in input.urls
	u.host == "169.254.169.254"
}
`

const coverRegoTest = `package shield_test

import data.shield

test_nothing_denied_for_ls if {
	count(shield.decision.deny) == 0 with input as {"tool": "Bash", "paths": [], "urls": []}
}
`

func coverageOf(t *testing.T, files map[string]string) *policytest.Coverage {
	t.Helper()
	dir := gateBundle(t, `{"revision":"1","roots":["shield"]}`, files)
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := activate.Build(b, activate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, norm, err := activate.Reference(b, pol, activate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := policytest.Run(context.Background(), b, norm.Normalize, policytest.Options{Policy: ref, Coverage: true})
	if !rep.OK() {
		t.Fatalf("bundle tests: %v", rep.Err())
	}
	if rep.Coverage == nil {
		t.Fatal("no coverage")
	}
	return rep.Coverage
}

func TestCoverage(t *testing.T) {
	base := map[string]string{"rules/r.yaml": coverRules, "rego/shield.rego": coverRego, "rego/shield_test.rego": coverRegoTest}
	c := coverageOf(t, base)
	if len(c.Rego) != 1 || c.Rego[0].File != "rego/shield.rego" {
		t.Fatalf("rego files %+v, want the one non-test module", c.Rego)
	}
	notCovered := strings.Join(c.Rego[0].NotCovered, ",")
	for _, row := range []string{"6", "13"} {
		if !strings.Contains(","+notCovered+",", ","+row+",") && !strings.Contains(notCovered, row+"-") {
			t.Errorf("row %s not reported uncovered: %q", row, notCovered)
		}
	}
	if c.RegoPercent <= 0 || c.RegoPercent >= 100 {
		t.Errorf("rego %.1f%%", c.RegoPercent)
	}
	fired := map[string]bool{}
	for _, r := range c.CEL {
		fired[r.Rule] = r.Fired()
	}
	if !fired["destructive.rm-root"] || fired["exec.never"] || len(c.CEL) != 2 || c.CELPercent != 50 {
		t.Errorf("cel coverage %+v (%.1f%%): want rm-root fired, exec.never not", c.CEL, c.CELPercent)
	}
	if len(c.Below(100)) != 2 || len(c.Below(20)) != 0 {
		t.Errorf("Below(100) = %q, Below(20) = %q", c.Below(100), c.Below(20))
	}
	var buf bytes.Buffer
	c.Write(&buf, false)
	for _, w := range []string{"exec.never: NEVER FIRED", "coverage rego rego/shield.rego", "TOTAL 1/2 rules fired = 50.0%"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("coverage output lacks %q:\n%s", w, buf.String())
		}
	}

	// A labelled case that writes under /etc covers the write-etc rule's body and fires
	// nothing new in CEL; one that runs the never-seen program fires exec.never.
	withCases := map[string]string{"tests/c.jsonl": `{"id":"w","category":"write","tool":"Write","arguments":{"file_path":"/etc/passwd","content":"x"},"expect":"BLOCK"}
{"id":"f","category":"exec","tool":"Bash","arguments":{"command":"frobnicate-the-kernel now"},"expect":"ESCALATE"}
`}
	for k, v := range base {
		withCases[k] = v
	}
	c2 := coverageOf(t, withCases)
	if c2.RegoPercent <= c.RegoPercent {
		t.Errorf("labelled cases did not add Rego coverage: %.1f%% → %.1f%%", c.RegoPercent, c2.RegoPercent)
	}
	if strings.Contains(strings.Join(c2.Rego[0].NotCovered, ","), "6") {
		t.Errorf("row 6 still uncovered with a Write case: %q", c2.Rego[0].NotCovered)
	}
	if c2.CELPercent != 100 {
		t.Errorf("cel coverage with cases %+v", c2.CEL)
	}
}
