package approval

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

type memRecorder struct {
	mu    sync.Mutex
	types []string
}

func (m *memRecorder) Record(_ context.Context, ev Event, _ *Approval) error {
	m.mu.Lock()
	m.types = append(m.types, ev.String())
	m.mu.Unlock()
	return nil
}

func open(t *testing.T, cfg Config) *Service {
	t.Helper()
	if cfg.Path == "" {
		cfg.Path = filepath.Join(t.TempDir(), "approvals.db")
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func in(hash, session, class string) *shield.Input {
	return &shield.Input{
		Call:       &shield.Call{Tool: "Bash", Arguments: json.RawMessage(`{"command":"sudo systemctl restart docker"}`), Context: shield.CallContext{SessionID: session, AgentID: "agent-1", Caller: "uid:1000"}},
		Action:     &normalize.Action{Class: class},
		ActionHash: hash,
		Prior:      &shield.Verdict{Decision: shield.Escalate, Rules: []string{"cel:exec.privileged-service-change"}, Reason: "restarts a system service as root"},
	}
}

func eval(t *testing.T, s *Service, i *shield.Input) (shield.Decision, string) {
	t.Helper()
	res, err := s.Tier().Evaluate(context.Background(), i)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("findings %v", res.Findings)
	}
	return res.Findings[0].Decision, res.EscalationID
}

func TestApprovalFlow(t *testing.T) {
	rec := &memRecorder{}
	s := open(t, Config{Recorder: rec})
	d, id := eval(t, s, in("h1", "s1", "exec"))
	if d != shield.Escalate || id == "" {
		t.Fatalf("first call: %s %q, want ESCALATE with an id", d, id)
	}
	// Asking again finds the same pending request.
	if d2, id2 := eval(t, s, in("h1", "s1", "exec")); d2 != shield.Escalate || id2 != id {
		t.Fatalf("second call: %s %q, want the same pending %q", d2, id2, id)
	}
	pend, _ := s.List(true)
	if len(pend) != 1 || pend[0].Reason == "" || len(pend[0].Rules) != 1 || pend[0].Caller != "uid:1000" {
		t.Fatalf("pending = %+v", pend)
	}
	// The requester cannot approve itself, in any of its identities.
	for _, who := range []string{"uid:1000", "session:s1", "agent:agent-1"} {
		if _, err := s.Resolve(context.Background(), id, true, "", who); !errors.Is(err, ErrSelfApproval) {
			t.Errorf("self-approval by %s: %v", who, err)
		}
	}
	if _, err := s.Resolve(context.Background(), id, true, "ok once", "uid:2000"); err != nil {
		t.Fatal(err)
	}
	// Another session or another action does not get the grant.
	if d, _ := eval(t, s, in("h1", "other-session", "exec")); d != shield.Escalate {
		t.Errorf("grant leaked to another session: %s", d)
	}
	if d, _ := eval(t, s, in("h2", "s1", "exec")); d != shield.Escalate {
		t.Errorf("grant leaked to another action: %s", d)
	}
	// The exact call is allowed once, then needs a new approval.
	if d, _ := eval(t, s, in("h1", "s1", "exec")); d != shield.Allow {
		t.Fatalf("approved call: %s, want ALLOW", d)
	}
	if d, id3 := eval(t, s, in("h1", "s1", "exec")); d != shield.Escalate || id3 == id {
		t.Errorf("reuse: %s %q, want a new request", d, id3)
	}
	if _, err := s.Resolve(context.Background(), id, false, "", "uid:2000"); !errors.Is(err, ErrNotPending) {
		t.Errorf("resolving a used approval: %v", err)
	}
	if len(rec.types) < 3 || rec.types[0] != "approval_requested" {
		t.Errorf("recorded %v", rec.types)
	}
}

func TestApprovalDenyExpireTwoPersonRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	s := open(t, Config{Path: path, Timeout: 300 * time.Millisecond, TwoPersonClasses: []string{"file_delete"}})

	// Deny: the re-submitted call is blocked in that session; another session asks again.
	_, id := eval(t, s, in("d", "s1", "exec"))
	if a, err := s.Resolve(context.Background(), id, false, "no", "uid:2000"); err != nil || a.State != Denied {
		t.Fatalf("deny: %v %v", a, err)
	}
	for range 2 {
		if d, did := eval(t, s, in("d", "s1", "exec")); d != shield.Block || did != id {
			t.Errorf("after deny: %s %q, want BLOCK citing %q", d, did, id)
		}
	}
	if d, _ := eval(t, s, in("d", "s2", "exec")); d != shield.Escalate {
		t.Errorf("denial leaked to another session: %s", d)
	}

	// Expiry: nobody answers; Await returns the denial.
	_, id = eval(t, s, in("e", "s1", "exec"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, err := s.Await(ctx, id)
	if err != nil || a.State != Denied || a.Resolver != "timeout" {
		t.Fatalf("expiry: %+v %v", a, err)
	}
	if _, err := s.Resolve(context.Background(), id, true, "", "uid:2000"); !errors.Is(err, ErrNotPending) {
		t.Errorf("approving an expired request: %v", err)
	}
	if d, _ := eval(t, s, in("e", "s1", "exec")); d != shield.Block {
		t.Errorf("after time-out: %s, want BLOCK", d)
	}

	// Two-person rule.
	s.cfg.Timeout = time.Minute
	_, id = eval(t, s, in("tp", "s1", "file_delete"))
	if a, _ := s.Resolve(context.Background(), id, true, "", "uid:2000"); a.State != Pending {
		t.Fatalf("one approver sufficed: %s", a.State)
	}
	if _, err := s.Resolve(context.Background(), id, true, "", "uid:2000"); !errors.Is(err, ErrSameApprover) {
		t.Errorf("same approver twice: %v", err)
	}

	// Restart: the pending request survives.
	s.Close()
	s2, err := Open(Config{Path: path, Timeout: time.Minute, TwoPersonClasses: []string{"file_delete"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if a, err := s2.Get(id); err != nil || a.State != Pending || len(a.Approvers) != 1 {
		t.Fatalf("after restart: %+v %v", a, err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		s2.Resolve(context.Background(), id, true, "", "uid:3000")
	}()
	if a, err := s2.Await(ctx, id); err != nil || a.State != Approved {
		t.Fatalf("await second approver: %+v %v", a, err)
	}
}

type failingRecorder struct{}

func (failingRecorder) Record(context.Context, Event, *Approval) error {
	return errors.New("disk full")
}

// TestApprovalResolveNeedsAudit: a decision the audit log cannot record does not take effect.
func TestApprovalResolveNeedsAudit(t *testing.T) {
	s := open(t, Config{Recorder: failingRecorder{}})
	_, id := eval(t, s, in("a", "s1", "exec"))
	if _, err := s.Resolve(context.Background(), id, true, "", "uid:2000"); !errors.Is(err, ErrAudit) {
		t.Fatalf("resolve with a failing audit log: %v, want ErrAudit", err)
	}
	if a, _ := s.Get(id); a.State != Pending || len(a.Approvers) != 0 {
		t.Errorf("after failed audit: %s %v, want pending with no approver", a.State, a.Approvers)
	}
	if d, _ := eval(t, s, in("a", "s1", "exec")); d != shield.Escalate {
		t.Errorf("call after failed audit: %s, want ESCALATE", d)
	}
}

func TestApprovalWebhookConfig(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		secret    string
	}{
		{"no scheme", "example.test/hook", "0123456789abcdef"},
		{"file scheme", "file:///etc/passwd", "0123456789abcdef"},
		{"short secret", "https://hooks.example.test/x", "short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(Config{Path: filepath.Join(t.TempDir(), "a.db"), WebhookURL: tc.url, WebhookSecret: []byte(tc.secret)})
			if err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestApprovalDryRunAndWebhook(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	var sig string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, sig = b, r.Header.Get("X-Shield-Signature")
		mu.Unlock()
	}))
	defer hook.Close()
	secret := []byte("0123456789abcdef-webhook")
	s := open(t, Config{WebhookURL: hook.URL, WebhookSecret: secret})
	i := in("dry", "s1", "exec")
	i.DryRun = true
	if d, id := eval(t, s, i); d != shield.Escalate || id != "" {
		t.Errorf("dry run created a request: %s %q", d, id)
	}
	if pend, _ := s.List(true); len(pend) != 0 {
		t.Errorf("dry run stored %d requests", len(pend))
	}
	eval(t, s, in("wh", "s1", "exec"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		b, sg := got, sig
		mu.Unlock()
		if b != nil {
			mac := hmac.New(sha256.New, secret)
			mac.Write(b)
			if sg != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
				t.Errorf("bad webhook signature %q", sg)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("webhook never called")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestApprovalScopedGrantAndExpiredGrant(t *testing.T) {
	s := open(t, Config{Timeout: time.Minute})
	// The sweeper reads the clock concurrently: guard it.
	var clockMu sync.Mutex
	now := time.Now()
	s.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	set := func(tm time.Time) { clockMu.Lock(); now = tm; clockMu.Unlock() }
	i := in("g", "s1", "exec")
	i.Call.ID = "call-7"
	i.Call.Context.Labels = map[string]string{"team": "infra"}
	_, id := eval(t, s, i)
	if _, err := s.ResolveGrant(context.Background(), id, false, "", "uid:2000", time.Hour); err == nil {
		t.Error("a deny with a grant duration was accepted")
	}
	if _, err := s.ResolveGrant(context.Background(), id, true, "", "uid:2000", MaxGrant+time.Second); err == nil {
		t.Error("a grant longer than MaxGrant was accepted")
	}
	a, err := s.ResolveGrant(context.Background(), id, true, "for the deploy", "uid:2000", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	argsHash, _ := audit.ArgsHash(i.Call.Arguments)
	want := &Approval{ID: id, ActionHash: "g", Tool: "Bash", ActionClass: "exec", Arguments: i.Call.Arguments, ArgsHash: argsHash,
		SessionID: "s1", AgentID: "agent-1", Caller: "uid:1000", CallID: "call-7", Labels: map[string]string{"team": "infra"},
		Rules: []string{"cel:exec.privileged-service-change"}, Reason: "restarts a system service as root",
		Created: now, Expires: now.Add(time.Minute), State: Approved, Approvers: []string{"uid:2000"}, Resolver: "uid:2000",
		Comment: "for the deploy", ResolvedAt: now, NeedApprovers: 1, GrantUntil: now.Add(time.Hour)}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("approval (-want +got):\n%s", diff)
	}
	// Within the grant the same call is allowed repeatedly; after it, the call asks again.
	for _, at := range []time.Duration{0, time.Minute, 59 * time.Minute} {
		set(a.ResolvedAt.Add(at))
		if d, gid := eval(t, s, i); d != shield.Allow || gid != id {
			t.Errorf("at +%v: %s %q, want ALLOW by %q", at, d, gid, id)
		}
	}
	if d, _ := eval(t, s, in("g", "s2", "exec")); d != shield.Escalate {
		t.Errorf("grant leaked to another session: %s", d)
	}
	set(a.ResolvedAt.Add(time.Hour))
	s.expire()
	if got, _ := s.Get(id); got.State != Expired {
		t.Errorf("grant after its end: %s, want expired", got.State)
	}
	if d, nid := eval(t, s, i); d != shield.Escalate || nid == id {
		t.Errorf("after the grant: %s %q, want a new request", d, nid)
	}

	// A single-use approval that is never used expires one timeout after the decision.
	_, id = eval(t, s, in("u", "s1", "exec"))
	if _, err := s.Resolve(context.Background(), id, true, "", "uid:2000"); err != nil {
		t.Fatal(err)
	}
	set(s.now().Add(time.Minute))
	s.expire()
	if got, _ := s.Get(id); got.State != Expired {
		t.Errorf("unused approval: %s, want expired", got.State)
	}
	if d, _ := eval(t, s, in("u", "s1", "exec")); d != shield.Escalate {
		t.Errorf("unused expired approval: %s, want ESCALATE", d)
	}
}

// TestApprovalIndexRebuilt: a store that has only the approvals bucket (the first layout) gets
// its indexes on open, so its pending request is found again.
func TestApprovalIndexRebuilt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s := open(t, Config{Path: path})
	_, id := eval(t, s, in("old", "s1", "exec"))
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{byCallBucket, openBucket, byCreatedBucket} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s2 := open(t, Config{Path: path})
	if d, id2 := eval(t, s2, in("old", "s1", "exec")); d != shield.Escalate || id2 != id {
		t.Errorf("after rebuild: %s %q, want the pending %q", d, id2, id)
	}
	if page, _, err := s2.ListPage(ListOptions{PendingOnly: true}); err != nil || len(page) != 1 || page[0].ID != id {
		t.Errorf("list after rebuild: %v %v", page, err)
	}
}

// BenchmarkApprovalEvaluate measures tier 3 on a call with a pending request, with 10,000 other
// requests in the store.
func BenchmarkApprovalEvaluate(b *testing.B) {
	s, err := Open(Config{Path: filepath.Join(b.TempDir(), "bench.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	err = s.db.Update(func(tx *bolt.Tx) error {
		for i := range 10000 {
			a := &Approval{ID: newID(), ActionHash: fmt.Sprintf("h%d", i), SessionID: "s", State: Denied, Created: time.Now()}
			if err := put(tx, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	i := in("target", "s1", "exec")
	if _, err := s.Tier().Evaluate(context.Background(), i); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Tier().Evaluate(context.Background(), i); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApprovalPendingPastExpiryBlocks: a request whose time ran out blocks the call even before
// the sweeper has recorded the time-out.
func TestApprovalPendingPastExpiryBlocks(t *testing.T) {
	s := open(t, Config{Timeout: time.Minute})
	var mu sync.Mutex
	now := time.Now()
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, id := eval(t, s, in("x", "s1", "exec"))
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if d, bid := eval(t, s, in("x", "s1", "exec")); d != shield.Block || bid != id {
		t.Errorf("after expiry: %s %q, want BLOCK citing %q", d, bid, id)
	}
	if _, err := s.Resolve(context.Background(), id, true, "", "uid:2000"); !errors.Is(err, ErrNotPending) {
		t.Errorf("approving after expiry: %v", err)
	}
}
