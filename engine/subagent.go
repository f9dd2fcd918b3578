package engine

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// SubAgentSpawner starts a confined sub-agent process that will open SubAgentService.RunSubAgent
// and present token. wait returns when the process has exited.
type SubAgentSpawner func(ctx context.Context, token string) (wait func() error, err error)

// subAgentTools are the tools a sub-agent may use: read-only, and no create_agent (no recursion).
var subAgentTools = map[string]bool{"read_file": true, "list_directory": true}

// RunSubAgent is a sub-agent's stream: agent_ready with a token the engine issued for one
// create_agent call must come first.
func (e *Engine) RunSubAgent(stream agentv1.SubAgentService_RunSubAgentServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	ready := first.GetAgentReady()
	e.mu.Lock()
	var ch chan *agentConn
	for tok, c := range e.subs {
		if ready != nil && subtle.ConstantTimeCompare([]byte(ready.GetToken()), []byte(tok)) == 1 {
			ch = c
			delete(e.subs, tok) // single use
		}
	}
	e.mu.Unlock()
	if ch == nil {
		return status.Error(codes.PermissionDenied, "agent_ready with a valid sub-agent token must come first")
	}
	a := &agentConn{id: ready.GetAgentId(), stream: stream, events: make(chan *agentv1.AgentEvent, 64), done: make(chan struct{})}
	defer close(a.done)
	ch <- a
	a.pump(stream.Context())
	return nil
}

// subAgentDefs are the tool definitions offered to sub-agents.
func (e *Engine) subAgentDefs() []string {
	var out []string
	for _, d := range e.cfg.Tools.Definitions() {
		var x struct{ Name string }
		if json.Unmarshal([]byte(d), &x) == nil && subAgentTools[x.Name] {
			out = append(out, d)
		}
	}
	return out
}

// runSubAgent runs one create_agent call: spawn, hand over the task, gate its tool calls, and
// return its answer. Events reach the client as sub_agent_*.
func (t *turn) runSubAgent(ctx context.Context, callID, argsJSON string) (string, bool) {
	e := t.e
	var args struct {
		Task   string `json:"task"`
		Prompt string `json:"prompt"`
	}
	_ = json.Unmarshal([]byte(argsJSON), &args)
	task := args.Task
	if task == "" {
		task = args.Prompt
	}
	if task == "" {
		return "create_agent needs a task", true
	}
	if e.cfg.SpawnSubAgent == nil {
		return "sub-agents are not available", true
	}
	timeout := e.cfg.SubAgentTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tok := randomID() + randomID()
	ch := make(chan *agentConn, 1)
	e.mu.Lock()
	if e.subs == nil {
		e.subs = map[string]chan *agentConn{}
	}
	e.subs[tok] = ch
	e.mu.Unlock()
	defer func() { e.mu.Lock(); delete(e.subs, tok); e.mu.Unlock() }()
	emit := func(typ agentv1.PipelineEvent_Type, text string, isErr bool) {
		_ = t.emit(&agentv1.PipelineEvent{Type: typ, CallId: callID, ToolName: "create_agent", Text: text, IsError: isErr})
	}
	wait, err := e.cfg.SpawnSubAgent(ctx, tok)
	if err != nil {
		emit(agentv1.PipelineEvent_SUB_AGENT_FAILED, err.Error(), true)
		return "sub-agent failed to start: " + err.Error(), true
	}
	defer func() { _ = wait() }()
	emit(agentv1.PipelineEvent_SUB_AGENT_SPAWNED, task, false)
	var sa *agentConn
	select {
	case sa = <-ch:
	case <-ctx.Done():
		emit(agentv1.PipelineEvent_SUB_AGENT_CANCELLED, "the sub-agent did not connect in time", true)
		return "sub-agent did not connect", true
	}
	defer sa.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_Shutdown{Shutdown: &agentv1.Shutdown{Reason: "task over"}}})
	if err := sa.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ProcessRequest{ProcessRequest: &agentv1.ProcessRequest{
		SessionId: t.sid, MessageId: randomID(), Content: task, Mode: agentv1.SessionMode_SESSION_MODE_NORMAL, Tools: e.subAgentDefs()}}}); err != nil {
		emit(agentv1.PipelineEvent_SUB_AGENT_FAILED, err.Error(), true)
		return "sub-agent: " + err.Error(), true
	}
	rounds := 0
	for {
		var ev *agentv1.AgentEvent
		select {
		case ev = <-sa.events:
		case <-sa.done:
			emit(agentv1.PipelineEvent_SUB_AGENT_FAILED, "the sub-agent disconnected", true)
			return "sub-agent disconnected", true
		case <-ctx.Done():
			emit(agentv1.PipelineEvent_SUB_AGENT_CANCELLED, "timed out", true)
			return fmt.Sprintf("sub-agent timed out after %s", timeout), true
		}
		switch x := ev.GetEvent().(type) {
		case *agentv1.AgentEvent_LlmToken:
			emit(agentv1.PipelineEvent_SUB_AGENT_PROGRESS, x.LlmToken.GetToken(), false)
		case *agentv1.AgentEvent_ToolCall:
			tc := x.ToolCall
			rounds++
			out, isErr := t.subToolCall(ctx, sa, tc, rounds)
			_ = sa.send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolResult{ToolResult: &agentv1.ToolResult{
				CallId: tc.GetCallId(), Content: out, IsError: isErr}}})
		case *agentv1.AgentEvent_ResponseComplete:
			emit(agentv1.PipelineEvent_SUB_AGENT_COMPLETED, x.ResponseComplete.GetContent(), false)
			return x.ResponseComplete.GetContent(), false
		case *agentv1.AgentEvent_Error:
			emit(agentv1.PipelineEvent_SUB_AGENT_FAILED, x.Error.GetMessage(), true)
			return "sub-agent error: " + x.Error.GetMessage(), true
		}
	}
}

// subToolCall gates a sub-agent's call: reduced tools, the same pipeline.
func (t *turn) subToolCall(ctx context.Context, sa *agentConn, tc *agentv1.ToolCallEvent, rounds int) (string, bool) {
	if rounds > MaxToolRounds {
		return fmt.Sprintf("refused: more than %d tool calls", MaxToolRounds), true
	}
	if !subAgentTools[tc.GetToolName()] {
		return fmt.Sprintf("refused: %s is not available to sub-agents", tc.GetToolName()), true
	}
	r, err := t.e.gate(ctx, gateCall{callID: tc.GetCallId(), tool: tc.GetToolName(), args: tc.GetArgumentsJson(),
		session: t.sid, agent: sa.id, runtime: "shield-subagent"},
		func(r gateResult) error {
			return t.emit(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SHIELD_VERDICT, CallId: tc.GetCallId(), ToolName: tc.GetToolName(),
				Decision: r.decision, Reason: r.reason, Rules: r.rules, ActionId: r.approvalID, Tier: r.tier, Confidence: r.confidence})
		},
		func(id string, timeout time.Duration) error {
			// A sub-agent's escalation is announced and held like the agent's, with its id.
			return t.emit(&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED, CallId: tc.GetCallId(),
				ToolName: tc.GetToolName(), ActionId: id, Decision: "ESCALATE", TimeoutSeconds: int64(timeout.Seconds()),
				Reason: "sub-agent " + sa.id + ": held until a human approves or denies it (shield approvals approve " + id + ")"})
		})
	if err != nil || !r.allowed {
		if err != nil {
			r.reason = "the client stream failed: " + err.Error()
		}
		return refusal(r), true
	}
	return t.e.cfg.Tools.Run(ctx, tc.GetToolName(), tc.GetArgumentsJson())
}
