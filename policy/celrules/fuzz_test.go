package celrules

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseFile feeds rule files to the strict decoder. Nothing may panic; every problem names
// the file; a file without problems yields rules whose fields are valid. (CEL parsing is
// cel-go's and fuzzed there.) Seeds are the testdata rule files plus known-bad shapes, and
// run as a plain test.
func FuzzParseFile(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/rules/*.yaml")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"rules:\n",
		"rules: [\n",
		"rules:\n  - id: x\n    when: \"true\"\n    decision: block\n    message: m\n",
		"rules:\n  - id: x\n    when: |\n      commands.exists(c,\n    decision: block\n    message: m\n",
		"rules:\n  - id: x\n    whn: true\n",
		"rules:\n  - {id: x, when: 'true', decision: block, message: m}\n---\nrules: []\n",
		"rules:\n  - id: x\n    id: y\n",
		"rules:\n  - &a {id: x, when: 'true', decision: block, message: m}\n  - *a\n",
		"rules:\n  - id: x\n    when: 'true'\n    decision: allow\n    message: m\n    examples:\n      match:\n        - {tool: Bash, arguments: {command: [1, {a: b}]}}\n",
		"rules: {a: 1}\n",
		"- 1\n- 2\n",
		"rules:\n  - id: UPPER\n    when: 1\n    decision: permit\n    severity: extreme\n    message: ''\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, probs := ParseFile("rules/f.yaml", data)
		for _, p := range probs {
			if p.File != "rules/f.yaml" || p.Line < 0 || p.Msg == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
		if len(probs) > 0 {
			return
		}
		if len(specs) == 0 {
			t.Fatal("no problems and no rules")
		}
		for _, s := range specs {
			if !idPattern.MatchString(s.ID) || s.When == "" || s.Message == "" {
				t.Fatalf("accepted an invalid rule %+v", s)
			}
		}
	})
}
