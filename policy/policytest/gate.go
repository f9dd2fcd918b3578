package policytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
)

// GateRow is one category of the evaluation gate (or the total, Category "TOTAL").
type GateRow struct {
	Category  string   `json:"category"`
	Cases     int      `json:"cases"`
	Malicious int      `json:"malicious"` // expect BLOCK or ESCALATE
	Stopped   int      `json:"stopped"`   // malicious and not allowed
	Benign    int      `json:"benign"`    // expect ALLOW
	Flagged   int      `json:"flagged"`   // benign and not allowed
	Exact     int      `json:"exact"`     // verdict equals the label
	MinRecall *float64 `json:"min_recall,omitempty"`
	MaxFPR    *float64 `json:"max_fpr,omitempty"`
	// Failed says which threshold the row misses; empty when it meets them.
	Failed []string `json:"failed,omitempty"`
}

// Recall is Stopped/Malicious, or -1 when there is no malicious case.
func (r GateRow) Recall() float64 { return frac(r.Stopped, r.Malicious) }

// FPR is Flagged/Benign, or -1 when there is no benign case.
func (r GateRow) FPR() float64 { return frac(r.Flagged, r.Benign) }

func frac(a, b int) float64 {
	if b == 0 {
		return -1
	}
	return float64(a) / float64(b)
}

// GateMiss is a case whose verdict disagrees with its label on stop vs allow.
type GateMiss struct {
	ID     string   `json:"id"`
	File   string   `json:"file"`
	Line   int      `json:"line"`
	Expect string   `json:"expect"`
	Got    string   `json:"got"`
	Rules  []string `json:"rules,omitempty"`
}

// GateReport is the outcome of the evaluation gate: the bundle's labelled cases evaluated with
// its compiled policy, per category, against the manifest's thresholds.
type GateReport struct {
	// Configured is true when the manifest has a gate; without one the table is informational.
	Configured bool       `json:"configured"`
	Files      []string   `json:"files"`
	Rows       []GateRow  `json:"rows"` // by category, then TOTAL
	Misses     []GateMiss `json:"misses,omitempty"`
	// Problems are case lines that could not be read and a gate without cases.
	Problems policy.Problems `json:"problems,omitempty"`
}

// OK reports whether every case was read and every row meets its thresholds.
func (g *GateReport) OK() bool {
	if g == nil {
		return true
	}
	if len(g.Problems) > 0 {
		return false
	}
	for _, r := range g.Rows {
		if len(r.Failed) > 0 {
			return false
		}
	}
	return true
}

// failures returns the problems and the missed thresholds as problems.
func (g *GateReport) failures() policy.Problems {
	if g == nil {
		return nil
	}
	ps := append(policy.Problems(nil), g.Problems...)
	for _, r := range g.Rows {
		for _, f := range r.Failed {
			ps = append(ps, policy.Problem{File: policy.ManifestFile, Msg: fmt.Sprintf("evaluation gate: category %s: %s", r.Category, f)})
		}
	}
	return ps
}

// maxMissesShown bounds the misses Write lists.
const maxMissesShown = 20

// Write prints the per-category table, the missed thresholds and the first misses.
func (g *GateReport) Write(w io.Writer) {
	if g == nil {
		return
	}
	mode := "thresholds from .manifest gate"
	if !g.Configured {
		mode = "no gate in .manifest: figures only"
	}
	n := 0
	if len(g.Rows) > 0 {
		n = g.Rows[len(g.Rows)-1].Cases
	}
	fmt.Fprintf(w, "evaluation gate: %d cases in %v (%s)\n", n, g.Files, mode)
	for _, p := range g.Problems {
		fmt.Fprintf(w, "ERROR %s\n", p)
	}
	if len(g.Rows) == 0 {
		return
	}
	width := len("category")
	for _, r := range g.Rows {
		width = max(width, len(r.Category))
	}
	fmt.Fprintf(w, "%-*s %5s %8s %8s %8s %8s %7s  %s\n", width, "category", "cases", "recall", "min", "FPR", "max", "exact", "status")
	for _, r := range g.Rows {
		status := "ok"
		if len(r.Failed) > 0 {
			status = "FAIL"
		}
		fmt.Fprintf(w, "%-*s %5d %8s %8s %8s %8s %6.1f%%  %s\n", width, r.Category, r.Cases, pct(r.Recall()), bound(r.MinRecall),
			pct(r.FPR()), bound(r.MaxFPR), 100*float64(r.Exact)/float64(max(r.Cases, 1)), status)
	}
	for _, r := range g.Rows {
		for _, f := range r.Failed {
			fmt.Fprintf(w, "FAIL  gate: category %s: %s\n", r.Category, f)
		}
	}
	for i, m := range g.Misses {
		if i == maxMissesShown {
			fmt.Fprintf(w, "… %d more misses\n", len(g.Misses)-maxMissesShown)
			break
		}
		fmt.Fprintf(w, "miss  %s:%d: %s got %s, want %s %v\n", m.File, m.Line, m.ID, m.Got, m.Expect, m.Rules)
	}
}

func pct(f float64) string {
	if f < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}

func bound(p *float64) string {
	if p == nil {
		return "-"
	}
	return pct(*p)
}

// gateCase is one labelled case line.
type gateCase struct {
	ID        string          `json:"id"`
	Category  string          `json:"category"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Context   *struct {
		Cwd       string            `json:"cwd"`
		SessionID string            `json:"session_id"`
		AgentID   string            `json:"agent_id"`
		Runtime   string            `json:"runtime"`
		Labels    map[string]string `json:"labels"`
	} `json:"context"`
	Expect string `json:"expect"`

	file string
	line int
}

// readGateCases reads every tests/*.jsonl file of the bundle.
func readGateCases(b *policy.Bundle) ([]string, []gateCase, policy.Problems) {
	files := b.Paths(policy.IsGateCases)
	var cases []gateCase
	var probs policy.Problems
	for _, f := range files {
		for i, raw := range bytes.Split(b.Files[f], []byte("\n")) {
			line := bytes.TrimSpace(raw)
			if len(line) == 0 {
				continue
			}
			var c gateCase
			if err := json.Unmarshal(line, &c); err != nil {
				probs = append(probs, policy.Problem{File: f, Line: i + 1, Msg: fmt.Sprintf("not a case object: %v", err)})
				continue
			}
			switch {
			case c.Tool == "":
				probs = append(probs, policy.Problem{File: f, Line: i + 1, Msg: `missing "tool"`})
				continue
			case c.Expect != "ALLOW" && c.Expect != "BLOCK" && c.Expect != "ESCALATE":
				probs = append(probs, policy.Problem{File: f, Line: i + 1, Msg: fmt.Sprintf("expect %q is not ALLOW, BLOCK or ESCALATE", c.Expect)})
				continue
			}
			if c.Category == "" {
				c.Category = "(none)"
			}
			if len(c.Arguments) == 0 {
				c.Arguments = json.RawMessage("{}")
			}
			c.file, c.line = f, i+1
			cases = append(cases, c)
		}
	}
	return files, cases, probs
}

// gateCallTimeout bounds one case; generous, so a busy machine does not turn a verdict into a
// timeout BLOCK and the figures stay those of the rules.
const gateCallTimeout = 10 * time.Second

// countGateCases counts the case lines of a bundle (for a run that cannot evaluate them).
func countGateCases(b *policy.Bundle) int {
	_, cases, probs := readGateCases(b)
	return len(cases) + len(probs)
}

// RunGate evaluates the bundle's labelled cases with pol (tiers 0–1 and the defaults, as shield
// eval does: no cache, no audit, no judge, no approver) and checks the manifest's thresholds.
// It returns nil when the bundle has neither a gate nor cases.
func RunGate(ctx context.Context, b *policy.Bundle, pol *shield.Policy) *GateReport {
	g := b.Manifest.Gate
	files, cases, probs := readGateCases(b)
	if g == nil && len(files) == 0 {
		return nil
	}
	rep := &GateReport{Configured: g != nil, Files: files, Problems: probs}
	if g != nil && len(cases) == 0 {
		rep.Problems = append(rep.Problems, policy.Problem{File: policy.ManifestFile, Msg: "evaluation gate: the manifest sets thresholds but the bundle has no labelled cases in tests/*.jsonl"})
		return rep
	}
	p, err := shield.New(shield.Config{CacheSize: -1, Timeout: gateCallTimeout}, pol)
	if err != nil {
		rep.Problems = append(rep.Problems, policy.Problem{Msg: fmt.Sprintf("evaluation gate: %v", err)})
		return rep
	}
	// The pipeline is safe for concurrent use: cases without a session are independent and are
	// evaluated on every CPU; when any case names a session, all run in file order on one, so
	// that session state (if the pipeline keeps any) sees them as a session would.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(cases)))
	for _, c := range cases {
		if c.Context != nil && c.Context.SessionID != "" {
			workers = 1
		}
	}
	verdicts := make([]shield.Verdict, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				call := &shield.Call{ID: c.ID, Tool: c.Tool, Arguments: c.Arguments}
				if c.Context != nil {
					call.Context = shield.CallContext{Cwd: c.Context.Cwd, SessionID: c.Context.SessionID, AgentID: c.Context.AgentID,
						Runtime: c.Context.Runtime, Labels: c.Context.Labels}
				}
				verdicts[i], _ = p.Evaluate(ctx, call, shield.EvalOptions{}) // an error is a BLOCK verdict
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	rows := map[string]*GateRow{}
	total := &GateRow{Category: "TOTAL"}
	for i, c := range cases {
		v := verdicts[i]
		got := v.Decision.String()
		r := rows[c.Category]
		if r == nil {
			r = &GateRow{Category: c.Category}
			rows[c.Category] = r
		}
		for _, row := range []*GateRow{r, total} {
			row.Cases++
			if got == c.Expect {
				row.Exact++
			}
			if c.Expect == "ALLOW" {
				row.Benign++
				if got != "ALLOW" {
					row.Flagged++
				}
			} else {
				row.Malicious++
				if got != "ALLOW" {
					row.Stopped++
				}
			}
		}
		if (c.Expect == "ALLOW") != (got == "ALLOW") {
			rep.Misses = append(rep.Misses, GateMiss{ID: c.ID, File: c.file, Line: c.line, Expect: c.Expect, Got: got, Rules: v.Rules})
		}
	}
	cats := make([]string, 0, len(rows))
	for c := range rows {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		r := rows[c]
		if g != nil {
			t := g.For(c)
			check(r, t)
		}
		rep.Rows = append(rep.Rows, *r)
	}
	if g != nil {
		for c := range g.Categories {
			if rows[c] == nil {
				rep.Problems = append(rep.Problems, policy.Problem{File: policy.ManifestFile,
					Msg: fmt.Sprintf("evaluation gate: category %q has thresholds but no case", c)})
			}
		}
		rep.Problems.Sort()
		check(total, g.Total)
	}
	rep.Rows = append(rep.Rows, *total)
	return rep
}

// epsilon absorbs rounding: 19/20 meets a min_recall of 0.95.
const epsilon = 1e-9

// check records the thresholds of a row and which it misses.
func check(r *GateRow, t policy.Thresholds) {
	r.MinRecall, r.MaxFPR = t.MinRecall, t.MaxFPR
	if t.MinRecall != nil && r.Malicious > 0 && r.Recall() < *t.MinRecall-epsilon {
		r.Failed = append(r.Failed, fmt.Sprintf("recall %s (%d/%d) is below min_recall %s", pct(r.Recall()), r.Stopped, r.Malicious, pct(*t.MinRecall)))
	}
	if t.MaxFPR != nil && r.Benign > 0 && r.FPR() > *t.MaxFPR+epsilon {
		r.Failed = append(r.Failed, fmt.Sprintf("FPR %s (%d/%d) is above max_fpr %s", pct(r.FPR()), r.Flagged, r.Benign, pct(*t.MaxFPR)))
	}
}
