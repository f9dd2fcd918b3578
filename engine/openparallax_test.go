package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// seedAgent plays an agent speaking the seed's AgentService: it presents "name:token" as the
// seed's agent does, waits for its initial tools, and answers each process directive with the
// given tool proposals (a message "fail" gets an agent_error instead), then completes. It
// reports the initial tools and every tool result.
func seedAgent(t *testing.T, f *fixture, token string, calls [][2]string, initial chan<- []*opv1.ToolDef, results chan<- *opv1.ToolResultDelivery) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := opv1.NewAgentServiceClient(f.conn).RunSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&opv1.AgentEvent{Event: &opv1.AgentEvent_Ready{Ready: &opv1.AgentReady{AgentId: "atlas:" + token, SandboxCanaryJson: "{}"}}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			d, err := st.Recv()
			if err != nil {
				return
			}
			if it := d.GetInitialToolDefs(); it != nil {
				initial <- it.GetTools()
				continue
			}
			p := d.GetProcess()
			if p == nil {
				continue
			}
			sid, mid := p.GetSessionId(), p.GetMessageId()
			if p.GetContent() == "fail" {
				st.Send(&opv1.AgentEvent{Event: &opv1.AgentEvent_AgentError{AgentError: &opv1.AgentError{SessionId: sid, MessageId: mid,
					Code: "LLM_CALL_FAILED", Message: "the model is down", Recoverable: true}}})
				continue
			}
			st.Send(&opv1.AgentEvent{Event: &opv1.AgentEvent_LlmTokenEmitted{LlmTokenEmitted: &opv1.LLMTokenEmitted{SessionId: sid, MessageId: mid, Text: "Working"}}})
			for i, c := range calls {
				st.Send(&opv1.AgentEvent{Event: &opv1.AgentEvent_ToolProposal{ToolProposal: &opv1.ToolCallProposed{SessionId: sid, MessageId: mid,
					CallId: fmt.Sprint("c", i), ToolName: c[0], ArgumentsJson: c[1]}}})
				r, err := st.Recv()
				if err != nil {
					return
				}
				results <- r.GetToolResult()
			}
			st.Send(&opv1.AgentEvent{Event: &opv1.AgentEvent_ResponseComplete{ResponseComplete: &opv1.AgentResponseComplete{SessionId: sid, MessageId: mid, Content: "done"}}})
		}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := f.eng.WaitAgent(wctx); err != nil {
		t.Fatalf("seed agent never connected: %v", err)
	}
}

// seedTypes is a compact trace of seed events: the type, and the decision of a verdict.
func seedTypes(evs []*opv1.PipelineEvent) string {
	var s []string
	for _, e := range evs {
		x := e.GetEventType().String()
		if v := e.GetShieldVerdict(); v != nil {
			x += "(" + v.GetDecision().String() + ")"
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

// TestOpenParallaxClient drives a real engine over its unix socket with clients generated from
// the seed's definitions (openparallax.v1) only: a seed-shaped agent on AgentService, a client
// on ClientService that sends a message, sees every verdict with tier and confidence, resolves
// the held escalation by its approval id, and a second client that watches the session.
func TestOpenParallaxClient(t *testing.T) {
	f := newFixtureWith(t, true, time.Minute)
	client := opv1.NewClientServiceClient(f.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// No agent yet: the message is refused with a pipeline_error the seed's clients understand.
	st, err := client.SendMessage(ctx, &opv1.ClientMessageRequest{Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Recv()
	if err != nil || ev.GetEventType() != opv1.PipelineEventType_ERROR || ev.GetPipelineError().GetCode() != "AGENT_UNAVAILABLE" ||
		!ev.GetPipelineError().GetRecoverable() || ev.GetTimestampUnixMs() == 0 {
		t.Fatalf("without an agent: %v %v", ev, err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("without an agent, the stream ends with %v, want UNAVAILABLE", err)
	}

	tok, _ := f.eng.NewToken("{}")
	initial := make(chan []*opv1.ToolDef, 1)
	results := make(chan *opv1.ToolResultDelivery, 4)
	seedAgent(t, f, tok, [][2]string{
		{"read_file", `{"path":"README.md"}`},
		escalating,
		{"write_file", `{"path":"/etc/cron.d/x","content":"* * * * * root sh"}`},
	}, initial, results)
	if tools := <-initial; len(tools) < 5 || tools[0].GetName() != "read_file" || !strings.Contains(tools[0].GetParametersJson(), `"path"`) {
		t.Errorf("initial tools %v", tools)
	}

	// A second client watches every session before the message is sent.
	wst, err := client.WatchSession(ctx, &opv1.WatchSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wst.Header(); err != nil {
		t.Fatal(err)
	}

	st, err = client.SendMessage(ctx, &opv1.ClientMessageRequest{Content: "tidy up", Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*opv1.PipelineEvent
	for {
		ev, err := st.Recv()
		if err != nil {
			break
		}
		evs = append(evs, ev)
		if an := ev.GetApprovalNeeded(); an != nil {
			if an.GetApprovalId() == "" || an.GetTimeoutSeconds() != 60 || an.GetTimeoutAt() < time.Now().Unix()+50 ||
				an.GetAction().GetType() != opv1.ActionType_WRITE_FILE || an.GetShieldAssessment().GetDecision() != opv1.VerdictDecision_ESCALATE {
				t.Errorf("approval_needed %v", an)
			}
			ack, err := client.ResolveApproval(ctx, &opv1.ApprovalResponse{ApprovalId: an.GetApprovalId(), SessionId: ev.GetSessionId(), Approved: true})
			if err != nil || !ack.GetReceived() || ack.GetState() != "approved" {
				t.Errorf("resolve: %v %v", ack, err)
			}
		}
	}
	want := "LLM_TOKEN ACTION_STARTED SHIELD_VERDICT(ALLOW) ACTION_COMPLETED " +
		"ACTION_STARTED SHIELD_VERDICT(ESCALATE) APPROVAL_NEEDED SHIELD_VERDICT(ALLOW) ACTION_COMPLETED " +
		"ACTION_STARTED SHIELD_VERDICT(BLOCK) RESPONSE_COMPLETE"
	if got := seedTypes(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	sid := evs[0].GetSessionId()
	var last int64
	for i, e := range evs {
		if e.GetSessionId() != sid || e.GetMessageId() == "" || e.GetSeq() != int64(i+1) || e.GetTimestampUnixMs() < last {
			t.Errorf("event %d: session %q message %q seq %d time %d", i, e.GetSessionId(), e.GetMessageId(), e.GetSeq(), e.GetTimestampUnixMs())
		}
		last = e.GetTimestampUnixMs()
	}
	// Tiers: the class default (the pipeline, -1) allows the read; the human tier (3) escalates
	// and then allows the approved write; a CEL rule (tier 0) blocks the system write.
	for i, tier := range map[int]int32{2: -1, 5: 3, 7: 3, 10: 0} {
		v := evs[i].GetShieldVerdict()
		if v.GetTier() != tier || v.GetConfidence() != 1 || v.GetReasoning() == "" || evs[i].GetCallId() == "" {
			t.Errorf("verdict %d: %v, want tier %d", i, v, tier)
		}
	}
	if v := evs[5].GetShieldVerdict(); v.GetApprovalId() == "" || v.GetActionType() != opv1.ActionType_WRITE_FILE {
		t.Errorf("escalation verdict %v", v)
	}
	if v := evs[10].GetShieldVerdict(); len(v.GetRules()) == 0 || !strings.HasPrefix(v.GetRules()[0], "cel:") {
		t.Errorf("block verdict (a CEL rule expected): %v", v)
	}
	if s := evs[1].GetActionStarted(); s.GetActionType() != opv1.ActionType_READ_FILE || !strings.HasPrefix(s.GetSummary(), "read_file: ") {
		t.Errorf("action_started %v", s)
	}
	if c := evs[3].GetActionCompleted(); !c.GetSuccess() || c.GetSummary() != "# project" || c.GetActionType() != opv1.ActionType_READ_FILE {
		t.Errorf("action_completed %v", c)
	}
	if rc := evs[11].GetResponseComplete(); rc.GetContent() != "done" {
		t.Errorf("response_complete %v", rc)
	}
	r1, r2, r3 := <-results, <-results, <-results
	if r1.GetIsError() || r2.GetIsError() || !r3.GetIsError() || !strings.Contains(r3.GetContent(), "Shield refused") {
		t.Errorf("tool results: %v / %v / %v", r1, r2, r3)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "run.sh")); err != nil {
		t.Errorf("the approved write did not run: %v", err)
	}

	// An agent error ends the turn with a pipeline_error carrying the agent's code; a client
	// watching that one session sees it too.
	one, err := client.WatchSession(ctx, &opv1.WatchSessionRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := one.Header(); err != nil {
		t.Fatal(err)
	}
	st, _ = client.SendMessage(ctx, &opv1.ClientMessageRequest{Content: "fail", SessionId: sid})
	var perr *opv1.PipelineError
	for {
		ev, err := st.Recv()
		if err != nil {
			break
		}
		if ev.GetEventType() == opv1.PipelineEventType_ERROR {
			perr = ev.GetPipelineError()
		}
	}
	if perr.GetCode() != "LLM_CALL_FAILED" || !perr.GetRecoverable() || !strings.Contains(perr.GetMessage(), "the model is down") {
		t.Errorf("pipeline_error %v", perr)
	}

	if ev, err := one.Recv(); err != nil || ev.GetSessionId() != sid || ev.GetPipelineError().GetCode() != "LLM_CALL_FAILED" {
		t.Errorf("session watcher: %v %v", ev, err)
	}

	// The watcher of every session saw the same events, in order (and possibly log entries).
	var watched []*opv1.PipelineEvent
	for len(watched) < len(evs) {
		ev, err := wst.Recv()
		if err != nil {
			t.Fatalf("watcher: %v after %d events", err, len(watched))
		}
		if ev.GetEventType() == opv1.PipelineEventType_LOG_ENTRY {
			if ev.GetLogEntry().GetMessage() == "" || ev.GetLogEntry().GetTimestampUnixMs() == 0 {
				t.Errorf("log entry %v", ev)
			}
			continue
		}
		watched = append(watched, ev)
	}
	if got := seedTypes(watched); got != want || watched[0].GetSessionId() != sid {
		t.Errorf("watched:\n got %s\nwant %s", got, want)
	}

	// History, sessions and status through the seed's methods.
	h, err := client.GetHistory(ctx, &opv1.GetHistoryRequest{SessionId: sid})
	if err != nil || len(h.GetMessages()) != 2 || h.GetMessages()[0].GetRole() != "user" || h.GetMessages()[1].GetContent() != "done" {
		t.Errorf("history: %v %v", h, err)
	}
	if h, _ := client.GetHistory(ctx, &opv1.GetHistoryRequest{SessionId: sid, Limit: 1}); len(h.GetMessages()) != 1 || h.GetMessages()[0].GetRole() != "assistant" {
		t.Errorf("history limit 1: %v", h)
	}
	if _, err := client.GetHistory(ctx, &opv1.GetHistoryRequest{SessionId: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown session: %v", err)
	}
	ls, err := client.ListSessions(ctx, &opv1.ListSessionsRequest{Limit: 10})
	if err != nil || len(ls.GetSessions()) != 1 || ls.GetSessions()[0].GetId() != sid || ls.GetSessions()[0].GetMessageCount() != 2 || ls.GetSessions()[0].GetTitle() != "tidy up" {
		t.Errorf("sessions: %v %v", ls, err)
	}
	if ls, _ := client.ListSessions(ctx, &opv1.ListSessionsRequest{Offset: 1}); len(ls.GetSessions()) != 0 {
		t.Errorf("sessions offset 1: %v", ls)
	}
	s, err := client.GetStatus(ctx, &opv1.StatusRequest{})
	if err != nil || s.GetAgentName() != "atlas" || !s.GetAgentConnected() || s.GetModel() != "scripted" || s.GetSessionCount() != 1 || s.GetWorkspace() != f.ws {
		t.Errorf("status: %v %v", s, err)
	}
	if _, err := client.Shutdown(ctx, &opv1.ShutdownRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("shutdown by a client of a hosted engine: %v", err)
	}
	if _, err := client.ResolveApproval(ctx, &opv1.ApprovalResponse{ApprovalId: "nope", Approved: true}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown approval: %v", err)
	}
}

// TestOpenParallaxDeniedApproval: an approval the seed client denies refuses the held call.
func TestOpenParallaxDeniedApproval(t *testing.T) {
	f := newFixtureWith(t, true, time.Minute)
	client := opv1.NewClientServiceClient(f.conn)
	tok, _ := f.eng.NewToken("{}")
	results := make(chan *opv1.ToolResultDelivery, 1)
	seedAgent(t, f, tok, [][2]string{escalating}, make(chan []*opv1.ToolDef, 1), results)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := client.SendMessage(ctx, &opv1.ClientMessageRequest{Content: "go"})
	if err != nil {
		t.Fatal(err)
	}
	var evs []*opv1.PipelineEvent
	for {
		ev, err := st.Recv()
		if err != nil {
			break
		}
		evs = append(evs, ev)
		if an := ev.GetApprovalNeeded(); an != nil {
			ack, err := client.ResolveApproval(ctx, &opv1.ApprovalResponse{ApprovalId: an.GetApprovalId(), Approved: false, Comment: "no"})
			if err != nil || ack.GetState() != "denied" {
				t.Errorf("deny: %v %v", ack, err)
			}
		}
	}
	if got := seedTypes(evs); !strings.Contains(got, "APPROVAL_NEEDED") || strings.Contains(got, "ACTION_COMPLETED") {
		t.Errorf("events %s", got)
	}
	if r := <-results; !r.GetIsError() || !strings.Contains(r.GetContent(), "a human denied the call: no") {
		t.Errorf("result %v", r)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "run.sh")); err == nil {
		t.Error("the denied write ran")
	}
}

// TestOpenParallaxSubAgent: a sub-agent speaking the seed's unary SubAgentService registers with
// the token the engine issued, gets its task and reduced tools, has its calls gated (a write is
// refused), and completes; its answer is the create_agent result. A wrong token is refused.
func TestOpenParallaxSubAgent(t *testing.T) {
	f := newFixture(t)
	sub := opv1.NewSubAgentServiceClient(f.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := sub.RegisterSubAgent(ctx, &opv1.SubAgentRegisterRequest{Token: "0000"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("register with a wrong token: %v", err)
	}
	if _, err := sub.SubAgentExecuteTool(ctx, &opv1.SubAgentToolRequest{Name: "sub-x", ToolName: "read_file", ArgumentsJson: `{"path":"README.md"}`}); status.Code(err) != codes.NotFound {
		t.Errorf("execute for an unregistered name: %v", err)
	}
	subResults := make(chan *opv1.SubAgentToolResponse, 2)
	f.eng.cfg.SpawnSubAgent = func(_ context.Context, token string) (func() error, error) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			reg, err := sub.RegisterSubAgent(ctx, &opv1.SubAgentRegisterRequest{Token: token})
			if err != nil {
				t.Errorf("register: %v", err)
				return
			}
			if reg.GetTask() != "what is in the README?" || len(reg.GetTools()) != 2 || reg.GetName() == "" {
				t.Errorf("registration %v", reg)
			}
			for i, c := range [][2]string{{"read_file", `{"path":"README.md"}`}, {"write_file", `{"path":"x","content":"y"}`}} {
				r, err := sub.SubAgentExecuteTool(ctx, &opv1.SubAgentToolRequest{Name: reg.GetName(), CallId: fmt.Sprint("s", i), ToolName: c[0], ArgumentsJson: c[1]})
				if err != nil {
					t.Errorf("execute %s: %v", c[0], err)
					return
				}
				subResults <- r
			}
			if p, err := sub.SubAgentPollMessage(ctx, &opv1.SubAgentPollRequest{Name: reg.GetName()}); err != nil || p.GetHasMessage() {
				t.Errorf("poll: %v %v", p, err)
			}
			if _, err := sub.SubAgentComplete(ctx, &opv1.SubAgentCompleteRequest{Name: reg.GetName(), Result: "the README is a title"}); err != nil {
				t.Errorf("complete: %v", err)
			}
		}()
		return func() error { <-done; return nil }, nil
	}
	tok, _ := f.eng.NewToken("{}")
	results := make(chan *agentv1.ToolResult, 1)
	scriptedAgent(t, f, tok, [][2]string{{"create_agent", `{"task":"what is in the README?"}`}}, results)
	evs := collect(t, f, &agentv1.SendMessageRequest{Content: "delegate"})
	if got := types(evs); !strings.Contains(got, "SUB_AGENT_SPAWNED") || !strings.Contains(got, "SUB_AGENT_COMPLETED") {
		t.Errorf("events %s", got)
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
}

// TestOpenParallaxEventTypes: every event type the engine emits has its seed type and payload.
func TestOpenParallaxEventTypes(t *testing.T) {
	for _, tc := range []struct {
		in   *agentv1.PipelineEvent
		want opv1.PipelineEventType
		ok   func(*opv1.PipelineEvent) bool
	}{
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_LLM_TOKEN, Text: "Hi"}, opv1.PipelineEventType_LLM_TOKEN,
			func(x *opv1.PipelineEvent) bool { return x.GetLlmToken().GetText() == "Hi" }},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ACTION_STARTED, ToolName: "execute_command", Text: `{"command":"ls"}`}, opv1.PipelineEventType_ACTION_STARTED,
			func(x *opv1.PipelineEvent) bool {
				return x.GetActionStarted().GetActionType() == opv1.ActionType_EXECUTE_COMMAND && x.GetActionStarted().GetArgumentsJson() == `{"command":"ls"}`
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SHIELD_VERDICT, ToolName: "http_request", Decision: "BLOCK", Tier: 2, Confidence: 0.8, Reason: "r"}, opv1.PipelineEventType_SHIELD_VERDICT,
			func(x *opv1.PipelineEvent) bool {
				v := x.GetShieldVerdict()
				return v.GetDecision() == opv1.VerdictDecision_BLOCK && v.GetTier() == 2 && v.GetConfidence() == 0.8 && v.GetActionType() == opv1.ActionType_HTTP_REQUEST
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SHIELD_VERDICT, Decision: "something else"}, opv1.PipelineEventType_SHIELD_VERDICT,
			func(x *opv1.PipelineEvent) bool {
				return x.GetShieldVerdict().GetDecision() == opv1.VerdictDecision_BLOCK
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ACTION_COMPLETED, ToolName: "read_file", Text: "boom", IsError: true}, opv1.PipelineEventType_ACTION_COMPLETED,
			func(x *opv1.PipelineEvent) bool {
				return !x.GetActionCompleted().GetSuccess() && x.GetActionCompleted().GetOutput() == "boom"
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_RESPONSE_COMPLETE, Text: "done"}, opv1.PipelineEventType_RESPONSE_COMPLETE,
			func(x *opv1.PipelineEvent) bool { return x.GetResponseComplete().GetContent() == "done" }},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_OTR_BLOCKED, ToolName: "write_file", Reason: "otr"}, opv1.PipelineEventType_OTR_BLOCKED,
			func(x *opv1.PipelineEvent) bool {
				return x.GetOtrBlocked().GetActionType() == opv1.ActionType_WRITE_FILE && x.GetOtrBlocked().GetReason() == "otr"
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ERROR, Text: "x", Code: "TURN_TIMEOUT", Recoverable: true}, opv1.PipelineEventType_ERROR,
			func(x *opv1.PipelineEvent) bool {
				return x.GetPipelineError().GetCode() == "TURN_TIMEOUT" && x.GetPipelineError().GetRecoverable()
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_ERROR, Text: "x"}, opv1.PipelineEventType_ERROR,
			func(x *opv1.PipelineEvent) bool { return x.GetPipelineError().GetCode() == "PIPELINE_ERROR" }},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED, ActionId: "apr_1", TimeoutSeconds: 60, TimeUnixMs: 1_000_000}, opv1.PipelineEventType_APPROVAL_NEEDED,
			func(x *opv1.PipelineEvent) bool {
				return x.GetApprovalNeeded().GetApprovalId() == "apr_1" && x.GetApprovalNeeded().GetTimeoutAt() == 1060
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SUB_AGENT_SPAWNED, CallId: "c1", Text: "task"}, opv1.PipelineEventType_SUB_AGENT_SPAWNED,
			func(x *opv1.PipelineEvent) bool {
				return x.GetSubAgent().GetName() == "c1" && x.GetSubAgent().GetText() == "task"
			}},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SUB_AGENT_PROGRESS}, opv1.PipelineEventType_SUB_AGENT_PROGRESS, nil},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SUB_AGENT_COMPLETED}, opv1.PipelineEventType_SUB_AGENT_COMPLETED, nil},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SUB_AGENT_FAILED}, opv1.PipelineEventType_SUB_AGENT_FAILED, nil},
		{&agentv1.PipelineEvent{Type: agentv1.PipelineEvent_SUB_AGENT_CANCELLED}, opv1.PipelineEventType_SUB_AGENT_CANCELLED, nil},
	} {
		t.Run(tc.in.GetType().String(), func(t *testing.T) {
			tc.in.TimeUnixMs = max(tc.in.TimeUnixMs, 7)
			x := toOpenParallax(tc.in)
			if x.GetEventType() != tc.want || x.GetTimestampUnixMs() != tc.in.TimeUnixMs || (tc.ok != nil && !tc.ok(x)) {
				t.Errorf("%v → %v", tc.in, x)
			}
		})
	}
	if s := summary(strings.Repeat("é", 300)); len(s) > summaryLen+len("…") || !strings.HasSuffix(s, "é…") {
		t.Errorf("summary cut mid-rune or too long: %q", s)
	}
}

// TestOpenParallaxOffTheRecord: an OTR message from a seed client gets otr_blocked for a write,
// and nothing is persisted.
func TestOpenParallaxOffTheRecord(t *testing.T) {
	f := newFixture(t)
	client := opv1.NewClientServiceClient(f.conn)
	tok, _ := f.eng.NewToken("{}")
	seedAgent(t, f, tok, [][2]string{{"write_file", `{"path":"otr.txt","content":"x"}`}}, make(chan []*opv1.ToolDef, 1), make(chan *opv1.ToolResultDelivery, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := client.SendMessage(ctx, &opv1.ClientMessageRequest{Content: "secret", Mode: opv1.SessionMode_OTR})
	if err != nil {
		t.Fatal(err)
	}
	var blocked *opv1.OTRBlocked
	for {
		ev, err := st.Recv()
		if err != nil {
			break
		}
		if ev.GetOtrBlocked() != nil {
			blocked = ev.GetOtrBlocked()
		}
	}
	if blocked.GetActionType() != opv1.ActionType_WRITE_FILE || blocked.GetReason() == "" {
		t.Errorf("otr_blocked %v", blocked)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "otr.txt")); err == nil {
		t.Error("OTR write ran")
	}
	if ls, _ := client.ListSessions(ctx, &opv1.ListSessionsRequest{}); len(ls.GetSessions()) != 0 {
		t.Errorf("OTR session persisted: %v", ls)
	}
}
