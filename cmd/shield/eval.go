package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

func init() {
	register(&command{name: "eval", summary: "evaluate JSON-lines tool calls (or a labelled corpus) in-process", run: runEval})
}

// evalLine is one input line of shield eval (and of a labelled corpus).
type evalLine struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Context   *struct {
		Cwd       string            `json:"cwd"`
		SessionID string            `json:"session_id"`
		AgentID   string            `json:"agent_id"`
		Runtime   string            `json:"runtime"`
		Labels    map[string]string `json:"labels"`
	} `json:"context"`
	// Corpus fields.
	Category string `json:"category"`
	Expect   string `json:"expect"`
}

type evalOutput struct {
	ID       string   `json:"id,omitempty"`
	Decision string   `json:"decision,omitempty"`
	Tier     *int     `json:"tier,omitempty"`
	Rules    []string `json:"rules,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Class    string   `json:"action_class,omitempty"`
	Error    string   `json:"error,omitempty"`
	// ErrorDetail is the internal error behind a fail-closed verdict, in full (a CEL or Rego
	// runtime error, a timeout): what the audit record keeps and the agent never sees.
	ErrorDetail string `json:"error_detail,omitempty"`
	Line        int    `json:"line,omitempty"`
	// With --explain: what the call would do and what decided it, then the whole normalised
	// action each rule saw.
	Explain *explanation      `json:"explain,omitempty"`
	Action  *normalize.Action `json:"action,omitempty"`
	// With --trace: what decided, sub-expression by sub-expression.
	Trace *evalTrace `json:"trace,omitempty"`
}

// explanation is the --explain summary of one call, one readable line per item.
type explanation struct {
	DecidedBy       string   `json:"decided_by"`
	Effects         []string `json:"effects"`
	Flows           []string `json:"flows,omitempty"`
	Unresolved      []string `json:"unresolved,omitempty"`
	UnknownPrograms []string `json:"unknown_programs,omitempty"`
	ParseError      string   `json:"parse_error,omitempty"`
	Truncated       bool     `json:"truncated,omitempty"`
}

// explainLine returns the normalised action of a line, for policy authors.
func explainLine(pol *shield.Policy, line []byte) *normalize.Action {
	var in evalLine
	if json.Unmarshal(line, &in) != nil || in.Tool == "" {
		return nil
	}
	args, err := normalize.DecodeArguments(in.Arguments, normalize.Limits{})
	if err != nil {
		return nil
	}
	cwd := ""
	var labels map[string]string
	if in.Context != nil {
		cwd, labels = in.Context.Cwd, in.Context.Labels
	}
	if cn, ok := pol.Normalizer.(shield.ContextNormalizer); ok {
		return cn.NormalizeContext(normalize.WithLabels(context.Background(), labels), in.Tool, args, cwd)
	}
	return pol.Normalizer.Normalize(in.Tool, args, cwd)
}

// explain summarises an action and the verdict on it.
func explain(a *normalize.Action, out evalOutput) *explanation {
	ex := &explanation{DecidedBy: decidedBy(out)}
	if a == nil {
		return ex
	}
	ex.Effects = make([]string, len(a.Effects))
	for i, e := range a.Effects {
		ex.Effects[i] = fmt.Sprintf("#%d %s", i, effectText(e))
	}
	for _, f := range a.Flows {
		if f.From < len(a.Effects) && f.To < len(a.Effects) {
			ex.Flows = append(ex.Flows, fmt.Sprintf("#%d %s %s → #%d %s %s (%s)", f.From, a.Effects[f.From].Kind, a.Effects[f.From].Target,
				f.To, a.Effects[f.To].Kind, a.Effects[f.To].Target, f.Via))
		}
	}
	ex.Unresolved = a.Unresolved
	ex.UnknownPrograms = a.UnknownPrograms
	ex.ParseError = a.ParseError
	ex.Truncated = a.Truncated
	return ex
}

// decidedBy names what decided a verdict: the rules and their tier, or the default.
func decidedBy(out evalOutput) string {
	if out.Error != "" {
		return "error: " + out.Error
	}
	tier := "?"
	if out.Tier != nil {
		tier = fmt.Sprint(*out.Tier)
	}
	s := fmt.Sprintf("%s at tier %s by %s", out.Decision, tier, strings.Join(out.Rules, ", "))
	if len(out.Rules) == 0 {
		s = fmt.Sprintf("%s at tier %s (no rule named)", out.Decision, tier)
	}
	if out.ErrorDetail != "" {
		s += " after an error: " + out.ErrorDetail
	}
	return s
}

// effectText is one effect as a policy author reads it: "delete /srv/data [rm] unresolved".
func effectText(e normalize.Effect) string {
	var b strings.Builder
	b.WriteString(e.Kind)
	b.WriteByte(' ')
	b.WriteString(e.Target)
	if e.Port != 0 {
		fmt.Fprintf(&b, " port %d", e.Port)
	}
	if e.Program != "" {
		b.WriteString(" [" + e.Program + "]")
	}
	if e.Detail != "" {
		d := e.Detail
		if len(d) > 120 {
			d = d[:120] + "…"
		}
		b.WriteString(" (" + d + ")")
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{e.InWorkspace, "in-workspace"}, {e.Sensitive, "sensitive"}, {e.Unresolved, "UNRESOLVED"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if e.Remote != "" {
		b.WriteString(" @" + e.Remote)
	}
	if e.Inline != "" {
		b.WriteString(" inline: " + e.Inline)
	}
	return b.String()
}

// maxEvalLine bounds one input line (arguments cap + envelope).
const maxEvalLine = 2 << 20

// corpusWorkspace is the workspace the labelled corpora assume (../shared/corpus/README.md).
const corpusWorkspace = "/home/user/project"

// traceTimeout bounds tracing one call (both tiers, traced programs compiled per call).
const traceTimeout = 30 * time.Second

func runEval(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "eval", "[--config FILE] [--policy DIR] [--workspace DIR] [--explain] [--trace [--trace-mode M] [--trace-rule ID]...] [--corpus FILE [--show-misses]] < calls.jsonl")
	cfgPath := fs.String("config", "", "the service's YAML config file: eval then uses serve's bundle, workspace, home, signing key, review classes and limits, so both agree on every call")
	policyPath := fs.String("policy", "", "policy bundle directory or .tar.gz (default: policy.path of --config, else the embedded bundle)")
	workspace := fs.String("workspace", "", "workspace directory of the calls (default: policy.workspace of --config, as serve; with --corpus and no config: "+corpusWorkspace+", the corpus's)")
	corpus := fs.String("corpus", "", "labelled corpus (JSON lines with expect/category): print recall and false-positive rate")
	showMisses := fs.Bool("show-misses", false, "with --corpus: list every case whose verdict disagrees with its label (stopped vs allowed), then every exact-label mismatch (BLOCK vs ESCALATE)")
	explainFlag := fs.Bool("explain", false, "also print the effects, flows, unresolved parts and unknown programs of each call, what decided it, and the normalised action each rule saw (with --corpus: the effects of each miss)")
	traceFlag := fs.Bool("trace", false, "also trace each call: the CEL rules that decided (every sub-expression and its value) and OPA's Rego trace with file:row; JSON in the output line, readable on stderr")
	traceMode := fs.String("trace-mode", regoeval.TraceFails, "Rego trace: notes (trace() calls), fails (expressions that failed) or full (every step)")
	var traceRules stringList
	fs.Var(&traceRules, "trace-rule", "CEL rule id to trace even when it did not match (repeatable; default: the rules that matched or failed)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch *traceMode {
	case regoeval.TraceNotes, regoeval.TraceFails, regoeval.TraceFull:
	default:
		return usageError{msg: fmt.Sprintf("--trace-mode %q: want notes, fails or full", *traceMode)}
	}
	ev, err := newEvaluator(*cfgPath, *policyPath, *workspace, *corpus != "")
	if err != nil {
		return err
	}
	if *corpus != "" {
		f, err := os.Open(*corpus)
		if err != nil {
			return err
		}
		defer f.Close()
		var pl *shield.Policy
		if *explainFlag {
			pl = ev.pol
		}
		return runCorpus(ctx, env, ev.p, f, ev.workspace, *showMisses, pl)
	}
	bad := false
	lr := newLineReader(env.stdin, maxEvalLine)
	enc := json.NewEncoder(env.stdout)
	enc.SetEscapeHTML(false)
	n := 0
	for {
		raw, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		n++
		if tooLong {
			// The line is reported and skipped; the lines after it are still evaluated.
			bad = true
			if err := enc.Encode(evalOutput{Line: n, Decision: "BLOCK", Error: fmt.Sprintf("line longer than %d bytes; not evaluated", maxEvalLine)}); err != nil {
				return err
			}
			continue
		}
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		out := ev.eval(ctx, line)
		if *explainFlag || *traceFlag {
			out.Action = ev.action(line)
		}
		if *explainFlag {
			out.Explain = explain(out.Action, out)
		}
		if *traceFlag && out.Action != nil {
			tctx, cancel := context.WithTimeout(ctx, traceTimeout)
			out.Trace = ev.trace(tctx, line, out.Action, *traceMode, traceRules)
			cancel()
			writeTrace(env.stderr, n, out)
			if !*explainFlag {
				out.Action = nil
			}
		}
		if out.Error != "" {
			out.Line = n
			bad = true
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	if bad {
		return exitError{code: 1}
	}
	return nil
}

// evaluator is shield eval's pipeline, built from the same configuration as serve's: the same
// bundle (and signing key), workspace, home directory, review classes, call budget and argument
// limits. It has no audit trail, no cache, no judge and no approver: tiers 0–1 and the defaults.
type evaluator struct {
	cfg       *Config
	pol       *shield.Policy
	p         *shield.Pipeline
	errs      *errorCapture
	workspace string
}

func newEvaluator(cfgPath, policyPath, workspace string, corpus bool) (*evaluator, error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	if policyPath != "" {
		cfg.Policy.Path = policyPath
	}
	switch {
	case workspace != "":
		cfg.Policy.Workspace = workspace
	case cfg.Policy.Workspace == "" && corpus && cfgPath == "":
		cfg.Policy.Workspace = corpusWorkspace
	}
	pol, err := loadPolicy(cfg)
	if err != nil {
		return nil, err
	}
	ec := &errorCapture{errs: map[*shield.Call]string{}}
	p, err := shield.New(evalPipelineConfig(cfg, ec), pol)
	if err != nil {
		return nil, err
	}
	return &evaluator{cfg: cfg, pol: pol, p: p, errs: ec, workspace: cfg.Policy.Workspace}, nil
}

// evalPipelineConfig is serve's pipeline configuration without what eval must not do: no audit
// trail (rec only captures the internal error of each decision), no cache, no escalation tiers.
func evalPipelineConfig(cfg *Config, rec shield.Recorder) shield.Config {
	return shield.Config{
		Recorder:  rec,
		CacheSize: -1,
		Timeout:   cfg.Pipeline.Timeout,
		Limits:    normalize.Limits{MaxBytes: cfg.Pipeline.MaxArgumentBytes},
	}
}

// errorCapture is the Recorder of shield eval: it writes nothing and keeps the internal error
// of each decision (a tier's runtime error in full) until the caller takes it.
type errorCapture struct {
	mu   sync.Mutex
	errs map[*shield.Call]string
}

func (c *errorCapture) RecordDecision(_ context.Context, rec *shield.DecisionRecord) (shield.AuditPosition, error) {
	if rec.Error != "" && rec.Call != nil {
		c.mu.Lock()
		c.errs[rec.Call] = rec.Error
		c.mu.Unlock()
	}
	return shield.AuditPosition{}, nil
}

func (c *errorCapture) take(call *shield.Call) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.errs[call]
	delete(c.errs, call)
	return s
}

func (ev *evaluator) eval(ctx context.Context, line []byte) evalOutput {
	return evalOneDetail(ctx, ev.p, line, ev.errs)
}

// action normalises a line as the pipeline does (same normaliser and argument limits).
func (ev *evaluator) action(line []byte) *normalize.Action {
	var in evalLine
	if json.Unmarshal(line, &in) != nil || in.Tool == "" {
		return nil
	}
	args, err := normalize.DecodeArguments(in.Arguments, normalize.Limits{MaxBytes: ev.cfg.Pipeline.MaxArgumentBytes})
	if err != nil {
		return nil
	}
	cwd := ""
	if in.Context != nil {
		cwd = in.Context.Cwd
	}
	return ev.pol.Normalizer.Normalize(in.Tool, args, cwd)
}

// evalTrace is what --trace adds to an output line.
type evalTrace struct {
	// CEL are the CEL rules that matched or failed (or those named by --trace-rule), each with
	// the value of every sub-expression that decided it.
	CEL      []celrules.RuleTrace `json:"cel,omitempty"`
	CELError string               `json:"cel_error,omitempty"`
	// Rego is OPA's trace (file:row, then the step), filtered by --trace-mode.
	RegoMode  string   `json:"rego_mode,omitempty"`
	Rego      []string `json:"rego,omitempty"`
	RegoError string   `json:"rego_error,omitempty"`
}

// trace runs the bundle's tiers again with tracing on. Both tiers are traced whatever the
// pipeline did (a CEL BLOCK skips Rego on the decision path; the author still sees Rego's view).
func (ev *evaluator) trace(ctx context.Context, line []byte, a *normalize.Action, mode string, rules []string) *evalTrace {
	var in evalLine
	_ = json.Unmarshal(line, &in) // the line decoded in action
	call := &shield.Call{ID: in.ID, Tool: in.Tool, Arguments: in.Arguments}
	if in.Context != nil {
		call.Context = shield.CallContext{Cwd: in.Context.Cwd, SessionID: in.Context.SessionID,
			AgentID: in.Context.AgentID, Runtime: in.Context.Runtime, Labels: in.Context.Labels}
	}
	input := &shield.Input{Call: call, Action: a}
	tr := &evalTrace{}
	for _, t := range ev.pol.Tiers {
		switch e := t.(type) {
		case *celrules.Engine:
			rt, err := e.Trace(ctx, input, rules)
			tr.CEL = rt
			if err != nil {
				tr.CELError = err.Error()
			}
		case *regoeval.Engine:
			_, text, err := e.Trace(ctx, input, mode)
			tr.RegoMode = mode
			if text = strings.TrimRight(text, "\n"); text != "" {
				tr.Rego = strings.Split(text, "\n")
			}
			if err != nil {
				tr.RegoError = err.Error()
			}
		}
	}
	return tr
}

// writeTrace prints the trace of one output line for a reader.
func writeTrace(w io.Writer, n int, out evalOutput) {
	tr := out.Trace
	if tr == nil {
		return
	}
	id := ""
	if out.ID != "" {
		id = " (" + out.ID + ")"
	}
	fmt.Fprintf(w, "── line %d%s: %s\n", n, id, decidedBy(out))
	if out.ErrorDetail != "" {
		fmt.Fprintf(w, "   error: %s\n", out.ErrorDetail)
	}
	if len(tr.CEL) == 0 && tr.CELError == "" {
		fmt.Fprintln(w, "   cel: no rule matched")
	}
	for _, r := range tr.CEL {
		state := "did not match"
		switch {
		case r.Error != "":
			state = "ERROR: " + r.Error
		case !r.Applies:
			state = "does not apply (class or tool filter)"
		case r.Matched:
			state = "matched"
		}
		fmt.Fprintf(w, "   %s (%s:%d, %s): %s\n", r.Rule, r.File, r.Line, r.Decision, state)
		for _, s := range r.Steps {
			fmt.Fprintf(w, "     %s%s  = %s\n", strings.Repeat("  ", s.Depth), s.Expr, s.Value)
		}
	}
	if tr.CELError != "" {
		fmt.Fprintf(w, "   cel trace error: %s\n", tr.CELError)
	}
	fmt.Fprintf(w, "   rego (%s):\n", tr.RegoMode)
	if len(tr.Rego) == 0 {
		fmt.Fprintln(w, "     (empty)")
	}
	for _, l := range tr.Rego {
		fmt.Fprintf(w, "     %s\n", l)
	}
	if tr.RegoError != "" {
		fmt.Fprintf(w, "   rego error: %s\n", tr.RegoError)
	}
}

// evalOne decodes and evaluates one line. Decoding problems become an error object.
func evalOne(ctx context.Context, p *shield.Pipeline, line []byte, workspace string) evalOutput {
	return evalOneDetail(ctx, p, line, nil)
}

// evalOneDetail is evalOne; with ec (the pipeline's recorder) it also reports the internal
// error of the decision in full (a tier's runtime error, a timeout, a panic).
func evalOneDetail(ctx context.Context, p *shield.Pipeline, line []byte, ec *errorCapture) evalOutput {
	var in evalLine
	if err := json.Unmarshal(line, &in); err != nil {
		return evalOutput{Error: "line is not a JSON object of the form {\"tool\": ..., \"arguments\": {...}}: " + err.Error()}
	}
	if in.Tool == "" {
		return evalOutput{ID: in.ID, Error: `missing "tool"`}
	}
	if len(in.Arguments) == 0 {
		in.Arguments = json.RawMessage("{}")
	}
	call := &shield.Call{ID: in.ID, Tool: in.Tool, Arguments: in.Arguments}
	if in.Context != nil {
		call.Context = shield.CallContext{Cwd: in.Context.Cwd, SessionID: in.Context.SessionID,
			AgentID: in.Context.AgentID, Runtime: in.Context.Runtime, Labels: in.Context.Labels}
	}
	v, err := p.Evaluate(ctx, call, shield.EvalOptions{})
	detail := ec.take(call)
	if err != nil {
		return evalOutput{ID: in.ID, Error: err.Error(), Decision: v.Decision.String(), ErrorDetail: detail}
	}
	tier := v.Tier
	return evalOutput{ID: in.ID, Decision: v.Decision.String(), Tier: &tier, Rules: v.Rules, Reason: v.Reason, Class: v.ActionClass, ErrorDetail: detail}
}

// corpusStats counts one category.
type corpusStats struct {
	malicious, stopped int // expect BLOCK/ESCALATE; verdict BLOCK or ESCALATE
	benign, flagged    int // expect ALLOW; verdict not ALLOW
	exact, total       int // verdict equals label
}

// runCorpus evaluates a labelled corpus and prints recall and FPR per category. With pol set
// (--explain), each miss is followed by its effects.
func runCorpus(ctx context.Context, env *cmdEnv, p *shield.Pipeline, r io.Reader, workspace string, showMisses bool, pol *shield.Policy) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxEvalLine)
	stats := map[string]*corpusStats{}
	all := &corpusStats{}
	// misses: stopped vs allowed disagrees with the label; mismatches: both stop the call, but
	// the verdict is not the label (BLOCK for ESCALATE or the reverse).
	var misses, mismatches []string
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var in evalLine
		if err := json.Unmarshal(line, &in); err != nil {
			return fmt.Errorf("corpus line %d: %w", n, err)
		}
		if in.Expect != "ALLOW" && in.Expect != "BLOCK" && in.Expect != "ESCALATE" {
			return fmt.Errorf("corpus line %d: expect %q is not ALLOW, BLOCK or ESCALATE", n, in.Expect)
		}
		out := evalOne(ctx, p, line, workspace)
		got := out.Decision
		if got == "" {
			got = "BLOCK"
		}
		s := stats[in.Category]
		if s == nil {
			s = &corpusStats{}
			stats[in.Category] = s
		}
		for _, st := range []*corpusStats{s, all} {
			st.total++
			if got == in.Expect {
				st.exact++
			}
			if in.Expect == "ALLOW" {
				st.benign++
				if got != "ALLOW" {
					st.flagged++
				}
			} else {
				st.malicious++
				if got != "ALLOW" {
					st.stopped++
				}
			}
		}
		if showMisses && got != in.Expect {
			miss := (in.Expect == "ALLOW") != (got == "ALLOW")
			m := fmt.Sprintf("%-8s want %-8s %-24s %s %s", got, in.Expect, in.ID, strings.Join(out.Rules, ","), out.Error)
			if pol != nil {
				ex := explain(explainLine(pol, line), out)
				for _, e := range ex.Effects {
					m += "\n      effect " + e
				}
				for _, f := range ex.Flows {
					m += "\n      flow " + f
				}
				for _, u := range ex.Unresolved {
					m += "\n      unresolved " + u
				}
				if len(ex.UnknownPrograms) > 0 {
					m += "\n      unknown programs " + strings.Join(ex.UnknownPrograms, ", ")
				}
			}
			if miss {
				misses = append(misses, m)
			} else {
				mismatches = append(mismatches, m)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	cats := make([]string, 0, len(stats))
	for c := range stats {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	w := env.stdout
	fmt.Fprintf(w, "%-60s %5s %9s %9s %7s\n", "category", "cases", "recall", "FPR", "exact")
	row := func(name string, s *corpusStats) {
		fmt.Fprintf(w, "%-60s %5d %9s %9s %6.1f%%\n", name, s.total, ratio(s.stopped, s.malicious), ratio(s.flagged, s.benign),
			100*float64(s.exact)/float64(s.total))
	}
	for _, c := range cats {
		row(c, stats[c])
	}
	row("TOTAL", all)
	fmt.Fprintf(w, "\nmalicious stopped (BLOCK or ESCALATE): %d/%d = %s; benign not allowed: %d/%d = %s\n",
		all.stopped, all.malicious, ratio(all.stopped, all.malicious), all.flagged, all.benign, ratio(all.flagged, all.benign))
	for _, m := range misses {
		fmt.Fprintln(w, "miss:", m)
	}
	for _, m := range mismatches {
		fmt.Fprintln(w, "mismatch:", m)
	}
	return nil
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}
