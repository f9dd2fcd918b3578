package engine

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/agent"
	"github.com/shieldsec/shield/agent/llm"
	"github.com/shieldsec/shield/engine/exec"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	"github.com/shieldsec/shield/sandbox"
)

// scriptedModel plays the model for the real agent loop: "run it" asks for a long shell command,
// a tool result is answered "first done", anything else "second answer".
type scriptedModel struct {
	mu   sync.Mutex
	seen []string
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) Stream(_ context.Context, req llm.Request, onText func(string)) (*llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	m.mu.Lock()
	m.seen = append(m.seen, last.Role+":"+last.Content)
	m.mu.Unlock()
	switch {
	case last.Role == "user" && last.Content == "run it":
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "execute_command", Arguments: `{"command":"sleep 30"}`}}}, nil
	case last.Role == "tool":
		return &llm.Response{Text: "first done"}, nil
	}
	onText("second")
	return &llm.Response{Text: "second answer"}, nil
}

// TestEngineClientDisconnectDuringToolCall: a client that goes away while a tool call runs
// cancels that turn, and the agent (the real agent loop, waiting for that call's result) stays
// usable: the next message gets its answer. Before, the agent waited forever for the result of
// the abandoned call and ignored every later request (M4).
func TestEngineClientDisconnectDuringToolCall(t *testing.T) {
	if sandbox.LandlockABI() < 4 {
		t.Skipf("Landlock ABI %d: the shell executor needs ABI 4 (TCP rules)", sandbox.LandlockABI())
	}
	f := newFixture(t)
	f.eng.cfg.Tools.Shell = &exec.Shell{ShieldBin: os.Args[0], Workspace: f.ws, Timeout: time.Minute}
	tok, err := f.eng.NewToken("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := f.agent.RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	model := &scriptedModel{}
	agentDone := make(chan error, 1)
	go func() {
		agentDone <- agent.Run(ctx, agent.Options{AgentID: "a1", Token: tok, Provider: model, Stream: st})
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := f.eng.WaitAgent(wctx); err != nil {
		t.Fatalf("agent never connected: %v", err)
	}

	cctx, ccancel := context.WithCancel(ctx)
	cs, err := f.client.SendMessage(cctx, &agentv1.SendMessageRequest{Content: "run it"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := cs.Recv()
		if err != nil {
			t.Fatalf("stream ended before the tool call started: %v", err)
		}
		if ev.GetType() == agentv1.PipelineEvent_ACTION_STARTED {
			break
		}
	}
	ccancel() // the client goes away while `sleep 30` runs

	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "hello"})
	if got := types(evs); len(evs) == 0 || evs[len(evs)-1].GetType() != agentv1.PipelineEvent_RESPONSE_COMPLETE ||
		evs[len(evs)-1].GetText() != "second answer" {
		t.Fatalf("the next message after a disconnect: events %s", got)
	}
	select {
	case err := <-agentDone:
		t.Errorf("the agent stopped: %v", err)
	default:
	}
}

// TestEngineClientThatStopsReading: a client that stays connected but stops reading its events
// ends its own turn once it is too far behind; the agent finishes, and the next client is served.
// Before, the turn blocked in a flow-controlled Send while holding the one-turn lock, forever.
func TestEngineClientThatStopsReading(t *testing.T) {
	f := newFixture(t)
	tok, err := f.eng.NewToken("{}")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := f.agent.RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: "a1", Token: tok, SandboxCanaryJson: "{}"}}}); err != nil {
		t.Fatal(err)
	}
	// The agent answers the first request with 4 MiB of tokens, the next ones briefly.
	go func() {
		first := true
		for {
			d, err := st.Recv()
			if err != nil {
				return
			}
			if d.GetProcessRequest() == nil {
				continue
			}
			if first {
				first = false
				chunk := strings.Repeat("x", 2048)
				for range 2048 {
					if st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_LlmToken{LlmToken: &agentv1.LLMToken{Token: chunk}}}) != nil {
						return
					}
				}
			}
			st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{Content: "done"}}})
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := f.eng.WaitAgent(wctx); err != nil {
		t.Fatalf("agent never connected: %v", err)
	}
	// A second connection that opens the stream and never reads it.
	conn, err := grpc.NewClient(f.conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stalled, err := agentv1.NewClientServiceClient(conn).SendMessage(ctx, &agentv1.SendMessageRequest{Content: "flood me"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stalled.Header(); err != nil { // the turn has started; then nothing more is read
		t.Fatal(err)
	}
	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "hello"})
	if len(evs) == 0 || evs[len(evs)-1].GetType() != agentv1.PipelineEvent_RESPONSE_COMPLETE {
		t.Fatalf("the next client after a stalled one: events %s", types(evs))
	}
}

// TestEngineDropsAgentThatDoesNotFinish: an agent that does not finish a cancelled turn within
// DrainTimeout loses its stream (the supervisor then starts a fresh one) rather than leaving
// stale events for the next turn.
func TestEngineDropsAgentThatDoesNotFinish(t *testing.T) {
	f := newFixture(t)
	f.eng.cfg.DrainTimeout = 100 * time.Millisecond
	tok, err := f.eng.NewToken("{}")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := f.agent.RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: "a1", Token: tok, SandboxCanaryJson: "{}"}}}); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := f.eng.WaitAgent(wctx); err != nil {
		t.Fatalf("agent never connected: %v", err)
	}
	cctx, ccancel := context.WithCancel(ctx)
	cs, err := f.client.SendMessage(cctx, &agentv1.SendMessageRequest{Content: "hang"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := st.Recv(); err != nil || d.GetProcessRequest() == nil {
		t.Fatalf("agent: %v %v", d, err)
	}
	// One token, then the agent hangs; the client reads it and leaves.
	st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_LlmToken{LlmToken: &agentv1.LLMToken{Token: "t"}}})
	if _, err := cs.Recv(); err != nil {
		t.Fatal(err)
	}
	ccancel()
	for {
		_, err := st.Recv()
		if err != nil {
			if status.Code(err) != codes.Aborted {
				t.Errorf("agent stream ended with %v, want Aborted", err)
			}
			break
		}
	}
}
