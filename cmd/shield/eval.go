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
	Line     int      `json:"line,omitempty"`
	// With --explain: what the call would do and what decided it, then the whole normalised
	// action each rule saw.
	Explain *explanation      `json:"explain,omitempty"`
	Action  *normalize.Action `json:"action,omitempty"`
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
	if len(out.Rules) == 0 {
		return fmt.Sprintf("%s at tier %s (no rule named)", out.Decision, tier)
	}
	return fmt.Sprintf("%s at tier %s by %s", out.Decision, tier, strings.Join(out.Rules, ", "))
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
	return b.String()
}

// maxEvalLine bounds one input line (arguments cap + envelope).
const maxEvalLine = 2 << 20

func runEval(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "eval", "[--policy DIR] [--workspace DIR] [--corpus FILE [--show-misses]] < calls.jsonl")
	policyPath := fs.String("policy", "", "policy bundle directory or .tar.gz (default: embedded bundle)")
	workspace := fs.String("workspace", "/home/user/project", "workspace directory of the calls")
	corpus := fs.String("corpus", "", "labelled corpus (JSON lines with expect/category): print recall and false-positive rate")
	showMisses := fs.Bool("show-misses", false, "with --corpus: list every case whose verdict disagrees with its label")
	explainFlag := fs.Bool("explain", false, "also print the effects, flows, unresolved parts and unknown programs of each call, what decided it, and the normalised action each rule saw (with --corpus: the effects of each miss)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := &Config{Policy: PolicyConfig{Path: *policyPath, Workspace: *workspace}}
	pol, err := loadPolicy(cfg)
	if err != nil {
		return err
	}
	p, err := shield.New(shield.Config{CacheSize: -1}, pol)
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
			pl = pol
		}
		return runCorpus(ctx, env, p, f, *workspace, *showMisses, pl)
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
		out := evalOne(ctx, p, line, *workspace)
		if *explainFlag {
			out.Action = explainLine(pol, line)
			out.Explain = explain(out.Action, out)
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

// evalOne decodes and evaluates one line. Decoding problems become an error object.
func evalOne(ctx context.Context, p *shield.Pipeline, line []byte, workspace string) evalOutput {
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
	if err != nil {
		return evalOutput{ID: in.ID, Error: err.Error(), Decision: v.Decision.String()}
	}
	tier := v.Tier
	return evalOutput{ID: in.ID, Decision: v.Decision.String(), Tier: &tier, Rules: v.Rules, Reason: v.Reason, Class: v.ActionClass}
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
	var misses []string
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
		if showMisses && (in.Expect == "ALLOW") != (got == "ALLOW") {
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
			misses = append(misses, m)
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
	return nil
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}
