package roz

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/shieldsec/shield/shield/proxy/client"
)

type toolDecider struct {
	mu    sync.Mutex
	calls []client.Call
	gate  chan struct{}
}

// Decide: "rm" in the arguments → BLOCK; tool "frob" → held until gate, then ALLOW; else ALLOW.
func (d *toolDecider) Decide(ctx context.Context, c client.Call, _ bool) client.Decision {
	d.mu.Lock()
	d.calls = append(d.calls, c)
	d.mu.Unlock()
	if strings.Contains(string(c.Arguments), "rm -rf") {
		return client.Decision{Verdict: client.Block, Rules: []string{"cel:destructive.rm-outside-workspace"}, Reason: "deletes files"}
	}
	if c.Tool == "frob" {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return client.Decision{Verdict: client.Block, Reason: "no human decision in time"}
		}
	}
	return client.Decision{Verdict: client.Allow, Allowed: true}
}

func toolRequestFrame(head bool, id, tool string, params map[string]any) []byte {
	s, _ := structpb.NewStruct(params)
	pb, _ := proto.Marshal(s)
	var tr []byte
	tr = protowire.AppendTag(tr, 1, protowire.BytesType)
	tr = protowire.AppendString(tr, id)
	tr = protowire.AppendTag(tr, 2, protowire.BytesType)
	tr = protowire.AppendString(tr, tool)
	tr = protowire.AppendTag(tr, 3, protowire.BytesType)
	tr = protowire.AppendBytes(tr, pb)
	tr = protowire.AppendTag(tr, 4, protowire.VarintType)
	tr = protowire.AppendVarint(tr, 30000)
	var b []byte
	if !head {
		b = protowire.AppendTag(b, respToolRequest, protowire.BytesType)
		return protowire.AppendBytes(b, tr)
	}
	var env []byte
	env = protowire.AppendTag(env, envEventID, protowire.BytesType)
	env = protowire.AppendString(env, "ev-"+id)
	env = protowire.AppendTag(env, envToolCallRequested, protowire.BytesType)
	env = protowire.AppendBytes(env, tr)
	b = protowire.AppendTag(b, respSessionEvent, protowire.BytesType)
	return protowire.AppendBytes(b, env)
}

func clientToolResult(id string, modifierToo bool) []byte {
	var tr []byte
	tr = protowire.AppendTag(tr, trToolCallID, protowire.BytesType)
	tr = protowire.AppendString(tr, id)
	tr = protowire.AppendTag(tr, trSuccess, protowire.VarintType)
	tr = protowire.AppendVarint(tr, 1)
	var b []byte
	b = protowire.AppendTag(b, reqToolResult, protowire.BytesType)
	return protowire.AppendBytes(b, tr)
}

// runtimeDouble follows the seed: after the client's first frame it sends the scripted frames
// and records every frame it receives until the client closes.
type runtimeDouble struct {
	script   [][]byte
	mu       sync.Mutex
	received [][]byte
	auth     string
	done     chan struct{}
}

func (r *runtimeDouble) handle(_ any, ss grpc.ServerStream) error {
	defer close(r.done)
	md, _ := metadata.FromIncomingContext(ss.Context())
	if a := md.Get("authorization"); len(a) > 0 {
		r.auth = a[0]
	}
	var f frame
	if err := ss.RecvMsg(&f); err != nil {
		return err
	}
	for _, s := range r.script {
		out := frame(s)
		if err := ss.SendMsg(&out); err != nil {
			return err
		}
	}
	for {
		var in frame
		if err := ss.RecvMsg(&in); err != nil {
			return nil
		}
		r.mu.Lock()
		r.received = append(r.received, append([]byte(nil), in...))
		r.mu.Unlock()
	}
}

func listen(t *testing.T, opts ...grpc.ServerOption) (string, *grpc.Server) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String(), s
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	c, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolResults(frames [][]byte) map[string]string {
	out := map[string]string{}
	for _, b := range frames {
		fs, _ := fields(b)
		for _, f := range fs {
			if f.num != reqToolResult {
				continue
			}
			tfs, _ := fields(f.val)
			var id, res string
			ok := "ok"
			for _, tf := range tfs {
				switch tf.num {
				case trToolCallID:
					id = string(tf.val)
				case trResult:
					res = string(tf.val)
				case trSuccess:
					if v, _ := protowire.ConsumeVarint(tf.val); v == 0 {
						ok = "failed"
					}
				}
			}
			out[id] = ok + ": " + res
		}
	}
	return out
}

func TestRozProxy(t *testing.T) {
	blocked := toolRequestFrame(false, "t1", "Bash", map[string]any{"command": "rm -rf /"})
	harmless := toolRequestFrame(false, "t2", "Bash", map[string]any{"command": "ls"})
	held := toolRequestFrame(true, "t3", "frob", map[string]any{"level": "max"})
	rt := &runtimeDouble{script: [][]byte{blocked, harmless, held}, done: make(chan struct{})}
	upAddr, _ := listen(t, grpc.UnknownServiceHandler(rt.handle), grpc.ForceServerCodec(rawCodec{}))

	dec := &toolDecider{gate: make(chan struct{})}
	p, err := New(Options{Decider: dec, Workspace: "/w", Session: "roz"}, dial(t, upAddr))
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr, _ := listen(t, p.ServerOptions()...)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer roz-key")
	cs, err := dial(t, proxyAddr).NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, StreamSession, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	start := frame(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), nil))
	if err := cs.SendMsg(&start); err != nil {
		t.Fatal(err)
	}
	recv := func() []byte {
		var f frame
		if err := cs.RecvMsg(&f); err != nil {
			t.Fatalf("client recv: %v", err)
		}
		return f
	}
	// The harmless request arrives byte for byte; the blocked one never does.
	if got := recv(); !bytes.Equal(got, harmless) {
		t.Fatalf("client got %x, want the harmless request unchanged", got)
	}
	// The held one: a waiting_approval update (HEAD dialect: activity_changed), then, once a
	// human answers, the request itself.
	if got := recv(); !bytes.Contains(got, []byte("waiting_approval")) {
		t.Fatalf("client got %q, want a waiting update", got)
	}
	close(dec.gate)
	if got := recv(); !bytes.Equal(got, held) {
		t.Fatalf("client got %x, want the held request after approval", got)
	}
	// The client answers what it was shown; an answer for t1 (never shown) is dropped; a
	// permission decision's modifier is stripped.
	for _, b := range [][]byte{clientToolResult("t2", false), clientToolResult("t1", false)} {
		f := frame(b)
		cs.SendMsg(&f)
	}
	pdModified := func() []byte {
		var pd []byte
		pd = protowire.AppendTag(pd, pdID, protowire.BytesType)
		pd = protowire.AppendString(pd, "apr-1")
		pd = protowire.AppendTag(pd, pdApproved, protowire.VarintType)
		pd = protowire.AppendVarint(pd, 1)
		pd = protowire.AppendTag(pd, pdModifier, protowire.BytesType)
		pd = protowire.AppendBytes(pd, []byte{0x0a, 0x00})
		return protowire.AppendBytes(protowire.AppendTag(nil, reqPermissionDecision, protowire.BytesType), pd)
	}()
	f := frame(pdModified)
	cs.SendMsg(&f)
	cs.CloseSend()
	select {
	case <-rt.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the runtime double never saw the stream end")
	}
	rt.mu.Lock()
	got := toolResults(rt.received)
	var sawPD []byte
	for _, b := range rt.received {
		if fs, _ := fields(b); len(fs) == 1 && fs[0].num == reqPermissionDecision {
			sawPD = fs[0].val
		}
	}
	rt.mu.Unlock()
	if r := got["t1"]; !strings.HasPrefix(r, "failed: blocked by Shield: BLOCK (cel:destructive.rm-outside-workspace)") {
		t.Errorf("t1 result %q, want Shield's failed result only", r)
	}
	if got["t2"] != "ok: " {
		t.Errorf("t2 result %q, want the client's", got["t2"])
	}
	if pfs, _ := fields(sawPD); len(pfs) != 2 {
		t.Errorf("the permission decision reached the runtime with %d fields, want the modifier stripped", len(pfs))
	}
	if rt.auth != "Bearer roz-key" {
		t.Errorf("authorization metadata not passed on: %q", rt.auth)
	}
	byID := map[string]client.Call{}
	for _, c := range dec.calls {
		byID[c.CallID] = c
	}
	if len(dec.calls) != 3 || string(byID["t2"].Arguments) != `{"command":"ls"}` || byID["t3"].Tool != "frob" || byID["t1"].Session != "roz-1" {
		t.Errorf("decided %+v", dec.calls)
	}
}

// No appliance: every tool request is refused upstream, none reaches the client.
func TestRozProxyFailsClosed(t *testing.T) {
	rt := &runtimeDouble{script: [][]byte{toolRequestFrame(false, "t1", "Bash", map[string]any{"command": "ls"})}, done: make(chan struct{})}
	upAddr, _ := listen(t, grpc.UnknownServiceHandler(rt.handle), grpc.ForceServerCodec(rawCodec{}))
	c, err := client.New(client.Options{Socket: filepath.Join(t.TempDir(), "none.sock"), Runtime: "roz", EvalTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, _ := New(Options{Decider: c, Session: "roz"}, dial(t, upAddr))
	proxyAddr, _ := listen(t, p.ServerOptions()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := dial(t, proxyAddr).NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, StreamSession, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	start := frame([]byte{0x0a, 0x00})
	cs.SendMsg(&start)
	deadline := time.Now().Add(20 * time.Second)
	for {
		rt.mu.Lock()
		res := toolResults(rt.received)["t1"]
		rt.mu.Unlock()
		if res != "" {
			if !strings.HasPrefix(res, "failed: blocked by Shield: BLOCK") || !strings.Contains(res, "could not decide") {
				t.Fatalf("t1 result %q", res)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result for t1")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cs.CloseSend()
	var f frame
	if err := cs.RecvMsg(&f); err == nil && len(f) > 0 && !bytes.Contains(f, []byte("waiting_approval")) {
		t.Fatalf("the client got a frame %x", f)
	}
}

// FuzzRuntimeFrame: any runtime frame, under a refusing appliance, never reaches the client as a
// tool request, and the proxy does not panic.
func FuzzRuntimeFrame(f *testing.F) {
	f.Add(toolRequestFrame(false, "t1", "Bash", map[string]any{"command": "ls"}))
	f.Add(toolRequestFrame(true, "t2", "frob", map[string]any{"a": []any{1.0, "x"}}))
	f.Add([]byte{0x22, 0x02, 0x0a, 0x00})
	f.Add([]byte{0x3a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := fields(b)
		s := &stream{p: &Proxy{opts: Options{Decider: refuse{}, Log: func(string, ...any) {}}}, inspect: true,
			shown: map[string]bool{}, refused: map[string]bool{}, ctx: context.Background()}
		s.cs, s.ss = &nullClient{}, nil
		took := s.fromRuntime(b)
		s.wg.Wait()
		if err != nil && !took {
			t.Fatalf("a malformed frame was passed on")
		}
		for _, f := range fs {
			if f.num == respToolRequest && !took {
				t.Fatalf("a tool request was passed on")
			}
		}
	})
}

type refuse struct{}

func (refuse) Decide(context.Context, client.Call, bool) client.Decision {
	return client.Decision{Verdict: client.Block}
}

// nullClient stands in for the upstream stream in the fuzz target.
type nullClient struct{ grpc.ClientStream }

func (*nullClient) SendMsg(any) error { return nil }

// The field numbers the code uses are the ones roz_subset.proto documents.
func TestFieldNumbersMatchTheProto(t *testing.T) {
	b, err := os.ReadFile("roz_subset.proto")
	if err != nil {
		t.Fatal(err)
	}
	nums := map[string]int{} // "Message.field" → number
	msg := ""
	for _, line := range strings.Split(string(b), "\n") {
		l := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(l, "message "); ok {
			msg = strings.Fields(rest)[0]
			continue
		}
		if i := strings.Index(l, " = "); i > 0 && msg != "" && !strings.HasPrefix(l, "//") {
			f := strings.Fields(l[:i])
			var n int
			fmt.Sscanf(l[i+3:], "%d", &n)
			nums[msg+"."+f[len(f)-1]] = n
		}
	}
	for name, want := range map[string]protowire.Number{
		"SessionRequest.tool_result": reqToolResult, "SessionRequest.permission_decision": reqPermissionDecision,
		"ToolResult.tool_call_id": trToolCallID, "ToolResult.success": trSuccess, "ToolResult.result": trResult,
		"PermissionDecision.approval_id": pdID, "PermissionDecision.approved": pdApproved, "PermissionDecision.modifier": pdModifier,
		"SessionResponse.tool_request": respToolRequest, "SessionResponse.activity_update": respActivityUpdate,
		"SessionResponse.session_event": respSessionEvent,
		"ToolRequest.tool_call_id":      toolReqID, "ToolRequest.tool_name": toolReqName, "ToolRequest.parameters": toolReqParams,
		"ToolRequest.timeout_ms":        toolReqTimeout,
		"SessionEventEnvelope.event_id": envEventID, "SessionEventEnvelope.correlation_id": envCorrelationID,
		"SessionEventEnvelope.event_type": envEventType, "SessionEventEnvelope.tool_call_requested": envToolCallRequested,
		"SessionEventEnvelope.activity_changed": envActivityChanged,
	} {
		if got := nums[name]; protowire.Number(got) != want {
			t.Errorf("%s: the proto says %d, the code uses %d", name, got, want)
		}
	}
}
