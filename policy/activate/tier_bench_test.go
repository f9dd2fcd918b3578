package activate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// processCPU is the user and system CPU time of the test process so far.
func processCPU(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// loop runs op b.N times with allocations reported and, beside the wall time, the process's CPU
// time per op (GC included): less sensitive than wall time to other jobs sharing the machine.
func loop(b *testing.B, op func(i int)) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		op(i)
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkTiers times the normaliser and each tier of the default bundle alone on the same
// calls (benchCalls), tiers 0 and 1 as a miss runs them, and Rego on a fresh goroutine per call.
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
	ctx := context.Background()
	b.Run("normalize", func(b *testing.B) {
		loop(b, func(i int) {
			c := benchCalls[i%len(benchCalls)]
			pol.Normalizer.Normalize(c.tool, argsList[i%len(benchCalls)], "")
		})
	})
	b.Run("decode", func(b *testing.B) {
		loop(b, func(i int) {
			_, _ = normalize.DecodeArguments(json.RawMessage(benchCalls[i%len(benchCalls)].args), normalize.Limits{})
		})
	})
	b.Run("actionhash", func(b *testing.B) {
		loop(b, func(i int) {
			c := benchCalls[i%len(benchCalls)]
			_, _ = shield.ActionHash(c.tool, json.RawMessage(c.args))
		})
	})
	for _, t := range pol.Tiers {
		b.Run(t.Name(), func(b *testing.B) {
			loop(b, func(i int) {
				if _, err := t.Evaluate(ctx, inputs[i%len(inputs)]); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	// Tiers 0 and 1 as the pipeline runs them on a miss: CEL, then Rego unless CEL blocked.
	b.Run("cel+rego", func(b *testing.B) {
		loop(b, func(i int) {
			in := inputs[i%len(inputs)]
			for _, t := range pol.Tiers {
				res, err := t.Evaluate(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				blocked := false
				for _, f := range res.Findings {
					blocked = blocked || f.Decision == shield.Block
				}
				if blocked {
					break
				}
			}
		})
	})
	// Rego on a fresh goroutine per call, as gRPC runs a call when its stream workers are busy:
	// on the evaluation goroutines (what the service does) and on the caller's, whose stack
	// grows by copying on every call.
	inline, err := regoeval.CompileOptions(bd, regoeval.Options{CallerGoroutine: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		t    shield.Tier
	}{{"rego-fresh-goroutine", pol.Tiers[1]}, {"rego-fresh-inline", inline}} {
		b.Run(v.name, func(b *testing.B) {
			done := make(chan error)
			loop(b, func(i int) {
				in := inputs[i%len(inputs)]
				go func() {
					_, err := v.t.Evaluate(ctx, in)
					done <- err
				}()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkRegoCorpus: the Rego tier of the default bundle, on the caller's goroutine, over every
// call of the labelled corpora (policies/testdata, and the shared corpus beside the repository
// when present) in turn: the six calls of BenchmarkTiers are few and short, the corpora hold the
// written files, messages and long commands the detection modules look at.
func BenchmarkRegoCorpus(b *testing.B) {
	bd, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	norm, err := Normalizer(bd, Options{Workspace: ExampleWorkspace, Home: ExampleHome})
	if err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob("../../policies/testdata/*/*.jsonl")
	shared, _ := filepath.Glob("../../../shared/corpus/*.jsonl")
	var inputs []*shield.Input
	for _, path := range append(files, shared...) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			var c struct {
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if json.Unmarshal([]byte(line), &c) != nil || c.Tool == "" {
				continue
			}
			args, err := normalize.DecodeArguments(c.Arguments, normalize.Limits{})
			if err != nil {
				continue
			}
			inputs = append(inputs, &shield.Input{Call: &shield.Call{Tool: c.Tool, Arguments: c.Arguments}, Action: norm.Normalize(c.Tool, args, "")})
		}
	}
	if len(inputs) < 2000 {
		b.Fatalf("only %d corpus calls", len(inputs))
	}
	ctx := context.Background()
	// served: as the service evaluates (on the caller's goroutine); no-regex-filter: regex.match
	// as written, through OPA's built-in and cache (the reference of the prefilter).
	for _, v := range []struct {
		name string
		opt  regoeval.Options
	}{
		{"served", regoeval.Options{CallerGoroutine: true}},
		{"no-regex-filter", regoeval.Options{CallerGoroutine: true, NoRegexFilter: true}},
	} {
		e, err := regoeval.CompileOptions(bd, v.opt)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(v.name, func(b *testing.B) {
			loop(b, func(i int) {
				if _, err := e.Evaluate(ctx, inputs[i%len(inputs)]); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
