package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

type norm struct{}

func (norm) Normalize(tool string, args map[string]any, cwd string) *normalize.Action {
	return &normalize.Action{Tool: tool, Class: normalize.ClassExec, Known: true, Args: args, Cwd: cwd}
}

// tier decides by tool name; gate, when set, holds every evaluation until it is closed.
type tier struct {
	blocks map[string]bool
	gate   chan struct{}
}

func (t *tier) Level() int   { return shield.TierCEL }
func (t *tier) Name() string { return "cel" }
func (t *tier) Evaluate(ctx context.Context, in *shield.Input) (shield.Result, error) {
	if t.gate != nil {
		select {
		case <-t.gate:
		case <-ctx.Done():
			return shield.Result{}, ctx.Err()
		}
	}
	if t.blocks[in.Action.Tool] {
		return shield.Result{Findings: []shield.Finding{{Decision: shield.Block, Rule: "cel:no-" + in.Action.Tool, Reason: "no"}}}, nil
	}
	return shield.Result{Findings: []shield.Finding{{Decision: shield.Allow, Rule: "cel:ok", Reason: "ok"}}}, nil
}

func policyOf(rev string, t *tier) *shield.Policy {
	return &shield.Policy{Revision: rev, Digest: "sha256:" + rev, Normalizer: norm{}, Tiers: []shield.Tier{t},
		Defaults: map[string]shield.Decision{"*": shield.Escalate}}
}

// sink collects appended audit records.
type sink struct {
	mu   sync.Mutex
	recs []struct {
		typ     audit.Type
		payload []byte
	}
	fail bool
}

func (s *sink) append(_ context.Context, typ audit.Type, payload any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("disk full")
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	s.recs = append(s.recs, struct {
		typ     audit.Type
		payload []byte
	}{typ, b})
	return nil
}

func (s *sink) of(typ audit.Type) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, r := range s.recs {
		if r.typ == typ {
			out = append(out, r.payload)
		}
	}
	return out
}

func decision(id, tool, args string, d shield.Decision) *shield.DecisionRecord {
	return &shield.DecisionRecord{
		Call:    &shield.Call{ID: id, Tool: tool, Arguments: json.RawMessage(args), Context: shield.CallContext{SessionID: "s1"}},
		Verdict: &shield.Verdict{Decision: d, Tier: shield.TierCEL, DecisionID: "dec-" + id, Rules: []string{"cel:x"}},
	}
}

// waitFor polls cond until it holds (the worker runs on its own goroutine); no timing is
// asserted, the deadline only turns a hang into a failure.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type okRecorder struct{ err error }

func (r okRecorder) RecordDecision(context.Context, *shield.DecisionRecord) (shield.AuditPosition, error) {
	return shield.AuditPosition{Seq: 7, Hash: "h"}, r.err
}

func TestShadowCountsAndRecordsDifferences(t *testing.T) {
	live := policyOf("live-1", &tier{blocks: map[string]bool{"rm": true}})
	cand := policyOf("cand-1", &tier{blocks: map[string]bool{"curl": true}})
	var s sink
	reg := prometheus.NewRegistry()
	e, err := New(Config{Candidate: cand, Live: func() *shield.Policy { return live }, Append: s.append, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	rec := e.Recorder(okRecorder{})
	for _, d := range []*shield.DecisionRecord{
		decision("1", "rm", `{"password":"hunter2-secret"}`, shield.Block), // live blocks, candidate allows
		decision("2", "curl", `{}`, shield.Allow),                          // live allows, candidate blocks
		decision("3", "ls", `{}`, shield.Allow),                            // both allow
	} {
		pos, err := rec.RecordDecision(context.Background(), d)
		if err != nil || pos.Seq != 7 {
			t.Fatalf("wrapped recorder: %v %v", pos, err)
		}
	}
	waitFor(t, func() bool { return e.Stats().Evaluated == 3 })
	st := e.Stats()
	if st.Agreed != 1 || st.Differed != 2 || st.Changes["BLOCK→ALLOW"] != 1 || st.Changes["ALLOW→BLOCK"] != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	if got := testutil.ToFloat64(e.mChanges.WithLabelValues("ALLOW", "BLOCK")); got != 1 {
		t.Errorf("differences metric ALLOW→BLOCK = %v", got)
	}
	if got := testutil.ToFloat64(e.mResults.WithLabelValues("agree")); got != 1 {
		t.Errorf("agree metric = %v", got)
	}
	recs := s.of(TypeDecision)
	if len(recs) != 2 {
		t.Fatalf("%d shadow records, want 2", len(recs))
	}
	var r Record
	if err := json.Unmarshal(recs[0], &r); err != nil {
		t.Fatal(err)
	}
	if r.DecisionID != "dec-1" || r.Baseline.Decision != "BLOCK" || r.Candidate.Decision != "ALLOW" || r.CandidateRevision != "cand-1" ||
		r.BaselineRevision != "live-1" || r.Live.Decision != "BLOCK" || r.Tool != "rm" || r.SessionID != "s1" {
		t.Errorf("record %+v", r)
	}
	if strings.Contains(string(recs[0]), "hunter2") {
		t.Errorf("a shadow record holds the call's arguments: %s", recs[0])
	}
	e.Close()
	sums := s.of(TypeSummary)
	if len(sums) == 0 || !strings.Contains(string(sums[len(sums)-1]), `"differed":2`) {
		t.Errorf("summary records %q", sums)
	}
	if e.Offer(decision("4", "rm", `{}`, shield.Block)) {
		t.Error("Offer after Close queued a call")
	}
}

// The queue never blocks the caller: with the worker stuck, offers beyond the queue size are
// dropped and counted; a failed live record is not offered at all.
func TestShadowNeverBlocksAndDropsWhenFull(t *testing.T) {
	gate := make(chan struct{})
	cand := policyOf("cand", &tier{gate: gate})
	live := policyOf("live", &tier{})
	reg := prometheus.NewRegistry()
	e, err := New(Config{Candidate: cand, Live: func() *shield.Policy { return live }, QueueSize: 2, Timeout: time.Minute, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	rec := e.Recorder(okRecorder{})
	const n = 50
	for i := range n {
		if _, err := rec.RecordDecision(context.Background(), decision("c", "ls", `{}`, shield.Allow)); err != nil {
			t.Fatal(err)
		}
		_ = i
	}
	st := e.Stats()
	// At most one in the worker and two queued; the rest dropped.
	if st.Offered != n || st.Dropped < n-3 || st.Dropped > n-2 {
		t.Errorf("stats %+v: want %d offered and all but 2–3 dropped", st, n)
	}
	if got := testutil.ToFloat64(e.mDropped); got != float64(st.Dropped) {
		t.Errorf("dropped metric %v, stats %d", got, st.Dropped)
	}
	if _, err := e.Recorder(okRecorder{err: errors.New("audit down")}).RecordDecision(context.Background(), decision("x", "ls", `{}`, shield.Allow)); err == nil {
		t.Error("the wrapper hid the recorder's error")
	}
	if e.Stats().Offered != n {
		t.Error("a decision that was not recorded was offered to the shadow")
	}
	close(gate)
	e.Close()
	if e.qbytes.Load() != 0 {
		t.Errorf("queued bytes %d after Close", e.qbytes.Load())
	}
}

func TestShadowBoundsQueuedBytes(t *testing.T) {
	pol := policyOf("p", &tier{})
	e, err := New(Config{Candidate: pol, Live: func() *shield.Policy { return pol }, QueueBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"content":"` + strings.Repeat("x", 80) + `"}`
	if !e.Offer(decision("a", "w", big, shield.Allow)) {
		t.Fatal("first call not queued")
	}
	if e.Offer(decision("b", "w", big, shield.Allow)) {
		t.Error("a call over the byte bound was queued")
	}
	if e.Stats().Dropped != 1 {
		t.Errorf("stats %+v", e.Stats())
	}
	labelled := decision("c", "w", `{}`, shield.Allow)
	labelled.Call.Context.Labels = map[string]string{"team": strings.Repeat("y", 200)}
	if e.Offer(labelled) {
		t.Error("a call whose labels exceed the byte bound was queued")
	}
	e.Close() // never started: returns at once, drops what is queued
	if st := e.Stats(); st.Dropped != 3 || e.qbytes.Load() != 0 {
		t.Errorf("after Close: %+v, %d bytes", st, e.qbytes.Load())
	}
}

// A reload of the live bundle changes the baseline the candidate is compared with.
func TestShadowFollowsLiveReload(t *testing.T) {
	var mu sync.Mutex
	live := policyOf("live-1", &tier{blocks: map[string]bool{"rm": true}})
	cand := policyOf("cand", &tier{blocks: map[string]bool{"rm": true}})
	e, err := New(Config{Candidate: cand, Live: func() *shield.Policy { mu.Lock(); defer mu.Unlock(); return live }})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	defer e.Close()
	e.Offer(decision("1", "rm", `{}`, shield.Block))
	waitFor(t, func() bool { return e.Stats().Evaluated == 1 })
	mu.Lock()
	live = policyOf("live-2", &tier{})
	mu.Unlock()
	e.Offer(decision("2", "rm", `{}`, shield.Allow))
	waitFor(t, func() bool { return e.Stats().Evaluated == 2 })
	if st := e.Stats(); st.Agreed != 1 || st.Changes["ALLOW→BLOCK"] != 1 {
		t.Errorf("stats %+v: want agreement under live-1, ALLOW→BLOCK under live-2", st)
	}
}

func TestShadowRecordFailureCounted(t *testing.T) {
	live := policyOf("l", &tier{blocks: map[string]bool{"rm": true}})
	cand := policyOf("c", &tier{})
	s := &sink{fail: true}
	e, err := New(Config{Candidate: cand, Live: func() *shield.Policy { return live }, Append: s.append})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	defer e.Close()
	e.Offer(decision("1", "rm", `{}`, shield.Block))
	waitFor(t, func() bool { return e.Stats().Evaluated == 1 })
	waitFor(t, func() bool { return e.Stats().Errors == 1 })
	if _, err := New(Config{Live: func() *shield.Policy { return live }}); err == nil {
		t.Error("New without a candidate succeeded")
	}
}

// Replacing the candidate closes its counters with a summary and counts afresh for the new one.
func TestShadowSetCandidate(t *testing.T) {
	live := policyOf("live", &tier{blocks: map[string]bool{"rm": true}})
	var s sink
	e, err := New(Config{Candidate: policyOf("c1", &tier{}), Live: func() *shield.Policy { return live }, Append: s.append})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	defer e.Close()
	e.Offer(decision("1", "rm", `{}`, shield.Block))
	waitFor(t, func() bool { return e.Stats().Evaluated == 1 })
	if err := e.SetCandidate(policyOf("c2", &tier{blocks: map[string]bool{"rm": true}})); err != nil {
		t.Fatal(err)
	}
	if e.Candidate().Revision != "c2" || e.Stats().Evaluated != 0 {
		t.Fatalf("after SetCandidate: %s, %+v", e.Candidate().Revision, e.Stats())
	}
	sums := s.of(TypeSummary)
	if len(sums) != 1 || !strings.Contains(string(sums[0]), `"candidate_revision":"c1"`) || !strings.Contains(string(sums[0]), `"differed":1`) {
		t.Errorf("summary of the replaced candidate: %q", sums)
	}
	e.Offer(decision("2", "rm", `{}`, shield.Block))
	waitFor(t, func() bool { return e.Stats().Evaluated == 1 })
	if st := e.Stats(); st.Agreed != 1 || st.Differed != 0 {
		t.Errorf("new candidate stats %+v", st)
	}
	if err := e.SetCandidate(nil); err == nil {
		t.Error("SetCandidate(nil) succeeded")
	}
}
