// Package client is what every runtime adapter (hooks, MCP, Codex and roz proxies) uses to ask a
// running appliance for a decision over its unix socket (or a TCP address with a bearer token).
//
// It fails closed: an unreachable appliance, a timeout, an unspecified decision or any other error
// yields a Decision that is not Allowed, with a reason a person can act on. An ESCALATE can be held:
// Decide waits for the human (AwaitDecision) within the caller's deadline and, once approved,
// evaluates the call again so that the approval is consumed and audited like any decision.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// Verdict names, as the appliance returns them.
const (
	Allow    = "ALLOW"
	Block    = "BLOCK"
	Escalate = "ESCALATE"
)

// DefaultStateDir is the appliance's state directory when none is configured: $STATE_DIRECTORY
// (systemd's StateDirectory=), else /var/lib/shield for root, else $XDG_STATE_HOME/shield, else
// ~/.local/state/shield. It is the rule `shield serve` applies.
func DefaultStateDir() string { return StateDirFor(os.Geteuid()) }

// StateDirFor is DefaultStateDir for a process running with effective uid euid: the one rule,
// shared by the appliance (which picks the directory) and every client (which finds its socket).
func StateDirFor(euid int) string {
	if d := os.Getenv("STATE_DIRECTORY"); d != "" {
		return strings.Split(d, ":")[0]
	}
	if euid == 0 {
		return "/var/lib/shield"
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "shield")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "shield")
	}
	return "/var/lib/shield"
}

// DefaultSocket is $SHIELD_SOCKET, else <DefaultStateDir>/shield.sock.
func DefaultSocket() string {
	if s := os.Getenv("SHIELD_SOCKET"); s != "" {
		return s
	}
	return filepath.Join(DefaultStateDir(), "shield.sock")
}

// Options configure a Client.
type Options struct {
	// Socket is the appliance's unix socket path (relative paths are made absolute). Empty:
	// DefaultSocket(). Ignored when Addr is set.
	Socket string
	// Addr is a TCP host:port instead of the socket; Token is then sent as a bearer token.
	Addr  string
	Token string
	// Runtime names the runtime in every call's context ("claude-code", "codex", "mcp", …).
	Runtime string
	// EvalTimeout bounds one Evaluate RPC. Default 10 s.
	EvalTimeout time.Duration
}

// Evaluator is the one ShieldService method a client uses.
type Evaluator interface {
	Evaluate(ctx context.Context, in *shieldv1.EvaluateRequest, opts ...grpc.CallOption) (*shieldv1.EvaluateResponse, error)
}

// Awaiter is the one ApprovalService method a client uses.
type Awaiter interface {
	AwaitDecision(ctx context.Context, in *shieldv1.AwaitDecisionRequest, opts ...grpc.CallOption) (*shieldv1.Approval, error)
}

// Client asks a running appliance for decisions.
type Client struct {
	opts     Options
	conn     *grpc.ClientConn // nil for a local client
	shield   Evaluator
	approval Awaiter
	target   string
}

// NewLocal returns a client that decides through the given services in process (e.g. a hook
// handler mounted on the appliance's own HTTP listener): every call carries the caller's
// context, so the identity the listener authenticated is the one that asks and waits. approval
// may be nil (no human tier): a held ESCALATE is then refused.
func NewLocal(ev Evaluator, approval Awaiter, runtime string, evalTimeout time.Duration) *Client {
	if evalTimeout <= 0 {
		evalTimeout = 10 * time.Second
	}
	return &Client{opts: Options{Runtime: runtime, EvalTimeout: evalTimeout}, shield: ev, approval: approval, target: "in-process"}
}

type bearer struct{ token string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

// New prepares a client. It does not connect: the first Decide does, and an unreachable
// appliance surfaces there as a refusal.
func New(o Options) (*Client, error) {
	if o.EvalTimeout <= 0 {
		o.EvalTimeout = 10 * time.Second
	}
	var target string
	dialOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if o.Addr != "" {
		target = "passthrough:///" + o.Addr
		if o.Token != "" {
			dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(bearer{o.Token}))
		}
	} else {
		sock := o.Socket
		if sock == "" {
			sock = DefaultSocket()
		}
		abs, err := filepath.Abs(sock)
		if err != nil {
			return nil, fmt.Errorf("shield socket %q: %w", sock, err)
		}
		target = "unix://" + abs
	}
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("shield client for %s: %w", target, err)
	}
	return &Client{opts: o, conn: conn, target: target,
		shield: shieldv1.NewShieldServiceClient(conn), approval: shieldv1.NewApprovalServiceClient(conn)}, nil
}

// Close releases the connection.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// Target is the gRPC target the client dials (for messages).
func (c *Client) Target() string { return c.target }

// Call is one proposed tool call as a runtime describes it.
type Call struct {
	CallID    string
	Tool      string
	Arguments json.RawMessage // a JSON object; nil means {}
	Session   string
	Agent     string
	Cwd       string
	Labels    map[string]string
}

// Decision is the answer for one call. Allowed is true only for an ALLOW from the appliance.
type Decision struct {
	Verdict    string   // ALLOW, BLOCK or ESCALATE (ESCALATE only when not held, or still undecided)
	Allowed    bool     // true only for ALLOW
	Rules      []string // rules that fired
	Reason     string   // safe to show the agent
	ApprovalID string   // set when a human was (or is) asked
	DecisionID string
	AuditSeq   uint64
	// Err is set when the appliance could not be asked or did not answer properly; the
	// decision is then BLOCK.
	Err error
}

// Message is a one-line explanation naming the rule, for the runtime's deny message.
func (d Decision) Message() string {
	var b strings.Builder
	b.WriteString("Shield: ")
	b.WriteString(d.Verdict)
	if len(d.Rules) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(d.Rules, ", "))
		b.WriteString(")")
	}
	if d.Reason != "" {
		b.WriteString(": ")
		b.WriteString(d.Reason)
	}
	if d.ApprovalID != "" && d.Verdict == Escalate {
		b.WriteString(" [approval " + d.ApprovalID + "]")
	}
	return b.String()
}

func refused(err error, what string) Decision {
	msg := what
	if s, ok := status.FromError(err); ok && s.Message() != "" {
		msg += ": " + s.Code().String() + ": " + s.Message()
	} else if err != nil {
		msg += ": " + err.Error()
	}
	return Decision{Verdict: Block, Reason: msg, Err: err}
}

// ErrUnspecified is returned (in Decision.Err) when the appliance answers without a decision.
var ErrUnspecified = errors.New("the appliance answered without a decision")

// Evaluate asks once and returns the verdict as is (an ESCALATE is not held).
func (c *Client) Evaluate(ctx context.Context, call Call) Decision {
	args := string(call.Arguments)
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	req := &shieldv1.EvaluateRequest{
		Call: &shieldv1.ToolCall{CallId: call.CallID, Tool: call.Tool, ArgumentsJson: args},
		Context: &shieldv1.CallContext{SessionId: call.Session, AgentId: call.Agent, Runtime: c.opts.Runtime,
			Cwd: call.Cwd, Labels: call.Labels},
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.EvalTimeout)
	defer cancel()
	resp, err := c.shield.Evaluate(ctx, req)
	if err != nil {
		return refused(err, "the Shield appliance at "+c.target+" could not decide")
	}
	v := resp.GetVerdict()
	d := Decision{Rules: v.GetRules(), Reason: v.GetReason(), ApprovalID: v.GetEscalationId(),
		DecisionID: v.GetDecisionId(), AuditSeq: v.GetAuditSeq()}
	switch v.GetDecision() {
	case shieldv1.Decision_DECISION_ALLOW:
		d.Verdict, d.Allowed = Allow, true
	case shieldv1.Decision_DECISION_ESCALATE:
		d.Verdict = Escalate
	case shieldv1.Decision_DECISION_BLOCK:
		d.Verdict = Block
	default:
		d.Verdict, d.Err = Block, ErrUnspecified
		if d.Reason == "" {
			d.Reason = ErrUnspecified.Error()
		}
	}
	return d
}

// Decide asks for a decision and, when hold is true, holds an ESCALATE until a human resolves
// the approval or ctx ends: approved → the call is evaluated again (consuming the approval,
// audited) and that verdict returned; denied, expired or ctx done → BLOCK. Without hold an
// ESCALATE is returned as is (never Allowed).
func (c *Client) Decide(ctx context.Context, call Call, hold bool) Decision {
	d := c.Evaluate(ctx, call)
	if d.Verdict != Escalate || !hold {
		return d
	}
	if d.ApprovalID == "" || c.approval == nil {
		d.Verdict, d.Reason = Block, "escalated without an approval request (no human tier configured): "+d.Reason
		return d
	}
	a, err := c.approval.AwaitDecision(ctx, &shieldv1.AwaitDecisionRequest{Id: d.ApprovalID})
	if err != nil {
		out := refused(err, "waiting for a human decision on "+d.ApprovalID+" ended")
		out.Rules, out.ApprovalID = d.Rules, d.ApprovalID
		return out
	}
	switch a.GetState() {
	case "approved":
		again := c.Evaluate(ctx, call)
		if again.ApprovalID == "" {
			again.ApprovalID = d.ApprovalID
		}
		if again.Verdict == Escalate {
			again.Verdict, again.Allowed = Block, false
			again.Reason = "approved, but the appliance still escalates the call: " + again.Reason
		}
		return again
	default:
		reason := "a human denied the call"
		if a.GetResolver() == "timeout" || a.GetState() == "expired" {
			reason = "no human decision in time"
		}
		if a.GetComment() != "" {
			reason += ": " + a.GetComment()
		}
		return Decision{Verdict: Block, Rules: d.Rules, Reason: reason + " (approval " + d.ApprovalID + ")",
			ApprovalID: d.ApprovalID, DecisionID: d.DecisionID}
	}
}
