package approval

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Revoke withdraws an approved request before it is used up: a single-use approval not yet
// consumed, or a scoped grant (up to MaxGrant) still running. The request becomes Revoked; the
// next identical call in that session asks again (a new pending request). Any approver may
// revoke, including the one who approved; the requester may not (it would only hurt itself, but
// a requester is no approver of its own requests in any direction). The revocation is audited
// before it takes effect, as a resolution is: if the audit log refuses it, nothing changes.
func (s *Service) Revoke(ctx context.Context, id, comment, revoker string) (*Approval, error) {
	if revoker == "" {
		return nil, errors.New("approval: revoker identity is required")
	}
	var out *Approval
	err := s.db.Update(func(tx *bolt.Tx) error {
		a, err := get(tx, id)
		if err != nil {
			return err
		}
		if a.State != Approved {
			return fmt.Errorf("%w (it is %s)", ErrNotGranted, a.State)
		}
		if !s.now().Before(a.useBy()) {
			return fmt.Errorf("%w (its grant already ran out)", ErrNotGranted)
		}
		if revoker == a.Caller || revoker == "session:"+a.SessionID || (a.AgentID != "" && revoker == "agent:"+a.AgentID) {
			return ErrSelfApproval
		}
		a.State, a.Resolver, a.Comment, a.ResolvedAt = Revoked, revoker, comment, s.now()
		out = a
		if err := put(tx, a); err != nil {
			return err
		}
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
