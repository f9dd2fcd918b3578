package approval

import (
	"bytes"
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/shieldsec/shield/shield"
)

var _ shield.ApprovalState = (*Tier)(nil)

// HasApprovals implements shield.ApprovalState: whether any request — pending, approved,
// denied, used or expired — exists for the call's action hash in its session. The pipeline then
// evaluates the call in full instead of answering from its verdict cache. It reads one index
// prefix; a false positive (a session id sharing the prefix) only costs a full evaluation.
func (t *Tier) HasApprovals(ctx context.Context, in *shield.Input) (bool, error) {
	if in == nil || in.Call == nil || in.ActionHash == "" {
		return false, errors.New("approval: call without an action hash")
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	prefix := callPrefix(in.ActionHash, in.Call.Context.SessionID)
	var found bool
	err := t.s.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(byCallBucket).Cursor().Seek(prefix)
		found = k != nil && bytes.HasPrefix(k, prefix)
		return nil
	})
	return found, err
}
