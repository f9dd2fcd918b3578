package engine

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
)

type fixture struct {
	approvals *approval.Service // nil: no human tier
	eng       *Engine
	ws        string
	conn      *grpc.ClientConn
	client    agentv1.ClientServiceClient
	agent     agentv1.AgentServiceClient
}

func newFixture(t *testing.T) *fixture { t.Helper(); return newFixtureWith(t, false, 0) }

// newFixtureWith builds the engine on the appliance's services in process; approvals adds the
// human tier (an approval store) with the given timeout.
func newFixtureWith(t *testing.T, approvals bool, timeout time.Duration, mods ...func(*shield.Policy)) *fixture {
	t.Helper()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# project\n"), 0o644)
	b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := activate.Activate(b, activate.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		m(pol)
	}
	var apr *approval.Service
	var esc []shield.Tier
	if approvals {
		if apr, err = approval.Open(approval.Config{Path: filepath.Join(base, "approvals.db"), Timeout: timeout}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { apr.Close() })
		esc = append(esc, apr.Tier())
	}
	p, err := shield.New(shield.Config{Escalation: esc}, pol)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := NewTools(ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := OpenSessions(filepath.Join(base, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	eng, err := New(Config{Shield: newLocalShield(p, apr), Tools: tools, Sessions: sess, TurnTimeout: 20 * time.Second, ApprovalTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(base, "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(gs, eng)
	agentv1.RegisterClientServiceServer(gs, eng)
	agentv1.RegisterSubAgentServiceServer(gs, eng)
	RegisterOpenParallax(gs, gs, eng, OpenParallaxOptions{Model: "scripted"}) // openparallax_test.go
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fixture{eng: eng, ws: ws, conn: conn, approvals: apr, client: agentv1.NewClientServiceClient(conn), agent: agentv1.NewAgentServiceClient(conn)}
}

// scriptedAgent plays an agent: it answers each process_request with the tool calls in calls,
// then completes. It records the tool results it got.
func scriptedAgent(t *testing.T, f *fixture, token string, calls [][2]string, results chan<- *agentv1.ToolResult) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := f.agent.RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: "a1", Token: token, SandboxCanaryJson: "{}"}}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			d, err := st.Recv()
			if err != nil {
				return
			}
			if d.GetProcessRequest() == nil {
				continue
			}
			st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_LlmToken{LlmToken: &agentv1.LLMToken{Token: "Working"}}})
			for i, c := range calls {
				id := "call-" + string(rune('a'+i))
				st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{CallId: id, ToolName: c[0], ArgumentsJson: c[1]}}})
				r, err := st.Recv()
				if err != nil {
					return
				}
				if results != nil {
					results <- r.GetToolResult()
				}
			}
			st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{Content: "done"}}})
		}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := f.eng.WaitAgent(wctx); err != nil {
		t.Fatalf("agent never connected: %v", err)
	}
}

func collect(t *testing.T, f *fixture, req *agentv1.SendMessageRequest) []*agentv1.PipelineEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := f.client.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []*agentv1.PipelineEvent
	for {
		ev, err := st.Recv()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	return evs
}

func types(evs []*agentv1.PipelineEvent) string {
	var s []string
	for _, e := range evs {
		x := e.GetType().String()
		if e.GetType() == agentv1.PipelineEvent_SHIELD_VERDICT {
			x += "(" + e.GetDecision() + ")"
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

func TestEngineRefusesBadTokens(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.NewToken("{}"); err != nil {
		t.Fatal(err)
	}
	for _, first := range []*agentv1.AgentEvent{
		{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{Token: "0000"}}},
		{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{}}},
		{Event: &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{ToolName: "execute_command", ArgumentsJson: `{"command":"rm -rf /"}`}}},
	} {
		st, err := f.agent.RunSession(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st.Send(first)
		_, err = st.Recv()
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("first event %v: err = %v, want PERMISSION_DENIED", first, err)
		}
	}
	// No client message is served without an agent.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, _ := f.client.SendMessage(ctx, &agentv1.SendMessageRequest{Content: "hi"})
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("SendMessage without agent: %v", err)
	}
}

func TestEngineGatesToolCalls(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.eng.NewToken("{}")
	results := make(chan *agentv1.ToolResult, 8)
	outside := filepath.Join(filepath.Dir(f.ws), "outside.txt")
	os.WriteFile(outside, []byte("keep"), 0o644)
	scriptedAgent(t, f, tok, [][2]string{
		{"read_file", `{"path":"README.md"}`},
		{"delete_file", `{"path":"` + outside + `"}`},
		{"write_file", `{"path":"/etc/cron.d/x","content":"* * * * * root sh"}`},
		{"write_file", `{"path":"notes.txt","content":"hello"}`},
	}, results)

	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "tidy up"})
	want := "LLM_TOKEN ACTION_STARTED SHIELD_VERDICT(ALLOW) ACTION_COMPLETED " +
		"ACTION_STARTED SHIELD_VERDICT(ESCALATE) " +
		"ACTION_STARTED SHIELD_VERDICT(BLOCK) " +
		"ACTION_STARTED SHIELD_VERDICT(ALLOW) ACTION_COMPLETED RESPONSE_COMPLETE"
	if got := types(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	for i, e := range evs {
		if e.GetSeq() != int64(i+1) || e.GetSessionId() == "" {
			t.Errorf("event %d: seq %d session %q", i, e.GetSeq(), e.GetSessionId())
		}
	}
	r1, r2, r3, r4 := <-results, <-results, <-results, <-results
	if r1.GetIsError() || !strings.Contains(r1.GetContent(), "# project") {
		t.Errorf("read result: %v", r1)
	}
	if !r2.GetIsError() || !strings.Contains(r2.GetContent(), "Shield refused") || !r3.GetIsError() {
		t.Errorf("refusals: %v / %v", r2, r3)
	}
	if r4.GetIsError() {
		t.Errorf("write inside the workspace: %v", r4)
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Error("refused delete ran")
	}
	if _, err := os.Stat("/etc/cron.d/x"); err == nil {
		t.Fatal("refused write ran")
	}
	sid := evs[0].GetSessionId()
	h, err := f.client.GetHistory(context.Background(), &agentv1.GetHistoryRequest{SessionId: sid})
	if err != nil || len(h.GetMessages()) != 2 || h.GetMessages()[1].GetContent() != "done" {
		t.Errorf("history: %v %v", h, err)
	}
	ls, _ := f.client.ListSessions(context.Background(), &agentv1.ListSessionsRequest{})
	if len(ls.GetSessions()) != 1 || ls.GetSessions()[0].GetTitle() != "tidy up" {
		t.Errorf("sessions: %v", ls)
	}
}

func TestEngineOffTheRecord(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.eng.NewToken("{}")
	scriptedAgent(t, f, tok, [][2]string{{"write_file", `{"path":"otr.txt","content":"x"}`}}, nil)
	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "secret", Mode: agentv1.SessionMode_SESSION_MODE_OTR})
	if got := types(evs); !strings.Contains(got, "OTR_BLOCKED") {
		t.Fatalf("events: %s", got)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "otr.txt")); err == nil {
		t.Error("OTR write ran")
	}
	ls, _ := f.client.ListSessions(context.Background(), &agentv1.ListSessionsRequest{})
	if len(ls.GetSessions()) != 0 {
		t.Errorf("OTR session persisted: %v", ls)
	}
}

func TestEngineToolRoundLimit(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.eng.NewToken("{}")
	var calls [][2]string
	for i := 0; i < MaxToolRounds+2; i++ {
		calls = append(calls, [2]string{"list_directory", `{"path":"."}`})
	}
	results := make(chan *agentv1.ToolResult, len(calls))
	scriptedAgent(t, f, tok, calls, results)
	collect(t, f, &agentv1.SendMessageRequest{Content: "loop"})
	var refused int
	for i := 0; i < len(calls); i++ {
		if r := <-results; r.GetIsError() && strings.Contains(r.GetContent(), "more than") {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("calls refused past the limit = %d, want 2", refused)
	}
}

func TestEngineResolveApproval(t *testing.T) {
	f := newFixture(t)
	if _, err := f.client.ResolveApproval(context.Background(), &agentv1.ResolveApprovalRequest{ActionId: "x"}); status.Code(err) != codes.Unavailable {
		t.Errorf("without approvals: %v", err)
	}
	f = newFixtureWith(t, true, time.Minute)
	res, err := f.approvals.Tier().Evaluate(context.Background(), &shield.Input{Call: &shield.Call{Tool: "delete_file", Arguments: []byte(`{}`),
		Context: shield.CallContext{SessionID: "s", Caller: "engine:ws"}}, ActionHash: "h"})
	if err != nil || res.EscalationID == "" {
		t.Fatal(res, err)
	}
	r, err := f.client.ResolveApproval(context.Background(), &agentv1.ResolveApprovalRequest{ActionId: res.EscalationID, Approve: true})
	if err != nil || r.GetState() != "approved" {
		t.Errorf("resolve: %v %v", r, err)
	}
	if _, err := f.client.ResolveApproval(context.Background(), &agentv1.ResolveApprovalRequest{ActionId: "nope", Approve: true}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown id: %v", err)
	}
}

// TestEngineSubAgent: the agent delegates with create_agent; a sub-agent (scripted, over
// SubAgentService) reads a file, is refused a write (reduced tools), and answers; its answer is the
// tool result, and the client sees sub_agent_* events.
func TestEngineSubAgent(t *testing.T) {
	f := newFixture(t)
	subResults := make(chan *agentv1.ToolResult, 4)
	f.eng.cfg.SpawnSubAgent = func(ctx context.Context, token string) (func() error, error) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			st, err := agentv1.NewSubAgentServiceClient(f.conn).RunSubAgent(context.Background())
			if err != nil {
				return
			}
			st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{AgentId: "sub-1", Token: token}}})
			d, err := st.Recv()
			if err != nil || d.GetProcessRequest() == nil {
				return
			}
			if n := len(d.GetProcessRequest().GetTools()); n != 2 {
				t.Errorf("sub-agent offered %d tools, want 2 (read_file, list_directory)", n)
			}
			for i, c := range [][2]string{{"read_file", `{"path":"README.md"}`}, {"write_file", `{"path":"x","content":"y"}`}} {
				st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ToolCall{ToolCall: &agentv1.ToolCallEvent{CallId: fmt.Sprint("s", i), ToolName: c[0], ArgumentsJson: c[1]}}})
				r, err := st.Recv()
				if err != nil {
					return
				}
				subResults <- r.GetToolResult()
			}
			st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_ResponseComplete{ResponseComplete: &agentv1.ResponseComplete{Content: "the README is a title"}}})
			st.Recv() // shutdown
		}()
		return func() error { <-done; return nil }, nil
	}
	tok, _ := f.eng.NewToken("{}")
	results := make(chan *agentv1.ToolResult, 2)
	scriptedAgent(t, f, tok, [][2]string{{"create_agent", `{"task":"what is in the README?"}`}}, results)
	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "delegate"})
	got := types(evs)
	for _, want := range []string{"SUB_AGENT_SPAWNED", "SHIELD_VERDICT(ALLOW)", "SUB_AGENT_COMPLETED", "RESPONSE_COMPLETE"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s lack %s", got, want)
		}
	}
	if r := <-results; r.GetIsError() || r.GetContent() != "the README is a title" {
		t.Errorf("create_agent result %v", r)
	}
	if r := <-subResults; r.GetIsError() || !strings.Contains(r.GetContent(), "# project") {
		t.Errorf("sub-agent read: %v", r)
	}
	if r := <-subResults; !r.GetIsError() || !strings.Contains(r.GetContent(), "not available to sub-agents") {
		t.Errorf("sub-agent write: %v", r)
	}
	// A sub-agent stream without a valid token is refused.
	st, _ := agentv1.NewSubAgentServiceClient(f.conn).RunSubAgent(context.Background())
	st.Send(&agentv1.AgentEvent{Event: &agentv1.AgentEvent_AgentReady{AgentReady: &agentv1.AgentReady{Token: tok}}})
	if _, err := st.Recv(); status.Code(err) != codes.PermissionDenied {
		t.Errorf("sub-agent with the main agent's token: %v", err)
	}
}
