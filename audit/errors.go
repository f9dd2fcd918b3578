package audit

import (
	"errors"
	"fmt"
)

// Sentinel errors.
var (
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("audit log closed")
	// ErrUnhealthy wraps the failure that made the log stop accepting records. The log retries
	// in the background and accepts records again once it has re-verified its tail.
	ErrUnhealthy = errors.New("audit log unhealthy")
	// ErrNotFound is returned by Get for a sequence number the log does not hold.
	ErrNotFound = errors.New("audit record not found")
	// ErrInsecureMode is wrapped by the error for a signing key that group or others may read,
	// or a log or state directory that they may write.
	ErrInsecureMode = errors.New("insecure file mode")
)

// VerifyError is the first problem Verify found. Seq is the first sequence number that is
// missing, altered or out of place.
type VerifyError struct {
	Seq    uint64
	File   string // the segment (or checkpoint) file, base name
	Reason string
}

func (e *VerifyError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("seq %d (%s): %s", e.Seq, e.File, e.Reason)
	}
	return fmt.Sprintf("seq %d: %s", e.Seq, e.Reason)
}
