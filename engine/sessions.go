package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// SessionStore is what the Engine needs of a session store: the histories of its clients'
// sessions. The Engine never writes an off-the-record session. Implementations are safe for
// concurrent use; the one here is Sessions (a bbolt file per engine); a fleet of appliances can
// share one in a database. Lifecycle (open, close) is the implementation's, owned by whoever
// built it (the appliance's composition root).
type SessionStore interface {
	// Append adds msgs to session id, creating it (titled by its first user message) if needed.
	Append(ctx context.Context, id string, msgs ...*agentv1.HistoryMessage) error
	// History returns session id's messages in order, or an error wrapping ErrNoSession.
	History(ctx context.Context, id string) ([]*agentv1.HistoryMessage, error)
	// List returns every session.
	List(ctx context.Context) ([]*agentv1.SessionInfo, error)
}

// Sessions is the SessionStore in an embedded bbolt file. Its calls do not block on ctx (a
// bbolt transaction is local and short).
type Sessions struct{ db *bolt.DB }

var _ SessionStore = (*Sessions)(nil)

var bucketSessions = []byte("sessions")

type sessionDoc struct {
	Created  int64             `json:"created"`
	Updated  int64             `json:"updated"`
	Title    string            `json:"title"`
	Messages []sessionMessage  `json:"messages"`
	Extra    map[string]string `json:"extra,omitempty"`
}

type sessionMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// OpenSessions opens (or creates) the session store at path with mode 0600.
func OpenSessions(path string) (*Sessions, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(bucketSessions); return err }); err != nil {
		db.Close()
		return nil, err
	}
	return &Sessions{db: db}, nil
}

// Close closes the store.
func (s *Sessions) Close() error { return s.db.Close() }

// ErrNoSession is returned for an unknown session id.
var ErrNoSession = errors.New("no such session")

// Append adds messages to a session, creating it if needed.
func (s *Sessions) Append(_ context.Context, id string, msgs ...*agentv1.HistoryMessage) error {
	now := time.Now().Unix()
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		var d sessionDoc
		if raw := b.Get([]byte(id)); raw != nil {
			if err := json.Unmarshal(raw, &d); err != nil {
				return fmt.Errorf("session %s is corrupt: %w", id, err)
			}
		} else {
			d.Created = now
		}
		for _, m := range msgs {
			if d.Title == "" && m.GetRole() == "user" {
				d.Title = truncate(m.GetContent(), 60)
			}
			d.Messages = append(d.Messages, sessionMessage{Role: m.GetRole(), Content: m.GetContent(), ToolCallID: m.GetToolCallId()})
		}
		d.Updated = now
		raw, err := json.Marshal(&d)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), raw)
	})
}

// History returns a session's messages.
func (s *Sessions) History(_ context.Context, id string) ([]*agentv1.HistoryMessage, error) {
	var out []*agentv1.HistoryMessage
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketSessions).Get([]byte(id))
		if raw == nil {
			return ErrNoSession
		}
		var d sessionDoc
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		for _, m := range d.Messages {
			out = append(out, &agentv1.HistoryMessage{Role: m.Role, Content: m.Content, ToolCallId: m.ToolCallID})
		}
		return nil
	})
	return out, err
}

// List returns every session, most recently updated last.
func (s *Sessions) List(context.Context) ([]*agentv1.SessionInfo, error) {
	var out []*agentv1.SessionInfo
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			var d sessionDoc
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			out = append(out, &agentv1.SessionInfo{SessionId: string(k), Title: d.Title, CreatedUnix: d.Created,
				UpdatedUnix: d.Updated, Messages: int64(len(d.Messages))})
			return nil
		})
	})
	return out, err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
