package celrules

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzUnguardedArgs runs the argument-guard walk over arbitrary conditions (seeded with every
// condition of the default bundle): it must never panic, and each access it reports has a key
// and a position at or after the condition's first line.
func FuzzUnguardedArgs(f *testing.F) {
	files, _ := filepath.Glob("../../policies/default/rules/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		specs, _ := ParseFile(file, data)
		for _, s := range specs {
			f.Add(s.When)
		}
	}
	for _, s := range []string{`args.command.startsWith("rm")`, `has(args.a) ? args.a : args["b"]`, `!has(args.a) || args.a == 1`,
		`tool in ["x"] && args.q`, `{"k": args.v}.k`, `[args.x, args.y].exists(z, z)`, `args[args.k]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, when string) {
		if len(when) > 4096 {
			return
		}
		acc, err := UnguardedArgs(RuleSpec{ID: "f", When: when, WhenLine: 5, Line: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acc {
			if a.Line < 4 {
				t.Fatalf("access %+v before the rule", a)
			}
		}
	})
}
