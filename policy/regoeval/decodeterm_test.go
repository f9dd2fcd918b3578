package regoeval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"
)

// decodeTermSeeds are decision documents written as Rego terms: conforming ones (sets, arrays,
// null, several entries of one rule, severities) and ones outside the contract at each level.
var decodeTermSeeds = []string{
	`{}`,
	`{"deny": set(), "escalate": set(), "allow": set()}`,
	`{"deny": {{"rule": "b", "reason": "r2"}, {"rule": "a", "reason": "r1"}}}`,
	`{"escalate": {{"rule": "x", "reason": "z"}, {"rule": "x", "reason": "a"}, {"rule": "w", "reason": "m", "severity": "high"}}}`,
	`{"allow": [{"rule": "k", "reason": "ok"}, {"rule": "j", "reason": "ok"}], "deny": null}`,
	`{"deny": [{"rule": "x", "reason": "2"}, {"rule": "x", "reason": "1"}], "escalate": {{"rule": "y", "reason": "1"}}, "allow": {{"rule": "z", "reason": ""}}}`,
	`{"allow": {{"rule": "only-rule"}}}`,
	// Outside the contract.
	`"deny"`,
	`null`,
	`[{"rule": "a", "reason": "b"}]`,
	`{"deny": ["a"]}`,
	`{"deny": "a"}`,
	`{"deny": {"rule": "a"}}`,
	`{"block": set()}`,
	`{1: set()}`,
	`{"deny": set(), 2: set()}`,
	`{"escalate": [{"rule": "a", "reason": 3}]}`,
	`{"escalate": [{"rule": "a", "reason": null}]}`,
	`{"escalate": [{"rule": 1, "reason": "r"}]}`,
	`{"escalate": [{"rule": "a", "reason": "r", "extra": "x"}]}`,
	`{"escalate": [{"rule": "a", "reason": "r", 7: "x"}]}`,
	`{"deny": [{"reason": "no rule"}]}`,
	`{"deny": [{"rule": "", "reason": "empty rule"}]}`,
	`{"deny": [{"rule": "a", "reason": "r"}, 5]}`,
	`{"deny": {{"rule": "a", "reason": "r"}, {"rule": "b", "reason": ["x"]}}}`,
}

// checkDecodeTerm compares decodeTerm with decode on the converted document: the same
// findings, or the same error text.
func checkDecodeTerm(t *testing.T, src string) {
	t.Helper()
	term, err := ast.ParseTerm(src)
	if err != nil || !term.IsGround() {
		return
	}
	x, jerr := ast.JSON(term.Value)
	got, gerr := decodeTerm(term.Value)
	if jerr != nil {
		if gerr == nil {
			t.Fatalf("%s: decodeTerm = %+v, want an error (the document does not convert: %v)", src, got, jerr)
		}
		return
	}
	want, werr := decode(x)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("%s: decodeTerm error %v, decode error %v", src, gerr, werr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s: findings (-decode +decodeTerm):\n%s", src, diff)
	}
}

func TestDecodeTermEqualsDecode(t *testing.T) {
	conforming := 0
	for _, src := range decodeTermSeeds {
		checkDecodeTerm(t, src)
		if _, ok := decodeConforming(ast.MustParseTerm(src).Value); ok {
			conforming++
		}
	}
	// The fast path must be the one conforming documents take (7 seeds above), and only them.
	if conforming != 7 {
		t.Errorf("%d seeds decoded on the fast path, want 7", conforming)
	}
}

// FuzzDecodeTerm: any ground Rego term as a decision document; decodeTerm must agree with decode
// on the converted document.
func FuzzDecodeTerm(f *testing.F) {
	for _, s := range decodeTermSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		checkDecodeTerm(t, src)
	})
}
