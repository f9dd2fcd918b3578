package regoeval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

func loadGood(t testing.TB) *policy.Bundle {
	t.Helper()
	b, err := policy.Load("testdata/good", policy.LoadOptions{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return b
}

func compileGood(t testing.TB) *Engine {
	t.Helper()
	e, err := Compile(loadGood(t))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return e
}

func bundleOf(t testing.TB, files map[string]string) *policy.Bundle {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{".manifest": `{"revision": "t"}`}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return b
}

func netInput(host, ipClass string) *shield.Input {
	return &shield.Input{
		Call: &shield.Call{Tool: "WebFetch"},
		Action: &normalize.Action{Tool: "WebFetch", Class: normalize.ClassNetRequest, Known: true,
			URLs: []normalize.URL{{Raw: "https://" + host + "/", Scheme: "https", Host: host, Port: 443, Path: "/", IPClass: ipClass}}},
	}
}

func TestEvaluate(t *testing.T) {
	e := compileGood(t)
	if e.Level() != 1 || e.Name() != "rego" {
		t.Errorf("Level, Name = %d, %q", e.Level(), e.Name())
	}
	if e.RuleCount() == 0 {
		t.Error("RuleCount = 0")
	}
	msg := func(to ...string) *shield.Input {
		return &shield.Input{
			Call:   &shield.Call{Tool: "send_email", Context: shield.CallContext{Labels: map[string]string{"trust": "high"}}},
			Action: &normalize.Action{Tool: "send_email", Class: normalize.ClassMessageSend, Known: true, Recipients: to},
		}
	}
	lowTrust := netInput("pkg.go.dev", normalize.IPHostname)
	lowTrust.Call.Context.Labels = map[string]string{"trust": "low"}
	tests := []struct {
		name string
		in   *shield.Input
		want []shield.Finding
	}{
		{"metadata denied", netInput("169.254.169.254", normalize.IPMetadata),
			[]shield.Finding{{Decision: shield.Block, Rule: "rego:net.metadata", Reason: "cloud metadata endpoint", Severity: "critical", Confidence: 1}}},
		{"exfil domain denied with a computed reason", netInput("webhook.site", normalize.IPHostname),
			[]shield.Finding{{Decision: shield.Block, Rule: "rego:net.exfil-domain", Reason: "uploads to webhook.site are not allowed", Confidence: 1}}},
		{"docs allowed", netInput("pkg.go.dev", normalize.IPHostname),
			[]shield.Finding{{Decision: shield.Allow, Rule: "rego:net.docs", Reason: "documentation site", Confidence: 1}}},
		{"context labels reach the policy", lowTrust,
			[]shield.Finding{
				{Decision: shield.Escalate, Rule: "rego:ctx.untrusted-runtime", Reason: "calls from this runtime need a human", Confidence: 1},
				{Decision: shield.Allow, Rule: "rego:net.docs", Reason: "documentation site", Confidence: 1},
			}},
		{"internal message: no opinion", msg("bob@example.com"), nil},
		{"external message escalated", msg("bob@example.com", "eve@evil.test"),
			[]shield.Finding{{Decision: shield.Escalate, Rule: "rego:msg.external", Reason: "message to an external recipient", Confidence: 1}}},
		{"unknown action: no opinion", &shield.Input{Action: &normalize.Action{Tool: "x", Class: normalize.ClassUnknown}}, nil},
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

func TestEvaluateCancelled(t *testing.T) {
	e := compileGood(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Evaluate(ctx, netInput("169.254.169.254", normalize.IPMetadata)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate(cancelled) error = %v, want context.Canceled", err)
	}
}

func TestOutputContract(t *testing.T) {
	tests := []struct {
		name, decision string
		wantErr        string
		want           []shield.Finding
	}{
		{"undefined is no opinion", `x := 1`, "", nil},
		{"arrays are accepted", `decision := {"deny": [{"rule": "a", "reason": "r"}]}`, "",
			[]shield.Finding{{Decision: shield.Block, Rule: "rego:a", Reason: "r", Confidence: 1}}},
		{"unknown key", `decision := {"block": []}`, `unknown key "block"`, nil},
		{"not an object", `decision := "deny"`, "want an object", nil},
		{"entry without rule", `decision := {"deny": [{"reason": "r"}]}`, "has no rule id", nil},
		{"entry with an unknown key", `decision := {"deny": [{"rule": "a", "why": "r"}]}`, `unknown key "why"`, nil},
		{"non-string reason", `decision := {"escalate": [{"rule": "a", "reason": 3}]}`, "want a string", nil},
		{"list of strings", `decision := {"deny": ["a"]}`, "want an object", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Compile(bundleOf(t, map[string]string{"p.rego": "package shield\n" + tc.decision + "\n"}))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			res, err := e.Evaluate(context.Background(), netInput("a.test", normalize.IPHostname))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrEvaluation) {
					t.Fatalf("Evaluate = %+v, %v; want an evaluation error containing %q", res, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if diff := cmp.Diff(tc.want, res.Findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileProblems(t *testing.T) {
	b := bundleOf(t, map[string]string{
		"a.rego":      "package shield\n\ndecision := {\"deny\": deny}\ndeny contains x if {\n  x := \n}\n",
		"b/b.rego":    "package shield.b\n\nfoo if {\n  bar == 1\n}\n",
		"c.rego":      "package shield.c\n\nfetch if http.send({\"method\": \"GET\", \"url\": \"http://x\"})\n",
		"d/data.json": "{\"x\": ",
		"e/data.yaml": "x: 1\nx: 2\n",
	})
	_, err := Compile(b)
	if err == nil {
		t.Fatal("Compile succeeded, want problems")
	}
	text := err.Error()
	for _, want := range []string{"a.rego:6", "d/data.json", "e/data.yaml:2"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
	// Parse problems stop before compilation, and the compiler reports the problems of its
	// first failing stage.
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"unsafe variable", "b/b.rego", "package shield.b\n\nfoo if {\n  bar == 1\n}\n", []string{"b/b.rego:4", "var bar is unsafe"}},
		{"forbidden builtin", "c.rego", "package shield.c\n\nfetch if http.send({\"method\": \"GET\", \"url\": \"http://x\"})\n", []string{"c.rego:3", "undefined function http.send"}},
		{"two errors in two files", "d.rego", "package shield.d\n\nx if y == 1\nz if w == 2\n", []string{"d.rego:3", "d.rego:4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(bundleOf(t, map[string]string{tc.file: tc.src}))
			if err == nil {
				t.Fatal("Compile succeeded, want problems")
			}
			var ps policy.Problems
			if !errors.As(err, &ps) {
				t.Errorf("error %T is not policy.Problems", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("problems lack %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestNoModules(t *testing.T) {
	e, err := Compile(bundleOf(t, nil))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	res, err := e.Evaluate(context.Background(), netInput("a.test", normalize.IPHostname))
	if err != nil || len(res.Findings) != 0 {
		t.Fatalf("Evaluate = %+v, %v; want no findings", res, err)
	}
}

func TestDeadlineInterruptsEvaluation(t *testing.T) {
	e, err := Compile(bundleOf(t, map[string]string{"p.rego": `package shield

decision := {"deny": [{"rule": "slow", "reason": "r"} | count([x | some x in numbers.range(1, 100000000); x < 0]) > 0]}
`}))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := e.Evaluate(ctx, netInput("a.test", normalize.IPHostname))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrEvaluation) {
		t.Fatalf("Evaluate = %+v, %v; want an evaluation error wrapping context.DeadlineExceeded", res, err)
	}
}

func TestManifestRoots(t *testing.T) {
	b := bundleOf(t, map[string]string{
		".manifest":        `{"revision": "t", "roots": ["shield"]}`,
		"p.rego":           "package shield\n\ndecision := {}\n",
		"t_test.rego":      "package shield_test\n\ntest_x if true\n",
		"other/data.json":  `{"x": 1}`,
		"shield/data.json": `{"lists": {}}`,
	})
	p, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	err = p.CheckRoots(b).Err()
	if err == nil {
		t.Fatal("CheckRoots found nothing outside the roots")
	}
	for _, want := range []string{"t_test.rego:1: package shield_test is outside the manifest roots [shield]", "other/data.json: data.other.x is outside"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "shield/data.json") {
		t.Errorf("data under the root was rejected:\n%v", err)
	}
}

func TestConcurrentEvaluate(t *testing.T) {
	e := compileGood(t)
	in := netInput("169.254.169.254", normalize.IPMetadata)
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

// TestBuiltinErrorIsUndefined: a builtin failing on odd input makes the expression undefined
// (OPA semantics), so an ordinary call is not blocked by a tier error.
func TestBuiltinErrorIsUndefined(t *testing.T) {
	e, err := Compile(bundleOf(t, map[string]string{"p.rego": `package shield

decision := {"deny": deny}

deny contains {"rule": "q.secret", "reason": "r"} if {
	some u in input.urls
	decoded := base64.decode(u.query)
	contains(decoded, "secret")
}
`}))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	in := netInput("example.com", normalize.IPHostname)
	in.Action.URLs[0].Query = "abcdefghijklmnopq" // not base64
	res, err := e.Evaluate(context.Background(), in)
	if err != nil || len(res.Findings) != 0 {
		t.Fatalf("Evaluate = %+v, %v; want no findings and no error", res, err)
	}
	in.Action.URLs[0].Query = "bXlzZWNyZXQ=" // base64 of "mysecret"
	res, err = e.Evaluate(context.Background(), in)
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("Evaluate = %+v, %v; want the deny", res, err)
	}
}

// TestStrictMode checks that the compile is strict, as `opa check --strict`: a rule with an
// unused local variable, an unused or duplicate import is refused with file:line.
func TestStrictMode(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"unused variable", "package shield\n\ndecision := {\"deny\": deny}\n\ndeny contains {\"rule\": \"r\"} if {\n  x := input.args.command\n  input.class == \"exec\"\n}\n",
			[]string{"a.rego:6", "assigned var x unused"}},
		{"unused import", "package shield\n\nimport data.lists\n\ndecision := {}\n",
			[]string{"a.rego:3", "import data.lists unused"}},
		{"duplicate import", "package shield\n\nimport data.lists\nimport data.lists\n\ndecision := {\"deny\": lists}\n",
			[]string{"a.rego:4", "import must not shadow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(bundleOf(t, map[string]string{"a.rego": tc.src}))
			if err == nil {
				t.Fatal("Compile succeeded, want a strict-mode problem")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("problems lack %q:\n%v", want, err)
				}
			}
		})
	}
}

// TestBuiltinValueCache: the engine keeps every pattern its rules compile in its own cache, more
// than OPA's process-wide regular-expression cache holds (100, evicted at random), so an
// evaluation after the first compiles none of them again.
func TestBuiltinValueCache(t *testing.T) {
	const n = 150
	var mod strings.Builder
	mod.WriteString("package shield\n\nimport rego.v1\n\ndecision := {\"deny\": deny}\n\n")
	pats := make([]string, n)
	for i := range pats {
		pats[i] = fmt.Sprintf("^x%03d[a-z]+$", i)
		fmt.Fprintf(&mod, "deny contains {\"rule\": \"r%d\"} if regex.match(%q, input.tool)\n\n", i, pats[i])
	}
	b := bundleOf(t, map[string]string{"rego/p.rego": mod.String()})
	in := &shield.Input{Call: &shield.Call{Tool: "x007abc"}, Action: &normalize.Action{Tool: "x007abc"}}
	// As written, regex.match keeps its patterns in the engine's OPA cache; served, in the
	// engine's table of the prefiltered built-in (regexmatch.go), compiled at load.
	for _, opt := range []Options{{NoRegexFilter: true}, {}} {
		e, err := CompileOptions(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Evaluate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != 1 || res.Findings[0].Rule != "rego:r7" {
			t.Fatalf("%+v: findings %+v, want rego:r7", opt, res.Findings)
		}
		for _, p := range pats {
			if opt.NoRegexFilter {
				v, ok := e.values.Get(ast.String(p))
				if _, isRe := v.(*regexp.Regexp); !ok || !isRe {
					t.Fatalf("pattern %s is not in the engine's cache (%T)", p, v)
				}
			} else if m := e.regex.fixed[p]; m == nil || m.re.String() != p {
				t.Fatalf("pattern %s is not in the engine's regex table", p)
			}
		}
	}
}
