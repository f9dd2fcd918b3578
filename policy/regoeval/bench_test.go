package regoeval

import (
	"context"
	"testing"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// BenchmarkEvaluate runs the testdata policy (five rules over urls, recipients and context) on
// an exec call none of them matches, and on a network call one of them denies.
//
//	go test ./policy/regoeval -run '^$' -bench . -benchmem
func BenchmarkEvaluate(b *testing.B) {
	e := compileGood(b)
	exec := &shield.Input{
		Call: &shield.Call{Tool: "Bash", Context: shield.CallContext{SessionID: "s", Labels: map[string]string{"team": "a"}}},
		Action: &normalize.Action{Tool: "Bash", Class: normalize.ClassExec, Known: true,
			Args: map[string]any{"command": "go test ./..."}, Cwd: "/w", Workspace: "/w", Command: "go test ./...",
			Commands: []normalize.Command{{Name: "go", Args: []string{"test", "./..."}, Argv: []string{"go", "test", "./..."}, Raw: "go test ./..."}},
			Strings:  []string{"go test ./..."}},
	}
	for _, tc := range []struct {
		name  string
		in    *shield.Input
		finds int
	}{
		{"exec-no-match", exec, 0},
		{"net-deny", netInput("webhook.site", normalize.IPHostname), 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Evaluate(ctx, tc.in)
				if err != nil || len(res.Findings) != tc.finds {
					b.Fatalf("Evaluate = %+v, %v", res, err)
				}
			}
		})
	}
	b.Run("input-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := InputValue(exec.Action, exec.Call); err != nil {
				b.Fatal(err)
			}
		}
	})
}
