package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

// gRPC methods that HTTP-only routes are authorised as. They sit under the services' prefixes in
// methodRoles: Effects needs the approver role, Verify the auditor role.
const (
	httpMethodEffects = "/shield.v1.ApprovalService/Effects"
	httpMethodVerify  = "/shield.v1.AuditService/Verify"
	httpMethodWhoAmI  = "/shield.v1.ShieldService/WhoAmI"
)

// apiRoutes is the route table. Every route names the gRPC method it stands for; see
// TestHTTPRoutesMatchProto.
func (h *HTTP) apiRoutes() []route {
	rs := []route{
		{pattern: "POST /v1/evaluate", method: shieldv1.ShieldService_Evaluate_FullMethodName, h: h.evaluate},
		{pattern: "GET /v1/health", method: shieldv1.ShieldService_Health_FullMethodName, h: h.health},
		{pattern: "GET /healthz", method: shieldv1.ShieldService_Health_FullMethodName, h: h.health},
		{pattern: "GET /v1/status", method: shieldv1.ShieldService_GetStatus_FullMethodName, h: h.status},
		{pattern: "GET /v1/whoami", method: httpMethodWhoAmI, anyIdentity: true, h: h.whoami},
		{pattern: "GET /v1/openapi.json", h: h.openapi},
	}
	if h.o.Approvals != nil && h.o.ApprovalStore != nil {
		rs = append(rs,
			route{pattern: "GET /v1/approvals", method: shieldv1.ApprovalService_ListPending_FullMethodName, h: h.approvalsList},
			route{pattern: "GET /v1/approvals/events", method: shieldv1.ApprovalService_Watch_FullMethodName, stream: true, h: h.approvalsEvents},
			route{pattern: "GET /v1/approvals/{id}", method: shieldv1.ApprovalService_Get_FullMethodName, h: h.approvalGet},
			route{pattern: "GET /v1/approvals/{id}/effects", method: httpMethodEffects, h: h.approvalEffects},
			route{pattern: "POST /v1/approvals/{id}/resolve", method: shieldv1.ApprovalService_Resolve_FullMethodName, h: h.approvalResolve},
			route{pattern: "POST /v1/approvals/{id}/revoke", method: shieldv1.ApprovalService_Revoke_FullMethodName, h: h.approvalRevoke},
			route{pattern: "POST /v1/approvals/{id}/await", method: shieldv1.ApprovalService_AwaitDecision_FullMethodName, stream: true, h: h.approvalAwait},
		)
	}
	if h.o.AuditLog != nil {
		a := NewAuditService(h.o.AuditLog).(*AuditService)
		rs = append(rs,
			route{pattern: "GET /v1/audit/records", method: shieldv1.AuditService_Query_FullMethodName, h: h.auditQuery(a)},
			route{pattern: "GET /v1/audit/records/{seq}", method: shieldv1.AuditService_Get_FullMethodName, h: h.auditGet(a)},
			route{pattern: "GET /v1/audit/records/{seq}/proof", method: shieldv1.AuditService_InclusionProof_FullMethodName, h: h.auditProof(a)},
			route{pattern: "GET /v1/audit/consistency", method: shieldv1.AuditService_ConsistencyProof_FullMethodName, h: h.auditConsistency(a)},
			route{pattern: "GET /v1/audit/tail", method: shieldv1.AuditService_Tail_FullMethodName, stream: true, h: h.auditTail},
			route{pattern: "GET /v1/audit/checkpoint", method: shieldv1.AuditService_GetCheckpoint_FullMethodName, h: h.auditCheckpoint(a)},
			route{pattern: "GET /v1/audit/verify", method: httpMethodVerify, h: h.auditVerifyStatus},
			route{pattern: "POST /v1/audit/verify", method: httpMethodVerify, h: h.auditVerifyRun},
		)
	}
	return rs
}

// httpCall is the JSON form of ToolCall: arguments are a JSON object, not a string.
type httpCall struct {
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// httpCallContext is the JSON form of CallContext.
type httpCallContext struct {
	SessionID string            `json:"session_id"`
	AgentID   string            `json:"agent_id"`
	Runtime   string            `json:"runtime"`
	Cwd       string            `json:"cwd"`
	Labels    map[string]string `json:"labels"`
}

// httpEvaluateRequest is the JSON form of EvaluateRequest.
type httpEvaluateRequest struct {
	Call    *httpCall        `json:"call"`
	Context *httpCallContext `json:"context"`
	MaxTier *int32           `json:"max_tier"`
	DryRun  bool             `json:"dry_run"`
}

// DecodeEvaluate decodes the JSON body of POST /v1/evaluate into the proto request. The body is
// already bounded. arguments must be a JSON object; it is passed on as sent (the pipeline
// decodes it under its own limits).
func DecodeEvaluate(body []byte) (*shieldv1.EvaluateRequest, error) {
	var in httpEvaluateRequest
	if err := decodeStrict(body, &in); err != nil {
		return nil, err
	}
	if in.Call == nil {
		return nil, status.Error(codes.InvalidArgument, `call is required: {"call": {"tool": "Bash", "arguments": {"command": "ls"}}}`)
	}
	if in.Call.Tool == "" {
		return nil, status.Error(codes.InvalidArgument, "call.tool is required")
	}
	args := json.RawMessage(strings.TrimSpace(string(in.Call.Arguments)))
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if args[0] != '{' {
		return nil, status.Error(codes.InvalidArgument, "call.arguments must be a JSON object (not a string: the HTTP API takes the arguments themselves)")
	}
	req := &shieldv1.EvaluateRequest{
		Call:    &shieldv1.ToolCall{CallId: in.Call.CallID, Tool: in.Call.Tool, ArgumentsJson: string(args)},
		MaxTier: in.MaxTier,
		DryRun:  in.DryRun,
	}
	if c := in.Context; c != nil {
		req.Context = &shieldv1.CallContext{SessionId: c.SessionID, AgentId: c.AgentID, Runtime: c.Runtime, Cwd: c.Cwd, Labels: c.Labels}
	}
	return req, nil
}

func (h *HTTP) evaluate(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, int64(h.o.MaxArgumentBytes+httpEnvelope))
	if err != nil {
		return err
	}
	req, err := DecodeEvaluate(body)
	if err != nil {
		return err
	}
	resp, err := h.o.Shield.Evaluate(r.Context(), req)
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

func (h *HTTP) health(w http.ResponseWriter, r *http.Request) error {
	resp, err := h.o.Shield.Health(r.Context(), &shieldv1.HealthRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != shieldv1.HealthResponse_SERVING {
		// Probes read the status code: 503 while the service cannot decide.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		b, _ := protoJSON.Marshal(resp)
		_, _ = w.Write(append(b, '\n'))
		return nil
	}
	return writeProto(w, resp)
}

func (h *HTTP) status(w http.ResponseWriter, r *http.Request) error {
	resp, err := h.o.Shield.GetStatus(r.Context(), &shieldv1.GetStatusRequest{})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

func (h *HTTP) whoami(w http.ResponseWriter, r *http.Request) error {
	roles := Roles(r.Context())
	if roles == nil {
		roles = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"identity": Identity(r.Context()), "roles": roles,
		"approvals": h.o.Approvals != nil && h.o.ApprovalStore != nil, "audit": h.o.AuditLog != nil})
	return nil
}

func (h *HTTP) approvalsList(w http.ResponseWriter, r *http.Request) error {
	n, err := queryInt(r, "page_size", 0, approval.MaxPageSize)
	if err != nil {
		return err
	}
	all, err := queryBool(r, "include_resolved")
	if err != nil {
		return err
	}
	resp, err := h.o.Approvals.ListPending(r.Context(), &shieldv1.ListPendingApprovalsRequest{PageSize: int32(n),
		PageToken: r.URL.Query().Get("page_token"), IncludeResolved: all})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

func (h *HTTP) approvalGet(w http.ResponseWriter, r *http.Request) error {
	resp, err := h.o.Approvals.Get(r.Context(), &shieldv1.GetApprovalRequest{Id: r.PathValue("id")})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

// httpResolve is the body of POST /v1/approvals/{id}/resolve.
type httpResolve struct {
	Approve      bool   `json:"approve"`
	Comment      string `json:"comment"`
	GrantSeconds int64  `json:"grant_seconds"`
}

func (h *HTTP) approvalResolve(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, httpMaxBody)
	if err != nil {
		return err
	}
	var in httpResolve
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	resp, err := h.o.Approvals.Resolve(r.Context(), &shieldv1.ResolveApprovalRequest{Id: r.PathValue("id"),
		Approve: in.Approve, Comment: in.Comment, GrantSeconds: in.GrantSeconds})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

// httpRevoke is the body of POST /v1/approvals/{id}/revoke.
type httpRevoke struct {
	Comment string `json:"comment"`
}

func (h *HTTP) approvalRevoke(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, httpMaxBody)
	if err != nil {
		return err
	}
	var in httpRevoke
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	resp, err := h.o.Approvals.Revoke(r.Context(), &shieldv1.RevokeApprovalRequest{Id: r.PathValue("id"), Comment: in.Comment})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

// approvalEffects is what the active bundle's normaliser makes of a request's (redacted)
// arguments: its action class, effects, flows and what it could not resolve. A view for the
// approver; the decision was made on the original arguments.
type approvalEffects struct {
	ID              string             `json:"id"`
	ActionClass     string             `json:"action_class"`
	Command         string             `json:"command,omitempty"`
	Effects         []normalize.Effect `json:"effects"`
	Flows           []normalize.Flow   `json:"flows"`
	Unresolved      []string           `json:"unresolved"`
	UnknownPrograms []string           `json:"unknown_programs"`
	ParseError      string             `json:"parse_error,omitempty"`
	Note            string             `json:"note"`
}

func (h *HTTP) approvalEffects(w http.ResponseWriter, r *http.Request) error {
	x, err := h.o.ApprovalStore.Get(r.PathValue("id"))
	if err != nil {
		return Status(err)
	}
	args, err := normalize.DecodeArguments(x.Arguments, normalize.Limits{MaxBytes: h.o.MaxArgumentBytes})
	if err != nil {
		return status.Errorf(codes.FailedPrecondition, "the request's arguments do not decode: %v", err)
	}
	pol := h.o.Shield.pipeline.Policy()
	if pol == nil || pol.Normalizer == nil {
		return status.Error(codes.Unavailable, "no active bundle")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var a *normalize.Action
	if cn, ok := pol.Normalizer.(shield.ContextNormalizer); ok {
		a = cn.NormalizeContext(ctx, x.Tool, args, x.Cwd)
	} else {
		a = pol.Normalizer.Normalize(x.Tool, args, x.Cwd)
	}
	if a == nil {
		return status.Error(codes.Internal, "normaliser returned no action")
	}
	writeJSON(w, http.StatusOK, approvalEffects{ID: x.ID, ActionClass: a.Class, Command: a.Command, Effects: a.Effects,
		Flows: a.Flows, Unresolved: a.Unresolved, UnknownPrograms: a.UnknownPrograms, ParseError: a.ParseError,
		Note: "computed now by bundle " + pol.Revision + " from the redacted arguments"})
	return nil
}

func (h *HTTP) approvalAwait(w http.ResponseWriter, r *http.Request) error {
	d := time.Minute
	if v := r.URL.Query().Get("timeout"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 || d > httpMaxAwait {
			return status.Errorf(codes.InvalidArgument, "timeout=%q: want a duration in (0, %s], e.g. 30s", v, httpMaxAwait)
		}
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d + httpWriteTimeout))
	ctx, cancel := context.WithTimeout(r.Context(), d)
	defer cancel()
	resp, err := h.o.Approvals.AwaitDecision(ctx, &shieldv1.AwaitDecisionRequest{Id: r.PathValue("id")})
	if err != nil {
		return err
	}
	return writeProto(w, resp)
}

// approvalsEvents streams approvals as server-sent events: every pending request at once, then
// each request when it is created or changes state ("event: approval", data: the Approval in
// JSON, arguments as a preview). A reader that does not take an event within the stream send
// timeout is cut off; a comment line every 15 s keeps proxies from closing an idle stream.
func (h *HTTP) approvalsEvents(w http.ResponseWriter, r *http.Request) error {
	sse := newSSE(w, h.o.StreamSendTimeout)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	events := make(chan []byte, 16)
	go func() {
		defer close(events)
		_ = h.o.ApprovalStore.Watch(ctx, func(x *approval.Approval) error {
			b, err := protoJSON.Marshal(approvalPreview(x))
			if err != nil {
				return err
			}
			select {
			case events <- b:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	send := sse.send
	if err := send(": shield approvals\n\n"); err != nil {
		return nil
	}
	t := time.NewTicker(sseKeepAlive)
	defer t.Stop()
	for {
		select {
		case b, ok := <-events:
			if !ok {
				return nil
			}
			if err := send("event: approval\ndata: " + string(b) + "\n\n"); err != nil {
				return nil // the reader left or fell behind: the stream ends
			}
		case <-t.C:
			if err := send(": keep-alive\n\n"); err != nil {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
	}
}

func (h *HTTP) auditQuery(a *AuditService) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v := r.URL.Query()
		q, err := audit.ParseFilter(audit.FilterArgs{Since: v.Get("since"), Until: v.Get("until"),
			SessionID: v.Get("session_id"), AgentID: v.Get("agent_id"), Tool: v.Get("tool"),
			ActionClass: v.Get("action_class"), Rule: v.Get("rule"), Decision: v.Get("decision"),
			Tier: v.Get("tier"), Types: v["type"]}, time.Now())
		if err != nil {
			return Status(err)
		}
		n, err := queryInt(r, "page_size", 0, auditMaxPage)
		if err != nil {
			return err
		}
		newest, err := queryBool(r, "newest_first")
		if err != nil {
			return err
		}
		if q, err = a.pagedQuery(q, newest, int(n), v.Get("page_token"), v.Get("filter")); err != nil {
			return Status(err)
		}
		resp, err := a.runQuery(r.Context(), q)
		if err != nil {
			return err
		}
		return writeProto(w, resp)
	}
}

func pathSeq(r *http.Request) (uint64, error) {
	v := r.PathValue("seq")
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, status.Errorf(codes.InvalidArgument, "seq %q: want a record sequence number (0, 1, …)", v)
	}
	return n, nil
}

func (h *HTTP) auditGet(a *AuditService) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		seq, err := pathSeq(r)
		if err != nil {
			return err
		}
		resp, err := a.Get(r.Context(), &shieldv1.GetAuditRecordRequest{Seq: seq})
		if err != nil {
			return err
		}
		return writeProto(w, resp)
	}
}

func (h *HTTP) auditProof(a *AuditService) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		seq, err := pathSeq(r)
		if err != nil {
			return err
		}
		size, err := queryInt(r, "tree_size", 0, 1<<62)
		if err != nil {
			return err
		}
		resp, err := a.InclusionProof(r.Context(), &shieldv1.AuditInclusionProofRequest{Seq: seq, TreeSize: uint64(size)})
		if err != nil {
			return err
		}
		return writeProto(w, resp)
	}
}

func (h *HTTP) auditConsistency(a *AuditService) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		oldSize, err := queryInt(r, "old_size", 0, 1<<62)
		if err != nil {
			return err
		}
		newSize, err := queryInt(r, "new_size", 0, 1<<62)
		if err != nil {
			return err
		}
		resp, err := a.ConsistencyProof(r.Context(), &shieldv1.AuditConsistencyProofRequest{OldSize: uint64(oldSize), NewSize: uint64(newSize)})
		if err != nil {
			return err
		}
		return writeProto(w, resp)
	}
}

func (h *HTTP) auditCheckpoint(a *AuditService) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		resp, err := a.GetCheckpoint(r.Context(), &shieldv1.GetAuditCheckpointRequest{})
		if err != nil {
			return err
		}
		return writeProto(w, resp)
	}
}

// sseWriter writes server-sent events, each within the stream send timeout.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	to time.Duration
}

func newSSE(w http.ResponseWriter, to time.Duration) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w), to: to}
}

func (s *sseWriter) send(text string) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.to))
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	return s.rc.Flush()
}

// auditTail streams records as server-sent events as they become durable ("event: record",
// data: the AuditRecord in JSON), from from_seq or, without it, only new ones, as Tail does. Records
// are read a page at a time; a reader that does not take an event in time is cut off.
func (h *HTTP) auditTail(w http.ResponseWriter, r *http.Request) error {
	l := h.o.AuditLog
	next := l.Size()
	if v := r.URL.Query().Get("from_seq"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "from_seq=%q: want a record sequence number", v)
		}
		next = n
	}
	ctx := r.Context()
	sse := newSSE(w, h.o.StreamSendTimeout)
	if err := sse.send(": shield audit tail\n\n"); err != nil {
		return nil
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, sseKeepAlive)
		err := l.Wait(wctx, next)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				if sse.send(": keep-alive\n\n") != nil {
					return nil
				}
				continue
			}
			_ = sse.send("event: error\ndata: " + strconv.Quote(status.Convert(Status(err)).Message()) + "\n\n")
			return nil
		}
		res, err := l.Query(ctx, audit.Query{FromSeq: next, Limit: auditTailPage})
		if err != nil {
			_ = sse.send("event: error\ndata: " + strconv.Quote(status.Convert(Status(err)).Message()) + "\n\n")
			return nil
		}
		for i, rec := range res.Records {
			res.Records[i] = nil
			b, err := protoJSON.Marshal(auditRecordToProto(rec))
			if err != nil {
				return nil
			}
			if sse.send("event: record\ndata: "+string(b)+"\n\n") != nil {
				return nil
			}
			next = rec.Seq + 1
		}
	}
}

// auditVerifyStatus reports the health of the audit log and the last verification run.
func (h *HTTP) auditVerifyStatus(w http.ResponseWriter, r *http.Request) error {
	h.verify.mu.Lock()
	last, running := h.verify.last, h.verify.running
	h.verify.mu.Unlock()
	st := h.o.AuditLog.Status()
	out := map[string]any{"healthy": st.Healthy, "reason": st.Reason, "records": h.o.AuditLog.Size(),
		"running": running, "last": last}
	if _, c, err := h.o.AuditLog.SignedCheckpoint(); err == nil {
		out["checkpoint_size"] = c.Size
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// auditVerifyRun verifies the whole trail now (one run at a time; a second caller gets 409).
// It reads every segment: it is bounded by the query class of the shedder and by the log's size.
func (h *HTTP) auditVerifyRun(w http.ResponseWriter, r *http.Request) error {
	h.verify.mu.Lock()
	if h.verify.running {
		h.verify.mu.Unlock()
		return status.Error(codes.Aborted, "a verification is already running: GET /v1/audit/verify for its result")
	}
	h.verify.running = true
	h.verify.mu.Unlock()
	startSize := h.o.AuditLog.Size()
	res := &VerifyResult{Started: time.Now().UTC(),
		Note: "verified by the appliance with its own key; verify offline (shield audit verify) with a key obtained out of band"}
	rep, err := audit.Verify(h.o.AuditLog.Dir(), h.o.AuditLog.PublicKey())
	// The log is live: a problem at or past the log's size when the run started lies in a batch
	// written during the run (records before their checkpoint). Such a run is repeated once.
	var ve *audit.VerifyError
	if errors.As(err, &ve) && ve.Seq >= startSize {
		rep, err = audit.Verify(h.o.AuditLog.Dir(), h.o.AuditLog.PublicKey())
	}
	res.Finished = time.Now().UTC()
	if rep != nil {
		res.Records, res.Segments, res.Checkpoints = rep.Records, rep.Segments, rep.Checkpoints
		res.CheckpointSize, res.Uncovered, res.Warnings = rep.LastCheckpoint.Size, rep.Uncovered, rep.Warnings
	}
	res.OK = err == nil
	if err != nil {
		if errors.As(err, &ve) {
			res.Error = ve.Error()
		} else {
			res.Error = fmt.Sprintf("verification could not run: %v", err)
		}
	}
	h.verify.mu.Lock()
	h.verify.running, h.verify.last = false, res
	h.verify.mu.Unlock()
	writeJSON(w, http.StatusOK, res)
	return nil
}
