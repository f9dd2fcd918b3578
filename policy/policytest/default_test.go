// An external test package, so that policy/activate may import policytest without a cycle.
package policytest_test

import (
	"context"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/policy/policytest"
	"github.com/shieldsec/shield/shield/normalize"
)

// TestEmbeddedDefaultBundle loads the default bundle the way the service does (embedded, so
// .manifest must survive go:embed) and runs its own tests with the real normaliser.
func TestEmbeddedDefaultBundle(t *testing.T) {
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		t.Fatalf("LoadFS: %v", err)
	}
	if b.Revision == "" || b.Defaults.DecisionFor(normalize.ClassUnknown) == policy.DecisionAllow {
		t.Fatalf("revision %q, unknown → %s", b.Revision, b.Defaults.DecisionFor(normalize.ClassUnknown))
	}
	onDisk, err := policy.Load("../../policies/default", policy.LoadOptions{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if b.Digest != onDisk.Digest {
		t.Errorf("embedded digest %s differs from the directory's %s (a file go:embed skipped?)", b.Digest, onDisk.Digest)
	}
	norm, err := activate.Normalizer(b, activate.Options{Workspace: activate.ExampleWorkspace, Home: activate.ExampleHome})
	if err != nil {
		t.Fatal(err)
	}
	// Without a compiled policy the gate's cases cannot run: the report says so and fails.
	if rep := policytest.Run(context.Background(), b, norm.Normalize, policytest.Options{}); rep.OK() || rep.NotRun == 0 {
		t.Errorf("run without a policy: OK %v, not run %d; want the gate's cases counted as not run", rep.OK(), rep.NotRun)
	}
	pol, err := activate.Build(b, activate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := activate.Reference(b, pol, activate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := policytest.Run(context.Background(), b, norm.Normalize, policytest.Options{Policy: ref})
	if err := rep.Err(); err != nil {
		t.Errorf("default bundle tests: %v", err)
	}
	if rep.Gate == nil || !rep.Gate.Configured || len(rep.Gate.Rows) < 2 || rep.Gate.Rows[len(rep.Gate.Rows)-1].Cases == 0 {
		t.Errorf("the default bundle's evaluation gate did not run: %+v", rep.Gate)
	}
	if pass, _, _ := rep.Counts(); pass == 0 {
		t.Error("default bundle ran no tests")
	}
}
