// Package engine is the privileged process that runs agents for Shield: it accepts one sandboxed
// agent on AgentService (after checking its token and canary report), serves clients on
// ClientService, asks the appliance's ShieldService about every tool call the agent proposes (see
// Shield: in process or over the appliance's socket, never a pipeline of its own), holds an
// escalated call until a human decides, and runs only what was allowed, with workspace-confined
// executors.
//
// engine imports sandbox, engine/exec and the generated protocols; only cmd/shield/appliance
// wires it.
package engine

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// MaxToolRounds bounds the tool calls of one response.
const MaxToolRounds = 25

// Config configures an Engine.
type Config struct {
	// Shield decides every call (required).
	Shield   Shield
	Tools    *Tools
	Sessions SessionStore // required
	Recorder Recorder     // nil: nothing recorded beyond the appliance's decisions
	// ApprovalTimeout bounds how long an escalated call is held for a human decision (reported
	// to clients with each tier-3 request). Default 15 minutes.
	ApprovalTimeout time.Duration
	// SpawnSubAgent starts sub-agents for create_agent calls (nil: the tool is not offered).
	SpawnSubAgent SubAgentSpawner
	// SubAgentTimeout bounds one sub-agent task. Default 5 minutes.
	SubAgentTimeout time.Duration
	Log             *slog.Logger
	// TurnTimeout bounds one client message (model turns and tool calls). Default 10 minutes.
	TurnTimeout time.Duration
	// DrainTimeout bounds how long a turn that ended early (client gone, timeout) waits for the
	// agent to finish its request, its tool calls refused; past it the agent's connection is
	// dropped and the supervisor restarts the agent. Default 2 minutes.
	DrainTimeout time.Duration
}

// Engine serves AgentService and ClientService.
type Engine struct {
	agentv1.UnimplementedAgentServiceServer
	agentv1.UnimplementedClientServiceServer
	agentv1.UnimplementedSubAgentServiceServer

	cfg Config

	mu      sync.Mutex
	token   []byte // expected token of the next agent; nil: none expected
	canary  string // canary report JSON the supervisor produced for that agent
	agent   *agentConn
	agentCh chan struct{} // closed and replaced when an agent connects

	turn chan struct{}              // one client message at a time (a semaphore a waiting client can leave)
	subs map[string]chan *agentConn // sub-agent tokens issued and not yet used

	watch watchers // clients watching sessions (openparallax.v1 WatchSession)
	start time.Time
}

// agentConn is a connected, authenticated agent.
type agentConn struct {
	id     string
	stream agentv1.AgentService_RunSessionServer
	events chan *agentv1.AgentEvent
	done   chan struct{}
	sendMu sync.Mutex
	// abort, once closed, ends the agent's stream (the agent process then exits and is restarted).
	abort     chan struct{}
	abortOnce sync.Once
}

// drop ends the agent's stream.
func (a *agentConn) drop() { a.abortOnce.Do(func() { close(a.abort) }) }

func (a *agentConn) send(d *agentv1.EngineDirective) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	return a.stream.Send(d)
}

var (
	_ agentv1.AgentServiceServer    = (*Engine)(nil)
	_ agentv1.ClientServiceServer   = (*Engine)(nil)
	_ agentv1.SubAgentServiceServer = (*Engine)(nil)
)

// New returns an engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Shield == nil || cfg.Tools == nil || cfg.Sessions == nil {
		return nil, errors.New("engine: shield, tools and sessions are required")
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = 15 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 10 * time.Minute
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 2 * time.Minute
	}
	return &Engine{cfg: cfg, agentCh: make(chan struct{}), turn: make(chan struct{}, 1), start: time.Now()}, nil
}

// NewToken returns a fresh 128-bit agent token (hex) and makes it the one the next agent must
// present, with the canary report the supervisor accepted for it.
func (e *Engine) NewToken(canaryJSON string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	e.mu.Lock()
	e.token = []byte(tok)
	e.canary = canaryJSON
	e.mu.Unlock()
	return tok, nil
}

// WaitAgent blocks until an agent is connected or ctx ends.
func (e *Engine) WaitAgent(ctx context.Context) error {
	for {
		e.mu.Lock()
		ok, ch := e.agent != nil, e.agentCh
		e.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// RunSession is the agent's stream. Its first event must be agent_ready with the expected token;
// anything else closes the stream with PERMISSION_DENIED before any other event is read.
func (e *Engine) RunSession(stream agentv1.AgentService_RunSessionServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	ready := first.GetAgentReady()
	e.mu.Lock()
	want, canary := e.token, e.canary
	ok := ready != nil && want != nil && subtle.ConstantTimeCompare([]byte(ready.GetToken()), want) == 1
	if ok {
		e.token = nil // single use
	}
	busy := ok && e.agent != nil
	e.mu.Unlock()
	ctx := stream.Context()
	if !ok {
		e.record(ctx, EventAgentRefused, map[string]any{"reason": "bad or missing token", "agent_id": ready.GetAgentId()})
		e.cfg.Log.Warn("agent refused: bad or missing token")
		return status.Error(codes.PermissionDenied, "agent_ready with a valid token must come first")
	}
	if busy {
		return status.Error(codes.FailedPrecondition, "an agent is already connected")
	}
	if canary != "" && ready.GetSandboxCanaryJson() != canary {
		e.record(ctx, EventAgentRefused, map[string]any{"reason": "canary report differs from the supervisor's", "agent_id": ready.GetAgentId()})
		return status.Error(codes.PermissionDenied, "canary report does not match the supervisor's")
	}
	a := &agentConn{id: ready.GetAgentId(), stream: stream, events: make(chan *agentv1.AgentEvent, 64), done: make(chan struct{}),
		abort: make(chan struct{})}
	e.mu.Lock()
	e.agent = a
	close(e.agentCh)
	e.agentCh = make(chan struct{})
	e.mu.Unlock()
	e.record(ctx, EventAgentReady, map[string]any{"agent_id": a.id})
	e.cfg.Log.Info("agent connected", "agent_id", a.id)
	defer func() {
		e.mu.Lock()
		if e.agent == a {
			e.agent = nil
		}
		e.mu.Unlock()
		close(a.done)
		e.cfg.Log.Info("agent disconnected", "agent_id", a.id)
	}()
	pumped := make(chan struct{})
	go func() { a.pump(ctx); close(pumped) }()
	select {
	case <-pumped:
		return nil
	case <-a.abort:
		e.record(ctx, EventAgentDropped, map[string]any{"agent_id": a.id, "reason": "did not finish a cancelled turn"})
		return status.Error(codes.Aborted, "the engine dropped the agent: it did not finish a cancelled turn")
	}
}

// pump moves the agent's events to a.events until the stream or ctx ends.
func (a *agentConn) pump(ctx context.Context) {
	for {
		ev, err := a.stream.Recv()
		if err != nil {
			return
		}
		select {
		case a.events <- ev:
		case <-ctx.Done():
			return
		}
	}
}

func (e *Engine) record(ctx context.Context, ev Event, payload any) {
	if e.cfg.Recorder == nil {
		return
	}
	if err := e.cfg.Recorder.Record(ctx, ev, payload); err != nil {
		e.cfg.Log.Error("audit record failed", "event", ev.Name(), "error", err.Error())
	}
}

// Shutdown asks the connected agent to stop.
func (e *Engine) Shutdown(reason string) {
	e.mu.Lock()
	a := e.agent
	e.mu.Unlock()
	if a != nil {
		_ = a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_Shutdown{Shutdown: &agentv1.Shutdown{Reason: reason}}})
	}
}

// SendMessage runs one user message through the agent and streams what happens.
func (e *Engine) SendMessage(req *agentv1.SendMessageRequest, out agentv1.ClientService_SendMessageServer) error {
	if req.GetContent() == "" {
		return status.Error(codes.InvalidArgument, "content is empty")
	}
	select {
	case e.turn <- struct{}{}:
	case <-out.Context().Done():
		return status.FromContextError(out.Context().Err()).Err()
	}
	defer func() { <-e.turn }()
	e.mu.Lock()
	a := e.agent
	e.mu.Unlock()
	if a == nil {
		return status.Error(codes.Unavailable, "no agent is connected")
	}
	ctx, cancel := context.WithTimeout(out.Context(), e.cfg.TurnTimeout)
	defer cancel()
	cs := newClientStream(out, cancel)
	defer cs.close(5 * time.Second)
	otr := req.GetMode() == agentv1.SessionMode_SESSION_MODE_OTR
	sid := req.GetSessionId()
	var history []*agentv1.HistoryMessage
	if sid == "" {
		sid = randomID()
	} else if !otr {
		h, err := e.cfg.Sessions.History(ctx, sid)
		if err != nil {
			return status.Errorf(codes.NotFound, "session %s: %v", sid, err)
		}
		history = h
	}
	t := &turn{e: e, a: a, out: cs, sid: sid, mid: randomID(), otr: otr}
	mode := agentv1.SessionMode_SESSION_MODE_NORMAL
	if otr {
		mode = agentv1.SessionMode_SESSION_MODE_OTR
	}
	tools := e.cfg.Tools.Definitions()
	if e.cfg.SpawnSubAgent != nil {
		tools = append(tools, createAgentDef)
	}
	if err := a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ProcessRequest{ProcessRequest: &agentv1.ProcessRequest{
		SessionId: sid, MessageId: t.mid, Content: req.GetContent(), Mode: mode, History: history, Tools: tools,
	}}}); err != nil {
		return status.Errorf(codes.Unavailable, "send to agent: %v", err)
	}
	t.busy = true
	reply, err := t.run(ctx)
	if err != nil {
		_ = t.emit(errorEvent(err))
		if t.busy {
			// The turn ended while the agent still works on it (the client went away, the turn
			// timed out): answer it until it finishes, so the next turn finds it idle.
			t.drain(err)
		}
		return nil
	}
	if !otr {
		msgs := []*agentv1.HistoryMessage{{Role: "user", Content: req.GetContent()}, {Role: "assistant", Content: reply}}
		if err := e.cfg.Sessions.Append(context.WithoutCancel(ctx), sid, msgs...); err != nil {
			e.cfg.Log.Error("persist session", "session", sid, "error", err.Error())
		}
	}
	return nil
}

// turn is one client message in flight.
type turn struct {
	e      *Engine
	a      *agentConn
	out    *clientStream
	sid    string
	mid    string
	otr    bool
	seq    int64
	rounds int
	// busy: the agent is working on this turn's request (until response_complete, error or
	// disconnect); pending: the call id the agent awaits a tool_result for ("" none).
	busy    bool
	pending string
}

// drain answers the agent after its turn ended early (cause): the call it awaits and every
// further call get a refusal and run nothing, until it completes or fails the request. If it does
// not within DrainTimeout, its connection is dropped, and the supervisor starts a fresh agent.
func (t *turn) drain(cause error) {
	refusal := "refused: the turn was cancelled (" + cause.Error() + "); nothing was run"
	timer := time.NewTimer(t.e.cfg.DrainTimeout)
	defer timer.Stop()
	if t.pending != "" {
		if err := t.replyTo(t.pending, refusal); err != nil {
			t.a.drop()
			return
		}
	}
	for {
		select {
		case ev := <-t.a.events:
			switch x := ev.GetEvent().(type) {
			case *agentv1.AgentEvent_ToolCall:
				if err := t.replyTo(x.ToolCall.GetCallId(), refusal); err != nil {
					t.a.drop()
					return
				}
			case *agentv1.AgentEvent_ToolDefsRequest:
				defs, _ := json.Marshal(t.e.cfg.Tools.Definitions())
				_ = t.a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolDefs{ToolDefs: &agentv1.ToolDefs{Content: string(defs)}}})
			case *agentv1.AgentEvent_ResponseComplete, *agentv1.AgentEvent_Error:
				return
			}
		case <-t.a.done:
			return
		case <-timer.C:
			t.e.cfg.Log.Warn("agent did not finish a cancelled turn; dropping it", "agent_id", t.a.id, "cause", cause.Error())
			t.a.drop()
			return
		}
	}
}

// replyTo sends the agent a refusal as the result of call id.
func (t *turn) replyTo(id, content string) error {
	err := t.a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolResult{ToolResult: &agentv1.ToolResult{
		CallId: id, Content: content, IsError: true}}})
	if err == nil && t.pending == id {
		t.pending = ""
	}
	return err
}

func (t *turn) emit(ev *agentv1.PipelineEvent) error {
	t.seq++
	ev.Seq = t.seq
	ev.SessionId, ev.MessageId, ev.TimeUnixMs = t.sid, t.mid, time.Now().UnixMilli()
	t.e.watch.publish(ev)
	return t.out.send(ev)
}

// run relays agent events until the response completes.
func (t *turn) run(ctx context.Context) (string, error) {
	for {
		var ev *agentv1.AgentEvent
		select {
		case ev = <-t.a.events:
		case <-t.a.done:
			t.busy = false
			return "", errAgentGone
		case <-ctx.Done():
			return "", fmt.Errorf("turn ended: %w", ctx.Err())
		}
		switch x := ev.GetEvent().(type) {
		case *agentv1.AgentEvent_LlmToken:
			if err := t.emit(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, Text: x.LlmToken.GetToken()}); err != nil {
				return "", err
			}
		case *agentv1.AgentEvent_ToolCall:
			if err := t.toolCall(ctx, x.ToolCall); err != nil {
				return "", err
			}
		case *agentv1.AgentEvent_ToolDefsRequest:
			defs, _ := json.Marshal(t.e.cfg.Tools.Definitions())
			if err := t.a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolDefs{ToolDefs: &agentv1.ToolDefs{Content: string(defs)}}}); err != nil {
				return "", err
			}
		case *agentv1.AgentEvent_ResponseComplete:
			rc := x.ResponseComplete
			t.busy = false
			if err := t.emit(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_RESPONSE_COMPLETE, Text: rc.GetContent()}); err != nil {
				return "", err
			}
			return rc.GetContent(), nil
		case *agentv1.AgentEvent_Error:
			t.busy = false
			return "", &agentError{code: x.Error.GetCode(), msg: x.Error.GetMessage()}
		case *agentv1.AgentEvent_MemoryFlush:
			// Memory writes are not persisted by this engine.
		case *agentv1.AgentEvent_AgentReady:
			return "", errors.New("agent sent agent_ready twice")
		}
	}
}

// toolCall gates one call through the pipeline, runs it if allowed, and answers the agent.
func (t *turn) toolCall(ctx context.Context, tc *agentv1.ToolCallEvent) error {
	t.rounds++
	t.pending = tc.GetCallId()
	reply := func(content string, isErr bool) error {
		err := t.a.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolResult{ToolResult: &agentv1.ToolResult{
			CallId: tc.GetCallId(), Content: content, IsError: isErr}}})
		if err == nil {
			t.pending = ""
		}
		return err
	}
	base := &agentv1.PipelineEvent{CallId: tc.GetCallId(), ToolName: tc.GetToolName()}
	ev := func(typ agentv1.PipelineEvent_Type, mod func(*agentv1.PipelineEvent)) error {
		e := &agentv1.PipelineEvent{Type: typ, CallId: base.CallId, ToolName: base.ToolName}
		if mod != nil {
			mod(e)
		}
		return t.emit(e)
	}
	if t.rounds > MaxToolRounds {
		return reply(fmt.Sprintf("refused: more than %d tool calls in one response", MaxToolRounds), true)
	}
	if err := ev(agentv1.PipelineEvent_ACTION_STARTED, func(e *agentv1.PipelineEvent) { e.Text = tc.GetArgumentsJson() }); err != nil {
		return err
	}
	r, err := t.e.gate(ctx, gateCall{callID: tc.GetCallId(), tool: tc.GetToolName(), args: tc.GetArgumentsJson(),
		session: t.sid, agent: t.a.id, runtime: "shield-engine"},
		func(r gateResult) error {
			return ev(agentv1.PipelineEvent_SHIELD_VERDICT, func(e *agentv1.PipelineEvent) {
				e.Decision, e.Reason, e.Rules, e.ActionId = r.decision, r.reason, r.rules, r.approvalID
				e.Tier, e.Confidence = r.tier, r.confidence
			})
		},
		func(id string, timeout time.Duration) error {
			return ev(agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED, func(e *agentv1.PipelineEvent) {
				e.ActionId, e.Decision, e.TimeoutSeconds = id, "ESCALATE", int64(timeout.Seconds())
				e.Reason = "held until a human approves or denies it (shield approvals approve " + id + ")"
			})
		})
	if err != nil {
		return err
	}
	if !r.allowed {
		return reply(refusal(r), true)
	}
	if t.otr && t.e.cfg.Tools.Writes(tc.GetToolName()) {
		if err := ev(agentv1.PipelineEvent_OTR_BLOCKED, func(e *agentv1.PipelineEvent) { e.Reason = "off-the-record sessions cannot write" }); err != nil {
			return err
		}
		return reply("refused: this is an off-the-record session; writes are not allowed", true)
	}
	var outText string
	var isErr bool
	if tc.GetToolName() == "create_agent" {
		outText, isErr = t.runSubAgent(ctx, tc.GetCallId(), tc.GetArgumentsJson())
	} else {
		outText, isErr = t.e.cfg.Tools.Run(ctx, tc.GetToolName(), tc.GetArgumentsJson())
	}
	if err := ev(agentv1.PipelineEvent_ACTION_COMPLETED, func(e *agentv1.PipelineEvent) { e.Text, e.IsError = outText, isErr }); err != nil {
		return err
	}
	return reply(outText, isErr)
}

// ResolveApproval approves or denies a tier-3 request on behalf of the engine's client (who is
// not the agent that asked), through the appliance's ApprovalService: the held call then runs, or
// the agent gets the refusal.
func (e *Engine) ResolveApproval(ctx context.Context, req *agentv1.ResolveApprovalRequest) (*agentv1.ResolveApprovalResponse, error) {
	a, err := e.cfg.Shield.Resolve(ctx, &shieldv1.ResolveApprovalRequest{Id: req.GetActionId(), Approve: req.GetApprove(), Comment: req.GetComment()})
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		return nil, status.Error(codes.Internal, "resolve approval failed")
	}
	return &agentv1.ResolveApprovalResponse{State: a.GetState()}, nil
}

// ListSessions lists persisted sessions.
func (e *Engine) ListSessions(ctx context.Context, _ *agentv1.ListSessionsRequest) (*agentv1.ListSessionsResponse, error) {
	infos, err := e.cfg.Sessions.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err) // INTERNAL, the detail logged (server.Status)
	}
	return &agentv1.ListSessionsResponse{Sessions: infos}, nil
}

// GetHistory returns a session's messages.
func (e *Engine) GetHistory(ctx context.Context, req *agentv1.GetHistoryRequest) (*agentv1.GetHistoryResponse, error) {
	h, err := e.cfg.Sessions.History(ctx, req.GetSessionId())
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "session %q: %v", req.GetSessionId(), err)
	}
	return &agentv1.GetHistoryResponse{Messages: h}, nil
}

// createAgentDef offers sub-agents to the main agent (read-only tools, no recursion).
const createAgentDef = `{"name":"create_agent","description":"Delegate a read-only research task to a sub-agent (it may read and list files only). Returns its answer.","parameters":{"type":"object","properties":{"task":{"type":"string","description":"what the sub-agent should find out"}},"required":["task"],"additionalProperties":false}}`

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
