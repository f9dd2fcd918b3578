package engine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// FuzzOpenParallaxTranslate feeds the openparallax.v1 adapters what an agent or the engine may
// send: a seed agent event (from the agent: untrusted), an engine event and directive, and a
// tool definition. Every translation must neither panic nor produce a message that cannot be
// sent (invalid UTF-8 from a cut summary), and keep the token a seed agent presents.
func FuzzOpenParallaxTranslate(f *testing.F) {
	seeds := []proto.Message{
		&opv1.AgentEvent{Event: &opv1.AgentEvent_Ready{Ready: &opv1.AgentReady{AgentId: "atlas:00ff", SandboxCanaryJson: "{}"}}},
		&opv1.AgentEvent{Event: &opv1.AgentEvent_ToolProposal{ToolProposal: &opv1.ToolCallProposed{CallId: "c", ToolName: "read_file", ArgumentsJson: `{"path":"x"}`}}},
		&opv1.AgentEvent{Event: &opv1.AgentEvent_ResponseComplete{ResponseComplete: &opv1.AgentResponseComplete{Content: "done",
			Thoughts: []*opv1.Thought{{Stage: "reasoning", Summary: "s"}}, Usage: &opv1.TokenUsage{InputTokens: 3}}}},
		&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ACTION_COMPLETED, ToolName: "read_file", Text: strings.Repeat("é", 150) + "\nmore"},
		&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED, ActionId: "apr_1", TimeoutSeconds: 60, TimeUnixMs: 1},
		&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolDefs{ToolDefs: &agentv1.ToolDefs{Content: `[{"name":"a","parameters":{}}]`}}},
	}
	for _, m := range seeds {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte(`{"name":"read_file","description":"d","parameters":{"type":"object"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a opv1.AgentEvent
		if proto.Unmarshal(data, &a) == nil {
			out := fromSeedEvent(&a)
			if _, err := proto.Marshal(out); err != nil {
				t.Fatalf("agent event %v: %v", out, err)
			}
			if r := a.GetReady(); r != nil && r.GetToken() == "" {
				got := out.GetAgentReady()
				if strings.Contains(r.GetAgentId(), ":") && got.GetAgentId()+":"+got.GetToken() != r.GetAgentId() {
					t.Fatalf("agent id %q split into %q and %q", r.GetAgentId(), got.GetAgentId(), got.GetToken())
				}
			}
		}
		var p agentv1.PipelineEvent
		if proto.Unmarshal(data, &p) == nil {
			x := toOpenParallax(&p)
			if _, err := proto.Marshal(x); err != nil {
				t.Fatalf("pipeline event %v: %v", x, err)
			}
			for _, s := range []string{x.GetActionStarted().GetSummary(), x.GetActionCompleted().GetSummary()} {
				if len(s) > summaryLen+len("…") || strings.Contains(s, "\n") || !utf8.ValidString(s) {
					t.Fatalf("summary %q", s)
				}
			}
		}
		var d agentv1.EngineDirective
		if proto.Unmarshal(data, &d) == nil {
			if _, err := proto.Marshal(toSeedDirective(&d)); err != nil {
				t.Fatalf("directive: %v", err)
			}
		}
		if _, err := proto.Marshal(&opv1.ToolDefsDelivery{Tools: toolDefs([]string{string(data)})}); err != nil {
			t.Fatalf("tool defs: %v", err)
		}
	})
}
