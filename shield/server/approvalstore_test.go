package server

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

// approvalStoreFixture is an ApprovalStore and a way to put a pending request in it (how a
// request is created is the store's tier's business, not the API's).
type approvalStoreFixture struct {
	store ApprovalStore
	// request creates a pending request asked by caller for a call with hash, and returns its id.
	request func(t *testing.T, hash, caller string) string
}

// testApprovalStore is the contract the approval API relies on, run through the ApprovalStore
// interface only (today against the bbolt approval.Service; a shared database store must pass
// it too).
func testApprovalStore(t *testing.T, open func(t *testing.T) approvalStoreFixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t.Run("unknown id", func(t *testing.T) {
		f := open(t)
		if _, err := f.store.Get("apr_nope"); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("Get: %v, want ErrNotFound", err)
		}
		if _, err := f.store.ResolveGrant(ctx, "apr_nope", true, "", "alice", 0); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("ResolveGrant: %v, want ErrNotFound", err)
		}
		if _, err := f.store.Revoke(ctx, "apr_nope", "", "alice"); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("Revoke: %v, want ErrNotFound", err)
		}
	})
	t.Run("lifecycle", func(t *testing.T) {
		f := open(t)
		// Watch sees the request created and then resolved.
		wctx, wcancel := context.WithCancel(ctx)
		revoked := make(chan struct{})
		var once sync.Once
		watched := make(chan error, 1)
		go func() {
			watched <- f.store.Watch(wctx, func(a *approval.Approval) error {
				if a.State == approval.Revoked {
					once.Do(func() { close(revoked) })
				}
				return nil
			})
		}()
		id := f.request(t, "h1", "uid:1000")
		a, err := f.store.Get(id)
		if err != nil || a.State != approval.Pending || a.Caller != "uid:1000" {
			t.Fatalf("Get: %+v, %v; want pending by uid:1000", a, err)
		}
		page, _, err := f.store.ListPage(approval.ListOptions{PendingOnly: true})
		if err != nil || len(page) != 1 || page[0].ID != id {
			t.Fatalf("ListPage pending: %v, %v", page, err)
		}
		if _, err := f.store.ResolveGrant(ctx, id, true, "", "uid:1000", 0); !errors.Is(err, approval.ErrSelfApproval) {
			t.Errorf("self approval: %v, want ErrSelfApproval", err)
		}
		if _, err := f.store.Revoke(ctx, id, "", "alice"); !errors.Is(err, approval.ErrNotGranted) {
			t.Errorf("revoke pending: %v, want ErrNotGranted", err)
		}
		// Await returns once another identity approves.
		awaited := make(chan *approval.Approval, 1)
		go func() {
			a, err := f.store.Await(ctx, id)
			if err != nil {
				t.Errorf("Await: %v", err)
			}
			awaited <- a
		}()
		if _, err := f.store.ResolveGrant(ctx, id, true, "ok", "alice", time.Hour); err != nil {
			t.Fatal(err)
		}
		if a := <-awaited; a == nil || a.State != approval.Approved || a.Resolver != "alice" || a.GrantUntil.IsZero() {
			t.Fatalf("Await: %+v, want approved by alice with a grant", a)
		}
		if _, err := f.store.ResolveGrant(ctx, id, false, "", "bob", 0); !errors.Is(err, approval.ErrNotPending) {
			t.Errorf("resolve twice: %v, want ErrNotPending", err)
		}
		if a, err := f.store.Revoke(ctx, id, "changed my mind", "alice"); err != nil || a.State != approval.Revoked {
			t.Fatalf("Revoke: %+v, %v", a, err)
		}
		page, _, err = f.store.ListPage(approval.ListOptions{PendingOnly: true})
		if err != nil || len(page) != 0 {
			t.Fatalf("ListPage pending after resolution: %v, %v", page, err)
		}
		if page, _, err = f.store.ListPage(approval.ListOptions{}); err != nil || len(page) != 1 || page[0].State != approval.Revoked {
			t.Fatalf("ListPage all: %v, %v", page, err)
		}
		// The watcher sees the resolution (Watch delivers changes, possibly coalesced).
		select {
		case <-revoked:
		case <-ctx.Done():
			t.Fatal("Watch never saw the request revoked")
		}
		wcancel()
		if err := <-watched; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Watch ended with %v", err)
		}
	})
}

func TestApprovalStoreBolt(t *testing.T) {
	testApprovalStore(t, func(t *testing.T) approvalStoreFixture {
		svc, err := approval.Open(approval.Config{Path: filepath.Join(t.TempDir(), "approvals.db"), Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		return approvalStoreFixture{store: svc, request: func(t *testing.T, hash, caller string) string {
			res, err := svc.Tier().Evaluate(context.Background(), &shield.Input{
				Call: &shield.Call{Tool: "Bash", Arguments: json.RawMessage(`{"command":"systemctl restart docker"}`),
					Context: shield.CallContext{SessionID: "s1", AgentID: "a1", Caller: caller}},
				Action: &normalize.Action{Class: "exec"}, ActionHash: hash})
			if err != nil || res.EscalationID == "" {
				t.Fatalf("create request: %+v, %v", res, err)
			}
			return res.EscalationID
		}}
	})
}
