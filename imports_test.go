// Package repo_test checks the import rules of the architecture note: which of this module's
// packages may depend on which, transitively (go list -deps), through a per-package allow-list.
package repo_test

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/shieldsec/shield"

// rule says what a package (and, unless a longer key matches, the packages under it) may depend on,
// directly or through others.
type rule struct {
	// ours lists this module's packages (each covering the packages under it) the package may
	// depend on. "*" allows every package of the module except cmd.
	ours []string
	// forbid lists third-party module path prefixes the package must not depend on.
	forbid []string
}

var (
	noWire   = []string{"google.golang.org/grpc"}
	noEngine = []string{"github.com/google/cel-go", "cel.dev/expr", "github.com/open-policy-agent/opa"}
	coreBan  = append(append([]string{}, noWire...), noEngine...)
)

// rules is the allow-list. A package of the module not matched by any key fails the test: new
// top-level packages get a rule on purpose.
var rules = map[string]rule{
	"cmd":              {ours: []string{"*"}},
	"proto":            {ours: []string{}},
	"policies":         {ours: []string{}},
	"deploy":           {ours: []string{"*"}},
	"shield/normalize": {ours: []string{}, forbid: coreBan},
	"shield":           {ours: []string{"shield/normalize", "audit"}, forbid: coreBan},
	"audit":            {ours: []string{}, forbid: append(append([]string{}, noEngine...), "github.com/sigstore")},
	"audit/rekor":      {ours: []string{"audit"}},
	"sandbox":          {ours: []string{}, forbid: coreBan},
	"policy":           {ours: []string{}, forbid: noWire},
	// The gate derives each rule's necessary conditions over the normalised call.
	"policy/gate": {ours: []string{"policy", "shield/normalize"}, forbid: coreBan},
	// Tiers implement shield's interface and read bundles; they never import each other.
	"policy/celrules": {ours: []string{"policy", "policy/gate", "shield", "shield/normalize", "audit"}, forbid: append(append([]string{}, noWire...), "github.com/open-policy-agent/opa")},
	"policy/regoeval": {ours: []string{"policy", "policy/gate", "shield", "shield/normalize", "audit"}, forbid: append(append([]string{}, noWire...), "github.com/google/cel-go")},
	"shield/judge":    {ours: []string{"shield", "shield/normalize", "policy", "audit", "agent/llm"}, forbid: coreBan},
	"shield/approval": {ours: []string{"shield", "shield/normalize", "policy", "audit"}, forbid: coreBan},
	// Test runner and bundle activation: bundles → the tier engines.
	"policy/policytest": {ours: []string{"policy", "policy/gate", "policy/celrules", "policy/regoeval", "shield", "shield/normalize", "audit"}, forbid: noWire},
	"policy/activate":   {ours: []string{"policies", "policy", "policy/gate", "policy/celrules", "policy/regoeval", "policy/policytest", "shield", "shield/normalize", "audit"}, forbid: noWire},
	// Adapters: domain packages and generated wire types.
	"shield/server":       {ours: []string{"proto", "shield", "shield/normalize", "shield/approval", "shield/proxy", "shield/proxy/client", "policy", "audit"}},
	"shield/proxy":        {ours: []string{"proto/shield/v1", "shield/proxy", "shield/proxy/client", "shield/normalize"}},
	"shield/proxy/client": {ours: []string{"proto/shield/v1"}},
	"engine":              {ours: []string{"proto", "shield", "shield/normalize", "shield/approval", "shield/proxy/client", "audit", "sandbox", "policy", "agent/llm"}},
	// The confined agent knows nothing of shield or the engine.
	"agent":     {ours: []string{"agent/llm", "sandbox", "proto"}},
	"agent/llm": {ours: []string{}, forbid: coreBan},
}

// lookup returns the rule of the longest key that is pkg or a parent of it.
func lookup(pkg string) (string, rule, bool) {
	best := ""
	var r rule
	found := false
	for k, v := range rules {
		if (pkg == k || strings.HasPrefix(pkg, k+"/")) && len(k) >= len(best) {
			best, r, found = k, v, true
		}
	}
	return best, r, found
}

func under(p, parent string) bool { return p == parent || strings.HasPrefix(p, parent+"/") }

// violations checks a dependency graph (package → transitive deps, module-relative for ours,
// full paths for third parties) and returns one message per violation, sorted.
func violations(graph map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	for pkg, deps := range graph {
		key, r, ok := lookup(pkg)
		if !ok {
			out = append(out, fmt.Sprintf("%s: no import rule covers it; add one to imports_test.go", pkg))
			continue
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "ours:") {
				d = strings.TrimPrefix(d, "ours:")
				dkey, _, _ := lookup(d)
				if dkey == key {
					continue // governed by the same rule (its own sub-packages)
				}
				if under(d, "cmd") && !under(pkg, "cmd") {
					out = append(out, fmt.Sprintf("%s depends on %s: nothing outside cmd imports cmd", pkg, d))
					continue
				}
				allowed := false
				for _, a := range r.ours {
					// An entry covers the packages under it that no more specific rule governs.
					if a == "*" || (under(d, a) && len(dkey) <= len(a)) {
						allowed = true
						break
					}
				}
				if !allowed {
					out = append(out, fmt.Sprintf("%s depends on %s: not in the allow-list of %q", pkg, d, key))
				}
				continue
			}
			for _, f := range r.forbid {
				if strings.HasPrefix(d, f) && !seen[pkg+" "+f] {
					seen[pkg+" "+f] = true
					out = append(out, fmt.Sprintf("%s depends on %s: forbidden for %q", pkg, d, key))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		if pkg == "" {
			continue // the repository-level test package
		}
		var deps []string
		for _, d := range f[1:] {
			if d == module || strings.HasPrefix(d, module+"/") {
				deps = append(deps, "ours:"+strings.TrimPrefix(strings.TrimPrefix(d, module), "/"))
			} else if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				deps = append(deps, d) // third party (standard library paths have no dot)
			}
		}
		graph[pkg] = deps
	}
	if len(graph) < 10 {
		t.Fatalf("go list returned %d packages", len(graph))
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// The checker catches each kind of violation the architecture note forbids, including ones only
// visible transitively; a graph that follows the rules passes.
func TestImportRulesCatchInjectedViolations(t *testing.T) {
	clean := map[string][]string{
		"shield":            {"ours:shield/normalize"},
		"policy/celrules":   {"ours:policy", "ours:shield", "ours:shield/normalize", "cel.dev/expr"},
		"shield/server":     {"ours:shield", "ours:proto/shield/v1", "google.golang.org/grpc"},
		"agent":             {"ours:agent/llm", "ours:sandbox", "ours:proto/agent/v1"},
		"cmd/shield":        {"ours:engine", "ours:shield/server"},
		"shield/proxy/hook": {"ours:shield/proxy/client", "ours:proto/shield/v1"},
	}
	if v := violations(clean); len(v) != 0 {
		t.Fatalf("a graph that follows the rules was refused: %v", v)
	}
	injected := []struct {
		pkg, dep string
	}{
		{"shield", "ours:shield/server"},                       // core → adapter
		{"shield", "google.golang.org/grpc"},                   // core → gRPC (transitively)
		{"shield", "github.com/google/cel-go/cel"},             // core → CEL
		{"shield", "github.com/open-policy-agent/opa/v1/rego"}, // core → OPA
		{"shield", "ours:proto/shield/v1"},                     // core → wire types
		{"shield/normalize", "ours:shield"},                    // normaliser → core
		{"audit", "ours:shield"},                               // audit → anything of ours
		{"sandbox", "ours:policy"},                             // sandbox → anything of ours
		{"policy", "ours:shield/normalize"},                    // policy → anything of ours
		{"policy/celrules", "ours:policy/regoeval"},            // tier → tier
		{"policy/regoeval", "github.com/google/cel-go/cel"},    // tier → other tier's engine
		{"agent", "ours:shield/normalize"},                     // agent → shield
		{"agent", "ours:engine"},                               // agent → engine
		{"engine", "ours:cmd/shield"},                          // anything → cmd
		{"shield/judge", "ours:proto/shield/v1"},               // tier → wire types
		{"shield/proxy/client", "ours:shield/approval"},        // client → domain internals
		{"newtop", "ours:shield"},                              // a package no rule covers
	}
	for _, inj := range injected {
		g := map[string][]string{}
		for k, v := range clean {
			g[k] = append([]string(nil), v...)
		}
		g[inj.pkg] = append(g[inj.pkg], inj.dep)
		if v := violations(g); len(v) == 0 {
			t.Errorf("injected %s → %s was not reported", inj.pkg, inj.dep)
		}
	}
}
