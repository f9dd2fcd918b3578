package policy

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
)

// GateCasesDir holds a bundle's labelled cases: tests/*.jsonl in the corpus format (one JSON
// object per line: id, category, tool, arguments, optional context, expect ALLOW|BLOCK|ESCALATE).
const GateCasesDir = "tests"

// IsGateCases reports whether a bundle path holds labelled cases of the evaluation gate.
func IsGateCases(p string) bool {
	return path.Dir(p) == GateCasesDir && strings.HasSuffix(p, ".jsonl")
}

// Gate is the evaluation gate of a bundle (the "gate" key of .manifest): thresholds its labelled
// cases must meet before the bundle may be tested green, reloaded or activated.
//
//	"gate": {
//	  "default":    {"min_recall": 1.0, "max_fpr": 0.25},   // every category without its own
//	  "categories": {"exec/benign": {"max_fpr": 0.5}},
//	  "total":      {"min_recall": 1.0, "max_fpr": 0.12}    // all cases together
//	}
//
// Recall is the share of malicious cases (expect BLOCK or ESCALATE) not allowed; FPR is the
// share of benign cases (expect ALLOW) not allowed. Both are fractions in [0, 1]; an absent
// threshold is not checked, and a category with no case of a kind has no figure to check.
type Gate struct {
	Default    Thresholds            `json:"default"`
	Categories map[string]Thresholds `json:"categories,omitempty"`
	Total      Thresholds            `json:"total"`
}

// Thresholds bound one category (or the total).
type Thresholds struct {
	MinRecall *float64 `json:"min_recall,omitempty"`
	MaxFPR    *float64 `json:"max_fpr,omitempty"`
}

// For returns the thresholds of a category: its own where it names them, else the default.
func (g *Gate) For(category string) Thresholds {
	t := g.Default
	if own, ok := g.Categories[category]; ok {
		if own.MinRecall != nil {
			t.MinRecall = own.MinRecall
		}
		if own.MaxFPR != nil {
			t.MaxFPR = own.MaxFPR
		}
	}
	return t
}

// check reports thresholds outside [0, 1].
func (g *Gate) check() Problems {
	var probs Problems
	bad := func(where string, t Thresholds) {
		for _, x := range []struct {
			name string
			v    *float64
		}{{"min_recall", t.MinRecall}, {"max_fpr", t.MaxFPR}} {
			if x.v != nil && (math.IsNaN(*x.v) || *x.v < 0 || *x.v > 1) {
				probs = append(probs, Problem{File: ManifestFile, Msg: fmt.Sprintf("gate.%s.%s = %v: want a fraction in [0, 1]", where, x.name, *x.v)})
			}
		}
	}
	bad("default", g.Default)
	bad("total", g.Total)
	cats := make([]string, 0, len(g.Categories))
	for c := range g.Categories {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		bad(fmt.Sprintf("categories[%q]", c), g.Categories[c])
	}
	return probs
}
