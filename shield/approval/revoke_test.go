package approval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
)

func TestRevokeGrant(t *testing.T) {
	rec := &memRecorder{}
	s := open(t, Config{Recorder: rec})
	ctx := context.Background()
	_, id := eval(t, s, in("h1", "s1", "exec"))

	// A pending request cannot be revoked: deny it instead.
	if _, err := s.Revoke(ctx, id, "", "token:alice"); !errors.Is(err, ErrNotGranted) {
		t.Fatalf("revoke pending: %v, want ErrNotGranted", err)
	}
	if _, err := s.ResolveGrant(ctx, id, true, "ok for an hour", "token:alice", time.Hour); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d, _ := eval(t, s, in("h1", "s1", "exec")); d != shield.Allow {
			t.Fatalf("under the grant: %s, want ALLOW", d)
		}
	}
	// The requester may not revoke (nor approve) its own request.
	if _, err := s.Revoke(ctx, id, "", "uid:1000"); !errors.Is(err, ErrSelfApproval) {
		t.Fatalf("revoke by requester: %v, want ErrSelfApproval", err)
	}
	a, err := s.Revoke(ctx, id, "no longer needed", "token:bob")
	if err != nil {
		t.Fatal(err)
	}
	if a.State != Revoked || a.Resolver != "token:bob" || a.Comment != "no longer needed" || a.ResolvedAt.IsZero() {
		t.Fatalf("revoked: %+v", a)
	}
	// The same call now asks again: a new pending request, not an ALLOW.
	d, id2 := eval(t, s, in("h1", "s1", "exec"))
	if d != shield.Escalate || id2 == id || id2 == "" {
		t.Fatalf("after revoke: %s %q, want ESCALATE with a new request", d, id2)
	}
	// Revoking twice fails: it is no longer granted.
	if _, err := s.Revoke(ctx, id, "", "token:bob"); !errors.Is(err, ErrNotGranted) {
		t.Fatalf("second revoke: %v, want ErrNotGranted", err)
	}
	if _, err := s.Revoke(ctx, "apr_nope", "", "token:bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke unknown: %v, want ErrNotFound", err)
	}
	rec.mu.Lock()
	n := 0
	for _, typ := range rec.types {
		if typ == "approval_resolved" {
			n++
		}
	}
	rec.mu.Unlock()
	if n != 2 { // the grant and its revocation
		t.Fatalf("approval_resolved records: %d, want 2 (%v)", n, rec.types)
	}
}

func TestRevokeSingleUse(t *testing.T) {
	s := open(t, Config{})
	ctx := context.Background()
	_, id := eval(t, s, in("h2", "s1", "exec"))
	if _, err := s.Resolve(ctx, id, true, "", "token:alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke(ctx, id, "", "token:alice"); err != nil {
		t.Fatalf("revoke unused single-use approval: %v", err)
	}
	if d, _ := eval(t, s, in("h2", "s1", "exec")); d != shield.Escalate {
		t.Fatalf("after revoking an unused approval: %s, want ESCALATE", d)
	}
}

// A revocation the audit log cannot take does not take effect: the grant still stands.
func TestRevokeAuditFailure(t *testing.T) {
	s := open(t, Config{})
	ctx := context.Background()
	_, id := eval(t, s, in("h3", "s1", "exec"))
	if _, err := s.ResolveGrant(ctx, id, true, "", "token:alice", time.Hour); err != nil {
		t.Fatal(err)
	}
	s.cfg.Recorder = failingRecorder{}
	if _, err := s.Revoke(ctx, id, "", "token:bob"); !errors.Is(err, ErrAudit) {
		t.Fatalf("revoke with a failing audit log: %v, want ErrAudit", err)
	}
	a, err := s.Get(id)
	if err != nil || a.State != Approved {
		t.Fatalf("after failed revoke: %v %v, want still approved", a.State, err)
	}
}
