package policytest

import (
	"os"
	"strings"
	"testing"

	"github.com/shieldsec/shield/policy"
)

// FuzzGateCases feeds arbitrary case files to the gate's reader: it must never panic, and
// every line is either a case or a problem naming its line.
func FuzzGateCases(f *testing.F) {
	for _, file := range []string{"../../policies/default/tests/dev.jsonl", "../../policies/testdata/corpus/families.jsonl"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i += 97 {
			f.Add([]byte(lines[i]))
		}
	}
	f.Add([]byte(`{"tool":"Bash","expect":"MAYBE"}` + "\n\n" + `{"tool":"","expect":"ALLOW"}`))
	f.Add([]byte(`{"id":1}` + "\n" + `[1,2]` + "\n" + `{"tool":"x","expect":"BLOCK","arguments":null,"context":{"labels":{"a":"b"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &policy.Bundle{Files: map[string][]byte{"tests/f.jsonl": data}}
		_, cases, probs := readGateCases(b)
		lines := 0
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(cases)+len(probs) > lines {
			t.Fatalf("%d cases and %d problems from %d non-empty lines", len(cases), len(probs), lines)
		}
		for _, p := range probs {
			if p.File != "tests/f.jsonl" || p.Line < 1 {
				t.Fatalf("problem without file:line: %+v", p)
			}
		}
		for _, c := range cases {
			if c.Tool == "" || (c.Expect != "ALLOW" && c.Expect != "BLOCK" && c.Expect != "ESCALATE") || len(c.Arguments) == 0 {
				t.Fatalf("accepted case %+v", c)
			}
		}
	})
}
