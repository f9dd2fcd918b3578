package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shieldsec/shield/policy"
)

func runPolicyCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, append([]string{"policy"}, args...))
	return code, out.String(), errb.String()
}

func TestPolicyTestCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"default bundle passes", []string{"test", "../../policies/default"}, 0, "ok: "},
		{"rego tests pass", []string{"test", "-v", "../../policy/regoeval/testdata/good"}, 0, "PASS  shield/decision_test.rego:5: rego shield.decision_test.test_metadata_denied"},
		{"failures exit 1 with file:line", []string{"test", "../../policy/policytest/testdata/bad"}, 1, "FAIL  shield/p_test.rego:10: rego shield_test.test_exec_denied"},
		{"lint errors exit 1", []string{"lint", "../../policy/policytest/testdata/bad"}, 1, `error: rules/r.yaml:11: rule "exec.typo-class": unknown action class "exce"`},
		{"lint of the default bundle", []string{"lint", "../../policies/default"}, 0, "0 errors"},
		{"the default bundle's gate table", []string{"test", "../../policies/default"}, 0, "(thresholds from .manifest gate)"},
		{"coverage of the default bundle", []string{"test", "--coverage", "../../policies/default"}, 0, "coverage rego TOTAL "},
		{"coverage under the minimum exits 1", []string{"test", "--coverage-min", "100", "../../policies/default"}, 1, "(--coverage-min)"},
		{"coverage minimum out of range", []string{"test", "--coverage-min", "101", "../../policies/default"}, 2, ""},
		{"missing bundle argument", []string{"test"}, 2, ""},
		{"unknown subcommand", []string{"frobnicate"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runPolicyCmd(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, out, errOut)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestPolicySignRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bundleDir := filepath.Join(dir, "b")
	os.MkdirAll(bundleDir, 0o755)
	os.WriteFile(filepath.Join(bundleDir, ".manifest"), []byte(`{"revision": "s1"}`), 0o644)
	prefix := filepath.Join(dir, "k")
	if code, out, errOut := runPolicyCmd(t, "keygen", "--out", prefix); code != 0 {
		t.Fatalf("keygen exit %d: %s %s", code, out, errOut)
	}
	if st, err := os.Stat(prefix + ".key"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v, %v", st, err)
	}
	if code, out, errOut := runPolicyCmd(t, "sign", "--key", prefix+".key", bundleDir); code != 0 {
		t.Fatalf("sign exit %d: %s %s", code, out, errOut)
	}
	pubText, _ := os.ReadFile(prefix + ".pub")
	pub, err := policy.ParsePublicKey(pubText)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Load(bundleDir, policy.LoadOptions{PublicKey: pub})
	if err != nil || !b.Signed {
		t.Fatalf("Load signed bundle: %v", err)
	}
	code, out, _ := runPolicyCmd(t, "digest", bundleDir)
	if code != 0 || !strings.Contains(out, "digest "+b.Digest) || !strings.Contains(out, "revision s1") {
		t.Errorf("digest exit %d:\n%s", code, out)
	}
	// Changing the bundle invalidates the signature.
	os.WriteFile(filepath.Join(bundleDir, "x.rego"), []byte("package shield\n"), 0o644)
	if _, err := policy.Load(bundleDir, policy.LoadOptions{PublicKey: pub}); err == nil {
		t.Fatal("Load of a changed signed bundle succeeded")
	}
}

// The case: a CEL rule reading args.command unguarded passes its tests, then blocks
// every exec call whose tool passes the command under another key. Lint warns, with file:line,
// and --strict fails.
func TestPolicyLintUnguardedArgs(t *testing.T) {
	b := faultyBundle(t)
	if code, out, _ := runPolicyCmd(t, "test", b); code != 0 {
		t.Fatalf("the faulty bundle's own tests should pass (that is the trap): exit %d\n%s", code, out)
	}
	code, out, _ := runPolicyCmd(t, "lint", b)
	if code != 0 || !strings.Contains(out, `warning: rules/r.yaml:4:`) || !strings.Contains(out, `rule "exec.rm-unguarded": args.command is read unguarded`) {
		t.Errorf("lint exit %d:\n%s", code, out)
	}
	if code, _, _ := runPolicyCmd(t, "lint", "--strict", b); code != 1 {
		t.Errorf("lint --strict exit %d, want 1", code)
	}
}

// TestPolicyData: `shield policy data` prints the data the Rego engine evaluates against, the
// derived forms of the bundle's lists included (what plain OPA needs to run the same Rego).
func TestPolicyData(t *testing.T) {
	code, out, errOut := runPolicyCmd(t, "data", "../../policies/default")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d struct {
		Shield struct {
			Effects struct {
				ReadRoots []string `json:"read_roots"`
			} `json:"effects"`
		} `json:"shield"`
		Derived struct {
			Under struct {
				Shield struct {
					Effects struct {
						ReadRoots []string `json:"read_roots"`
					} `json:"effects"`
				} `json:"shield"`
			} `json:"under"`
		} `json:"shield_derived"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	roots, under := d.Shield.Effects.ReadRoots, d.Derived.Under.Shield.Effects.ReadRoots
	if len(roots) == 0 || len(under) != len(roots) {
		t.Fatalf("read_roots %v, derived %v", roots, under)
	}
	for i, r := range roots {
		if under[i] != strings.TrimSuffix(r, "/")+"/" {
			t.Errorf("derived %q for root %q", under[i], r)
		}
	}
	if code, _, _ := runPolicyCmd(t, "data"); code == 0 {
		t.Error("no bundle argument: exit 0")
	}
}
