package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield/shadow"
)

// shadowStatus is the JSON of `shield policy shadow status`.
type shadowStatus struct {
	Summaries   []shadow.Summary `json:"summaries"` // the newest per candidate digest
	Differences []shadowGroup    `json:"differences"`
	Records     int              `json:"records"` // shadow_decision records read
}

type shadowGroup struct {
	Candidate string   `json:"candidate_revision"`
	Change    string   `json:"change"` // "ALLOW→BLOCK"
	Rule      string   `json:"rule"`   // the candidate's deciding rule (or "was <baseline rule>")
	Count     int      `json:"count"`
	Examples  []string `json:"examples"` // decision ids
}

func runPolicyShadow(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "status" {
		return usageError{msg: "want: shield policy shadow status [--config FILE | --audit DIR] [--limit N] [--json]"}
	}
	fs := newFlagSet(env, "policy shadow status", "[--config FILE | --audit DIR] [--limit N] [--json]")
	cfgPath := fs.String("config", "", "the service's config file (its audit directory is read)")
	dir := fs.String("audit", "", "audit directory (default: the config's, else the default state directory's)")
	limit := fs.Int("limit", 100_000, "read at most this many of the newest shadow records")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *limit <= 0 {
		return usageError{msg: "--limit must be positive"}
	}
	if *dir == "" {
		cfg, err := loadConfig(*cfgPath)
		if err != nil {
			return err
		}
		cfg.WithDefaults()
		*dir = cfg.Audit.Dir
	}
	st, err := readShadow(ctx, *dir, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(st)
	}
	w := env.stdout
	if len(st.Summaries) == 0 && st.Records == 0 {
		fmt.Fprintf(w, "no shadow records in %s (is policy.shadow set?)\n", *dir)
		return nil
	}
	for _, s := range st.Summaries {
		fmt.Fprintf(w, "shadow bundle %s (%s) since %s: offered %d, evaluated %d, agreed %d, differed %d, dropped %d (queue full), record errors %d\n",
			s.CandidateRevision, s.CandidateDigest, s.Since.Format(time.RFC3339), s.Offered, s.Evaluated, s.Agreed, s.Differed, s.Dropped, s.Errors)
	}
	fmt.Fprintf(w, "%d shadow decision records; differences by change and rule:\n", st.Records)
	for _, g := range st.Differences {
		fmt.Fprintf(w, "  %-8s %-20s %6d  %s  e.g. %s\n", g.Candidate, g.Change, g.Count, g.Rule, strings.Join(g.Examples, ", "))
	}
	return nil
}

// readShadow reads the newest limit shadow records of an audit log.
func readShadow(ctx context.Context, dir string, limit int) (*shadowStatus, error) {
	l, err := audit.OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	st := &shadowStatus{}
	seenSummary := map[string]bool{}
	groups := map[string]*shadowGroup{}
	q := audit.Query{Types: []audit.Type{shadow.TypeDecision, shadow.TypeSummary}, Newest: true}
	n := 0
	for n < limit {
		q.Limit = min(limit-n, 10_000)
		res, err := l.Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		for _, r := range res.Records {
			n++
			switch r.Type {
			case shadow.TypeSummary:
				var s shadow.Summary
				if json.Unmarshal(r.Payload, &s) == nil && !seenSummary[s.CandidateDigest] {
					seenSummary[s.CandidateDigest] = true
					st.Summaries = append(st.Summaries, s)
				}
			case shadow.TypeDecision:
				var d shadow.Record
				if json.Unmarshal(r.Payload, &d) != nil {
					continue
				}
				st.Records++
				rule := strings.Join(d.Candidate.Rules, ",")
				if rule == "" {
					rule = "was " + strings.Join(d.Baseline.Rules, ",")
				}
				change := d.Baseline.Decision + "→" + d.Candidate.Decision
				key := d.CandidateRevision + "\x00" + change + "\x00" + rule
				g := groups[key]
				if g == nil {
					g = &shadowGroup{Candidate: d.CandidateRevision, Change: change, Rule: rule}
					groups[key] = g
				}
				g.Count++
				if len(g.Examples) < 3 {
					g.Examples = append(g.Examples, d.DecisionID)
				}
			}
		}
		if !res.More {
			break
		}
		q.ToSeq = res.Next
	}
	for _, g := range groups {
		st.Differences = append(st.Differences, *g)
	}
	sort.Slice(st.Differences, func(i, j int) bool {
		a, b := st.Differences[i], st.Differences[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Change != b.Change {
			return a.Change < b.Change
		}
		return a.Rule < b.Rule
	})
	return st, nil
}
