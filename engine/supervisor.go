package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/shieldsec/shield/engine/exec"
	"github.com/shieldsec/shield/sandbox"
)

// Supervisor starts the agent process confined by the sandbox, only after the canary probes
// show the profile is enforced, and restarts it within a crash budget.
type Supervisor struct {
	Engine    *Engine
	ShieldBin string // the shield binary (trampoline and agent entry point)
	Workspace string
	// LLMPort is the TCP port the agent may connect to (its model endpoint).
	LLMPort uint16
	// LLMHost is the model's host name when it is not an IP address: the engine resolves it at
	// each agent start and hands the agent the address (--llm-dial), so the agent needs no DNS
	// (no resolver files, no UDP) and TLS still verifies the name.
	LLMHost string
	// ReadOnly are extra files the agent may read (the CA bundle SSL_CERT_FILE names).
	ReadOnly []string
	// AgentArgs are passed to `shield internal-agent` (LLM provider flags).
	AgentArgs []string
	// AllowUnsandboxed lets the agent start when the kernel has no Landlock (status
	// unavailable); logged loudly and recorded. Partial or unsandboxed never start.
	AllowUnsandboxed bool
	// Protected are paths the agent's profile must never grant (the state directory, audit trail
	// and keys); AgentProfile refuses a profile that reaches one.
	Protected []string
	// Listener receives the engine end of each agent's socket pair; the engine's gRPC server
	// serves AgentService on it.
	Listener *ConnListener
	Recorder Recorder
	Log      *slog.Logger
	// Crash budget: more than MaxCrashes exits within CrashWindow stops the supervisor.
	MaxCrashes  int           // default 5
	CrashWindow time.Duration // default 60s
	Backoff     time.Duration // default 1s

	// runAgent replaces runOnce in tests.
	runAgent func(context.Context) error
}

// ErrCrashBudget is returned when the agent crashed too often.
var ErrCrashBudget = errors.New("agent crash budget exhausted")

// Run keeps an agent running until ctx ends or the crash budget is spent.
func (s *Supervisor) Run(ctx context.Context) error {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	maxCrashes, window, backoff := s.MaxCrashes, s.CrashWindow, s.Backoff
	if maxCrashes <= 0 {
		maxCrashes = 5
	}
	if window <= 0 {
		window = 60 * time.Second
	}
	if backoff <= 0 {
		backoff = time.Second
	}
	run := s.runOnce
	if s.runAgent != nil {
		run = s.runAgent
	}
	var crashes []time.Time
	for {
		err := run(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var gate *GateError
		if errors.As(err, &gate) {
			return err // a sandbox that does not hold is not retried
		}
		if err == nil {
			// Exit status 0: the agent ended by itself, cleanly; restarted, not a crash.
			s.Log.Info("agent exited cleanly; starting a new one")
			s.record(ctx, EventAgentExited, map[string]any{"status": 0})
			select {
			case <-time.After(backoff):
				continue
			case <-ctx.Done():
				return nil
			}
		}
		now := time.Now()
		crashes = append(crashes, now)
		for len(crashes) > 0 && now.Sub(crashes[0]) > window {
			crashes = crashes[1:]
		}
		s.Log.Error("agent exited", "error", fmt.Sprint(err), "crashes_in_window", len(crashes))
		s.record(ctx, EventAgentCrashed, map[string]any{"error": fmt.Sprint(err), "crashes_in_window": len(crashes)})
		if len(crashes) >= maxCrashes {
			return fmt.Errorf("%w: %d exits within %s (last: %v)", ErrCrashBudget, len(crashes), window, err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil
		}
	}
}

// GateError is returned when the canary report does not allow the agent to start.
type GateError struct{ Err error }

func (e *GateError) Error() string { return "sandbox gate: " + e.Err.Error() }
func (e *GateError) Unwrap() error { return e.Err }

func (s *Supervisor) record(ctx context.Context, ev Event, payload any) {
	if s.Recorder != nil {
		if err := s.Recorder.Record(ctx, ev, payload); err != nil {
			s.Log.Error("audit record failed", "event", ev.Name(), "error", err.Error())
		}
	}
}

// AgentProfile is the profile the agent runs under.
func (s *Supervisor) AgentProfile() (sandbox.Profile, error) {
	base := sandbox.DefaultAgentProfile(s.Workspace, sandbox.AgentOptions{LLMPort: s.LLMPort})
	base.ReadOnly = append(base.ReadOnly, s.ReadOnly...)
	prof, err := base.WithProgram(s.ShieldBin)
	if err != nil {
		return prof, err
	}
	if err := exec.CheckProtected(prof, s.Protected); err != nil {
		return sandbox.Profile{}, fmt.Errorf("agent profile: %w", err)
	}
	return prof, nil
}

// runOnce probes, gates and runs one agent process until it exits: nil for exit status 0.
func (s *Supervisor) runOnce(ctx context.Context) error {
	prof, err := s.AgentProfile()
	if err != nil {
		return fmt.Errorf("agent profile: %w", err)
	}
	report, err := sandbox.Probe(ctx, sandbox.ProbeOptions{Shield: s.ShieldBin, Profile: prof})
	if err != nil && report == nil {
		return &GateError{Err: fmt.Errorf("canary probe failed: %w", err)}
	}
	reportJSON, _ := json.Marshal(report)
	s.record(ctx, EventCanaryResult, json.RawMessage(reportJSON))
	if err := sandbox.Gate(report, s.AllowUnsandboxed); err != nil {
		s.Log.Error("agent not started: the sandbox did not hold", "status", string(report.Status), "problems", report.Problems)
		return &GateError{Err: err}
	}
	unconfined := report.Status != sandbox.StatusSandboxed
	if unconfined {
		s.Log.Error("STARTING AN UNSANDBOXED AGENT: the kernel has no Landlock and --allow-unsandboxed was given")
		s.record(ctx, EventAgentUnsandboxed, map[string]any{"status": report.Status})
	}
	token, err := s.Engine.NewToken(string(reportJSON))
	if err != nil {
		return err
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	engineEnd := os.NewFile(uintptr(fds[0]), "engine-end")
	agentEnd := os.NewFile(uintptr(fds[1]), "agent-end")
	conn, err := net.FileConn(engineEnd)
	engineEnd.Close()
	if err != nil {
		agentEnd.Close()
		return fmt.Errorf("engine end: %w", err)
	}
	agentID := randomID()
	cmd, err := s.agentCommand(ctx, prof, agentEnd,
		"SHIELD_AGENT_TOKEN="+token, "SHIELD_AGENT_ID="+agentID, "SHIELD_CANARY_REPORT="+string(reportJSON))
	if err != nil {
		conn.Close()
		agentEnd.Close()
		return err
	}
	if unconfined {
		args, err := s.agentArgs(ctx)
		if err != nil {
			conn.Close()
			agentEnd.Close()
			return err
		}
		cmd.Path, cmd.Args = s.ShieldBin, append([]string{s.ShieldBin, "internal-agent"}, args...)
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		agentEnd.Close()
		return fmt.Errorf("start agent: %w", err)
	}
	agentEnd.Close()
	s.Listener.Push(conn)
	s.record(ctx, EventAgentStarted, map[string]any{"agent_id": agentID, "pid": cmd.Process.Pid, "sandbox": report.Status})
	s.Log.Info("agent started", "agent_id", agentID, "pid", cmd.Process.Pid, "sandbox", string(report.Status))
	err = cmd.Wait()
	conn.Close()
	return err
}

// ConnListener is a net.Listener whose connections are pushed by the supervisor.
type ConnListener struct {
	ch     chan net.Conn
	once   sync.Once
	closed chan struct{}
}

// NewConnListener returns an empty listener.
func NewConnListener() *ConnListener {
	return &ConnListener{ch: make(chan net.Conn, 4), closed: make(chan struct{})}
}

// Push hands a connection to Accept.
func (l *ConnListener) Push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.closed:
		c.Close()
	}
}

// Accept implements net.Listener.
func (l *ConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *ConnListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *ConnListener) Addr() net.Addr { return &net.UnixAddr{Name: "agent-socketpair", Net: "unix"} }

// SpawnSub starts a sub-agent process under the agent profile (the profile the canary run at the
// main agent's start proved) that presents token on SubAgentService. It implements
// SubAgentSpawner; wait reaps the process.
func (s *Supervisor) SpawnSub(ctx context.Context, token string) (func() error, error) {
	prof, err := s.AgentProfile()
	if err != nil {
		return nil, err
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	engineEnd := os.NewFile(uintptr(fds[0]), "engine-end")
	agentEnd := os.NewFile(uintptr(fds[1]), "subagent-end")
	defer agentEnd.Close()
	conn, err := net.FileConn(engineEnd)
	engineEnd.Close()
	if err != nil {
		return nil, err
	}
	cmd, err := s.agentCommand(ctx, prof, agentEnd, "SHIELD_AGENT_TOKEN="+token, "SHIELD_AGENT_ID=sub-"+randomID(), "SHIELD_AGENT_ROLE=sub")
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start sub-agent: %w", err)
	}
	s.Listener.Push(conn)
	s.record(ctx, EventSubagentStarted, map[string]any{"pid": cmd.Process.Pid})
	return func() error { err := cmd.Wait(); conn.Close(); return err }, nil
}
