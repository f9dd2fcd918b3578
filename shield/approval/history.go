package approval

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The history: listing it a page at a time over the created-order index, and pruning resolved
// requests past the retention.

// List returns every approval kept (or the pending ones), oldest first. It reads them all:
// services page with ListPage.
func (s *Service) List(pendingOnly bool) ([]*Approval, error) {
	var out []*Approval
	o := ListOptions{PendingOnly: pendingOnly, Limit: MaxPageSize}
	for {
		page, next, err := s.ListPage(o)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		o.After = next
	}
}

// ErrBadPageToken is returned for a page token that List did not issue.
var ErrBadPageToken = errors.New("approval: invalid page token")

// MaxPageSize bounds ListOptions.Limit.
const MaxPageSize = 500

// ListOptions selects a page of List.
type ListOptions struct {
	// PendingOnly leaves out resolved requests.
	PendingOnly bool
	// After is the NextToken of the previous page ("" for the first).
	After string
	// Limit is the page size: default 50, at most MaxPageSize.
	Limit int
	// MaxBytes bounds the stored bytes a page reads (requests with large arguments end a page
	// early; at least one request per page). Default MaxPageBytes.
	MaxBytes int
}

// MaxPageBytes is the default ListOptions.MaxBytes.
const MaxPageBytes = 4 << 20

// Cursor is the page token that continues a listing after a.
func Cursor(a *Approval) string {
	return base64.RawURLEncoding.EncodeToString(createdKey(a.Created, a.ID))
}

// ListPage returns one page of requests, oldest first, and the token of the next page ("" on
// the last). It reads only the requests it returns.
func (s *Service) ListPage(o ListOptions) (page []*Approval, next string, err error) {
	if o.Limit <= 0 {
		o.Limit = 50
	}
	o.Limit = min(o.Limit, MaxPageSize)
	if o.MaxBytes <= 0 {
		o.MaxBytes = MaxPageBytes
	}
	var after []byte
	if o.After != "" {
		after, err = base64.RawURLEncoding.DecodeString(o.After)
		if err != nil || len(after) <= 8 || len(after) > 8+64 {
			return nil, "", ErrBadPageToken
		}
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(byCreatedBucket).Cursor()
		k, v := c.First()
		if after != nil {
			k, v = c.Seek(after)
			if k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		read := 0
		for ; k != nil; k, v = c.Next() {
			if o.PendingOnly && State(v) != Pending {
				continue
			}
			if len(k) <= 8 {
				return fmt.Errorf("corrupt index key %q", k)
			}
			id := k[8:]
			if len(page) == o.Limit || (len(page) > 0 && read+len(tx.Bucket(bucket).Get(id)) > o.MaxBytes) {
				next = Cursor(page[len(page)-1])
				return nil
			}
			read += len(tx.Bucket(bucket).Get(id))
			a, err := get(tx, string(id))
			if err != nil {
				return err
			}
			page = append(page, a)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return page, next, nil
}

// maxPrune bounds the requests one prune removes (one transaction); the next round goes on.
const maxPrune = 1000

// prune removes resolved requests (denied, used, expired) resolved more than the retention
// ago, oldest first, and reports how many.
func (s *Service) prune() (int, error) {
	if s.cfg.Retention < 0 {
		return 0, nil
	}
	cutoff := s.now().Add(-s.cfg.Retention)
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(byCreatedBucket).Cursor()
		var gone []*Approval
		for k, v := c.First(); k != nil && len(gone) < maxPrune; k, v = c.Next() {
			if len(k) <= 8 {
				return fmt.Errorf("corrupt index key %q", k)
			}
			// Created precedes the resolution: nothing created after the cutoff qualifies.
			if int64(binary.BigEndian.Uint64(k)) > cutoff.UnixNano() {
				break
			}
			if st := State(v); st != Denied && st != Used && st != Expired && st != Revoked {
				continue
			}
			a, err := get(tx, string(k[8:]))
			if err != nil {
				return err
			}
			at := a.ResolvedAt
			if at.IsZero() {
				at = a.Created
			}
			if at.After(cutoff) {
				continue
			}
			gone = append(gone, a)
		}
		// Deleting while iterating would move the cursor: remove afterwards.
		for _, a := range gone {
			if err := remove(tx, a); err != nil {
				return err
			}
		}
		n = len(gone)
		if n == 0 {
			return errReadOnly
		}
		return nil
	})
	if err != nil && !errors.Is(err, errReadOnly) {
		return 0, err
	}
	if n > 0 {
		s.notify()
	}
	return n, nil
}
