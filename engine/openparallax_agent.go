package engine

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// opAgent serves openparallax.v1 AgentService: an agent speaking the seed's protocol runs as
// the engine's agent, under the same token check, canary comparison and gate as an agent.v1
// one.
type opAgent struct {
	opv1.UnimplementedAgentServiceServer
	e *Engine
}

func (o *opAgent) RunSession(stream opv1.AgentService_RunSessionServer) error {
	return o.e.RunSession(&opAgentStream{ServerStream: stream, s: stream, e: o.e})
}

// opAgentStream is a seed agent's stream as the engine's agent.v1 stream.
type opAgentStream struct {
	grpc.ServerStream
	s     opv1.AgentService_RunSessionServer
	e     *Engine
	ready bool
}

// splitAgentID separates the seed agent's "name:token" agent id.
func splitAgentID(r *opv1.AgentReady) (name, token string) {
	if r.GetToken() != "" {
		return r.GetAgentId(), r.GetToken()
	}
	if i := strings.LastIndexByte(r.GetAgentId(), ':'); i >= 0 {
		return r.GetAgentId()[:i], r.GetAgentId()[i+1:]
	}
	return r.GetAgentId(), ""
}

func (s *opAgentStream) Recv() (*agentv1.AgentEvent, error) {
	ev, err := s.s.Recv()
	if err != nil {
		return nil, err
	}
	out := fromSeedEvent(ev)
	if r := out.GetAgentReady(); r != nil && !s.ready {
		s.ready = true
		// The seed's agent waits for its initial tools before it reads directives; only a holder
		// of the expected token gets them (the engine then checks the token again).
		s.e.mu.Lock()
		want := s.e.token
		s.e.mu.Unlock()
		if want != nil && subtle.ConstantTimeCompare([]byte(r.GetToken()), want) == 1 {
			if err := s.s.Send(&opv1.EngineDirective{Directive: &opv1.EngineDirective_InitialToolDefs{
				InitialToolDefs: &opv1.InitialToolDefs{Tools: toolDefs(s.e.cfg.Tools.Definitions())}}}); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// fromSeedEvent translates a seed agent's event to the engine's; an event of no known kind
// becomes an empty event (ignored by the engine, refused as a first event).
func fromSeedEvent(ev *opv1.AgentEvent) *agentv1.AgentEvent {
	out := &agentv1.AgentEvent{}
	switch x := ev.GetEvent().(type) {
	case *opv1.AgentEvent_Ready:
		name, tok := splitAgentID(x.Ready)
		out.Event = &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: name, Token: tok, SandboxCanaryJson: x.Ready.GetSandboxCanaryJson()}}
	case *opv1.AgentEvent_LlmTokenEmitted:
		out.Event = &agentv1.AgentEvent_LlmToken{LlmToken: &agentv1.LLMToken{Token: x.LlmTokenEmitted.GetText(), MessageId: x.LlmTokenEmitted.GetMessageId()}}
	case *opv1.AgentEvent_ToolProposal:
		p := x.ToolProposal
		out.Event = &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{CallId: p.GetCallId(), ToolName: p.GetToolName(), ArgumentsJson: p.GetArgumentsJson()}}
	case *opv1.AgentEvent_ToolDefsRequest:
		out.Event = &agentv1.AgentEvent_ToolDefsRequest{ToolDefsRequest: &agentv1.ToolDefsRequest{Groups: x.ToolDefsRequest.GetGroups()}}
	case *opv1.AgentEvent_MemoryFlush:
		out.Event = &agentv1.AgentEvent_MemoryFlush{MemoryFlush: &agentv1.MemoryFlush{Content: x.MemoryFlush.GetContent()}}
	case *opv1.AgentEvent_ResponseComplete:
		rc := x.ResponseComplete
		var th []string
		for _, t := range rc.GetThoughts() {
			th = append(th, t.GetStage()+": "+t.GetSummary())
		}
		out.Event = &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{Content: rc.GetContent(), Thoughts: strings.Join(th, "\n"),
			TokenUsage: &agentv1.TokenUsage{InputTokens: int64(rc.GetUsage().GetInputTokens()), OutputTokens: int64(rc.GetUsage().GetOutputTokens())}}}
	case *opv1.AgentEvent_AgentError:
		out.Event = &agentv1.AgentEvent_Error{Error: &agentv1.AgentError{Code: x.AgentError.GetCode(), Message: x.AgentError.GetMessage()}}
	}
	return out
}

func (s *opAgentStream) Send(d *agentv1.EngineDirective) error { return s.s.Send(toSeedDirective(d)) }

// toSeedDirective translates an engine directive to the seed's.
func toSeedDirective(d *agentv1.EngineDirective) *opv1.EngineDirective {
	switch x := d.GetDirective().(type) {
	case *agentv1.EngineDirective_ProcessRequest:
		p := x.ProcessRequest
		mode := opv1.SessionMode_NORMAL
		if p.GetMode() == agentv1.SessionMode_SESSION_MODE_OTR {
			mode = opv1.SessionMode_OTR
		}
		var hist []*opv1.ChatMessage
		for _, m := range p.GetHistory() {
			hist = append(hist, &opv1.ChatMessage{SessionId: p.GetSessionId(), Role: m.GetRole(), Content: m.GetContent(), ToolCallId: m.GetToolCallId()})
		}
		return &opv1.EngineDirective{Directive: &opv1.EngineDirective_Process{Process: &opv1.ProcessRequest{SessionId: p.GetSessionId(),
			MessageId: p.GetMessageId(), Content: p.GetContent(), Mode: mode, Source: "shield", History: hist, Tools: toolDefs(p.GetTools())}}}
	case *agentv1.EngineDirective_ToolResult:
		r := x.ToolResult
		return &opv1.EngineDirective{Directive: &opv1.EngineDirective_ToolResult{ToolResult: &opv1.ToolResultDelivery{CallId: r.GetCallId(), Content: r.GetContent(), IsError: r.GetIsError()}}}
	case *agentv1.EngineDirective_ToolDefs:
		var defs []json.RawMessage
		_ = json.Unmarshal([]byte(x.ToolDefs.GetContent()), &defs)
		var ss []string
		for _, d := range defs {
			ss = append(ss, string(d))
		}
		return &opv1.EngineDirective{Directive: &opv1.EngineDirective_ToolDefs{ToolDefs: &opv1.ToolDefsDelivery{Tools: toolDefs(ss)}}}
	case *agentv1.EngineDirective_Shutdown:
		return &opv1.EngineDirective{Directive: &opv1.EngineDirective_Shutdown{Shutdown: &opv1.ShutdownDirective{Reason: x.Shutdown.GetReason()}}}
	}
	return &opv1.EngineDirective{}
}

// toolDefs translates the engine's tool definitions (one JSON Schema document each) to the
// seed's; a definition that is not valid UTF-8 JSON with a name is left out.
func toolDefs(defs []string) []*opv1.ToolDef {
	var out []*opv1.ToolDef
	for _, d := range defs {
		var x struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if !utf8.ValidString(d) || json.Unmarshal([]byte(d), &x) != nil || x.Name == "" {
			continue
		}
		out = append(out, &opv1.ToolDef{Name: x.Name, Description: x.Description, ParametersJson: string(x.Parameters)})
	}
	return out
}

// ---- SubAgentService

// opSubAgents serves openparallax.v1 SubAgentService: the seed's sub-agent calls unary methods
// (register with its token, execute a tool, complete or fail); each registered sub-agent is
// run as an engine sub-agent stream, so its calls pass the same gate (reduced tools, held
// escalations with their approval id) as an agent.v1 sub-agent's.
type opSubAgents struct {
	opv1.UnimplementedSubAgentServiceServer
	e    *Engine
	mu   sync.Mutex
	live map[string]*subConn // by name
}

func newOpSubAgents(e *Engine) *opSubAgents { return &opSubAgents{e: e, live: map[string]*subConn{}} }

// subConn is a registered seed sub-agent as the engine's sub-agent stream.
type subConn struct {
	grpc.ServerStream
	ctx    context.Context
	cancel context.CancelFunc
	events chan *agentv1.AgentEvent      // to the engine
	dirs   chan *agentv1.EngineDirective // from the engine
	callMu sync.Mutex                    // one tool call at a time
}

func (c *subConn) Context() context.Context { return c.ctx }

func (c *subConn) Recv() (*agentv1.AgentEvent, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-c.ctx.Done():
		return nil, io.EOF
	}
}

func (c *subConn) Send(d *agentv1.EngineDirective) error {
	if d.GetShutdown() != nil {
		c.cancel()
		return nil
	}
	select {
	case c.dirs <- d:
		return nil
	case <-c.ctx.Done():
		return io.EOF
	}
}

// push hands the engine an event of the sub-agent.
func (c *subConn) push(ctx context.Context, ev *agentv1.AgentEvent) error {
	select {
	case c.events <- ev:
		return nil
	case <-c.ctx.Done():
		return status.Error(codes.FailedPrecondition, "the sub-agent's task is over")
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}

// RegisterSubAgent checks the token (issued by the engine for one create_agent call, single
// use) and returns the task and the sub-agent's tools. Model settings are not handed out: the
// engine's sub-agents get theirs from their own command line.
func (o *opSubAgents) RegisterSubAgent(ctx context.Context, req *opv1.SubAgentRegisterRequest) (*opv1.SubAgentRegisterResponse, error) {
	name := "sub-" + randomID()
	cctx, cancel := context.WithCancel(context.Background())
	c := &subConn{ctx: cctx, cancel: cancel, events: make(chan *agentv1.AgentEvent, 4), dirs: make(chan *agentv1.EngineDirective, 4)}
	c.events <- &agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: name, Token: req.GetToken()}}}
	ended := make(chan error, 1)
	go func() {
		err := o.e.RunSubAgent(c)
		cancel()
		o.mu.Lock()
		delete(o.live, name)
		o.mu.Unlock()
		ended <- err
	}()
	select {
	case d := <-c.dirs:
		p := d.GetProcessRequest()
		if p == nil {
			cancel()
			return nil, status.Error(codes.Internal, "the engine did not hand the sub-agent a task")
		}
		o.mu.Lock()
		o.live[name] = c
		o.mu.Unlock()
		resp := &opv1.SubAgentRegisterResponse{Name: name, Task: p.GetContent(), MaxLlmCalls: MaxToolRounds}
		for _, t := range toolDefs(p.GetTools()) {
			resp.Tools = append(resp.Tools, &opv1.SubAgentToolDef{Name: t.GetName(), Description: t.GetDescription(), ParametersJson: t.GetParametersJson()})
		}
		return resp, nil
	case err := <-ended:
		if err == nil {
			err = status.Error(codes.PermissionDenied, "sub-agent refused")
		}
		return nil, err
	case <-ctx.Done():
		cancel()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

func (o *opSubAgents) conn(name string) (*subConn, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.live[name]
	if c == nil {
		return nil, status.Error(codes.NotFound, "no such sub-agent (unregistered, or its task is over)")
	}
	return c, nil
}

// SubAgentExecuteTool gates and runs one tool call of the sub-agent and returns its result.
func (o *opSubAgents) SubAgentExecuteTool(ctx context.Context, req *opv1.SubAgentToolRequest) (*opv1.SubAgentToolResponse, error) {
	c, err := o.conn(req.GetName())
	if err != nil {
		return nil, err
	}
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if err := c.push(ctx, &agentv1.AgentEvent{Event: &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{
		CallId: req.GetCallId(), ToolName: req.GetToolName(), ArgumentsJson: req.GetArgumentsJson()}}}); err != nil {
		return nil, err
	}
	for {
		select {
		case d := <-c.dirs:
			if r := d.GetToolResult(); r != nil && r.GetCallId() == req.GetCallId() {
				return &opv1.SubAgentToolResponse{Content: r.GetContent(), IsError: r.GetIsError()}, nil
			}
		case <-c.ctx.Done():
			return nil, status.Error(codes.FailedPrecondition, "the sub-agent's task is over")
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// SubAgentComplete hands the engine the sub-agent's answer.
func (o *opSubAgents) SubAgentComplete(ctx context.Context, req *opv1.SubAgentCompleteRequest) (*opv1.SubAgentCompleteResponse, error) {
	c, err := o.conn(req.GetName())
	if err != nil {
		return nil, err
	}
	if err := c.push(ctx, &agentv1.AgentEvent{Event: &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{Content: req.GetResult()}}}); err != nil {
		return nil, err
	}
	return &opv1.SubAgentCompleteResponse{}, nil
}

// SubAgentFailed tells the engine the sub-agent gave up.
func (o *opSubAgents) SubAgentFailed(ctx context.Context, req *opv1.SubAgentFailedRequest) (*opv1.SubAgentFailedResponse, error) {
	c, err := o.conn(req.GetName())
	if err != nil {
		return nil, err
	}
	if err := c.push(ctx, &agentv1.AgentEvent{Event: &agentv1.AgentEvent_Error{Error: &agentv1.AgentError{Code: "SUB_AGENT_FAILED", Message: req.GetError()}}}); err != nil {
		return nil, err
	}
	return &opv1.SubAgentFailedResponse{}, nil
}

// SubAgentPollMessage: the engine sends sub-agents no follow-up messages.
func (o *opSubAgents) SubAgentPollMessage(ctx context.Context, req *opv1.SubAgentPollRequest) (*opv1.SubAgentPollResponse, error) {
	if _, err := o.conn(req.GetName()); err != nil {
		return nil, err
	}
	return &opv1.SubAgentPollResponse{}, nil
}
