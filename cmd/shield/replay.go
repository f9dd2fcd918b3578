package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
)

// replayExamples is how many example ids a replay group lists.
const replayExamples = 3

// replayCall is one call to re-evaluate: from a corpus line or a decision record.
type replayCall struct {
	id       string
	line     []byte       // corpus: the raw line, decoded by evalOne
	call     *shield.Call // audit: the call rebuilt from the record
	redacted bool         // audit: some argument values were replaced by the redactor
	recorded string       // audit: the decision the record holds
}

// replayGroup is the calls whose verdict moved from one decision to another, with the rule
// that decided the new verdict (or, when the candidate matched no rule, the one that decided
// the old verdict, prefixed "was ").
type replayGroup struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Rule     string   `json:"rule"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

type replayKey struct{ from, to, rule string }

// replayReport is the output of shield policy replay.
type replayReport struct {
	Source    string `json:"source"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Calls     int    `json:"calls"`     // calls evaluated
	Changed   int    `json:"changed"`   // calls whose decision differs (redacted ones included)
	Unchanged int    `json:"unchanged"` // calls with the same decision under both bundles
	// Errors counts calls that one of the bundles could not evaluate (their verdict, always
	// not ALLOW, is in the groups like any other).
	Errors int `json:"errors"`
	// Redacted counts calls from the audit trail whose arguments were redacted before they were
	// recorded; they are evaluated with the placeholders and their changes are listed apart in
	// RedactedChanges.
	Redacted int `json:"redacted"`
	// Skipped counts records that could not be replayed (arguments not stored, no tool).
	Skipped         int           `json:"skipped"`
	Changes         []replayGroup `json:"changes"`
	RedactedChanges []replayGroup `json:"redacted_changes,omitempty"`
	// RecordedDiffers counts audit calls whose baseline verdict differs from the recorded one
	// (another bundle was live then, the judge or an approver decided, or a redaction).
	RecordedDiffers int      `json:"recorded_differs,omitempty"`
	Notes           []string `json:"notes,omitempty"`
}

func runPolicyReplay(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy replay", "--bundle NEW [--config FILE] [--baseline DIR] (--corpus FILE | --audit DIR) [--json] [--limit N]")
	candPath := fs.String("bundle", "", "candidate bundle directory or .tar.gz (required)")
	cfgPath := fs.String("config", "", "the service's config file: replay with its workspace, home, review classes, budget and limits, and its policy.path as the default baseline")
	basePath := fs.String("baseline", "", "bundle to compare against (default: policy.path of --config, else the embedded bundle)")
	corpus := fs.String("corpus", "", "JSON lines of calls ({\"id\", \"tool\", \"arguments\", \"context\"}), e.g. a labelled corpus")
	auditDir := fs.String("audit", "", "audit log directory: replay its decision records (read-only)")
	workspace := fs.String("workspace", "/home/user/project", "workspace directory of the calls")
	home := fs.String("home", "", "home directory \"~\" expands to (default: derived from the workspace)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	limit := fs.Int("limit", 10000, "replay at most N calls (from the audit trail: the newest N)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(fs.Args()) != 0 {
		return usageError{msg: "replay takes no positional arguments"}
	}
	if *candPath == "" {
		return usageError{msg: "--bundle is required"}
	}
	if (*corpus == "") == (*auditDir == "") {
		return usageError{msg: "give exactly one of --corpus and --audit"}
	}
	if *limit <= 0 {
		return usageError{msg: "--limit must be positive"}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// Without a config the flags (and their defaults) say where the calls ran; with one, the
	// service's workspace and home apply unless a flag names others.
	if *cfgPath == "" || set["workspace"] {
		cfg.Policy.Workspace = *workspace
	}
	if *cfgPath == "" || set["home"] {
		cfg.Policy.Home = *home
	}
	if *basePath == "" {
		*basePath = cfg.Policy.Path
	}
	// Replay is analysis: a candidate under work need not be signed yet.
	cfg.Policy.PublicKey = ""
	*workspace = cfg.Policy.Workspace
	baseCfg, candCfg := *cfg, *cfg
	baseCfg.Policy.Path, candCfg.Policy.Path = *basePath, *candPath
	base, baseName, err := replayPipeline(&baseCfg, *basePath)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	cand, candName, err := replayPipeline(&candCfg, *candPath)
	if err != nil {
		return fmt.Errorf("candidate: %w", err)
	}
	rep := &replayReport{Baseline: baseName, Candidate: candName}
	var calls []replayCall
	if *corpus != "" {
		rep.Source = "corpus " + *corpus
		calls, err = corpusCalls(*corpus, *limit)
	} else {
		rep.Source = "audit " + *auditDir
		calls, rep.Skipped, err = auditCalls(ctx, *auditDir, *limit)
		rep.Notes = append(rep.Notes, "audit records keep the tool, the (redacted) arguments, the session, agent and runtime, but not the working directory or labels; calls are replayed without them")
	}
	if err != nil {
		return err
	}
	replay(ctx, base, cand, calls, *workspace, rep)
	if rep.Redacted > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d calls had redacted arguments; their verdicts under either bundle may differ from the original (they are evaluated with the placeholders and listed apart)", rep.Redacted))
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReplay(env.stdout, rep)
	return nil
}

// replayPipeline activates a bundle (the embedded one when path is empty) in a pipeline that
// caches nothing, as shield eval does, and names it by revision and digest.
func replayPipeline(cfg *Config, path string) (*shield.Pipeline, string, error) {
	b, pol, err := loadBundle(cfg)
	if err != nil {
		return nil, "", err
	}
	p, err := shield.New(evalPipelineConfig(cfg, nil), pol)
	if err != nil {
		return nil, "", err
	}
	if path == "" {
		path = "embedded"
	}
	return p, bundleName(path, b), nil
}

func bundleName(path string, b *policy.Bundle) string {
	return fmt.Sprintf("%s (revision %s, %s)", path, b.Revision, b.Digest)
}

// corpusCalls reads up to limit non-empty lines of a JSON-lines file.
func corpusCalls(path string, limit int) ([]replayCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := newLineReader(f, maxEvalLine)
	var calls []replayCall
	n := 0
	for len(calls) < limit {
		raw, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read corpus: %w", err)
		}
		n++
		if tooLong {
			return nil, fmt.Errorf("corpus line %d is longer than %d bytes", n, maxEvalLine)
		}
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		var head struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(line, &head) // a bad line is reported by evalOne as an error verdict
		id := head.ID
		if id == "" {
			id = fmt.Sprintf("line %d", n)
		}
		calls = append(calls, replayCall{id: id, line: slices.Clone(line)})
	}
	return calls, nil
}

// auditCalls reads the newest limit decision records of a log, oldest first (the order they
// were decided in, which session state depends on).
func auditCalls(ctx context.Context, dir string, limit int) ([]replayCall, int, error) {
	l, err := audit.OpenReadOnly(dir)
	if err != nil {
		return nil, 0, err
	}
	defer l.Close()
	var recs []*audit.Record
	q := audit.Query{Types: []audit.Type{audit.TypeDecision}, Newest: true}
	for len(recs) < limit {
		q.Limit = min(limit-len(recs), 10_000)
		res, err := l.Query(ctx, q)
		if err != nil {
			return nil, 0, fmt.Errorf("read audit log: %w", err)
		}
		recs = append(recs, res.Records...)
		if !res.More {
			break
		}
		q.ToSeq = res.Next
	}
	slices.Reverse(recs)
	var calls []replayCall
	skipped := 0
	for _, r := range recs {
		var d audit.Decision
		if err := json.Unmarshal(r.Payload, &d); err != nil || d.Tool == "" || d.ArgsInvalid {
			// Invalid arguments were not stored: there is nothing to replay.
			skipped++
			continue
		}
		args := d.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		id := fmt.Sprintf("seq:%d", r.Seq)
		if d.CallID != "" {
			id += "/" + d.CallID
		}
		calls = append(calls, replayCall{
			id: id,
			call: &shield.Call{ID: d.CallID, Tool: d.Tool, Arguments: args, Context: shield.CallContext{
				SessionID: d.SessionID, AgentID: d.AgentID, Runtime: d.Runtime, Caller: d.Caller}},
			redacted: len(d.Redacted) > 0,
			recorded: d.Decision,
		})
	}
	return calls, skipped, nil
}

// replay evaluates every call under both pipelines and fills the report.
func replay(ctx context.Context, base, cand *shield.Pipeline, calls []replayCall, workspace string, rep *replayReport) {
	groups := map[replayKey]*replayGroup{}
	redGroups := map[replayKey]*replayGroup{}
	eval := func(p *shield.Pipeline, c replayCall) evalOutput {
		if c.line != nil {
			return evalOne(ctx, p, c.line, workspace)
		}
		return evalCall(ctx, p, c.call)
	}
	for _, c := range calls {
		if ctx.Err() != nil {
			break
		}
		rep.Calls++
		old, nw := eval(base, c), eval(cand, c)
		if old.Error != "" || nw.Error != "" {
			rep.Errors++
		}
		if c.redacted {
			rep.Redacted++
		}
		if c.recorded != "" && c.recorded != decisionOf(old) {
			rep.RecordedDiffers++
		}
		from, to := decisionOf(old), decisionOf(nw)
		if from == to {
			rep.Unchanged++
			continue
		}
		rep.Changed++
		rule := strings.Join(nw.Rules, ",")
		if rule == "" && len(old.Rules) > 0 {
			rule = "was " + strings.Join(old.Rules, ",")
		}
		if rule == "" {
			rule = "(no rule)"
		}
		m := groups
		if c.redacted {
			m = redGroups
		}
		k := replayKey{from, to, rule}
		g := m[k]
		if g == nil {
			g = &replayGroup{From: from, To: to, Rule: rule, Examples: []string{}}
			m[k] = g
		}
		g.Count++
		if len(g.Examples) < replayExamples {
			g.Examples = append(g.Examples, c.id)
		}
	}
	rep.Changes = sortGroups(groups)
	rep.RedactedChanges = sortGroups(redGroups)
	if rep.Changes == nil {
		rep.Changes = []replayGroup{}
	}
}

// decisionOf is the decision of an output; one that could not be evaluated is BLOCK (fail
// closed, as the service does).
func decisionOf(o evalOutput) string {
	if o.Decision == "" {
		return "BLOCK"
	}
	return o.Decision
}

func sortGroups(m map[replayKey]*replayGroup) []replayGroup {
	if len(m) == 0 {
		return nil
	}
	out := make([]replayGroup, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.Rule < b.Rule
	})
	return out
}

// evalCall evaluates a call built from an audit record.
func evalCall(ctx context.Context, p *shield.Pipeline, call *shield.Call) evalOutput {
	v, err := p.Evaluate(ctx, call, shield.EvalOptions{})
	if err != nil {
		return evalOutput{ID: call.ID, Error: err.Error(), Decision: v.Decision.String()}
	}
	tier := v.Tier
	return evalOutput{ID: call.ID, Decision: v.Decision.String(), Tier: &tier, Rules: v.Rules, Reason: v.Reason, Class: v.ActionClass}
}

func printReplay(w io.Writer, rep *replayReport) {
	fmt.Fprintf(w, "source:    %s\nbaseline:  %s\ncandidate: %s\n\n", rep.Source, rep.Baseline, rep.Candidate)
	fmt.Fprintf(w, "%d calls replayed: %d changed, %d unchanged", rep.Calls, rep.Changed, rep.Unchanged)
	if rep.Errors > 0 {
		fmt.Fprintf(w, ", %d not evaluated by one bundle (counted as BLOCK)", rep.Errors)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, ", %d records skipped (arguments not stored)", rep.Skipped)
	}
	fmt.Fprintln(w)
	table := func(title string, gs []replayGroup) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n%-21s %6s  %-40s %s\n", title, "old -> new", "calls", "rule", "examples")
		for _, g := range gs {
			fmt.Fprintf(w, "%-21s %6d  %-40s %s\n", g.From+" -> "+g.To, g.Count, g.Rule, strings.Join(g.Examples, " "))
		}
	}
	table("changes:", rep.Changes)
	table("changes among calls with redacted arguments (verdicts may differ from the original calls'):", rep.RedactedChanges)
	if rep.RecordedDiffers > 0 {
		fmt.Fprintf(w, "\n%d calls: the baseline verdict differs from the recorded one (another bundle, the judge or an approver decided then, or redaction)\n", rep.RecordedDiffers)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}
