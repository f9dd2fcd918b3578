package appliance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield"
)

// TestOwnPathsProtected: the policy BLOCKs reading or changing the appliance's own files where
// this host keeps them (state directory, keys, audit trail, socket, bundle), through any tool,
// while the workspace stays usable.
func TestOwnPathsProtected(t *testing.T) {
	state := t.TempDir()
	cfg := &Config{StateDir: state, Policy: PolicyConfig{Workspace: "/home/user/project"}}
	cfg.WithDefaults()
	pol, err := LoadPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := shield.New(shield.Config{CacheSize: -1}, pol)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, args string
		want       shield.Decision
	}{
		{"read_file", `{"path":"` + state + `/keys/audit.key"}`, shield.Block},
		{"write_file", `{"path":"` + state + `/audit/segment-0.jsonl","content":"{}"}`, shield.Block},
		{"execute_command", `{"command":"cat ` + state + `/keys/audit.key"}`, shield.Block},
		{"execute_command", `{"command":"rm -rf ` + state + `/audit ` + state + `/keys"}`, shield.Block},
		{"list_directory", `{"path":"` + state + `"}`, shield.Block},
		{"read_file", `{"path":"/home/user/project/README.md"}`, shield.Allow},
	} {
		v, err := p.Evaluate(context.Background(), &shield.Call{Tool: tc.tool, Arguments: []byte(tc.args),
			Context: shield.CallContext{Cwd: "/home/user/project"}}, shield.EvalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Decision != tc.want {
			t.Errorf("%s %s: %s %v, want %s", tc.tool, tc.args, v.Decision, v.Rules, tc.want)
		}
		// Keys are secrets already; the rest is blocked only because the state dir is protected.
		if tc.want == shield.Block && !strings.Contains(tc.args, "audit.key") && !slices.Contains(v.Rules, "rego:effects.protected-path") {
			t.Errorf("%s %s blocked by %v, want rego:effects.protected-path among them", tc.tool, tc.args, v.Rules)
		}
	}
}
