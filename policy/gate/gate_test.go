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
