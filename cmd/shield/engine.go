package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/approval"
	"github.com/shieldsec/shield/shield/normalize"
)

func init() {
	register(&command{name: "internal-engine", hidden: true, run: runEngine})
	register(&command{name: exec.ReaperCommand, hidden: true, run: func(_ context.Context, _ *cmdEnv, args []string) error {
		if code := exec.Reaper(args); code != 0 {
			return exitError{code: code}
		}
		return nil
	}})
}

// EngineConfig is the file `shield start` hands to `shield internal-engine` (strict YAML). It
// embeds the service configuration (policy, audit, pipeline, log) and adds the engine's own keys.
type EngineConfig struct {
	Config `yaml:",inline"`
	// Workspace the agent works in. Required.
	Workspace string `yaml:"workspace"`
	// LLM endpoint of the agent.
	LLM struct {
		Provider  string `yaml:"provider"`    // openai | anthropic
		BaseURL   string `yaml:"base_url"`    // e.g. https://api.openai.com/v1
		Model     string `yaml:"model"`       //
		APIKeyEnv string `yaml:"api_key_env"` // name of the environment variable holding the key
	} `yaml:"llm"`
	// Egress lists the hosts the http_request tool may reach (default: none, tool off).
	Egress []string `yaml:"egress"`
	// AllowUnsandboxed starts the agent on kernels without Landlock (never when partial).
	AllowUnsandboxed bool `yaml:"allow_unsandboxed"`
}

// Validate reports every problem of an engine configuration at once: the service keys'
// (Config.Validate, which also keeps the state directory out of the workspace), the workspace,
// and the llm section the agent cannot start without (a missing one is a configuration error,
// not an agent that crash-loops).
func (c *EngineConfig) Validate() error {
	var errs []error
	if err := c.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Workspace == "" {
		errs = append(errs, errors.New("workspace is required"))
	} else if filepath.Clean(c.Workspace) != filepath.Clean(c.Policy.Workspace) {
		if err := checkStateOutside(&c.Config, c.Workspace); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case c.LLM.Provider == "" && c.LLM.BaseURL == "" && c.LLM.Model == "":
		errs = append(errs, errors.New("llm: missing: the agent needs a model (llm.provider, llm.base_url, llm.model; see README)"))
	default:
		switch c.LLM.Provider {
		case "openai", "anthropic":
		default:
			errs = append(errs, fmt.Errorf("llm.provider %q: use openai or anthropic", c.LLM.Provider))
		}
		if u, err := url.Parse(c.LLM.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("llm.base_url %q: want an http(s) URL", c.LLM.BaseURL))
		}
		if c.LLM.Model == "" {
			errs = append(errs, errors.New("llm.model is required"))
		}
		if strings.ContainsAny(c.LLM.APIKeyEnv, "=\x00") {
			errs = append(errs, fmt.Errorf("llm.api_key_env %q: not a variable name", c.LLM.APIKeyEnv))
		}
	}
	return errors.Join(errs...)
}

func loadEngineConfig(path string) (*EngineConfig, error) {
	c := &EngineConfig{}
	return c, decodeStrict(path, c)
}

// registryEntry is what a running engine writes so `shield chat` can find it.
type registryEntry struct {
	PID         int    `json:"pid"`
	Port        int    `json:"port"`
	Workspace   string `json:"workspace"`
	ClientToken string `json:"client_token"`
}

// registryPath is the registry file of a workspace under the state dir.
func registryPath(stateDir, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(stateDir, "engines", hex.EncodeToString(sum[:8])+".json")
}

func runEngine(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "internal-engine", "--config FILE")
	cfgPath := fs.String("config", "", "engine config (written by shield start)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadEngineConfig(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Workspace == "" {
		return usageError{"the config must name a workspace"}
	}
	ws, err := filepath.Abs(cfg.Workspace)
	if err != nil {
		return err
	}
	cfg.Workspace = ws
	if cfg.Policy.Workspace == "" {
		cfg.Policy.Workspace = ws
	}
	cfg.Config.withDefaults()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	log := newLogger(env, cfg.Log)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "engines"), 0o700); err != nil {
		return err
	}

	pol, err := loadPolicy(&cfg.Config)
	if err != nil {
		return err
	}
	al, err := openAuditLog(&cfg.Config, log)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer al.Close()
	var escalation []shield.Tier
	j, err := newJudge(&cfg.Config)
	if err != nil {
		return err
	}
	if j != nil {
		escalation = append(escalation, j)
	}
	apr, err := approval.Open(approval.Config{Path: strings.TrimSuffix(registryPath(cfg.StateDir, ws), ".json") + "-approvals.db",
		Timeout: cfg.Approvals.Timeout, TwoPersonClasses: cfg.Approvals.TwoPersonClasses, Recorder: approvalRecorder{al: al}, Log: log,
		Retention: cfg.Approvals.Retention,
		Redact:    audit.Redaction{Keys: cfg.Audit.RedactKeys, Values: cfg.Audit.RedactValues}})
	if err != nil {
		return fmt.Errorf("approvals: %w", err)
	}
	defer apr.Close()
	escalation = append(escalation, apr.Tier())
	p, err := shield.New(shield.Config{Recorder: al, CacheSize: cfg.Pipeline.CacheSize, Timeout: cfg.Pipeline.Timeout,
		Limits: normalize.Limits{MaxBytes: cfg.Pipeline.MaxArgumentBytes}, Escalation: escalation}, pol)
	if err != nil {
		return err
	}
	// The agent and its tools never reach the appliance's own state (audit trail, keys, tokens).
	protected := []string{cfg.StateDir, cfg.Audit.Dir, cfg.Audit.KeyFile}
	shell := &exec.Shell{ShieldBin: self, Workspace: ws, Protected: protected}
	var fetcher *exec.Fetcher
	if len(cfg.Egress) > 0 {
		fetcher = &exec.Fetcher{Allow: cfg.Egress, Log: log}
	}
	tools, err := engine.NewTools(ws, shell, fetcher)
	if err != nil {
		return err
	}
	sess, err := engine.OpenSessions(filepath.Join(cfg.StateDir, "sessions.db"))
	if err != nil {
		return err
	}
	defer sess.Close()
	rec := eventRecorder{al: al}
	aprTimeout := cfg.Approvals.Timeout
	if aprTimeout <= 0 {
		aprTimeout = 15 * time.Minute
	}
	engCfg := engine.Config{Pipeline: p, Tools: tools, Sessions: sess, Recorder: rec, Log: log,
		Approvals: apr, ApprovalTimeout: aprTimeout}
	var sup *engine.Supervisor // set below; sub-agents are spawned by the same supervisor
	engCfg.SpawnSubAgent = func(ctx context.Context, token string) (func() error, error) { return sup.SpawnSub(ctx, token) }
	eng, err := engine.New(engCfg)
	if err != nil {
		return err
	}

	// ClientService: loopback TCP, every call must carry the client token from the registry file.
	tokBytes := make([]byte, 16)
	if _, err := rand.Read(tokBytes); err != nil {
		return err
	}
	clientToken := hex.EncodeToString(tokBytes)
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cs := grpc.NewServer(grpc.UnaryInterceptor(tokenUnary(clientToken)), grpc.StreamInterceptor(tokenStream(clientToken)))
	agentv1.RegisterClientServiceServer(cs, eng)
	go cs.Serve(cl)
	defer cs.Stop()
	// AgentService: only on the socket pairs the supervisor hands to confined agents.
	al2 := engine.NewConnListener()
	as := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(as, eng)
	agentv1.RegisterSubAgentServiceServer(as, eng)
	go as.Serve(al2)
	defer as.Stop()

	port := cl.Addr().(*net.TCPAddr).Port
	reg := registryEntry{PID: os.Getpid(), Port: port, Workspace: ws, ClientToken: clientToken}
	regPath := registryPath(cfg.StateDir, ws)
	data, _ := json.Marshal(reg)
	if err := writeFileAtomic(regPath, data, 0o600); err != nil {
		return err
	}
	defer os.Remove(regPath)
	fmt.Fprintf(env.stdout, "PORT:%d\n", port)
	fmt.Fprintln(env.stdout, "WEB_DISABLED")

	sup = &engine.Supervisor{Engine: eng, ShieldBin: self, Workspace: ws, LLMPort: llmPort(cfg.LLM.BaseURL),
		AgentArgs: []string{"--llm-provider", cfg.LLM.Provider, "--llm-base-url", cfg.LLM.BaseURL, "--llm-model", cfg.LLM.Model,
			"--llm-api-key-env", cfg.LLM.APIKeyEnv},
		AllowUnsandboxed: cfg.AllowUnsandboxed, Protected: protected, Listener: al2, Recorder: rec, Log: log}
	err = sup.Run(ctx)
	eng.Shutdown("engine stopping")
	return err
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

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// eventRecorder writes engine events to the audit trail as their own record types.
type eventRecorder struct{ al auditLog }

func (r eventRecorder) Record(ctx context.Context, typ string, payload any) error {
	h, ok := r.al.(*auditHandle)
	if !ok {
		return nil
	}
	if typ == string(audit.TypeSandboxCanaryResult) {
		_, err := h.log.Append(ctx, audit.TypeSandboxCanaryResult, payload)
		return err
	}
	_, err := h.log.Append(ctx, audit.TypeAgentEvent, map[string]any{"event": typ, "detail": payload})
	return err
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
