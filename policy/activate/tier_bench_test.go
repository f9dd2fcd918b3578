package activate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// BenchmarkTiers times the normaliser and each tier of the default bundle alone on the same calls.
func BenchmarkTiers(b *testing.B) {
	bd, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pol, err := Activate(bd, Options{Workspace: ExampleWorkspace, Home: ExampleHome})
	if err != nil {
		b.Fatal(err)
	}
	inputs := make([]*shield.Input, len(benchCalls))
	argsList := make([]map[string]any, len(benchCalls))
	for i, c := range benchCalls {
		args, err := normalize.DecodeArguments(json.RawMessage(c.args), normalize.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		argsList[i] = args
		inputs[i] = &shield.Input{Call: &shield.Call{Tool: c.tool, Arguments: json.RawMessage(c.args)}, Action: pol.Normalizer.Normalize(c.tool, args, "")}
	}
	b.Run("normalize", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			c := benchCalls[i%len(benchCalls)]
			pol.Normalizer.Normalize(c.tool, argsList[i%len(benchCalls)], "")
		}
	})
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, _ = normalize.DecodeArguments(json.RawMessage(benchCalls[i%len(benchCalls)].args), normalize.Limits{})
		}
	})
	b.Run("actionhash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c := benchCalls[i%len(benchCalls)]
			_, _ = shield.ActionHash(c.tool, json.RawMessage(c.args))
		}
	})
	// Tiers 0 and 1 as the pipeline runs them on a miss: CEL, then Rego unless CEL blocked.
	b.Run("cel+rego", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			in := inputs[i%len(inputs)]
			blocked := false
			for _, t := range pol.Tiers {
				if blocked {
					break
				}
				res, err := t.Evaluate(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range res.Findings {
					blocked = blocked || f.Decision == shield.Block
				}
			}
		}
	})
	for _, t := range pol.Tiers {
		b.Run(t.Name(), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := t.Evaluate(ctx, inputs[i%len(inputs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
