package shield

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/shieldsec/shield/shield/normalize"
)

// fakeTier answers from a function; it records how often it was called.
type fakeTier struct {
	level int
	name  string
	fn    func(ctx context.Context, in *Input) (Result, error)
	mu    sync.Mutex
	calls int
}

func (f *fakeTier) Level() int   { return f.level }
func (f *fakeTier) Name() string { return f.name }
func (f *fakeTier) Evaluate(ctx context.Context, in *Input) (Result, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	return f.fn(ctx, in)
}

func says(d Decision, rule string) func(context.Context, *Input) (Result, error) {
	return func(context.Context, *Input) (Result, error) {
		return Result{Findings: []Finding{{Decision: d, Rule: rule, Reason: rule + " says " + d.String()}}}, nil
	}
}

func silent(context.Context, *Input) (Result, error) { return Result{}, nil }

// classNormalizer gives every call the class named by its tool ("exec" → exec); "unparsed" sets
// a parse error.
type classNormalizer struct{}

func (classNormalizer) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	a := &normalize.Action{Tool: tool, Class: tool, Known: tool != "unknown", Args: args}
	if tool == "unparsed" {
		a.Class = normalize.ClassExec
		a.ParseError = "unterminated quote"
	}
	if tool == "truncated" {
		a.Class = normalize.ClassExec
		a.Truncated = true
	}
	return a
}

type recorder struct {
	mu   sync.Mutex
	recs []*DecisionRecord
	err  error
}

func (r *recorder) RecordDecision(ctx context.Context, rec *DecisionRecord) (AuditPosition, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return AuditPosition{}, r.err
	}
	cp := *rec.Verdict
	r.recs = append(r.recs, &DecisionRecord{Call: rec.Call, Action: rec.Action, Verdict: &cp, Error: rec.Error, CanonicalArguments: rec.CanonicalArguments})
	return AuditPosition{Seq: uint64(len(r.recs)), Hash: "h"}, nil
}

func newPolicy(tiers ...Tier) *Policy {
	return &Policy{
		Revision: "r1", Digest: "sha256:d1", Normalizer: classNormalizer{}, Tiers: tiers,
		Defaults: map[string]Decision{"exec": Allow, "file_read": Allow, "message_send": Escalate, "unknown": Escalate},
	}
}

func call(tool, args string) *Call {
	return &Call{ID: "c1", Tool: tool, Arguments: json.RawMessage(args), Context: CallContext{SessionID: "s1", Cwd: "/w"}}
}

func TestPipelineCombination(t *testing.T) {
	tests := []struct {
		name      string
		tool      string
		t0, t1    func(context.Context, *Input) (Result, error)
		wantDec   Decision
		wantTier  int
		wantRules []string
		t1Called  bool
	}{
		{name: "no rule speaks, class default allow", tool: "exec", t0: silent, t1: silent,
			wantDec: Allow, wantTier: TierPipeline, wantRules: []string{"default:exec"}, t1Called: true},
		{name: "no rule speaks, class default escalate", tool: "message_send", t0: silent, t1: silent,
			wantDec: Escalate, wantTier: TierPipeline, wantRules: []string{"default:message_send"}, t1Called: true},
		{name: "unknown tool escalates", tool: "unknown", t0: silent, t1: silent,
			wantDec: Escalate, wantTier: TierPipeline, wantRules: []string{"default:unknown"}, t1Called: true},
		{name: "class without default escalates", tool: "file_write", t0: silent, t1: silent,
			wantDec: Escalate, wantTier: TierPipeline, wantRules: []string{"default:file_write"}, t1Called: true},
		{name: "tier 0 block ends evaluation", tool: "exec", t0: says(Block, "cel:x"), t1: says(Allow, "rego:y"),
			wantDec: Block, wantTier: 0, wantRules: []string{"cel:x"}, t1Called: false},
		{name: "tier 1 block overrides tier 0 escalate", tool: "exec", t0: says(Escalate, "cel:x"), t1: says(Block, "rego:y"),
			wantDec: Block, wantTier: 1, wantRules: []string{"rego:y"}, t1Called: true},
		{name: "escalate kept over a later allow", tool: "exec", t0: says(Escalate, "cel:x"), t1: says(Allow, "rego:y"),
			wantDec: Escalate, wantTier: 0, wantRules: []string{"cel:x"}, t1Called: true},
		{name: "explicit allow overrides an escalate default", tool: "message_send", t0: silent, t1: says(Allow, "rego:ok"),
			wantDec: Allow, wantTier: 1, wantRules: []string{"rego:ok"}, t1Called: true},
		{name: "unspecified finding is a block", tool: "exec", t0: says(DecisionUnspecified, "cel:odd"), t1: silent,
			wantDec: Block, wantTier: 0, wantRules: []string{"cel:odd"}, t1Called: false},
		{name: "tier error blocks", tool: "exec", t0: silent,
			t1:      func(context.Context, *Input) (Result, error) { return Result{}, errors.New("boom") },
			wantDec: Block, wantTier: 1, wantRules: []string{RuleTierError}, t1Called: true},
		{name: "tier panic blocks", tool: "exec", t0: func(context.Context, *Input) (Result, error) { panic("bad rule") }, t1: silent,
			wantDec: Block, wantTier: 0, wantRules: []string{RuleTierError}, t1Called: false},
		{name: "unparsed command is never allowed", tool: "unparsed", t0: silent, t1: says(Allow, "rego:ok"),
			wantDec: Escalate, wantTier: TierPipeline, wantRules: []string{RuleUnparsedAllowed}, t1Called: true},
		{name: "truncated normalisation is never allowed", tool: "truncated", t0: silent, t1: silent,
			wantDec: Escalate, wantTier: TierPipeline, wantRules: []string{RuleUnparsedAllowed}, t1Called: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t0 := &fakeTier{level: 0, name: "cel", fn: tc.t0}
			t1 := &fakeTier{level: 1, name: "rego", fn: tc.t1}
			rec := &recorder{}
			p, err := New(Config{Recorder: rec, CacheSize: -1}, newPolicy(t0, t1))
			if err != nil {
				t.Fatal(err)
			}
			v, err := p.Evaluate(context.Background(), call(tc.tool, `{"command":"ls"}`), EvalOptions{})
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if v.Decision != tc.wantDec || v.Tier != tc.wantTier {
				t.Errorf("verdict = %s tier %d, want %s tier %d (reason %q)", v.Decision, v.Tier, tc.wantDec, tc.wantTier, v.Reason)
			}
			if diff := cmp.Diff(tc.wantRules, v.Rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if (t1.calls > 0) != tc.t1Called {
				t.Errorf("tier 1 called %d times, want called=%v", t1.calls, tc.t1Called)
			}
			if len(rec.recs) != 1 || rec.recs[0].Verdict.Decision != v.Decision {
				t.Fatalf("audit records = %d, want 1 with the returned decision", len(rec.recs))
			}
			if v.Audit.Seq != 1 || v.DecisionID == "" || v.BundleDigest != "sha256:d1" || v.ActionHash == "" {
				t.Errorf("verdict metadata missing: %+v", v)
			}
		})
	}
}

func TestPipelineTimeoutBlocks(t *testing.T) {
	slow := &fakeTier{level: 1, name: "rego", fn: func(ctx context.Context, _ *Input) (Result, error) {
		<-ctx.Done() // a well-behaved tier honours the deadline
		return Result{Findings: []Finding{{Decision: Allow, Rule: "late"}}}, nil
	}}
	p, err := New(Config{CacheSize: -1, Timeout: 20 * time.Millisecond}, newPolicy(slow))
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Evaluate(context.Background(), call("exec", `{}`), EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != Block || !strings.Contains(v.Reason, "timed out") {
		t.Fatalf("verdict = %s %q, want BLOCK timed out", v.Decision, v.Reason)
	}
}

func TestPipelineCancelledContextBlocks(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")}
	p, _ := New(Config{CacheSize: -1}, newPolicy(t0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, _ := p.Evaluate(ctx, call("exec", `{}`), EvalOptions{})
	if v.Decision != Block {
		t.Fatalf("cancelled caller got %s, want BLOCK", v.Decision)
	}
}

func TestPipelineAuditFailureBlocks(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")}
	rec := &recorder{err: errors.New("disk full")}
	p, _ := New(Config{Recorder: rec, CacheSize: -1}, newPolicy(t0))
	v, err := p.Evaluate(context.Background(), call("exec", `{}`), EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != Block || v.Rules[0] != RuleAuditFailure {
		t.Fatalf("verdict = %s %v, want BLOCK %s", v.Decision, v.Rules, RuleAuditFailure)
	}
}

func TestPipelineInvalidCalls(t *testing.T) {
	tests := []struct {
		name string
		call *Call
		want string
	}{
		{"nil call", nil, "no call"},
		{"empty tool", call("", `{}`), "tool name is empty"},
		{"control character in tool", call("ba\x00sh", `{}`), "control characters"},
		{"long tool", call(strings.Repeat("t", 300), `{}`), "limit is 256"},
		{"invalid UTF-8 tool", call("\xff", `{}`), "not valid UTF-8"},
		{"arguments not JSON", call("exec", `{"a":`), "arguments"},
		{"arguments an array", call("exec", `[1,2]`), "arguments"},
		{"arguments a string", call("exec", `"rm -rf /"`), "arguments"},
		{"relative cwd", &Call{Tool: "exec", Arguments: json.RawMessage(`{}`), Context: CallContext{Cwd: "tmp"}}, "not an absolute path"},
		{"NUL in argument", call("exec", `{"command":"ls\u0000rm"}`), "arguments"},
		{"too deep", call("exec", strings.Repeat(`{"a":`, 200)+`1`+strings.Repeat(`}`, 200)), "arguments"},
		{"too big", call("exec", `{"command":"`+strings.Repeat("a", 2<<20)+`"}`), "arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t0 := &fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")}
			rec := &recorder{}
			p, _ := New(Config{Recorder: rec, CacheSize: -1}, newPolicy(t0))
			v, err := p.Evaluate(context.Background(), tc.call, EvalOptions{})
			if !errors.Is(err, ErrInvalidCall) {
				t.Fatalf("err = %v, want ErrInvalidCall", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to mention %q", err, tc.want)
			}
			if v.Decision != Block {
				t.Errorf("decision = %s, want BLOCK", v.Decision)
			}
			if t0.calls != 0 {
				t.Errorf("tier evaluated a malformed call")
			}
			if len(rec.recs) != 1 || rec.recs[0].Error == "" {
				t.Errorf("malformed call not audited with its error: %d records", len(rec.recs))
			}
		})
	}
}

func TestPipelineCache(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")}
	rec := &recorder{}
	p, _ := New(Config{Recorder: rec}, newPolicy(t0))
	ctx := context.Background()
	v1, _ := p.Evaluate(ctx, call("exec", `{"command":"ls","x":1}`), EvalOptions{})
	// Same call with keys reordered and whitespace: same canonical form, so a cache hit.
	v2, _ := p.Evaluate(ctx, call("exec", `{ "x": 1, "command": "ls" }`), EvalOptions{})
	if t0.calls != 1 || !v2.Cached || v1.Cached {
		t.Fatalf("tier calls = %d, cached = %v/%v; want one evaluation then a hit", t0.calls, v1.Cached, v2.Cached)
	}
	if v1.ActionHash != v2.ActionHash {
		t.Errorf("canonical hashes differ: %s %s", v1.ActionHash, v2.ActionHash)
	}
	if len(rec.recs) != 2 {
		t.Errorf("cache hits must be audited too: %d records", len(rec.recs))
	}
	// A different session is a different context: no hit.
	c := call("exec", `{"command":"ls","x":1}`)
	c.Context.SessionID = "s2"
	_, _ = p.Evaluate(ctx, c, EvalOptions{})
	if t0.calls != 2 {
		t.Errorf("context change served from cache")
	}
	// Reload purges the cache.
	t0b := &fakeTier{level: 0, name: "cel", fn: says(Block, "cel:no")}
	if err := p.SetPolicy(newPolicy(t0b)); err != nil {
		t.Fatal(err)
	}
	v3, _ := p.Evaluate(ctx, call("exec", `{"command":"ls","x":1}`), EvalOptions{})
	if v3.Decision != Block || v3.Cached {
		t.Errorf("after reload got %s cached=%v, want a fresh BLOCK", v3.Decision, v3.Cached)
	}
	st := p.Stats()
	if st.CacheHits != 1 || st.Block != 1 || st.Allow != 3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestPipelineEscalationTiers(t *testing.T) {
	t0 := &fakeTier{level: 0, name: "cel", fn: says(Escalate, "cel:review")}
	tests := []struct {
		name    string
		judge   func(context.Context, *Input) (Result, error)
		maxTier *int
		want    Decision
		tier    int
	}{
		{"judge allows", says(Allow, "judge:ok"), nil, Allow, 2},
		{"judge blocks", says(Block, "judge:no"), nil, Block, 2},
		{"judge silent keeps escalate", silent, nil, Escalate, 0},
		{"judge error blocks", func(context.Context, *Input) (Result, error) { return Result{}, errors.New("http 500") }, nil, Block, 2},
		{"max tier 1 skips the judge", says(Allow, "judge:ok"), ptr(1), Escalate, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			judge := &fakeTier{level: 2, name: "judge", fn: tc.judge}
			p, _ := New(Config{CacheSize: -1, Escalation: []Tier{judge}}, newPolicy(t0))
			v, _ := p.Evaluate(context.Background(), call("exec", `{}`), EvalOptions{MaxTier: tc.maxTier})
			if v.Decision != tc.want || v.Tier != tc.tier {
				t.Errorf("got %s tier %d, want %s tier %d", v.Decision, v.Tier, tc.want, tc.tier)
			}
		})
	}
	// A judge may not allow what Shield could not parse.
	judge := &fakeTier{level: 2, name: "judge", fn: says(Allow, "judge:ok")}
	p, _ := New(Config{CacheSize: -1, Escalation: []Tier{judge}}, newPolicy(&fakeTier{level: 0, name: "cel", fn: silent}))
	v, _ := p.Evaluate(context.Background(), call("unparsed", `{}`), EvalOptions{})
	if v.Decision == Allow {
		t.Errorf("judge allowed an unparsed command")
	}
}

func ptr(i int) *int { return &i }

func TestActionHashCanonical(t *testing.T) {
	a, err := ActionHash("Bash", json.RawMessage(`{"b":1.0,"a":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ActionHash("Bash", json.RawMessage(`{"a":"x","b":1}`))
	c, _ := ActionHash("bash", json.RawMessage(`{"a":"x","b":1}`))
	if a != b {
		t.Errorf("equivalent JSON hashed differently")
	}
	if a == c {
		t.Errorf("tool name not covered by the hash")
	}
}

func TestNewRejectsBadPolicy(t *testing.T) {
	if _, err := New(Config{}, nil); err == nil {
		t.Error("nil policy accepted")
	}
	if _, err := New(Config{}, &Policy{}); err == nil {
		t.Error("policy without normalizer accepted")
	}
	if _, err := New(Config{}, newPolicy(&fakeTier{level: 2, name: "judge", fn: silent})); err == nil {
		t.Error("bundle tier with level 2 accepted")
	}
}

func TestPipelineReviewClasses(t *testing.T) {
	pol := newPolicy(&fakeTier{level: 0, name: "cel", fn: says(Allow, "cel:ok")})
	pol.ReviewClasses = map[string]bool{"message_send": true}
	judge := &fakeTier{level: 2, name: "judge", fn: says(Block, "judge:no")}
	p, _ := New(Config{CacheSize: -1, Escalation: []Tier{judge}}, pol)
	v, _ := p.Evaluate(context.Background(), call("message_send", `{}`), EvalOptions{})
	if v.Decision != Block || v.Tier != 2 || judge.calls != 1 {
		t.Errorf("review class: %s tier %d after %d judge calls, want the judge's BLOCK", v.Decision, v.Tier, judge.calls)
	}
	v, _ = p.Evaluate(context.Background(), call("exec", `{}`), EvalOptions{})
	if v.Decision != Allow || judge.calls != 1 {
		t.Errorf("other class: %s, judge calls %d", v.Decision, judge.calls)
	}
}
