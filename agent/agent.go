// Package agent is the sandboxed agent process: it connects to the engine over the descriptor it
// inherited, proves who it is with its token and canary report, then runs the directive loop
// (one process_request at a time) and, inside it, the reasoning loop: stream a model turn, ask the
// engine to run each tool call the model makes, feed the results back, at most MaxToolRounds.
//
// agent imports sandbox and the generated agent protocol only; it knows nothing of shield.
// cmd/shield (internal-agent) imports it.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shieldsec/shield/agent/llm"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// MaxToolRounds bounds the model turns of one request.
const MaxToolRounds = 25

// SystemPrompt is the agent's standing instruction.
const SystemPrompt = "You are a careful software agent working in the user's workspace. Use the tools to act. " +
	"Every tool call is checked by a security appliance; if a call is refused, explain and choose another way or stop."

// Options configure Run.
type Options struct {
	AgentID    string
	Token      string
	CanaryJSON string
	Provider   llm.Provider
	// Stream is the AgentService.RunSession stream (already opened).
	Stream agentv1.AgentService_RunSessionClient
}

// Run sends agent_ready, then serves directives until shutdown, the stream ends, or ctx ends.
func Run(ctx context.Context, o Options) error {
	if o.Provider == nil || o.Stream == nil {
		return errors.New("agent: provider and stream are required")
	}
	if err := o.Stream.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{
		AgentId: o.AgentID, Token: o.Token, SandboxCanaryJson: o.CanaryJSON}}}); err != nil {
		return fmt.Errorf("agent: send ready: %w", err)
	}
	for {
		d, err := o.Stream.Recv()
		if err != nil {
			return fmt.Errorf("agent: stream closed: %w", err)
		}
		switch x := d.GetDirective().(type) {
		case *agentv1.EngineDirective_Shutdown:
			return nil
		case *agentv1.EngineDirective_ProcessRequest:
			if err := process(ctx, o, x.ProcessRequest); err != nil {
				_ = o.Stream.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_Error{Error: &agentv1.AgentError{Code: "turn_failed", Message: err.Error()}}})
			}
		}
	}
}

// toolDef is one entry of ProcessRequest.tools.
type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// process runs the reasoning loop for one request.
func process(ctx context.Context, o Options, pr *agentv1.ProcessRequest) error {
	var tools []llm.ToolDef
	for _, t := range pr.GetTools() {
		var d toolDef
		if err := json.Unmarshal([]byte(t), &d); err != nil || d.Name == "" {
			return fmt.Errorf("bad tool definition: %.80s", t)
		}
		tools = append(tools, llm.ToolDef{Name: d.Name, Description: d.Description, Parameters: string(d.Parameters)})
	}
	var msgs []llm.Message
	for _, h := range pr.GetHistory() {
		msgs = append(msgs, llm.Message{Role: h.GetRole(), Content: h.GetContent(), ToolCallID: h.GetToolCallId()})
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: pr.GetContent()})
	var usage llm.Usage
	for round := 0; ; round++ {
		resp, err := o.Provider.Stream(ctx, llm.Request{System: SystemPrompt, Messages: msgs, Tools: tools}, func(tok string) {
			_ = o.Stream.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_LlmToken{LlmToken: &agentv1.LLMToken{Token: tok, MessageId: pr.GetMessageId()}}})
		})
		if err != nil {
			return err
		}
		usage.InputTokens += resp.Usage.InputTokens
		usage.OutputTokens += resp.Usage.OutputTokens
		if len(resp.ToolCalls) == 0 || round >= MaxToolRounds {
			return o.Stream.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{
				Content: resp.Text, TokenUsage: &agentv1.TokenUsage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens}}}})
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			if err := o.Stream.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{
				CallId: tc.ID, ToolName: tc.Name, ArgumentsJson: tc.Arguments}}}); err != nil {
				return err
			}
			res, err := awaitResult(o.Stream, tc.ID)
			if err != nil {
				return err
			}
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: tc.ID, Content: res.GetContent()})
		}
	}
}

// awaitResult waits for the tool_result of callID, answering tool_defs on the way.
func awaitResult(st agentv1.AgentService_RunSessionClient, callID string) (*agentv1.ToolResult, error) {
	for {
		d, err := st.Recv()
		if err != nil {
			return nil, err
		}
		switch x := d.GetDirective().(type) {
		case *agentv1.EngineDirective_ToolResult:
			if x.ToolResult.GetCallId() == callID {
				return x.ToolResult, nil
			}
		case *agentv1.EngineDirective_Shutdown:
			return nil, errors.New("shutdown during a tool call")
		}
	}
}
