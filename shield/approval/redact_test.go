package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// Secrets the built-in redaction patterns cover, each in a different position.
var testSecrets = []string{"AKIAIOSFODNN7EXAMPLE", "abcdef0123456789abcdef.token", "hunter2-correct-horse", "s3cr3t-member-value"}

const secretArgs = `{"command":"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE curl -H 'Authorization: Bearer abcdef0123456789abcdef.token' https://x.example/?password=hunter2-correct-horse","env":{"api_key":"s3cr3t-member-value"}}`

func secretIn(t *testing.T, where string, b []byte) {
	t.Helper()
	for _, s := range testSecrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s holds the secret %q", where, s)
		}
	}
}

// auditRecorder appends approval events to a real audit log, as the service does.
type auditRecorder struct{ l *audit.Log }

func (r auditRecorder) Record(ctx context.Context, ev Event, p *Approval) error {
	_, err := r.l.Append(ctx, ev.Type(), p)
	return err
}

// TestApprovalArgumentsRedacted: a secret in a call's arguments never reaches the store file,
// the audit records, what Get, List, Await and Watch return, or the webhook body.
func TestApprovalArgumentsRedacted(t *testing.T) {
	var mu sync.Mutex
	var hookBody []byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hookBody = b
		mu.Unlock()
	}))
	defer hook.Close()
	dir := t.TempDir()
	al, err := audit.Open(audit.Config{Dir: filepath.Join(dir, "audit")})
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	path := filepath.Join(dir, "approvals.db")
	s, err := Open(Config{Path: path, Timeout: time.Minute, Recorder: auditRecorder{al},
		WebhookURL: hook.URL, WebhookSecret: []byte("0123456789abcdef-webhook")})
	if err != nil {
		t.Fatal(err)
	}
	i := in("hs", "s1", "exec")
	i.Call.Arguments = json.RawMessage(secretArgs)
	_, id := eval(t, s, i)

	a, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := audit.ArgsHash(json.RawMessage(secretArgs))
	if a.ArgsHash != want || len(a.Redacted) == 0 || !bytes.Contains(a.Arguments, []byte(audit.RedactedMark)) {
		t.Errorf("stored request: hash %q (want %q), redacted %v, arguments %s", a.ArgsHash, want, a.Redacted, a.Arguments)
	}
	if !bytes.Contains(a.Arguments, []byte("curl")) {
		t.Errorf("redaction removed more than the secrets: %s", a.Arguments)
	}
	var views []*Approval
	as, _ := s.List(false)
	views = append(views, as...)
	wctx, cancel := context.WithCancel(context.Background())
	s.Watch(wctx, func(x *Approval) error { views = append(views, x); cancel(); return nil })
	if _, err := s.ResolveGrant(context.Background(), id, false, "no", "uid:0", 0); err != nil {
		t.Fatal(err)
	}
	aw, err := s.Await(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	views = append(views, a, aw)
	for _, v := range views {
		b, _ := json.Marshal(v)
		secretIn(t, "an API view", b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		b := hookBody
		mu.Unlock()
		if b != nil {
			secretIn(t, "the webhook body", b)
			if !bytes.Contains(b, []byte(audit.RedactedMark)) {
				t.Errorf("webhook body without redacted arguments: %s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("webhook never called")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Close()
	al.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secretIn(t, "the store file", raw)
	n := 0
	filepath.Walk(filepath.Join(dir, "audit"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			secretIn(t, "audit file "+filepath.Base(p), b)
			n += bytes.Count(b, []byte(`"type":"approval_`))
		}
		return nil
	})
	if n < 2 {
		t.Errorf("%d approval records in the audit files, want requested and resolved", n)
	}
}

// TestApprovalStoredRequestsRedactedOnOpen: a store written before redaction existed is
// redacted when opened.
func TestApprovalStoredRequestsRedactedOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := &Approval{ID: "apr_old", ActionHash: "h", Tool: "Bash", Arguments: json.RawMessage(secretArgs), SessionID: "s",
		Created: time.Now(), Expires: time.Now().Add(time.Hour), State: Pending, NeedApprovers: 1}
	if err := db.Update(func(tx *bolt.Tx) error {
		if err := initBuckets(tx); err != nil {
			return err
		}
		return put(tx, old)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := open(t, Config{Path: path})
	// The store was rewritten: the pages that held the unredacted arguments are gone.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secretIn(t, "the store file after redaction on open", raw)
	a, err := s.Get("apr_old")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(a)
	secretIn(t, "a request stored before redaction", b)
	if a.ArgsHash == "" {
		t.Error("no args_hash after redaction on open")
	}
	// The request still binds the same call.
	i := &shield.Input{Call: &shield.Call{Tool: "Bash", Arguments: json.RawMessage(secretArgs), Context: shield.CallContext{SessionID: "s"}},
		Action: &normalize.Action{Class: "exec"}, ActionHash: "h"}
	if d, id := eval(t, s, i); d != shield.Escalate || id != "apr_old" {
		t.Errorf("re-submitted call: %s %s, want ESCALATE on apr_old", d, id)
	}
}
