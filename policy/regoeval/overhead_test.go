package regoeval_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
)

// cpuNow is the process's user and system CPU time so far.
func cpuNow() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRegoOverhead: the corpus with the gates as served, all closed (the fixed cost of an
// evaluation) and all open, and the input alone.
func BenchmarkRegoOverhead(b *testing.B) {
	e, inputs := corpusEngine(b)
	ctx := context.Background()
	for _, v := range []struct {
		name  string
		force func(int, bool) bool
	}{
		{"gated", func(_ int, o bool) bool { return o }},
		{"allclosed", func(int, bool) bool { return false }},
		{"allopen", func(int, bool) bool { return true }},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuNow()
			i := 0
			for b.Loop() {
				if err := e.EvalBitsForTest(ctx, inputs[i%len(inputs)], v.force); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("input", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := regoeval.InputValuePrunedForTest(e, inputs[i%len(inputs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkRegoRuleCost: for each decision rule alone (open where its gate holds), the CPU it
// adds over an evaluation with every gate closed, on a sample of the corpus.
func BenchmarkRegoRuleCost(b *testing.B) {
	e, all := corpusEngine(b)
	var inputs = all[:0:0]
	for i := 0; i < len(all); i += 8 {
		inputs = append(inputs, all[i])
	}
	ctx := context.Background()
	run := func(force func(int, bool) bool) int64 {
		c0 := cpuNow()
		for _, in := range inputs {
			if err := e.EvalBitsForTest(ctx, in, force); err != nil {
				b.Fatal(err)
			}
		}
		return cpuNow() - c0
	}
	base := run(func(int, bool) bool { return false })
	gated := run(func(_ int, o bool) bool { return o })
	rules := e.Gates().Rules
	type rc struct {
		i    int
		cost int64
	}
	var costs []rc
	var sum int64
	for i := range rules {
		c := run(func(j int, o bool) bool { return j == i && o }) - base
		costs = append(costs, rc{i, c})
		sum += c
	}
	sort.Slice(costs, func(a, b int) bool { return costs[a].cost > costs[b].cost })
	var out strings.Builder
	fmt.Fprintf(&out, "%d calls: all closed %d µs/call, gated %d µs/call, sum of single-rule costs %d µs/call\n", len(inputs), base/1000/int64(len(inputs)), gated/1000/int64(len(inputs)), sum/1000/int64(len(inputs)))
	for _, c := range costs[:40] {
		r := rules[c.i]
		open := 0
		for _, in := range inputs {
			if r.Gate.Holds(in.Action) {
				open++
			}
		}
		g := r.Gate.String()
		if len(g) > 150 {
			g = g[:150] + "…"
		}
		fmt.Fprintf(&out, "%6.1f µs/call %5.1f%% open %4d  %s:%d %s %s gate=%s\n", float64(c.cost)/1000/float64(len(inputs)), 100*float64(c.cost)/float64(sum), open, r.File, r.Line, r.Name, r.ID, g)
	}
	b.Log(out.String())
	for b.Loop() {
	}
}

// BenchmarkRegoOneRule: one exec corpus call (two commands, two effects or more), with every
// gate closed and with only exec.outside-envelope or exec.known-effects open.
func BenchmarkRegoOneRule(b *testing.B) {
	e, all := corpusEngine(b)
	var in *shield.Input
	for _, x := range all {
		if x.Action.Class == "exec" && len(x.Action.Commands) == 2 && len(x.Action.Effects) >= 2 {
			in = x
			break
		}
	}
	b.Logf("call: %s effects %d commands %d", in.Action.Command, len(in.Action.Effects), len(in.Action.Commands))
	rules := e.Gates().Rules
	for _, id := range []string{"", "exec.outside-envelope", "exec.known-effects"} {
		b.Run("rule="+id, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuNow()
			for b.Loop() {
				if err := e.EvalBitsForTest(context.Background(), in, func(j int, o bool) bool {
					return o && rules[j].ID == id && rules[j].Line != 38 && rules[j].Line != 44 && rules[j].Line != 56
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRegoAB interleaves two engines call by call over the corpus (A then B on each call)
// and reports each one's wall time per call: under a shared machine's varying load both see
// the same minutes. A is the served configuration, B without function dispatch.
func BenchmarkRegoAB(b *testing.B) {
	ea, inputs := corpusEngine(b)
	bd, _ := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	eb, err := regoeval.CompileOptions(bd, regoeval.Options{CallerGoroutine: true, NoDispatch: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var ta, tb time.Duration
	i := 0
	for b.Loop() {
		in := inputs[i%len(inputs)]
		t0 := time.Now()
		if _, err := ea.Evaluate(ctx, in); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := eb.Evaluate(ctx, in); err != nil {
			b.Fatal(err)
		}
		ta += t1.Sub(t0)
		tb += time.Since(t1)
		i++
	}
	b.ReportMetric(float64(ta.Nanoseconds())/float64(i), "A-ns/call")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(i), "B-ns/call")
}
