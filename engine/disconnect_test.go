package engine

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

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
