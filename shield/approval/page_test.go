package approval

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
)

// TestApprovalListPage: pages in creation order, tokens continue after the last request, the
// pending filter, a bad token.
func TestApprovalListPage(t *testing.T) {
	s := open(t, Config{Timeout: time.Minute})
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Second); return now }
	var ids []string
	for i := range 7 {
		_, id := eval(t, s, in(fmt.Sprintf("h%d", i), "s1", "exec"))
		ids = append(ids, id)
	}
	if _, err := s.Resolve(context.Background(), ids[2], false, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	collect := func(o ListOptions) (got []string, pages int) {
		for {
			page, next, err := s.ListPage(o)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, a := range page {
				got = append(got, a.ID)
			}
			if next == "" {
				return got, pages
			}
			o.After = next
		}
	}
	if got, pages := collect(ListOptions{Limit: 3}); fmt.Sprint(got) != fmt.Sprint(ids) || pages != 3 {
		t.Errorf("all in pages of 3: %v in %d pages, want %v in 3", got, pages, ids)
	}
	if got, pages := collect(ListOptions{Limit: 100, MaxBytes: 1}); fmt.Sprint(got) != fmt.Sprint(ids) || pages != 7 {
		t.Errorf("byte-bounded pages: %v in %d pages, want one request per page", got, pages)
	}
	pending := append(append([]string(nil), ids[:2]...), ids[3:]...)
	if got, _ := collect(ListOptions{Limit: 2, PendingOnly: true}); fmt.Sprint(got) != fmt.Sprint(pending) {
		t.Errorf("pending: %v, want %v", got, pending)
	}
	for _, bad := range []string{"!!", "AAAA", "AAAAAAAAAAAA" + string(make([]byte, 200))} {
		if _, _, err := s.ListPage(ListOptions{After: bad}); !errors.Is(err, ErrBadPageToken) {
			t.Errorf("token %.20q: %v", bad, err)
		}
	}
	if page, _, _ := s.ListPage(ListOptions{Limit: MaxPageSize + 1000}); len(page) != 7 {
		t.Errorf("over-large limit: %d", len(page))
	}
}

// TestApprovalPrune: with an injected clock, resolved requests (denied, used, expired) older
// than the retention are pruned by the sweep; pending, approved and recent ones stay; a pruned
// denial lets the call ask again.
func TestApprovalPrune(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	set := func(tm time.Time) { mu.Lock(); now = tm; mu.Unlock() }
	s := open(t, Config{Timeout: time.Hour, Retention: 48 * time.Hour})
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	start := now
	_, denied := eval(t, s, in("hd", "s1", "exec"))
	_, used := eval(t, s, in("hu", "s1", "exec"))
	_, timedOut := eval(t, s, in("ht", "s1", "exec"))
	_, grant := eval(t, s, in("hg", "s1", "exec"))
	ctx := context.Background()
	if _, err := s.Resolve(ctx, denied, false, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, used, true, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	if d, _ := eval(t, s, in("hu", "s1", "exec")); d != shield.Allow {
		t.Fatalf("approved call: %s", d)
	}
	if _, err := s.ResolveGrant(ctx, grant, true, "", "uid:0", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	set(start.Add(2 * time.Hour))
	s.expire() // timedOut is denied by time-out now
	_, pending := eval(t, s, in("hp", "s1", "exec"))

	// One day later: nothing is old enough.
	set(start.Add(24 * time.Hour))
	if n, err := s.prune(); err != nil || n != 0 {
		t.Fatalf("prune after a day: %d %v", n, err)
	}
	// Three days later: the resolved ones go (the grant ran out and expired); the pending one
	// created then is still there until it times out and ages.
	set(start.Add(72 * time.Hour))
	s.expire()
	n, err := s.prune()
	if err != nil || n != 4 {
		t.Fatalf("prune after three days: %d %v, want 4", n, err)
	}
	for _, id := range []string{denied, used, timedOut, grant} {
		if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s still there: %v", id, err)
		}
	}
	if a, err := s.Get(pending); err != nil || a.State != Denied {
		t.Errorf("the later request: %+v %v, want kept (denied by time-out, not yet past retention)", a, err)
	}
	page, _, err := s.ListPage(ListOptions{})
	if err != nil || len(page) != 1 || page[0].ID != pending {
		t.Errorf("index after pruning: %v %v", page, err)
	}
	// The pruned denial no longer blocks: the call asks again (never ALLOW).
	if d, id := eval(t, s, in("hd", "s1", "exec")); d != shield.Escalate || id == denied {
		t.Errorf("after pruning the denial: %s %s, want a new escalation", d, id)
	}
	// Negative retention keeps everything.
	s.cfg.Retention = -1
	set(start.Add(1000 * time.Hour))
	s.expire()
	if n, err := s.prune(); err != nil || n != 0 {
		t.Errorf("negative retention pruned %d (%v)", n, err)
	}
}

// TestApprovalBoundToCaller: another caller with the same session and call neither consumes
// an approval nor meets a denial; it gets a request of its own.
func TestApprovalBoundToCaller(t *testing.T) {
	s := open(t, Config{Timeout: time.Minute})
	as := func(caller string) *shield.Input {
		i := in("hc", "shared", "exec")
		i.Call.Context.Caller = caller
		return i
	}
	_, idA := eval(t, s, as("token:a"))
	if _, err := s.Resolve(context.Background(), idA, true, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	d, idB := eval(t, s, as("token:b"))
	if d != shield.Escalate || idB == idA {
		t.Fatalf("caller B: %s %s, want its own escalation", d, idB)
	}
	if _, err := s.Resolve(context.Background(), idB, false, "", "uid:0"); err != nil {
		t.Fatal(err)
	}
	if d, id := eval(t, s, as("token:a")); d != shield.Allow || id != idA {
		t.Errorf("caller A: %s %s, want ALLOW by %s", d, id, idA)
	}
	if d, _ := eval(t, s, as("token:b")); d != shield.Block {
		t.Errorf("caller B after its denial: %s, want BLOCK", d)
	}
	if d, id := eval(t, s, as("token:c")); d != shield.Escalate || id == idA || id == idB {
		t.Errorf("caller C: %s %s, want its own escalation", d, id)
	}
}

// FuzzListPageToken: any page token is either refused with ErrBadPageToken or continues a
// listing; none panics.
func FuzzListPageToken(f *testing.F) {
	s, err := Open(Config{Path: filepath.Join(f.TempDir(), "approvals.db")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	var tokens []string
	for i := range 3 {
		res, err := s.Tier().Evaluate(context.Background(), in(fmt.Sprintf("f%d", i), "s", "exec"))
		if err != nil {
			f.Fatal(err)
		}
		a, _ := s.Get(res.EscalationID)
		tokens = append(tokens, Cursor(a))
	}
	for _, t := range append(tokens, "", "AAAAAAAAAAAA", "!", "AAAAAAAAAAAAAAAAAAAAAAAA____") {
		f.Add(t, 2)
	}
	f.Fuzz(func(t *testing.T, token string, limit int) {
		page, next, err := s.ListPage(ListOptions{After: token, Limit: limit})
		if err != nil {
			if !errors.Is(err, ErrBadPageToken) {
				t.Fatalf("token %q: %v", token, err)
			}
			return
		}
		if len(page) > 3 || (next != "" && len(page) == 0) {
			t.Fatalf("token %q: %d requests, next %q", token, len(page), next)
		}
	})
}
