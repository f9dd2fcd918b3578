package engine

import (
	"context"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// OpenParallaxOptions configures the openparallax.v1 services of an engine.
type OpenParallaxOptions struct {
	// Model is reported by GetStatus.
	Model string
	// OnShutdown, when set, is what a client's Shutdown call does (it should end the engine
	// gracefully). Nil: Shutdown is refused with PERMISSION_DENIED (a hosted engine is stopped by
	// the appliance's operator, not by a chat client).
	OnShutdown func()
}

// OpenParallax serves the OpenParallax protocol (package openparallax.v1, seed 000) on an
// engine, next to agent.v1: ClientService here, AgentService and SubAgentService in
// openparallax_agent.go. It translates to the engine's own turns, sessions and approvals; the
// engine's behaviour (every call decided by the ShieldService, held escalations) is the same
// whichever protocol a client speaks.
type OpenParallax struct {
	opv1.UnimplementedClientServiceServer
	e   *Engine
	opt OpenParallaxOptions
}

var _ opv1.ClientServiceServer = (*OpenParallax)(nil)

// NewOpenParallax returns the openparallax.v1 ClientService of e. It also publishes e's log
// records to clients watching every session, so call it before e serves.
func NewOpenParallax(e *Engine, opt OpenParallaxOptions) *OpenParallax {
	e.cfg.Log = slog.New(&logTee{next: e.cfg.Log.Handler(), w: &e.watch})
	return &OpenParallax{e: e, opt: opt}
}

// RegisterOpenParallax registers the openparallax.v1 services of e: ClientService on clients
// (the listener CLI and UI clients reach, behind the same authentication as agent.v1's), and
// AgentService and SubAgentService on agents (the listener only confined agents reach).
func RegisterOpenParallax(clients, agents grpc.ServiceRegistrar, e *Engine, opt OpenParallaxOptions) *OpenParallax {
	o := NewOpenParallax(e, opt)
	opv1.RegisterClientServiceServer(clients, o)
	if agents != nil {
		opv1.RegisterAgentServiceServer(agents, &opAgent{e: e})
		opv1.RegisterSubAgentServiceServer(agents, newOpSubAgents(e))
	}
	return o
}

// opStream is the engine's client stream as an openparallax.v1 SendMessage stream.
type opStream struct {
	grpc.ServerStream
	out  opv1.ClientService_SendMessageServer
	sent atomic.Bool
}

func (s *opStream) Send(ev *agentv1.PipelineEvent) error {
	s.sent.Store(true)
	return s.out.Send(toOpenParallax(ev))
}

// SendMessage runs one message through the engine's agent and streams its events as seed
// PipelineEvents. A message the engine refuses before the turn starts (no agent connected, an
// unknown session) gets one ERROR event with a pipeline_error, then the gRPC status.
func (o *OpenParallax) SendMessage(req *opv1.ClientMessageRequest, out opv1.ClientService_SendMessageServer) error {
	mode := agentv1.SessionMode_SESSION_MODE_NORMAL
	if req.GetMode() == opv1.SessionMode_OTR {
		mode = agentv1.SessionMode_SESSION_MODE_OTR
	}
	s := &opStream{ServerStream: out, out: out}
	err := o.e.SendMessage(&agentv1.SendMessageRequest{SessionId: req.GetSessionId(), Content: req.GetContent(), Mode: mode}, s)
	if err != nil && !s.sent.Load() {
		code, recoverable := statusCode(status.Code(err))
		_ = out.Send(&opv1.PipelineEvent{SessionId: req.GetSessionId(), EventType: opv1.PipelineEventType_ERROR,
			TimestampUnixMs: time.Now().UnixMilli(), Seq: 1,
			PipelineError: &opv1.PipelineError{Code: code, Message: status.Convert(err).Message(), Recoverable: recoverable}})
	}
	return err
}

// statusCode names a refusal of the engine before a turn started, and whether trying again may
// succeed.
func statusCode(c codes.Code) (string, bool) {
	switch c {
	case codes.Unavailable:
		return "AGENT_UNAVAILABLE", true
	case codes.NotFound:
		return "SESSION_NOT_FOUND", false
	case codes.InvalidArgument:
		return "INVALID_REQUEST", false
	case codes.Canceled, codes.DeadlineExceeded:
		return "CANCELLED", true
	default:
		return "PIPELINE_ERROR", true
	}
}

// ResolveApproval approves or denies a held call (as the engine's client, through the
// appliance's ApprovalService). An unknown or already resolved id is an error, not an ack.
func (o *OpenParallax) ResolveApproval(ctx context.Context, req *opv1.ApprovalResponse) (*opv1.ApprovalAck, error) {
	if req.GetApprovalId() == "" {
		return nil, status.Error(codes.InvalidArgument, "approval_id is empty")
	}
	r, err := o.e.ResolveApproval(ctx, &agentv1.ResolveApprovalRequest{ActionId: req.GetApprovalId(), Approve: req.GetApproved(), Comment: req.GetComment()})
	if err != nil {
		return nil, err
	}
	return &opv1.ApprovalAck{Received: true, State: r.GetState()}, nil
}

// GetStatus reports the engine. shield_connected is true: the engine has no other way to decide
// than its ShieldService, and an unreachable one refuses every call. shield_max_tier and
// actions_today are not tracked (0).
func (o *OpenParallax) GetStatus(ctx context.Context, _ *opv1.StatusRequest) (*opv1.StatusResponse, error) {
	o.e.mu.Lock()
	a := o.e.agent
	o.e.mu.Unlock()
	resp := &opv1.StatusResponse{Model: o.opt.Model, ShieldConnected: true, UptimeSeconds: int64(time.Since(o.e.start).Seconds()),
		AgentConnected: a != nil, Workspace: o.e.cfg.Tools.Workspace()}
	if a != nil {
		resp.AgentName = a.id
	}
	if infos, err := o.e.cfg.Sessions.List(ctx); err == nil {
		resp.SessionCount = int32(len(infos))
	}
	return resp, nil
}

// maxPage bounds ListSessions and GetHistory answers.
const maxPage = 1000

// ListSessions lists persisted sessions, most recently updated first, paged by limit (default
// and at most 1000) and offset.
func (o *OpenParallax) ListSessions(ctx context.Context, req *opv1.ListSessionsRequest) (*opv1.ListSessionsResponse, error) {
	if req.GetLimit() < 0 || req.GetOffset() < 0 {
		return nil, status.Error(codes.InvalidArgument, "limit and offset must not be negative")
	}
	infos, err := o.e.cfg.Sessions.List(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "list sessions: %v", err)
	}
	sort.SliceStable(infos, func(i, j int) bool { return infos[i].GetUpdatedUnix() > infos[j].GetUpdatedUnix() })
	limit := int(req.GetLimit())
	if limit == 0 || limit > maxPage {
		limit = maxPage
	}
	off := min(int(req.GetOffset()), len(infos))
	infos = infos[off:min(off+limit, len(infos))]
	out := &opv1.ListSessionsResponse{}
	for _, s := range infos {
		out.Sessions = append(out.Sessions, &opv1.SessionInfo{Id: s.GetSessionId(), Title: s.GetTitle(), Mode: opv1.SessionMode_NORMAL,
			CreatedAt: s.GetCreatedUnix(), UpdatedAt: s.GetUpdatedUnix(), MessageCount: int32(min(s.GetMessages(), 1<<31-1))})
	}
	return out, nil
}

// GetHistory returns a session's messages (the last limit ones when limit > 0). Messages carry
// no timestamp: the session store keeps none per message.
func (o *OpenParallax) GetHistory(ctx context.Context, req *opv1.GetHistoryRequest) (*opv1.GetHistoryResponse, error) {
	if req.GetLimit() < 0 {
		return nil, status.Error(codes.InvalidArgument, "limit must not be negative")
	}
	h, err := o.e.cfg.Sessions.History(ctx, req.GetSessionId())
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "session %q: %v", req.GetSessionId(), err)
	}
	first := 0
	if l := int(req.GetLimit()); l > 0 && l < len(h) {
		first = len(h) - l
	}
	out := &opv1.GetHistoryResponse{}
	for i := first; i < len(h); i++ {
		m := h[i]
		out.Messages = append(out.Messages, &opv1.ChatMessage{Id: req.GetSessionId() + ":" + strconv.Itoa(i), SessionId: req.GetSessionId(),
			Role: m.GetRole(), Content: m.GetContent(), ToolCallId: m.GetToolCallId()})
	}
	return out, nil
}

// Shutdown ends the engine gracefully when the engine was given OnShutdown; otherwise it is
// refused.
func (o *OpenParallax) Shutdown(ctx context.Context, _ *opv1.ShutdownRequest) (*opv1.ShutdownResponse, error) {
	if o.opt.OnShutdown == nil {
		return nil, status.Error(codes.PermissionDenied, "this engine is stopped by the appliance's operator, not by its clients")
	}
	o.e.Shutdown("shutdown requested by a client")
	o.opt.OnShutdown()
	return &opv1.ShutdownResponse{Clean: true}, nil
}

// WatchSession streams the events of one session (every session, and log entries, when
// session_id is empty) until the client leaves. A watcher that falls behind by more than 256
// events is dropped with RESOURCE_EXHAUSTED; it never slows the turn it watches. At most 64
// clients watch an engine at once.
func (o *OpenParallax) WatchSession(req *opv1.WatchSessionRequest, out opv1.ClientService_WatchSessionServer) error {
	w := o.e.watch.add(req.GetSessionId())
	if w == nil {
		return status.Errorf(codes.ResourceExhausted, "%d clients already watch this engine", maxWatchers)
	}
	defer o.e.watch.remove(w)
	// Tell the client it is subscribed (headers), so it can send its message without a race.
	if err := out.SendHeader(nil); err != nil {
		return err
	}
	for {
		select {
		case ev := <-w.ch:
			if err := out.Send(ev); err != nil {
				return err
			}
		case <-w.behind:
			return status.Error(codes.ResourceExhausted, "the watcher fell behind and was dropped")
		case <-out.Context().Done():
			return nil
		}
	}
}

// ---- event translation

// toOpenParallax translates one engine event to the seed's PipelineEvent.
func toOpenParallax(ev *agentv1.PipelineEvent) *opv1.PipelineEvent {
	x := &opv1.PipelineEvent{SessionId: ev.GetSessionId(), MessageId: ev.GetMessageId(), TimestampUnixMs: ev.GetTimeUnixMs(),
		Seq: ev.GetSeq(), CallId: ev.GetCallId(), ToolName: ev.GetToolName()}
	at := actionType(ev.GetToolName())
	switch ev.GetType() {
	case agentv1.PipelineEvent_LLM_TOKEN:
		x.EventType, x.LlmToken = opv1.PipelineEventType_LLM_TOKEN, &opv1.LLMToken{Text: ev.GetText()}
	case agentv1.PipelineEvent_ACTION_STARTED:
		x.EventType = opv1.PipelineEventType_ACTION_STARTED
		x.ActionStarted = &opv1.ActionStarted{ActionType: at, Summary: summary(ev.GetToolName() + ": " + ev.GetText()), ArgumentsJson: ev.GetText()}
	case agentv1.PipelineEvent_SHIELD_VERDICT:
		x.EventType = opv1.PipelineEventType_SHIELD_VERDICT
		x.ShieldVerdict = &opv1.ShieldVerdict{Decision: verdictDecision(ev.GetDecision()), Tier: ev.GetTier(), Confidence: ev.GetConfidence(),
			Reasoning: ev.GetReason(), ActionType: at, Rules: ev.GetRules(), ApprovalId: ev.GetActionId()}
	case agentv1.PipelineEvent_ACTION_COMPLETED:
		x.EventType = opv1.PipelineEventType_ACTION_COMPLETED
		x.ActionCompleted = &opv1.ActionCompleted{ActionType: at, Success: !ev.GetIsError(), Summary: summary(ev.GetText()), Output: ev.GetText()}
	case agentv1.PipelineEvent_RESPONSE_COMPLETE:
		x.EventType, x.ResponseComplete = opv1.PipelineEventType_RESPONSE_COMPLETE, &opv1.ResponseComplete{Content: ev.GetText()}
	case agentv1.PipelineEvent_OTR_BLOCKED:
		x.EventType, x.OtrBlocked = opv1.PipelineEventType_OTR_BLOCKED, &opv1.OTRBlocked{ActionType: at, Reason: ev.GetReason()}
	case agentv1.PipelineEvent_ERROR:
		x.EventType = opv1.PipelineEventType_ERROR
		x.PipelineError = &opv1.PipelineError{Code: ev.GetCode(), Message: ev.GetText(), Recoverable: ev.GetRecoverable()}
		if x.PipelineError.Code == "" {
			x.PipelineError.Code = "PIPELINE_ERROR"
		}
	case agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED:
		x.EventType = opv1.PipelineEventType_APPROVAL_NEEDED
		var at0 int64
		if ev.GetTimeUnixMs() > 0 {
			at0 = ev.GetTimeUnixMs()/1000 + ev.GetTimeoutSeconds()
		}
		x.ApprovalNeeded = &opv1.ApprovalNeeded{ApprovalId: ev.GetActionId(),
			Action:           &opv1.ActionRequest{RequestId: ev.GetCallId(), Type: at, ToolName: ev.GetToolName()},
			ShieldAssessment: &opv1.Verdict{Decision: opv1.VerdictDecision_ESCALATE, Tier: 3, Reasoning: ev.GetReason()},
			ContextSummary:   ev.GetReason(), TimeoutAt: at0, TimeoutSeconds: ev.GetTimeoutSeconds()}
	case agentv1.PipelineEvent_LOG_ENTRY:
		x.EventType, x.LogEntry = opv1.PipelineEventType_LOG_ENTRY, &opv1.LogEntry{Message: ev.GetText(), TimestampUnixMs: ev.GetTimeUnixMs()}
	case agentv1.PipelineEvent_SUB_AGENT_SPAWNED, agentv1.PipelineEvent_SUB_AGENT_PROGRESS, agentv1.PipelineEvent_SUB_AGENT_COMPLETED,
		agentv1.PipelineEvent_SUB_AGENT_FAILED, agentv1.PipelineEvent_SUB_AGENT_CANCELLED:
		x.EventType = subAgentTypes[ev.GetType()]
		x.SubAgent = &opv1.SubAgentEvent{Name: ev.GetCallId(), Text: ev.GetText()}
	}
	return x
}

var subAgentTypes = map[agentv1.PipelineEvent_Type]opv1.PipelineEventType{
	agentv1.PipelineEvent_SUB_AGENT_SPAWNED:   opv1.PipelineEventType_SUB_AGENT_SPAWNED,
	agentv1.PipelineEvent_SUB_AGENT_PROGRESS:  opv1.PipelineEventType_SUB_AGENT_PROGRESS,
	agentv1.PipelineEvent_SUB_AGENT_COMPLETED: opv1.PipelineEventType_SUB_AGENT_COMPLETED,
	agentv1.PipelineEvent_SUB_AGENT_FAILED:    opv1.PipelineEventType_SUB_AGENT_FAILED,
	agentv1.PipelineEvent_SUB_AGENT_CANCELLED: opv1.PipelineEventType_SUB_AGENT_CANCELLED,
}

// actionType is the seed's action type of a tool: the engine's tool names are the seed's
// action names in lower case (read_file → READ_FILE); other tools are unspecified.
func actionType(tool string) opv1.ActionType {
	if tool == "" || len(tool) > 64 {
		return opv1.ActionType_ACTION_TYPE_UNSPECIFIED
	}
	return opv1.ActionType(opv1.ActionType_value[strings.ToUpper(tool)])
}

func verdictDecision(d string) opv1.VerdictDecision {
	switch d {
	case "ALLOW":
		return opv1.VerdictDecision_ALLOW
	case "ESCALATE":
		return opv1.VerdictDecision_ESCALATE
	default:
		return opv1.VerdictDecision_BLOCK
	}
}

// summaryLen bounds the summaries of action events (the whole text rides in Shield's fields).
const summaryLen = 200

// summary is the first line of s, at most summaryLen bytes, cut on a rune boundary.
func summary(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) <= summaryLen {
		return s
	}
	n := summaryLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
