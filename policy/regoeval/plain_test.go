package regoeval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// plainOPA is the reference the served engine is compared with: the bundle's non-test modules
// as written (no gate expression, no gate built-in), its data (derived forms included, which
// the modules read) in OPA's plain in-memory store (Go values, converted on every read), OPA's
// default built-in cache, the whole input, on the caller's goroutine: plain
// rego.New(...).PrepareForEval and Eval, as `opa eval` runs it.
type plainOPA struct {
	pq rego.PreparedEvalQuery
}

func newPlainOPA(tb testing.TB, b *policy.Bundle) *plainOPA {
	tb.Helper()
	p, err := regoeval.Parse(b)
	if err != nil {
		tb.Fatal(err)
	}
	// A deep copy through JSON: the served engine's store must not share maps with this one.
	raw, err := json.Marshal(p.Data)
	if err != nil {
		tb.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		tb.Fatal(err)
	}
	opts := []func(*rego.Rego){
		rego.Query(regoeval.Query),
		rego.Store(inmem.NewFromObject(data)),
		rego.Capabilities(p.Capabilities),
		rego.SetRegoVersion(p.RegoVersion),
	}
	var files []string
	for f := range p.Modules {
		if !regoeval.IsTestFile(f) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		opts = append(opts, rego.ParsedModule(p.Modules[f]))
	}
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return &plainOPA{pq: pq}
}

// findings evaluates the decision and lists its entries as "key rule reason", sorted.
func (o *plainOPA) findings(ctx context.Context, in *shield.Input) ([]string, error) {
	input, err := regoeval.InputValue(in.Action, in.Call)
	if err != nil {
		return nil, err
	}
	rs, err := o.pq.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil {
		return nil, err
	}
	var out []string
	if len(rs) == 0 {
		return out, nil
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, fmt.Errorf("%d results", len(rs))
	}
	doc, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decision is %T", rs[0].Expressions[0].Value)
	}
	for _, k := range []string{"deny", "escalate", "allow"} {
		list, _ := doc[k].([]any)
		for _, x := range list {
			m, _ := x.(map[string]any)
			out = append(out, fmt.Sprintf("%s %v %v %v", k, m["rule"], m["reason"], m["severity"]))
		}
	}
	sort.Strings(out)
	return out, nil
}

// served lists the served engine's findings the same way.
func served(res shield.Result) []string {
	keys := map[shield.Decision]string{shield.Block: "deny", shield.Escalate: "escalate", shield.Allow: "allow"}
	var out []string
	for _, f := range res.Findings {
		sev := any(f.Severity)
		if f.Severity == "" {
			sev = nil
		}
		out = append(out, fmt.Sprintf("%s %s %s %v", keys[f.Decision], strings.TrimPrefix(f.Rule, "rego:"), f.Reason, sev))
	}
	sort.Strings(out)
	return out
}

// corpusFiles are every corpus of the repository (policies/testdata/**/*.jsonl) and the shared
// corpora beside it when present.
func corpusFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir("../../policies/testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	shared, _ := filepath.Glob("../../../shared/corpus/*.jsonl")
	return append(files, shared...)
}

type corpusCall struct {
	file, id string
	in       *shield.Input
}

// readCorpora normalises every call of every corpus with the service's normaliser.
func readCorpora(tb testing.TB, norm *normalize.Normalizer) []corpusCall {
	tb.Helper()
	var calls []corpusCall
	for _, path := range corpusFiles(tb) {
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var c struct {
				ID        string          `json:"id"`
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				tb.Fatalf("%s:%d: %v", path, n+1, err)
			}
			args, err := normalize.DecodeArguments(c.Arguments, normalize.Limits{})
			if err != nil {
				continue // refused before any tier sees it
			}
			in := &shield.Input{
				Call:   &shield.Call{Tool: c.Tool, Arguments: c.Arguments, Context: shield.CallContext{SessionID: "s", Runtime: "claude-code"}},
				Action: norm.Normalize(c.Tool, args, ""),
			}
			calls = append(calls, corpusCall{file: filepath.Base(path), id: c.ID, in: in})
		}
	}
	return calls
}

// TestServedEqualsPlainOPA: every call of every corpus gets exactly the same deny, escalate and
// allow findings (rule, reason, severity) from the served engine (gates, pruned input, built-in
// cache, data as Rego values, evaluation goroutines) as from plain OPA on the same bundle. Any
// difference is a changed verdict.
func TestServedEqualsPlainOPA(t *testing.T) {
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	norm, err := activate.Normalizer(b, activate.Options{Workspace: activate.ExampleWorkspace, Home: activate.ExampleHome})
	if err != nil {
		t.Fatal(err)
	}
	e, err := regoeval.Compile(b)
	if err != nil {
		t.Fatal(err)
	}
	if off := e.Gates().Off; off != "" {
		t.Fatalf("gating is off for the default bundle: %s", off)
	}
	if e.Dispatched() == 0 {
		t.Fatal("no function of the default bundle is dispatched on an argument's field")
	}
	if e.RegexCalls() == 0 {
		t.Fatal("no regex.match call of the default bundle goes through the prefiltered built-in")
	}
	ref := newPlainOPA(t, b)
	calls := readCorpora(t, norm)
	if len(calls) < 5000 {
		t.Fatalf("only %d corpus calls", len(calls))
	}
	ctx := context.Background()
	perFile := map[string]int{}
	findings := 0
	for _, c := range calls {
		res, err := e.Evaluate(ctx, c.in)
		want, werr := ref.findings(ctx, c.in)
		if (err == nil) != (werr == nil) {
			t.Errorf("%s %s: served error %v, plain OPA error %v", c.file, c.id, err, werr)
			continue
		}
		if err != nil {
			continue // both failed: both fail the call closed
		}
		got := served(res)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s %s: findings differ (-plain OPA +served):\n%s", c.file, c.id, c.in.Call.Tool, diff)
		}
		perFile[c.file]++
		findings += len(want)
	}
	t.Logf("%d calls (%v), %d findings, identical", len(calls), perFile, findings)
}

// FuzzServedEqualsPlainOPA: any call (tool and JSON arguments, decoded and normalised as the
// service does) gets the same findings, or an error from both, from the served engine and from
// plain OPA. Seeded with a call of each class of the corpora.
func FuzzServedEqualsPlainOPA(f *testing.F) {
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	norm, err := activate.Normalizer(b, activate.Options{Workspace: activate.ExampleWorkspace, Home: activate.ExampleHome})
	if err != nil {
		f.Fatal(err)
	}
	e, err := regoeval.Compile(b)
	if err != nil {
		f.Fatal(err)
	}
	ref := newPlainOPA(f, b)
	seen := map[string]int{}
	for _, c := range readCorpora(f, norm) {
		if seen[c.in.Action.Class] < 3 {
			seen[c.in.Action.Class]++
			f.Add(c.in.Call.Tool, string(c.in.Call.Arguments))
		}
	}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		args, err := normalize.DecodeArguments([]byte(raw), normalize.Limits{})
		if err != nil {
			return
		}
		in := &shield.Input{Call: &shield.Call{Tool: tool, Arguments: json.RawMessage(raw), Context: shield.CallContext{SessionID: "s"}},
			Action: norm.Normalize(tool, args, "")}
		ctx := context.Background()
		res, err := e.Evaluate(ctx, in)
		want, werr := ref.findings(ctx, in)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s %s: served error %v, plain OPA error %v", tool, raw, err, werr)
		}
		if err == nil {
			if diff := cmp.Diff(want, served(res)); diff != "" {
				t.Fatalf("%s %s: findings differ (-plain OPA +served):\n%s", tool, raw, diff)
			}
		}
	})
}
