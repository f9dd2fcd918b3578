// Package repo_test checks the import rules of the architecture note: which of this module's
// packages may import which.
package repo_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/shieldsec/shield"

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
	}
	if len(imports) < 10 {
		t.Fatalf("go list returned %d packages", len(imports))
	}
	ours := func(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	for pkg, deps := range imports {
		r := rel(pkg)
		for _, d := range deps {
			dr := rel(d)
			switch {
			case ours(d) && strings.HasPrefix(dr, "cmd") && !strings.HasPrefix(r, "cmd"):
				t.Errorf("%s imports %s: nothing outside cmd imports cmd", r, dr)
			case r == "shield" && (strings.Contains(d, "grpc") || strings.Contains(d, "cel-go") || strings.Contains(d, "open-policy-agent") || strings.HasPrefix(dr, "proto")):
				t.Errorf("shield core imports %s: no gRPC, CEL, OPA or wire types in the core", d)
			case (r == "audit" || r == "sandbox" || r == "policy" || r == "shield/normalize") && ours(d) && !strings.HasPrefix(dr, r):
				t.Errorf("%s imports %s: it may import nothing of this module", r, dr)
			case r == "policy/celrules" && dr == "policy/regoeval", r == "policy/regoeval" && dr == "policy/celrules":
				t.Errorf("%s imports %s: tiers never import each other", r, dr)
			case strings.HasPrefix(r, "agent") && ours(d) && strings.HasPrefix(dr, "shield"):
				t.Errorf("%s imports %s: the agent knows nothing of shield", r, dr)
			case !strings.HasPrefix(r, "cmd") && !strings.HasPrefix(r, "shield/server") && !strings.HasPrefix(r, "shield/proxy") && !strings.HasPrefix(r, "engine") && !strings.HasPrefix(r, "audit/rekor") && !strings.HasPrefix(r, "proto") && !strings.HasPrefix(r, "agent") && strings.HasPrefix(dr, "proto/"):
				t.Errorf("%s imports generated %s: wire types stop at the adapters", r, dr)
			}
		}
	}
}
