package approval

import (
	"context"

	"github.com/shieldsec/shield/audit"
)

// Event is an approval event the Service records. It is not a string, so that a misspelt event
// cannot compile; Type is the audit record type it is written as.
type Event uint8

// Approval events.
const (
	// EventRequested: a call was held for approval (payload: the pending Approval).
	EventRequested Event = iota + 1
	// EventResolved: an approval was approved, denied, expired or revoked (payload: the
	// resolved Approval).
	EventResolved
)

// Type returns the audit record type of e.
func (e Event) Type() audit.Type {
	switch e {
	case EventRequested:
		return audit.TypeApprovalRequested
	case EventResolved:
		return audit.TypeApprovalResolved
	}
	return ""
}

func (e Event) String() string { return string(e.Type()) }

// Recorder writes approval events to the audit trail, each as a record of type ev.Type() with
// the Approval as its payload. An error fails the operation that produced the event.
type Recorder interface {
	Record(ctx context.Context, ev Event, a *Approval) error
}
