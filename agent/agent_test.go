package agent

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shieldsec/shield/agent/llm"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

// scripted is a provider that asks for `calls` tool calls, one per turn, then answers text.
type scripted struct {
	mu    sync.Mutex
	turns int
	calls int
}

func (s *scripted) Name() string { return "scripted" }
func (s *scripted) Stream(_ context.Context, req llm.Request, onText func(string)) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns++
	if s.turns <= s.calls {
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("c%d", s.turns), Name: "list_directory", Arguments: `{"path":"."}`}},
			Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}, nil
	}
	onText("fin")
	return &llm.Response{Text: "fin", Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

// fakeEngine records what the agent sends and answers every tool call.
type fakeEngine struct {
	agentv1.UnimplementedAgentServiceServer
	events chan *agentv1.AgentEvent
	calls  int
}

func (f *fakeEngine) RunSession(st agentv1.AgentService_RunSessionServer) error {
	first, err := st.Recv()
	if err != nil {
		return err
	}
	f.events <- first
	st.Send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ProcessRequest{ProcessRequest: &agentv1.ProcessRequest{
		SessionId: "s", MessageId: "m", Content: "go",
		Tools: []string{`{"name":"list_directory","description":"ls","parameters":{"type":"object"}}`}}}})
	for {
		ev, err := st.Recv()
		if err != nil {
			return nil
		}
		f.events <- ev
		if tc := ev.GetToolCall(); tc != nil {
			f.calls++
			st.Send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_ToolResult{ToolResult: &agentv1.ToolResult{CallId: tc.GetCallId(), Content: "a.txt"}}})
		}
		if ev.GetResponseComplete() != nil {
			st.Send(&agentv1.EngineDirective{Directive: &agentv1.EngineDirective_Shutdown{Shutdown: &agentv1.Shutdown{Reason: "test over"}}})
		}
	}
}

func runAgainst(t *testing.T, calls int) (*fakeEngine, []*agentv1.AgentEvent, *scripted) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "e.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fe := &fakeEngine{events: make(chan *agentv1.AgentEvent, 256)}
	gs := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(gs, fe)
	go gs.Serve(l)
	defer gs.Stop()
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := agentv1.NewAgentServiceClient(cc).RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prov := &scripted{calls: calls}
	if err := Run(ctx, Options{AgentID: "a1", Token: "tok", CanaryJSON: `{"status":"sandboxed"}`, Provider: prov, Stream: st}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	close(fe.events)
	var evs []*agentv1.AgentEvent
	for e := range fe.events {
		evs = append(evs, e)
	}
	return fe, evs, prov
}

func TestAgentReadyFirstThenToolRoundTrips(t *testing.T) {
	fe, evs, _ := runAgainst(t, 2)
	r := evs[0].GetAgentReady()
	if r == nil || r.GetToken() != "tok" || r.GetAgentId() != "a1" || r.GetSandboxCanaryJson() == "" {
		t.Fatalf("first event %v, want agent_ready with token and canary", evs[0])
	}
	if fe.calls != 2 {
		t.Errorf("tool calls = %d, want 2", fe.calls)
	}
	last := evs[len(evs)-1].GetResponseComplete()
	if last == nil || last.GetContent() != "fin" || last.GetTokenUsage().GetInputTokens() != 3 {
		t.Errorf("last event %v, want response_complete with summed usage", evs[len(evs)-1])
	}
}

func TestAgentToolRoundLimit(t *testing.T) {
	fe, _, prov := runAgainst(t, 100)
	if fe.calls != MaxToolRounds {
		t.Errorf("tool calls = %d, want the limit %d", fe.calls, MaxToolRounds)
	}
	if prov.turns != MaxToolRounds+1 {
		t.Errorf("model turns = %d, want %d", prov.turns, MaxToolRounds+1)
	}
}
