// An external test package, so that shield/bundle may import policytest without a cycle.
package policytest_test

import (
	"context"
	"testing"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/policytest"
	"github.com/shieldsec/shield/shield/bundle"
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
	norm, err := bundle.Normalizer(b, bundle.Options{Workspace: bundle.ExampleWorkspace, Home: bundle.ExampleHome})
	if err != nil {
		t.Fatal(err)
	}
	rep := policytest.Run(context.Background(), b, norm.Normalize, policytest.Options{})
	if err := rep.Err(); err != nil {
		t.Errorf("default bundle tests: %v", err)
	}
	if pass, _, _ := rep.Counts(); pass == 0 {
		t.Error("default bundle ran no tests")
	}
}
