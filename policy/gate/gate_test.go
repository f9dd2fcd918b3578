package gate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield/normalize"
)

// TestMatchCache: a Match condition answers what its pattern answers, for names seen again,
// names over the cached length and once the cache is full.
func TestMatchCache(t *testing.T) {
	re := regexp.MustCompile(`(?i)(pay|transfer|转账)`)
	c := Match(FieldTool, re)
	tools := []string{"PayInvoice", "Bash", "wire_转账", "read", strings.Repeat("x", matchCacheLen) + "pay", strings.Repeat("y", matchCacheLen+1)}
	for i := range matchCacheMax + 50 {
		tools = append(tools, fmt.Sprintf("tool%d", i), fmt.Sprintf("pay%d", i))
	}
	for round := range 2 {
		for _, tool := range tools {
			if got, want := c.Holds(&normalize.Action{Tool: tool}), re.MatchString(tool); got != want {
				t.Fatalf("round %d: Holds(%.40q) = %v, want %v", round, tool, got, want)
			}
		}
	}
	if n := c.matches.n.Load(); n != matchCacheMax {
		t.Fatalf("cached %d names, want the bound %d", n, matchCacheMax)
	}
}

// TestPathRoles: "path roles in S" holds exactly when some path of the call has a role in S.
func TestPathRoles(t *testing.T) {
	c := In(FieldPathRoles, "dest", "write")
	for _, tc := range []struct {
		roles []string
		want  bool
	}{
		{nil, false},
		{[]string{"read"}, false},
		{[]string{"read", "arg"}, false},
		{[]string{"read", "write"}, true},
		{[]string{"dest"}, true},
	} {
		a := &normalize.Action{}
		for _, r := range tc.roles {
			a.Paths = append(a.Paths, normalize.Path{Clean: "/x", Role: r})
		}
		if got := c.Holds(a); got != tc.want {
			t.Errorf("roles %v: Holds = %v, want %v", tc.roles, got, tc.want)
		}
	}
	if got := And(NonEmpty(FieldPaths), c).String(); got != "paths not empty && path roles in [dest, write]" {
		t.Errorf("String() = %q", got)
	}
}
