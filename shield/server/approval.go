package server

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/approval"
)

// ApprovalStore is what the approval API (gRPC and HTTP) needs of tier 3's store of requests and
// grants. approval.Service, over a bbolt file, is the one implementation today; a fleet of
// appliances sharing one store in a database implements the same methods. The store owns its
// lifecycle (opened and closed by the composition root) and is safe for concurrent use.
type ApprovalStore interface {
	// Get returns request id, or an error wrapping approval.ErrNotFound.
	Get(id string) (*approval.Approval, error)
	// ListPage returns one page of requests, newest first, and the token of the next page.
	ListPage(o approval.ListOptions) ([]*approval.Approval, string, error)
	// ResolveGrant approves or denies pending request id as resolver (grant > 0: a scoped grant).
	ResolveGrant(ctx context.Context, id string, approve bool, comment, resolver string, grant time.Duration) (*approval.Approval, error)
	// Revoke ends an approved request or grant.
	Revoke(ctx context.Context, id, comment, revoker string) (*approval.Approval, error)
	// Await waits until request id is no longer pending or ctx ends.
	Await(ctx context.Context, id string) (*approval.Approval, error)
	// Watch calls fn with every request as it is created or changes, until ctx ends or fn fails.
	Watch(ctx context.Context, fn func(*approval.Approval) error) error
}

var _ ApprovalStore = (*approval.Service)(nil)

// ApprovalService implements shieldv1.ApprovalServiceServer on an ApprovalStore.
type ApprovalService struct {
	shieldv1.UnimplementedApprovalServiceServer
	s ApprovalStore
	// identity returns the authenticated caller of a request ("" when unknown).
	identity func(context.Context) string
	// roles returns the caller's roles (Roles: those the auth interceptor found).
	roles func(context.Context) []string
}

var _ shieldv1.ApprovalServiceServer = (*ApprovalService)(nil)

// NewApprovalService returns the adapter; identity names the resolver of Resolve calls and the
// requester of Get and AwaitDecision calls.
func NewApprovalService(s ApprovalStore, identity func(context.Context) string) *ApprovalService {
	return &ApprovalService{s: s, identity: identity, roles: Roles}
}

// visible reports whether the caller may see request x: approvers and admins see every
// request, anyone else only its own (the identity that asked). An invisible request is
// NOT_FOUND, as an unknown id is, so that ids are no oracle.
func (a *ApprovalService) visible(ctx context.Context, x *approval.Approval) bool {
	if a.roles != nil {
		for _, r := range a.roles(ctx) {
			if r == RoleApprover || r == RoleAdmin {
				return true
			}
		}
	}
	who := ""
	if a.identity != nil {
		who = a.identity(ctx)
	}
	return who != "" && who == x.Caller
}

// errNotVisible is what a caller who may not see a request gets: the same as for no request.
var errNotVisible = status.Error(codes.NotFound, approval.ErrNotFound.Error())

// Bounds of list views: every response but Get carries at most previewBytes of arguments, and
// a ListPending page holds about maxPageBytes (at least one request).
const (
	previewBytes = 1024
	maxPageBytes = 1 << 20
)

// argumentsPreview cuts args to about n bytes (at a UTF-8 boundary) and appends a marker.
func argumentsPreview(args string, n int) (string, bool) {
	if len(args) <= n {
		return args, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(args[cut]) {
		cut--
	}
	return args[:cut] + fmt.Sprintf("…[truncated: %d of %d bytes; Get shows them all]", cut, len(args)), true
}

// approvalPreview is the list view of a request: arguments cut to a preview.
func approvalPreview(a *approval.Approval) *shieldv1.Approval {
	p := approvalToProto(a)
	p.ArgumentsJson, p.ArgumentsTruncated = argumentsPreview(p.ArgumentsJson, previewBytes)
	return p
}

// approvalToProto is the full view of a request (Get).
func approvalToProto(a *approval.Approval) *shieldv1.Approval {
	p := &shieldv1.Approval{
		Id: a.ID, State: string(a.State), ActionHash: a.ActionHash, Tool: a.Tool, ActionClass: a.ActionClass,
		ArgumentsJson: string(a.Arguments), ArgumentsBytes: int64(len(a.Arguments)), ArgsHash: a.ArgsHash, Redacted: a.Redacted,
		SessionId: a.SessionID, AgentId: a.AgentID, Caller: a.Caller,
		Rules: a.Rules, Reason: a.Reason, Created: timestamppb.New(a.Created), Expires: timestamppb.New(a.Expires),
		Approvers: a.Approvers, Resolver: a.Resolver, Comment: a.Comment, NeedApprovers: int32(a.NeedApprovers),
		CallId: a.CallID, Cwd: a.Cwd, Labels: a.Labels, Runtime: a.Runtime,
	}
	if !a.ResolvedAt.IsZero() {
		p.ResolvedAt = timestamppb.New(a.ResolvedAt)
	}
	if !a.GrantUntil.IsZero() {
		p.GrantUntil = timestamppb.New(a.GrantUntil)
	}
	return p
}

// ListPending implements shieldv1.ApprovalServiceServer: one page, bounded in count and bytes.
func (a *ApprovalService) ListPending(ctx context.Context, req *shieldv1.ListPendingApprovalsRequest) (*shieldv1.ListPendingApprovalsResponse, error) {
	n := int(req.GetPageSize())
	if n < 0 || n > approval.MaxPageSize {
		return nil, status.Errorf(codes.InvalidArgument, "page_size must be in [0, %d]", approval.MaxPageSize)
	}
	as, next, err := a.s.ListPage(approval.ListOptions{PendingOnly: !req.GetIncludeResolved(), After: req.GetPageToken(), Limit: n})
	if err != nil {
		return nil, Status(err)
	}
	out := &shieldv1.ListPendingApprovalsResponse{}
	size := 0
	for i, x := range as {
		p := approvalPreview(x)
		if size += proto.Size(p); size > maxPageBytes && i > 0 {
			// The page is full: the next one starts after the last request sent.
			next = approval.Cursor(as[i-1])
			break
		}
		out.Approvals = append(out.Approvals, p)
	}
	out.NextPageToken = next
	return out, nil
}

// Get implements shieldv1.ApprovalServiceServer.
func (a *ApprovalService) Get(ctx context.Context, req *shieldv1.GetApprovalRequest) (*shieldv1.Approval, error) {
	x, err := a.s.Get(req.GetId())
	if err != nil {
		return nil, Status(err)
	}
	if !a.visible(ctx, x) {
		return nil, errNotVisible
	}
	return approvalToProto(x), nil
}

// Resolve implements shieldv1.ApprovalServiceServer.
func (a *ApprovalService) Resolve(ctx context.Context, req *shieldv1.ResolveApprovalRequest) (*shieldv1.Approval, error) {
	who := ""
	if a.identity != nil {
		who = a.identity(ctx)
	}
	if who == "" {
		return nil, status.Error(codes.Unauthenticated, "resolving an approval needs an authenticated identity")
	}
	if len(req.GetComment()) > 4096 {
		return nil, status.Error(codes.InvalidArgument, "comment longer than 4096 bytes")
	}
	g := req.GetGrantSeconds()
	if g < 0 || g > int64(approval.MaxGrant/time.Second) {
		return nil, status.Errorf(codes.InvalidArgument, "grant_seconds must be in [0, %d]", int64(approval.MaxGrant/time.Second))
	}
	if g > 0 && !req.GetApprove() {
		return nil, status.Error(codes.InvalidArgument, "grant_seconds only applies to an approval")
	}
	if req.GetId() == "" {
		return nil, status.Error(codes.InvalidArgument, "id is required")
	}
	x, err := a.s.ResolveGrant(ctx, req.GetId(), req.GetApprove(), req.GetComment(), who, time.Duration(g)*time.Second)
	if err != nil {
		return nil, Status(err)
	}
	return approvalPreview(x), nil
}

// Watch implements shieldv1.ApprovalServiceServer.
func (a *ApprovalService) Watch(_ *shieldv1.WatchApprovalsRequest, st shieldv1.ApprovalService_WatchServer) error {
	return Status(a.s.Watch(st.Context(), func(x *approval.Approval) error { return st.Send(approvalPreview(x)) }))
}

// AwaitDecision implements shieldv1.ApprovalServiceServer.
func (a *ApprovalService) AwaitDecision(ctx context.Context, req *shieldv1.AwaitDecisionRequest) (*shieldv1.Approval, error) {
	// Visibility first: a caller who may not see the request does not learn that it exists
	// (nor, by waiting, when it is decided).
	x, err := a.s.Get(req.GetId())
	if err != nil {
		return nil, Status(err)
	}
	if !a.visible(ctx, x) {
		return nil, errNotVisible
	}
	x, err = a.s.Await(ctx, req.GetId())
	if err != nil {
		return nil, Status(err)
	}
	return approvalPreview(x), nil
}

// Revoke implements shieldv1.ApprovalServiceServer: withdraw an approval not yet used up.
func (a *ApprovalService) Revoke(ctx context.Context, req *shieldv1.RevokeApprovalRequest) (*shieldv1.Approval, error) {
	who := ""
	if a.identity != nil {
		who = a.identity(ctx)
	}
	if who == "" {
		return nil, status.Error(codes.Unauthenticated, "revoking an approval needs an authenticated identity")
	}
	if req.GetId() == "" {
		return nil, status.Error(codes.InvalidArgument, "id is required")
	}
	if len(req.GetComment()) > 4096 {
		return nil, status.Error(codes.InvalidArgument, "comment longer than 4096 bytes")
	}
	x, err := a.s.Revoke(ctx, req.GetId(), req.GetComment(), who)
	if err != nil {
		return nil, Status(err)
	}
	return approvalPreview(x), nil
}
