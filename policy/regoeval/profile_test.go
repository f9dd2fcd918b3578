package regoeval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/profiler"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// BenchmarkRegoRuleProfile logs, over every corpus call, the decision rules open per call by
// class, each rule's open and firing counts, and OPA's expression profile aggregated by rule:
//
//	go test -run '^$' -bench RegoRuleProfile -benchtime 1x -v ./policy/regoeval/
func BenchmarkRegoRuleProfile(b *testing.B) {
	e, inputs := corpusEngine(b)
	prof := profiler.New()
	rules := e.Gates().Rules
	openN := make([]int, len(rules))
	fired := map[string]int{}
	for _, in := range inputs {
		for i, r := range rules {
			if r.Gate.Holds(in.Action) {
				openN[i]++
			}
		}
		res, err := e.Evaluate(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range res.Findings {
			fired[strings.TrimPrefix(f.Rule, "rego:")]++
		}
	}
	type cls struct{ calls, open, ran int }
	byClass := map[string]*cls{}
	ctx := context.Background()
	for _, in := range inputs {
		open, ran, err := e.EvalTracedForTest(ctx, in, prof)
		if err != nil {
			b.Fatal(err)
		}
		c := byClass[in.Action.Class]
		if c == nil {
			c = &cls{}
			byClass[in.Action.Class] = c
		}
		c.calls++
		c.open += open
		if ran {
			c.ran++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d calls, %d decision rules\n", len(inputs), len(e.Gates().Rules))
	var names []string
	for k := range byClass {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c := byClass[k]
		fmt.Fprintf(&out, "class %-12s calls %5d  open rules/call %5.1f  evaluated %5d\n", k, c.calls, float64(c.open)/float64(c.calls), c.ran)
	}
	// Per rule: aggregate expression time by enclosing rule (file, rule start row).
	type ruleKey struct {
		file string
		row  int
	}
	starts := map[string][]int{}
	heads := map[ruleKey]string{}
	bd, _ := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	p, _ := regoeval.Parse(bd)
	for f, m := range p.Modules {
		for _, r := range m.Rules {
			starts[f] = append(starts[f], r.Location.Row)
			heads[ruleKey{f, r.Location.Row}] = r.Head.Ref().String()
		}
		sort.Ints(starts[f])
	}
	agg := map[ruleKey]*profiler.ExprStats{}
	var total int64
	for _, s := range prof.ReportTopNResults(0, []string{"total_time_ns"}) {
		if s.Location == nil {
			continue
		}
		total += s.ExprTimeNs
		rows := starts[s.Location.File]
		i := sort.SearchInts(rows, s.Location.Row+1) - 1
		k := ruleKey{s.Location.File, -1}
		if i >= 0 {
			k.row = rows[i]
		}
		a := agg[k]
		if a == nil {
			a = &profiler.ExprStats{}
			agg[k] = a
		}
		a.ExprTimeNs += s.ExprTimeNs
		a.NumEval += s.NumEval
		a.NumRedo += s.NumRedo
	}
	var keys []ruleKey
	for k := range agg {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return agg[keys[i]].ExprTimeNs > agg[keys[j]].ExprTimeNs })
	fmt.Fprintf(&out, "expression time total %d ms (profiled)\n", total/1e6)
	for _, k := range keys[:min(40, len(keys))] {
		a := agg[k]
		fmt.Fprintf(&out, "%5.1f%%  evals/call %6.1f  %s:%d %s\n", 100*float64(a.ExprTimeNs)/float64(total), float64(a.NumEval)/float64(len(inputs)), k.file, k.row, heads[k])
	}
	fmt.Fprintf(&out, "top expressions:\n")
	for _, s := range prof.ReportTopNResults(30, []string{"total_time_ns"}) {
		fmt.Fprintf(&out, "%5.1f%%  evals/call %6.2f  %v\n", 100*float64(s.ExprTimeNs)/float64(total), float64(s.NumEval)/float64(len(inputs)), s.Location)
	}
	fmt.Fprintf(&out, "rules by open count (open, fired by id):\n")
	idx := make([]int, len(rules))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return openN[idx[i]] > openN[idx[j]] })
	for _, i := range idx[:60] {
		r := rules[i]
		fmt.Fprintf(&out, "open %5d fired %5d  %s:%d %s %s gate=%v\n", openN[i], fired[r.ID], r.File, r.Line, r.Name, r.ID, r.Gate)
	}
	b.Log(out.String())
	for b.Loop() {
	}
}

// corpusEngine is the served engine (on the caller's goroutine) and every corpus call normalised.
func corpusEngine(b *testing.B) (*regoeval.Engine, []*shield.Input) {
	bd, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	norm, err := activate.Normalizer(bd, activate.Options{Workspace: activate.ExampleWorkspace, Home: activate.ExampleHome})
	if err != nil {
		b.Fatal(err)
	}
	e, err := regoeval.CompileOptions(bd, regoeval.Options{CallerGoroutine: true})
	if err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob("../../policies/testdata/*/*.jsonl")
	shared, _ := filepath.Glob("../../../shared/corpus/*.jsonl")
	var inputs []*shield.Input
	for _, path := range append(files, shared...) {
		data, _ := os.ReadFile(path)
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
	return e, inputs
}
