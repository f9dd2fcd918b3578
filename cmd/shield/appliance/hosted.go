package appliance

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/engine"
	"github.com/shieldsec/shield/engine/exec"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
	"github.com/shieldsec/shield/shield/server"
)

// RegistryEntry is what a running engine writes so `shield chat` can find it.
type RegistryEntry struct {
	PID         int    `json:"pid"`
	Port        int    `json:"port"`
	Workspace   string `json:"workspace"`
	ClientToken string `json:"client_token"`
}

// RegistryPath is the registry file of a workspace's engine under the state dir.
func RegistryPath(stateDir, workspace string) string {
	return enginePath(stateDir, workspace) + ".json"
}

// enginePath is the common prefix of a workspace engine's files under <state_dir>/engines.
func enginePath(stateDir, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(stateDir, "engines", hex.EncodeToString(sum[:8]))
}

// Engine is one engine with its sandboxed agent, built on a Shield (the appliance's services in
// process, or a running appliance's socket).
type Engine struct {
	cfg     EngineConfig
	log     *slog.Logger
	eng     *engine.Engine
	sup     *engine.Supervisor
	sess    *engine.Sessions
	client  *grpc.Server
	clientL net.Listener
	agents  *grpc.Server
	agentL  *engine.ConnListener
	regPath string
	port    int
}

// Port is the loopback TCP port of the engine's ClientService.
func (e *Engine) Port() int { return e.port }

// Workspace is the engine's workspace.
func (e *Engine) Workspace() string { return e.cfg.Workspace }

// engineRecorder writes engine events to the audit trail as their own record types.
type engineRecorder struct{ l *audit.Log }

func (r engineRecorder) Record(ctx context.Context, ev engine.Event, detail any) error {
	if r.l == nil {
		return nil
	}
	if ev.Name() == "" {
		return fmt.Errorf("engine event %d has no name", ev)
	}
	typ, payload := ev.Record(detail)
	_, err := r.l.Append(ctx, typ, payload)
	return err
}

// newEngine builds an engine for ec on sh. stateDir holds its sessions and registry file;
// protected are the paths no tool or agent profile may reach (the appliance's state, audit trail,
// keys, socket); rec records engine events (nil: none). Its ClientService listens on loopback now;
// nothing runs before Run.
func newEngine(ec EngineConfig, sh engine.Shield, stateDir string, protected []string, approvalTimeout time.Duration, rec engine.Recorder, log *slog.Logger) (_ *Engine, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ws := ec.Workspace
	log = log.With("workspace", ws)
	if err := os.MkdirAll(filepath.Join(stateDir, "engines"), 0o700); err != nil {
		return nil, err
	}
	shell := &exec.Shell{ShieldBin: self, Workspace: ws, Protected: protected}
	var fetcher *exec.Fetcher
	if len(ec.Egress) > 0 {
		fetcher = &exec.Fetcher{Allow: ec.Egress, Log: log}
	}
	tools, err := engine.NewTools(ws, shell, fetcher)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: ec, log: log, regPath: RegistryPath(stateDir, ws)}
	// Sessions per workspace: engines sharing a state directory never wait on each other's store.
	if e.sess, err = engine.OpenSessions(enginePath(stateDir, ws) + "-sessions.db"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.sess.Close()
		}
	}()
	engCfg := engine.Config{Shield: sh, Tools: tools, Sessions: e.sess, Recorder: rec, Log: log, ApprovalTimeout: approvalTimeout}
	engCfg.SpawnSubAgent = func(ctx context.Context, token string) (func() error, error) { return e.sup.SpawnSub(ctx, token) }
	if e.eng, err = engine.New(engCfg); err != nil {
		return nil, err
	}
	// ClientService: loopback TCP, every call must carry the client token from the registry file.
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	clientToken := hex.EncodeToString(tok)
	if e.clientL, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	e.port = e.clientL.Addr().(*net.TCPAddr).Port
	e.client = server.NewGRPC(server.GRPCConfig{Log: log, Unary: []grpc.UnaryServerInterceptor{tokenUnary(clientToken)},
		Stream: []grpc.StreamServerInterceptor{tokenStream(clientToken)}})
	agentv1.RegisterClientServiceServer(e.client, e.eng)
	// AgentService: only on the socket pairs the supervisor hands to confined agents.
	e.agentL = engine.NewConnListener()
	e.agents = server.NewGRPC(server.GRPCConfig{Log: log})
	agentv1.RegisterAgentServiceServer(e.agents, e.eng)
	agentv1.RegisterSubAgentServiceServer(e.agents, e.eng)
	// The same services in the OpenParallax protocol (openparallax.v1, seed 000), same listeners.
	engine.RegisterOpenParallax(e.client, e.agents, e.eng, engine.OpenParallaxOptions{Model: ec.LLM.Model})
	data, _ := json.Marshal(RegistryEntry{PID: os.Getpid(), Port: e.port, Workspace: ws, ClientToken: clientToken})
	if err := writeFileAtomic(e.regPath, data, 0o600); err != nil {
		e.clientL.Close()
		return nil, err
	}
	e.sup = &engine.Supervisor{Engine: e.eng, ShieldBin: self, Workspace: ws, LLMPort: llmPort(ec.LLM.BaseURL),
		LLMHost: llmHost(ec.LLM.BaseURL), ReadOnly: caFiles(),
		AgentArgs: []string{"--llm-provider", ec.LLM.Provider, "--llm-base-url", ec.LLM.BaseURL, "--llm-model", ec.LLM.Model,
			"--llm-api-key-env", ec.LLM.APIKeyEnv},
		AllowUnsandboxed: ec.AllowUnsandboxed, Protected: protected, Listener: e.agentL, Recorder: rec, Log: log}
	return e, nil
}

// Run serves the engine's client and agents and keeps an agent running until ctx ends or the
// agent's crash budget is spent; then it stops the agent and its servers.
func (e *Engine) Run(ctx context.Context) error {
	go func() { _ = e.client.Serve(e.clientL) }()
	go func() { _ = e.agents.Serve(e.agentL) }()
	e.log.Info("engine serving", "client_port", e.port)
	err := e.sup.Run(ctx)
	e.eng.Shutdown("engine stopping")
	e.client.Stop()
	e.agents.Stop()
	e.agentL.Close()
	return err
}

// Close releases what newEngine opened (after Run has returned, or instead of it).
func (e *Engine) Close() error {
	_ = os.Remove(e.regPath)
	e.clientL.Close()
	return e.sess.Close()
}

// llmPort is the TCP port of the LLM endpoint (the agent may connect to it and nothing else).
func llmPort(base string) uint16 {
	u, err := url.Parse(base)
	if err != nil {
		return 0
	}
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return uint16(n)
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

// llmHost is the model's host name, which the engine resolves for the agent, or "" when the base
// URL names an IP address.
func llmHost(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		return ""
	}
	return u.Hostname()
}

// caFiles is the CA bundle the engine's SSL_CERT_FILE names (passed on to the agent, see
// engine's agent environment), which the agent must then be able to read.
func caFiles() []string {
	if f := os.Getenv("SSL_CERT_FILE"); filepath.IsAbs(f) {
		if _, err := os.Stat(f); err == nil {
			return []string{f}
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func checkToken(ctx context.Context, want string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if tok, ok := strings.CutPrefix(v, "Bearer "); ok && subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "missing or wrong client token (see the engine's registry file)")
}

func tokenUnary(want string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := checkToken(ctx, want); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

func tokenStream(want string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := checkToken(ss.Context(), want); err != nil {
			return err
		}
		return h(srv, ss)
	}
}

// RemoteEngine builds an engine that consults the running appliance at socket (`shield start
// --socket`): no pipeline, approval store or audit chain of its own; its decisions, approvals and
// their records are the appliance's. stateDir holds the engine's sessions and registry file
// (outside the workspace: Validate is applied with cfg). Close releases the connection.
func RemoteEngine(cfg *Config, ec EngineConfig, socket string, log *slog.Logger) (*Engine, func(), error) {
	sh, err := dialShield(socket)
	if err != nil {
		return nil, nil, err
	}
	protected := []string{cfg.StateDir, cfg.Audit.Dir, cfg.Audit.KeyFile, filepath.Dir(socket)}
	timeout := cfg.Approvals.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	e, err := newEngine(ec, sh, cfg.StateDir, protected, timeout, nil, log)
	if err != nil {
		sh.conn.Close()
		return nil, nil, err
	}
	return e, func() { e.Close(); sh.conn.Close() }, nil
}
