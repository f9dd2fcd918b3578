// Package approval is Tier 3 of the decision pipeline: human approval. A call that tiers 0–2
// left at ESCALATE becomes a pending approval, stored so it survives restarts, holding the full
// call (arguments redacted), each tier's reasons and the requester. A person approves or denies
// it; an approval is bound to the exact action hash, the session and the requesting identity
// (the authenticated caller), single-use and expiring, and the agent, session or caller that
// asked can never approve its own request. A request nobody answers in time is denied. The
// runtime re-submits the call after approval; the tier then consumes the approval and allows
// that one call (or, under a scoped grant, allows the same call in that session until the grant
// ends). A denial (or a time-out) blocks the same call in the same session by the same caller
// from then on; another session or caller asks again. Resolved requests are pruned after the
// configured retention (the audit trail keeps them).
//
// approval imports shield (it implements shield.Tier); shield/server and cmd/shield use it.
package approval

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
)

// State of an approval. States are API (stored and shown); never renamed.
type State string

const (
	Pending  State = "pending"
	Approved State = "approved"
	Denied   State = "denied"
	Used     State = "used"
	// Expired marks an approval that was granted but not used before its grant ran out.
	Expired State = "expired"
	// Revoked marks an approval (single use or scoped grant) withdrawn by an approver before it
	// was used up: the call asks again.
	Revoked State = "revoked"
)

// MaxGrant bounds a scoped grant.
const MaxGrant = 24 * time.Hour

// Approval is one request for a human decision.
type Approval struct {
	ID          string `json:"id"`
	ActionHash  string `json:"action_hash"`
	Tool        string `json:"tool"`
	ActionClass string `json:"action_class"`
	// Arguments are the call's arguments redacted as in a decision record (audit.Redactor):
	// the store, the audit trail, the API and the webhook never see the secrets in them.
	Arguments json.RawMessage `json:"arguments"`
	// ArgsHash is the hex SHA-256 of the original arguments' RFC 8785 form (a decision
	// record's args_hash); Redacted lists the JSON pointers of the replaced values.
	ArgsHash    string            `json:"args_hash,omitempty"`
	Redacted    []string          `json:"redacted,omitempty"`
	ArgsInvalid bool              `json:"args_invalid,omitempty"`
	SessionID   string            `json:"session_id"`
	AgentID     string            `json:"agent_id"`
	Caller      string            `json:"caller"`
	Runtime     string            `json:"runtime"`
	CallID      string            `json:"call_id,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Rules       []string          `json:"rules"`
	Reason      string            `json:"reason"`
	Created     time.Time         `json:"created"`
	Expires     time.Time         `json:"expires"`
	State       State             `json:"state"`
	Approvers   []string          `json:"approvers,omitempty"`
	Resolver    string            `json:"resolver,omitempty"`
	Comment     string            `json:"comment,omitempty"`
	ResolvedAt  time.Time         `json:"resolved_at,omitzero"`
	// NeedApprovers is 2 under the two-person rule, else 1.
	NeedApprovers int `json:"need_approvers"`
	// GrantUntil, when set on an approved request, is a scoped grant: the same call (same action
	// hash, so same tool and exact arguments) in the same session is allowed until then, not
	// just once. Zero means single use.
	GrantUntil time.Time `json:"grant_until,omitzero"`
}

// Config configures the service. Path is required; other zero values are documented defaults.
type Config struct {
	// Path of the bbolt store (mode 0600).
	Path string
	// Timeout after which a pending request is denied. Default 15m.
	Timeout time.Duration
	// TwoPersonClasses are action classes that need two distinct approvers.
	TwoPersonClasses []string
	Recorder         Recorder
	// Retention is how long a resolved request (denied, used or expired) stays in the store
	// after its resolution; the sweeper prunes it then (the audit trail keeps its records).
	// Default 30 days; negative keeps every request. A pruned denial no longer blocks the call:
	// it asks again.
	Retention time.Duration
	// WebhookURL receives an HMAC-SHA256-signed JSON notification for each new request
	// (header X-Shield-Signature: sha256=<hex of HMAC(secret, body)>). Optional.
	WebhookURL    string
	WebhookSecret []byte
	// WebhookFormat selects the body: "" or "shield" (the JSON above), "slack" (a Slack incoming
	// webhook message: text and blocks) or "chat" (a generic {"text": …} message, as Mattermost,
	// Rocket.Chat, Google Chat and Teams workflows accept). Every format is signed alike.
	WebhookFormat string
	// ConsoleURL, when set, is the web console's base URL: chat notices link to the request
	// there (ConsoleURL + "#approval/" + id).
	ConsoleURL string
	// Redact configures the redaction of call arguments before a request is stored; pass the
	// audit log's (audit.Config.Redact). The zero value redacts with the built-in patterns.
	Redact audit.Redaction
	Log    *slog.Logger
}

// Errors of Resolve and Await.
var (
	ErrNotFound     = errors.New("no such approval")
	ErrNotPending   = errors.New("approval is no longer pending")
	ErrSelfApproval = errors.New("the requester cannot approve its own request")
	ErrSameApprover = errors.New("this approver already approved; the two-person rule needs someone else")
	ErrAudit        = errors.New("approval: recording the decision in the audit log failed")
	ErrNotGranted   = errors.New("approval is not granted: only an approved request (single use or scoped grant) can be revoked")
)

// Service stores approvals and resolves them.
type Service struct {
	cfg  Config
	db   *bolt.DB
	red  *audit.Redactor
	now  func() time.Time
	http *http.Client

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// DefaultRetention is the default Config.Retention.
const DefaultRetention = 30 * 24 * time.Hour

// Buckets: approvals by id (JSON), and indexes kept in the same transactions so that
// evaluating a call, sweeping expiries, listing a page and watching do not read the history:
//   - byCall:    action hash, 0, session, 0, created (8 bytes big-endian ns), id → empty
//   - open:      id → empty, for pending and approved requests (those that can still change by time)
//   - byCreated: created (8 bytes big-endian ns), id → state
var (
	bucket          = []byte("approvals")
	byCallBucket    = []byte("by_call")
	openBucket      = []byte("open")
	byCreatedBucket = []byte("by_created")
	metaBucket      = []byte("meta")
	// redactedKey in metaBucket marks a store whose requests are all redacted.
	redactedKey = []byte("redacted_v1")
)

func callPrefix(hash, session string) []byte {
	return []byte(hash + "\x00" + session + "\x00")
}

func callKey(a *Approval) []byte {
	k := callPrefix(a.ActionHash, a.SessionID)
	k = binary.BigEndian.AppendUint64(k, uint64(a.Created.UnixNano()))
	return append(k, a.ID...)
}

// initBuckets creates the buckets and, for a store written before the indexes existed, builds them.
func initBuckets(tx *bolt.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bucket); err != nil {
		return err
	}
	build := tx.Bucket(byCallBucket) == nil || tx.Bucket(openBucket) == nil || tx.Bucket(byCreatedBucket) == nil
	for _, b := range [][]byte{byCallBucket, openBucket, byCreatedBucket} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if !build {
		return nil
	}
	as, err := all(tx)
	if err != nil {
		return err
	}
	for _, a := range as {
		if err := put(tx, a); err != nil {
			return err
		}
	}
	return nil
}

// Open opens (or creates) the store and starts the expiry sweeper.
func Open(cfg Config) (*Service, error) {
	if cfg.Path == "" {
		return nil, errors.New("approval: store path is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Minute
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.WebhookURL != "" {
		u, err := url.Parse(cfg.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("approval: webhook URL %q: want http(s)://host/...", cfg.WebhookURL)
		}
		if len(cfg.WebhookSecret) < 16 {
			return nil, errors.New("approval: the webhook secret must be at least 16 bytes")
		}
	}
	if err := checkWebhookFormat(cfg.WebhookFormat, cfg.ConsoleURL); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	red, err := audit.NewRedactor(cfg.Redact)
	if err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	db, err := bolt.Open(cfg.Path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open approval store: %w", err)
	}
	if err := db.Update(initBuckets); err != nil {
		db.Close()
		return nil, err
	}
	rewritten := 0
	if err := db.Update(func(tx *bolt.Tx) (err error) { rewritten, err = redactStored(tx, red); return err }); err != nil {
		db.Close()
		return nil, fmt.Errorf("approval: redact stored requests: %w", err)
	}
	if rewritten > 0 {
		if db, err = compactStore(db, cfg.Path); err != nil {
			return nil, fmt.Errorf("approval: compact the store after redaction: %w", err)
		}
	}
	s := &Service{cfg: cfg, db: db, red: red, now: time.Now, http: &http.Client{Timeout: 5 * time.Second,
		// The signed body goes to the configured URL only.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		changed: make(chan struct{}), done: make(chan struct{})}
	s.wg.Add(1)
	go s.sweep()
	return s, nil
}

// Close stops the sweeper and webhooks and closes the store. Calling it again does nothing.
func (s *Service) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		s.wg.Wait()
		err = s.db.Close()
	})
	return err
}

func (s *Service) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Service) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Service) record(ctx context.Context, ev Event, a *Approval) {
	if s.cfg.Recorder == nil {
		return
	}
	if err := s.cfg.Recorder.Record(context.WithoutCancel(ctx), ev, a); err != nil {
		s.cfg.Log.Error("audit record failed", "type", ev.String(), "approval", a.ID, "error", err.Error())
	}
}

// redactArgs replaces a.Arguments (as received) by their redacted form.
func redactArgs(red *audit.Redactor, a *Approval) error {
	a.Reason = red.Text(a.Reason) // as a decision record's reason
	if len(a.Arguments) == 0 {
		return nil
	}
	r, err := red.Arguments(a.Arguments)
	if err != nil {
		return fmt.Errorf("redact arguments: %w", err)
	}
	a.Arguments, a.ArgsHash, a.Redacted, a.ArgsInvalid = r.Arguments, r.Hash, r.Paths, r.Invalid
	return nil
}

// redactStored redacts, once, the requests of a store written before arguments were redacted,
// and reports how many it rewrote.
func redactStored(tx *bolt.Tx, red *audit.Redactor) (int, error) {
	meta, err := tx.CreateBucketIfNotExists(metaBucket)
	if err != nil {
		return 0, err
	}
	if meta.Get(redactedKey) != nil {
		return 0, nil
	}
	as, err := all(tx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range as {
		if a.ArgsHash != "" || len(a.Arguments) == 0 {
			continue
		}
		if err := redactArgs(red, a); err != nil {
			return 0, fmt.Errorf("approval %s: %w", a.ID, err)
		}
		if err := put(tx, a); err != nil {
			return 0, err
		}
		n++
	}
	return n, meta.Put(redactedKey, []byte{1})
}

// compactStore rewrites the store into a fresh file, so that the pages the redaction freed
// (which still hold the unredacted arguments) are not kept, and reopens it. db is closed.
func compactStore(db *bolt.DB, path string) (*bolt.DB, error) {
	tmp := path + ".compact"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		db.Close()
		return nil, err
	}
	err = bolt.Compact(dst, db, 4<<20)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
}

func put(tx *bolt.Tx, a *Approval) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucket).Put([]byte(a.ID), b); err != nil {
		return err
	}
	if err := tx.Bucket(byCallBucket).Put(callKey(a), nil); err != nil {
		return err
	}
	if err := tx.Bucket(byCreatedBucket).Put(createdKey(a.Created, a.ID), []byte(a.State)); err != nil {
		return err
	}
	if a.State == Pending || a.State == Approved {
		return tx.Bucket(openBucket).Put([]byte(a.ID), nil)
	}
	return tx.Bucket(openBucket).Delete([]byte(a.ID))
}

func createdKey(created time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(id)), uint64(created.UnixNano()))
	return append(k, id...)
}

// remove deletes a request and its index entries.
func remove(tx *bolt.Tx, a *Approval) error {
	for _, d := range []struct {
		b []byte
		k []byte
	}{{bucket, []byte(a.ID)}, {byCallBucket, callKey(a)}, {openBucket, []byte(a.ID)}, {byCreatedBucket, createdKey(a.Created, a.ID)}} {
		if err := tx.Bucket(d.b).Delete(d.k); err != nil {
			return err
		}
	}
	return nil
}

// forCall returns the requests for one action in one session, oldest first.
func forCall(tx *bolt.Tx, hash, session string) ([]*Approval, error) {
	var out []*Approval
	prefix := callPrefix(hash, session)
	c := tx.Bucket(byCallBucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) < len(prefix)+8 {
			return nil, fmt.Errorf("corrupt index key %q", k)
		}
		a, err := get(tx, string(k[len(prefix)+8:]))
		if err != nil {
			return nil, err
		}
		// A session id holding NUL could share a prefix with another: check the fields.
		if a.ActionHash == hash && a.SessionID == session {
			out = append(out, a)
		}
	}
	return out, nil
}

// openOnes returns the pending and approved requests.
func openOnes(tx *bolt.Tx) ([]*Approval, error) {
	var out []*Approval
	err := tx.Bucket(openBucket).ForEach(func(k, _ []byte) error {
		a, err := get(tx, string(k))
		if err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

func get(tx *bolt.Tx, id string) (*Approval, error) {
	raw := tx.Bucket(bucket).Get([]byte(id))
	if raw == nil {
		return nil, ErrNotFound
	}
	var a Approval
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("approval %s is corrupt: %w", id, err)
	}
	return &a, nil
}

func all(tx *bolt.Tx) ([]*Approval, error) {
	var out []*Approval
	err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		var a Approval
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("approval %s is corrupt: %w", k, err)
		}
		out = append(out, &a)
		return nil
	})
	slices.SortFunc(out, func(a, b *Approval) int { return a.Created.Compare(b.Created) })
	return out, err
}

// Get returns one approval.
func (s *Service) Get(id string) (*Approval, error) {
	var a *Approval
	err := s.db.View(func(tx *bolt.Tx) (err error) { a, err = get(tx, id); return err })
	return a, err
}

// sweep denies pending approvals whose time ran out and, once a minute, prunes resolved ones
// past the retention.
func (s *Service) sweep() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var pruned time.Time
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.expire()
			if now := s.now(); now.Sub(pruned) >= time.Minute {
				pruned = now
				if _, err := s.prune(); err != nil {
					s.cfg.Log.Error("approval pruning", "error", err.Error())
				}
			}
		}
	}
}

func (s *Service) expire() {
	var expired []*Approval
	now := s.now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		as, err := openOnes(tx)
		if err != nil {
			return err
		}
		for _, a := range as {
			switch {
			case a.State == Pending && !now.Before(a.Expires):
				a.State, a.Resolver, a.Comment, a.ResolvedAt = Denied, "timeout", "timed out: no decision in time", now
			case a.State == Approved && !now.Before(a.useBy()):
				a.State = Expired
			default:
				continue
			}
			if err := put(tx, a); err != nil {
				return err
			}
			expired = append(expired, a)
		}
		return nil
	})
	if err != nil {
		s.cfg.Log.Error("approval expiry", "error", err.Error())
	}
	for _, a := range expired {
		s.record(context.Background(), EventResolved, a)
	}
	if len(expired) > 0 {
		s.notify()
	}
}

func newID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return "apr_" + hex.EncodeToString(b)
}

// useBy is when an approved request can no longer be used.
func (a *Approval) useBy() time.Time {
	if a.GrantUntil.After(a.Expires) {
		return a.GrantUntil
	}
	return a.Expires
}

// Resolve approves or denies a pending request as resolver (an authenticated identity). An
// approval is single use.
func (s *Service) Resolve(ctx context.Context, id string, approve bool, comment, resolver string) (*Approval, error) {
	return s.ResolveGrant(ctx, id, approve, comment, resolver, 0)
}

// ResolveGrant is Resolve with a scoped grant: grant > 0 (at most MaxGrant) allows the same call
// (same tool and exact arguments) in the same session for that long instead of once. The grant
// starts when the last needed approver approves; under the two-person rule that approver's
// grant counts.
func (s *Service) ResolveGrant(ctx context.Context, id string, approve bool, comment, resolver string, grant time.Duration) (*Approval, error) {
	if resolver == "" {
		return nil, errors.New("approval: resolver identity is required")
	}
	if grant < 0 || grant > MaxGrant {
		return nil, fmt.Errorf("approval: grant %v outside [0, %v]", grant, MaxGrant)
	}
	var out *Approval
	err := s.db.Update(func(tx *bolt.Tx) error {
		a, err := get(tx, id)
		if err != nil {
			return err
		}
		now := s.now()
		if a.State != Pending {
			return fmt.Errorf("%w (it is %s)", ErrNotPending, a.State)
		}
		if !approve && grant > 0 {
			return errors.New("approval: a grant duration only applies to an approval")
		}
		if !now.Before(a.Expires) {
			return fmt.Errorf("%w (it expired)", ErrNotPending)
		}
		if resolver == a.Caller || resolver == "session:"+a.SessionID || (a.AgentID != "" && resolver == "agent:"+a.AgentID) {
			return ErrSelfApproval
		}
		if !approve {
			a.State = Denied
		} else {
			if slices.Contains(a.Approvers, resolver) {
				return ErrSameApprover
			}
			a.Approvers = append(a.Approvers, resolver)
			if len(a.Approvers) >= a.NeedApprovers {
				a.State = Approved
				// The approved call must be re-submitted within one timeout of the decision.
				a.Expires = now.Add(s.cfg.Timeout)
				if grant > 0 {
					a.GrantUntil = now.Add(grant)
				}
			}
		}
		a.Resolver, a.Comment = resolver, s.red.Text(comment)
		if a.State != Pending {
			a.ResolvedAt = now
		}
		out = a
		if err := put(tx, a); err != nil {
			return err
		}
		// The decision is audited before it takes effect: if the audit log cannot take it, the
		// transaction rolls back and the request stays as it was.
		if s.cfg.Recorder != nil {
			if err := s.cfg.Recorder.Record(context.WithoutCancel(ctx), EventResolved, a); err != nil {
				return fmt.Errorf("%w: %w", ErrAudit, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// Await blocks until the approval is no longer pending (or its time runs out, or ctx ends).
func (s *Service) Await(ctx context.Context, id string) (*Approval, error) {
	for {
		ch := s.changes()
		a, err := s.Get(id)
		if err != nil {
			return nil, err
		}
		if a.State != Pending {
			return a, nil
		}
		wait := time.Until(a.Expires) + time.Second
		select {
		case <-ch:
		case <-time.After(wait):
			s.expire()
		case <-ctx.Done():
			return a, ctx.Err()
		}
	}
}

// Watch sends the pending approvals, then every approval that is created or changes state, until
// ctx ends.
// It reads the state index on each change and only the requests that changed.
func (s *Service) Watch(ctx context.Context, fn func(*Approval) error) error {
	seen := map[string]State{}
	first := true
	for {
		ch := s.changes()
		var changed []*Approval
		err := s.db.View(func(tx *bolt.Tx) error {
			now := map[string]State{}
			err := tx.Bucket(byCreatedBucket).ForEach(func(k, v []byte) error {
				if len(k) <= 8 {
					return fmt.Errorf("corrupt index key %q", k)
				}
				id, st := string(k[8:]), State(v)
				now[id] = st
				if first && st != Pending {
					seen[id] = st
				}
				if seen[id] == st {
					return nil
				}
				a, err := get(tx, id)
				if err != nil {
					return err
				}
				changed = append(changed, a)
				return nil
			})
			// Forget pruned requests.
			for id := range seen {
				if _, ok := now[id]; !ok {
					delete(seen, id)
				}
			}
			return err
		})
		if err != nil {
			return err
		}
		first = false
		for _, a := range changed {
			seen[a.ID] = a.State
			if err := fn(a); err != nil {
				return err
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

// webhook posts an HMAC-signed notification, off the decision path.
func (s *Service) webhook(a *Approval) {
	if s.cfg.WebhookURL == "" {
		return
	}
	body, err := webhookBody(s.cfg.WebhookFormat, s.cfg.ConsoleURL, a)
	if err != nil {
		s.cfg.Log.Error("approval webhook body", "approval", a.ID, "error", err.Error())
		return
	}
	mac := hmac.New(sha256.New, s.cfg.WebhookSecret)
	mac.Write(body)
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for attempt := 0; attempt < 3; attempt++ {
			req, err := http.NewRequest(http.MethodPost, s.cfg.WebhookURL, bytes.NewReader(body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Shield-Signature", sig)
			resp, err := s.http.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					return
				}
			}
			select {
			case <-time.After(time.Duration(attempt+1) * time.Second):
			case <-s.done:
				return
			}
		}
		s.cfg.Log.Warn("approval webhook failed", "approval", a.ID)
	}()
}

// errReadOnly ends an update transaction that changed nothing: bbolt rolls it back instead of
// committing (no write, no fsync).
var errReadOnly = errors.New("no change")

// Tier is the tier-3 view of the service.
type Tier struct{ s *Service }

var _ shield.Tier = (*Tier)(nil)

// Tier returns the pipeline tier backed by s.
func (s *Service) Tier() *Tier { return &Tier{s: s} }

// Level implements shield.Tier.
func (t *Tier) Level() int { return shield.TierHuman }

// Name implements shield.Tier.
func (t *Tier) Name() string { return "approval" }

// Evaluate implements shield.Tier: consume a granted approval, report a denial, or create (or
// find) the pending request.
func (t *Tier) Evaluate(ctx context.Context, in *shield.Input) (shield.Result, error) {
	if in.Call == nil || in.ActionHash == "" {
		return shield.Result{}, errors.New("approval: call without an action hash")
	}
	s := t.s
	if in.DryRun {
		return shield.Result{Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "approval:dry-run",
			Reason: "needs a human decision (dry run: no request created)"}}}, nil
	}
	var res shield.Result
	var created *Approval
	now := s.now()
	err := s.db.Update(func(tx *bolt.Tx) error {
		as, err := forCall(tx, in.ActionHash, in.Call.Context.SessionID)
		if err != nil {
			return err
		}
		// as is oldest first: the latest request for this call in this session by this caller
		// decides. A request belongs to the authenticated identity that asked: another caller
		// using the same session id neither consumes its approval nor meets its denial, and gets
		// a request of its own.
		var pending, denied *Approval
		for _, a := range as {
			if a.ActionHash != in.ActionHash || a.SessionID != in.Call.Context.SessionID || a.Caller != in.Call.Context.Caller {
				continue
			}
			switch {
			case a.State == Approved && now.Before(a.useBy()):
				res = shield.Result{EscalationID: a.ID, Findings: []shield.Finding{{Decision: shield.Allow, Rule: "approval:" + a.ID,
					Reason: "approved by a human (request " + a.ID + ")"}}}
				if a.GrantUntil.IsZero() {
					// Single use: the ALLOW stands only if this commit does.
					a.State = Used
					return put(tx, a)
				}
				return errReadOnly
			case a.State == Pending && now.Before(a.Expires):
				pending, denied = a, nil
			case a.State == Denied || a.State == Pending:
				// Pending past its expiry is a time-out the sweeper has not recorded yet: denied.
				pending, denied = nil, a
			case a.State == Used || a.State == Expired || a.State == Revoked:
				// A consumed, lapsed or revoked grant ends an earlier denial: the call asks again.
				denied = nil
			}
		}
		if denied != nil {
			reason := "denied by a human (request " + denied.ID + ")"
			if denied.Resolver == "timeout" || denied.State == Pending {
				reason = "no human decision in time (request " + denied.ID + ")"
			}
			res = shield.Result{EscalationID: denied.ID, Findings: []shield.Finding{{Decision: shield.Block, Rule: "approval:" + denied.ID,
				Reason: reason}}}
			return errReadOnly
		}
		if pending != nil {
			res = shield.Result{EscalationID: pending.ID, Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "approval:pending",
				Reason: "waiting for a human decision on " + pending.ID}}}
			return errReadOnly
		}
		c := in.Call
		a := &Approval{ID: newID(), ActionHash: in.ActionHash, Tool: c.Tool, Arguments: json.RawMessage(c.Arguments),
			SessionID: c.Context.SessionID, AgentID: c.Context.AgentID, Caller: c.Context.Caller, Runtime: c.Context.Runtime,
			CallID: c.ID, Cwd: c.Context.Cwd, Labels: c.Context.Labels,
			Created: now, Expires: now.Add(s.cfg.Timeout), State: Pending, NeedApprovers: 1}
		if in.Action != nil {
			a.ActionClass = in.Action.Class
		}
		if in.Prior != nil {
			a.Rules, a.Reason = in.Prior.Rules, in.Prior.Reason
		}
		if slices.Contains(s.cfg.TwoPersonClasses, a.ActionClass) {
			a.NeedApprovers = 2
		}
		// Before anything keeps or shows the request: store, audit record, webhook, API.
		if err := redactArgs(s.red, a); err != nil {
			return err
		}
		created = a
		res = shield.Result{EscalationID: a.ID, Findings: []shield.Finding{{Decision: shield.Escalate, Rule: "approval:requested",
			Reason: "a human must approve this call (request " + a.ID + ")"}}}
		return put(tx, a)
	})
	if err != nil && !errors.Is(err, errReadOnly) {
		return shield.Result{}, fmt.Errorf("approval store: %w", err)
	}
	if created != nil {
		s.record(ctx, EventRequested, created)
		s.webhook(created)
		s.notify()
	}
	return res, nil
}
