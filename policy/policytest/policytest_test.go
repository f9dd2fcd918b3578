package policytest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield/normalize"
)

func testNorm(tool string, args map[string]any, cwd string) *normalize.Action {
	a := &normalize.Action{Tool: tool, Class: normalize.ClassUnknown, Args: args, Cwd: cwd}
	if tool == "Bash" {
		a.Class, a.Known = normalize.ClassExec, true
		a.Command, _ = args["command"].(string)
	}
	return a
}

func load(t *testing.T, dir string) *policy.Bundle {
	t.Helper()
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunReportsEveryFailure(t *testing.T) {
	rep := Run(context.Background(), load(t, "testdata/bad"), testNorm, Options{})
	if rep.OK() {
		t.Fatal("report OK for a bundle with failing tests")
	}
	type row struct {
		Kind, Name, File string
		Line             int
		Pass, Skip       bool
	}
	var got []row
	for _, c := range rep.Cases {
		got = append(got, row{c.Kind, c.Name, c.File, c.Line, c.Pass, c.Skip})
	}
	want := []row{
		{"cel", "exec.ls match[0]", "rules/r.yaml", 9, true, false},
		{"cel", "exec.ls match[1]", "rules/r.yaml", 10, false, false},
		{"cel", "exec.typo-class not_match[0]", "rules/r.yaml", 18, true, false},
		{"rego", "shield_test.test_net_denied", "shield/p_test.rego", 5, true, false},
		{"rego", "shield_test.test_exec_denied", "shield/p_test.rego", 10, false, false},
		{"rego", "shield_test.todo_test_later", "shield/p_test.rego", 15, false, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	pass, fail, skip := rep.Counts()
	if pass != 3 || fail != 2 || skip != 1 {
		t.Errorf("Counts = %d, %d, %d", pass, fail, skip)
	}
	var out bytes.Buffer
	rep.Write(&out, false)
	for _, want := range []string{
		"FAIL  rules/r.yaml:10: cel exec.ls match[1]: did not match",
		"FAIL  shield/p_test.rego:10: rego shield_test.test_exec_denied",
		"FAIL: 3 passed, 2 failed, 1 skipped, 0 not run, 0 compile problems (revision policytest-bad",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "shield/p_test.rego:10") {
		t.Errorf("Err() = %v", err)
	}
}

func TestRunCompileProblems(t *testing.T) {
	dir := t.TempDir()
	b := load(t, "testdata/bad")
	files := map[string][]byte{}
	for k, v := range b.Files {
		files[k] = v
	}
	files["shield/p.rego"] = []byte("package shield\n\ndecision := {\"deny\": deny}\n\ndeny contains x if y\n")
	files["rules/r.yaml"] = []byte("rules:\n  - id: x\n    when: nope\n    decision: block\n    message: m\n")
	b2 := &policy.Bundle{Source: dir, Revision: b.Revision, Digest: policy.Digest(files), Files: files}
	rep := Run(context.Background(), b2, testNorm, Options{})
	if rep.OK() {
		t.Fatal("report OK with compile problems")
	}
	text := rep.Err().Error()
	for _, want := range []string{"rules/r.yaml:3", "undeclared reference to 'nope'", "shield/p.rego:5"} {
		if !strings.Contains(text, want) {
			t.Errorf("problems lack %q:\n%s", want, text)
		}
	}
}

func TestLint(t *testing.T) {
	rep := Lint(load(t, "testdata/bad"))
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Level+" "+f.Problem.String())
	}
	want := []string{
		`warning rules/r.yaml:2: rule "exec.ls": no not_match examples`,
		`error rules/r.yaml:11: rule "exec.typo-class": unknown action class "exce" (the rule never fires)`,
		`warning rules/r.yaml:11: rule "exec.typo-class": no match examples`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if rep.Errors() != 1 {
		t.Errorf("Errors() = %d", rep.Errors())
	}
}

// TestRunCountsWhatDidNotRun checks that a compile error in one tier is loud: the report is not
// OK, and the tests it kept from running are counted and printed, not reported as "0 skipped".
func TestRunCountsWhatDidNotRun(t *testing.T) {
	b := load(t, "testdata/bad")
	files := map[string][]byte{}
	for k, v := range b.Files {
		files[k] = v
	}
	// One rule of the same file no longer compiles; the file's other rules keep their examples.
	files["rules/r.yaml"] = append(append([]byte(nil), files["rules/r.yaml"]...),
		[]byte("  - id: broken\n    when: nope\n    decision: block\n    message: m\n    examples:\n      match:\n        - {tool: Bash, arguments: {command: ls}}\n")...)
	b2 := &policy.Bundle{Source: t.TempDir(), Revision: b.Revision, Digest: policy.Digest(files), Files: files}
	rep := Run(context.Background(), b2, testNorm, Options{})
	if rep.OK() {
		t.Fatal("report OK with a CEL compile problem")
	}
	// testdata/bad has 3 CEL examples; the broken rule adds one. No CEL example ran.
	if rep.NotRun != 4 {
		t.Errorf("NotRun = %d, want 4", rep.NotRun)
	}
	var buf bytes.Buffer
	rep.Write(&buf, false)
	for _, want := range []string{"ERROR 4 tests did not run", "4 not run, 1 compile problems", "rules/r.yaml"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	if !strings.Contains(rep.Err().Error(), "4 tests did not run") {
		t.Errorf("Err lacks the count: %v", rep.Err())
	}

	// A Rego compile error keeps every Rego test from running: counted the same way.
	files2 := map[string][]byte{}
	for k, v := range b.Files {
		files2[k] = v
	}
	files2["shield/p.rego"] = []byte("package shield\n\ndecision := {\"deny\": deny}\n\ndeny contains x if y\n")
	b3 := &policy.Bundle{Source: t.TempDir(), Revision: b.Revision, Digest: policy.Digest(files2), Files: files2}
	rep = Run(context.Background(), b3, testNorm, Options{})
	if rep.NotRun != 3 {
		t.Errorf("rego NotRun = %d, want 3", rep.NotRun)
	}
}
