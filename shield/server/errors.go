package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
)

// badRequest is a client mistake found in an adapter: INVALID_ARGUMENT with its message.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

// Status maps an error to the gRPC status a client gets; it is the one mapper of every service
// Shield serves (the appliance's and each hosted engine's, through NewGRPC's interceptor, and the
// HTTP API's, through writeError). A status error (also wrapped) keeps its code and message;
// domain sentinels get their code and a message that names the caller's problem; anything else
// is INTERNAL with a fixed message, never the details (they go to the log and the audit trail).
func Status(err error) error {
	if err == nil {
		return nil
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return se.GRPCStatus().Err()
	}
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		return status.Error(codes.InvalidArgument, bad.msg)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	// audit
	case errors.Is(err, audit.ErrBadFilter):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, audit.ErrNotFound):
		return status.Error(codes.NotFound, "no such audit record")
	case errors.Is(err, audit.ErrClosed):
		return status.Error(codes.Unavailable, "audit log closed")
	// approvals
	case errors.Is(err, approval.ErrNotFound):
		return status.Error(codes.NotFound, approval.ErrNotFound.Error())
	case errors.Is(err, approval.ErrBadPageToken):
		return status.Error(codes.InvalidArgument, approval.ErrBadPageToken.Error())
	case errors.Is(err, approval.ErrNotPending):
		return status.Error(codes.FailedPrecondition, approval.ErrNotPending.Error())
	case errors.Is(err, approval.ErrNotGranted):
		return status.Error(codes.FailedPrecondition, approval.ErrNotGranted.Error())
	case errors.Is(err, approval.ErrSelfApproval):
		return status.Error(codes.PermissionDenied, approval.ErrSelfApproval.Error())
	case errors.Is(err, approval.ErrSameApprover):
		return status.Error(codes.PermissionDenied, approval.ErrSameApprover.Error())
	// decisions
	case errors.Is(err, shield.ErrInvalidCall):
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return status.Error(codes.Internal, "internal error")
}
