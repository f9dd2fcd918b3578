package celrules

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

func loadTestdata(t testing.TB, dir string) *policy.Bundle {
	t.Helper()
	b, err := policy.Load("testdata/"+dir, policy.LoadOptions{})
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	return b
}

func compileGood(t testing.TB) *Engine {
	t.Helper()
	e, err := Compile(loadTestdata(t, "good"), testNorm)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return e
}

func input(tool string, args map[string]any, cwd string, labels map[string]string) *shield.Input {
	return &shield.Input{
		Call:   &shield.Call{Tool: tool, Context: shield.CallContext{Cwd: cwd, Labels: labels, SessionID: "s1"}},
		Action: testNorm(tool, args, cwd),
	}
}

func TestEvaluate(t *testing.T) {
	e := compileGood(t)
	if got, want := e.RuleCount(), 7; got != want {
		t.Errorf("RuleCount = %d, want %d", got, want)
	}
	if e.Level() != 0 || e.Name() != "cel" {
		t.Errorf("Level, Name = %d, %q", e.Level(), e.Name())
	}
	tests := []struct {
		name string
		in   *shield.Input
		want []shield.Finding
	}{
		{
			name: "rm root blocks",
			in:   input("Bash", map[string]any{"command": "sudo rm -rf /"}, "/w", nil),
			want: []shield.Finding{{Decision: shield.Block, Rule: "cel:destructive.rm-root", Reason: "refusing to delete the root file system", Severity: "critical", Confidence: 1}},
		},
		{
			name: "sudo escalates",
			in:   input("Bash", map[string]any{"command": "sudo ls"}, "/w", nil),
			want: []shield.Finding{{Decision: shield.Escalate, Rule: "cel:exec.sudo", Reason: "privileged command needs a human", Severity: "medium", Confidence: 1}},
		},
		{
			name: "ordinary command: no opinion",
			in:   input("Bash", map[string]any{"command": "go test ./..."}, "/w", nil),
		},
		{
			name: "quarantined session escalates on any class, allow rule not consulted",
			in: func() *shield.Input {
				in := input("Read", map[string]any{"file_path": "a.go"}, "/w", map[string]string{"quarantine": "true"})
				return in
			}(),
			want: []shield.Finding{{Decision: shield.Escalate, Rule: "cel:session.quarantined", Reason: "this session is quarantined", Confidence: 1}},
		},
		{
			name: "workspace read allowed",
			in: func() *shield.Input {
				in := input("Read", map[string]any{"file_path": "a.go"}, "/w", nil)
				return in
			}(),
			want: []shield.Finding{{Decision: shield.Allow, Rule: "cel:files.workspace-read", Reason: "reading below the working directory", Confidence: 1}},
		},
		{
			name: "unknown class sees only classless rules",
			in:   &shield.Input{Action: &normalize.Action{Tool: "mystery", Class: normalize.ClassUnknown}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Evaluate(context.Background(), tc.in)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tc.want, res.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateNoAction(t *testing.T) {
	e := compileGood(t)
	if _, err := e.Evaluate(context.Background(), &shield.Input{}); !errors.Is(err, ErrEvaluation) {
		t.Fatalf("Evaluate(no action) error = %v, want ErrEvaluation", err)
	}
}

func TestEvaluateCancelled(t *testing.T) {
	e := compileGood(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Evaluate(ctx, input("Bash", map[string]any{"command": "rm -rf /"}, "/", nil))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate(cancelled) error = %v, want context.Canceled", err)
	}
}

// bundleOf builds an in-memory bundle from files.
func bundleOf(t testing.TB, files map[string]string) *policy.Bundle {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{".manifest": `{"revision": "t"}`}
	for k, v := range files {
		all[k] = v
	}
	writeFiles(t, dir, all)
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return b
}

// TestCostBoundRefusedAtLoad: a rule whose static worst case is over the bound never serves,
// and the problem names the rule; under a larger bound the same rule compiles.
func TestCostBoundRefusedAtLoad(t *testing.T) {
	b := bundleOf(t, map[string]string{"rules/cost.yaml": `
rules:
  - id: expensive
    when: strings.exists(s, strings.exists(t, strings.exists(u, (s + t + u).contains("needle"))))
    decision: allow
    message: never reached
`})
	_, err := Compile(b, testNorm)
	if err == nil || !strings.Contains(err.Error(), `rule "expensive": worst-case cost`) {
		t.Fatalf("Compile = %v, want the rule refused over the cost bound", err)
	}
	if _, err := CompileOptions(b, testNorm, Options{CostLimit: 1 << 62}); err != nil {
		t.Fatalf("Compile under a larger bound: %v", err)
	}
}

func TestMissingKeyIsError(t *testing.T) {
	b := bundleOf(t, map[string]string{"rules/r.yaml": `
rules:
  - id: needs-x
    when: args.x == "y"
    decision: allow
    message: x is y
`})
	e, err := Compile(b, testNorm)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	_, err = e.Evaluate(context.Background(), input("Bash", map[string]any{"command": "ls"}, "/", nil))
	if err == nil {
		t.Fatal("Evaluate with a missing key succeeded, want an error (fails closed)")
	}
	if !strings.Contains(err.Error(), "rule needs-x") || !strings.Contains(err.Error(), "no such key") {
		t.Errorf("error %v does not name the rule and the key", err)
	}
}

func TestCompileProblems(t *testing.T) {
	b := bundleOf(t, map[string]string{
		"rules/a.yaml": `rules:
  - id: a.unknown-var
    when: nosuch == "x"
    decision: block
    message: m
  - id: a.bad-field
    classes: [exec]
    when: |
      commands.exists(c,
        c.nmae == "rm")
    decision: block
    message: m
  - id: a.not-bool
    when: '"x"'
    decision: block
    message: m
`,
		"rules/b.yaml": `rules:
  - id: b.unknown-key
    whn: true
    decision: block
    message: m
`,
		"rules/c.yaml": `rules:
  - id: a.unknown-var
    when: "true"
    decision: permit
    message: m
    examples:
      match:
        - {tool: Bash, arguments: {command: ls}}
`,
		"rules/d.yaml": "rules: [\n",
		"rules/e.yaml": `rules:
  - id: e.failing-example
    classes: [exec]
    when: command == "ls"
    decision: block
    message: m
    examples:
      match:
        - {tool: Bash, arguments: {command: "pwd"}}
`,
	})
	_, err := Compile(b, testNorm)
	if err == nil {
		t.Fatal("Compile succeeded, want problems")
	}
	var ps policy.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T is not policy.Problems: %v", err, err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		`rules/a.yaml:3:11: rule "a.unknown-var": undeclared reference to 'nosuch'`,
		`rules/a.yaml:10:`,
		`undefined field 'nmae'`,
		`rules/a.yaml:14: rule "a.not-bool": when has type string, want bool`,
		`rules/b.yaml:3: field whn not found`,
		`rules/c.yaml:2: rule "a.unknown-var": duplicate id (first at rules/a.yaml:2)`,
		`rules/d.yaml:1: `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q; got:\n%s", want, text)
		}
	}
	// Examples are not run while there are compile problems.
	if strings.Contains(text, "example match") {
		t.Errorf("examples were run despite compile problems:\n%s", text)
	}
}

func TestFailingExampleIsCompileError(t *testing.T) {
	b := bundleOf(t, map[string]string{"rules/e.yaml": `rules:
  - id: e.failing-example
    classes: [exec]
    when: command == "ls"
    decision: block
    message: m
    examples:
      match:
        - {tool: Bash, arguments: {command: "pwd"}}
      not_match:
        - {tool: Bash, arguments: {command: "ls"}}
`})
	_, err := Compile(b, testNorm)
	if err == nil {
		t.Fatal("Compile succeeded, want failing examples")
	}
	for _, want := range []string{
		`rules/e.yaml:9: rule "e.failing-example": example match[0] (Bash): did not match`,
		`rules/e.yaml:11: rule "e.failing-example": example not_match[0] (Bash): matched`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := Compile(b, nil); err == nil || !strings.Contains(err.Error(), "no normaliser") {
		t.Errorf("Compile without a normaliser = %v, want an error naming it", err)
	}
}

func TestBase64Decode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"aWQK", "id\n"},
		{"aWQ", "id"},
		{"aW Q\nK", "id\n"},
		{"-_8", "\xfb\xff"},
		{"not base64!", ""},
	}
	for _, tc := range tests {
		if got := base64Decode(tc.in); got != tc.want {
			t.Errorf("base64Decode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestToolsFilterAndCombination(t *testing.T) {
	b := bundleOf(t, map[string]string{"rules/r.yaml": `rules:
  - id: read.only-tool
    tools: [Read]
    when: "true // a trailing comment must not swallow the next rule"
    decision: escalate
    message: read tool
  - id: any.block-one
    when: tool == "Bash" && command.contains("one")
    decision: block
    message: one
  - id: any.block-two
    when: tool == "Bash" && command.contains("two")
    decision: block
    message: two
  - id: any.allow
    when: "true"
    decision: allow
    message: fine
`})
	e, err := Compile(b, testNorm)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	rules := func(in *shield.Input) []string {
		res, err := e.Evaluate(context.Background(), in)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		var ids []string
		for _, f := range res.Findings {
			ids = append(ids, f.Decision.String()+" "+f.Rule)
		}
		return ids
	}
	tests := []struct {
		name string
		in   *shield.Input
		want []string
	}{
		{"every matched block rule", input("Bash", map[string]any{"command": "one two"}, "/", nil), []string{"BLOCK cel:any.block-one", "BLOCK cel:any.block-two"}},
		{"allow when nothing objects", input("Bash", map[string]any{"command": "ls"}, "/", nil), []string{"ALLOW cel:any.allow"}},
		{"tool filter applies", input("Read", map[string]any{"file_path": "/x"}, "/", nil), []string{"ESCALATE cel:read.only-tool"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rules(tc.in)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeadlineInterruptsEvaluation(t *testing.T) {
	b := bundleOf(t, map[string]string{"rules/slow.yaml": `
rules:
  - id: slow
    when: strings.exists(s, strings.exists(t, strings.exists(u, (s + t + u).contains("never"))))
    decision: block
    message: never
`})
	// The cost limit is out of the way: only the context can stop this evaluation early.
	e, err := CompileOptions(b, testNorm, Options{CostLimit: 1 << 62, InterruptCheckFrequency: 10})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	args := map[string]any{}
	for i := range 300 {
		args[strings.Repeat("k", i+1)] = "x"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := e.Evaluate(ctx, input("Bash", args, "/", nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Evaluate = %+v, %v; want context.DeadlineExceeded", res, err)
	}
}

func TestConcurrentEvaluate(t *testing.T) {
	e := compileGood(t)
	in := input("Bash", map[string]any{"command": "sudo rm -rf /"}, "/w", nil)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				res, err := e.Evaluate(context.Background(), in)
				if err == nil && (len(res.Findings) != 1 || res.Findings[0].Decision != shield.Block) {
					err = errors.New("wrong result under concurrency")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestNoRules(t *testing.T) {
	e, err := Compile(bundleOf(t, nil), nil)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	res, err := e.Evaluate(context.Background(), input("Bash", map[string]any{"command": "ls"}, "/", nil))
	if err != nil || len(res.Findings) != 0 || e.RuleCount() != 0 {
		t.Fatalf("Evaluate = %+v, %v; RuleCount %d", res, err, e.RuleCount())
	}
}
