package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/shieldsec/shield/cmd/shield/appliance"
	agentv1 "github.com/shieldsec/shield/proto/agent/v1"
)

func init() {
	register(&command{name: "start", summary: "run the engine and a sandboxed agent for a workspace", run: runStart})
	register(&command{name: "chat", summary: "send a message to the agent of a running workspace", run: runChat})
}

// Exit status with which the engine asks to be restarted at once (not counted as a crash).
const exitRestart = 75

func runStart(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "start", "--workspace DIR [--config FILE] [--state-dir DIR] [--socket PATH]")
	workspace := fs.String("workspace", "", "the agent's workspace directory")
	cfgPath := fs.String("config", "", "engine config (YAML: the serve keys plus workspace, llm, egress)")
	stateDir := fs.String("state-dir", "", "state directory, outside every workspace (default $STATE_DIRECTORY, /var/lib/shield as root, else $XDG_STATE_HOME/shield)")
	socket := fs.String("socket", "", "consult the running appliance on this unix socket (default: the state directory's socket when an appliance answers there, else run the appliance in the engine's process)")
	daemon := fs.Bool("daemon", false, "run in the background: print the connection info once the engine serves, then exit (stop with shield stop)")
	fs.BoolVar(daemon, "d", false, "short for --daemon")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *workspace == "" {
		return usageError{"--workspace is required"}
	}
	sc, err := startConfig(*cfgPath, *workspace, *stateDir)
	if err != nil {
		return err
	}
	ws := sc.Workspace
	// Checked here, before anything is created under the state dir, and again by the engine.
	cfg := sc.Appliance()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	// One appliance per state directory: a second workspace consults the running one.
	remote := *socket
	if remote == "" && appliance.SocketAnswers(cfg.Socket) {
		remote = cfg.Socket
		fmt.Fprintf(env.stderr, "shield start: consulting the appliance running on %s\n", remote)
	}
	if remote != "" {
		if remote, err = filepath.Abs(remote); err != nil {
			return err
		}
	}
	dir := filepath.Join(cfg.StateDir, "engines")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	base := strings.TrimSuffix(appliance.RegistryPath(cfg.StateDir, ws), ".json")
	if *daemon {
		return runDaemon(env, daemonArgs(ws, sc.StateDir, *cfgPath, *socket), sc.StateDir, ws, base)
	}

	// One instance per workspace: an exclusive lock held for our lifetime.
	lock, err := os.OpenFile(base+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("another shield start is running for %s (lock %s)", ws, lock.Name())
	}
	pidFile := base + ".pid"
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pidFile)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The engine reads the same file with the same overrides (a restart sees its edits).
	args = []string{"internal-engine", "--workspace", ws, "--state-dir", sc.StateDir}
	if *cfgPath != "" {
		abs, err := filepath.Abs(*cfgPath)
		if err != nil {
			return err
		}
		args = append(args, "--config", abs)
	}
	if remote != "" {
		args = append(args, "--socket", remote)
	}
	pm := &processManager{bin: self, args: args, env: env}
	return pm.run(ctx)
}

// startConfig reads the file `shield start --config` names and applies the command line: the
// workspace (absolute, an existing directory), the state directory (absolute, before the paths
// inside it are derived), and the workspace as policy.workspace when the file sets none.
func startConfig(path, workspace, stateDir string) (*StartConfig, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", ws)
	}
	sc, err := loadEngineConfig(path)
	if err != nil {
		return nil, err
	}
	sc.Workspace = ws
	if stateDir != "" {
		sc.StateDir = stateDir
	}
	if sc.StateDir == "" {
		sc.StateDir = appliance.DefaultStateDir()
	}
	if sc.StateDir, err = filepath.Abs(sc.StateDir); err != nil {
		return nil, err
	}
	sc.Config.WithDefaults()
	if sc.Policy.Workspace == "" {
		sc.Policy.Workspace = ws
	}
	return sc, nil
}

// processManager keeps the engine running: 5 crashes in a 60 s window end it, 1 s apart;
// exit status 75 restarts at once, uncounted; exit status 0 is a clean stop (not a crash); cancellation sends SIGTERM, then SIGKILL after 5 s.
type processManager struct {
	bin  string
	args []string
	env  *cmdEnv
	hup  <-chan os.Signal // SIGHUPs to pass on to the engine
}

func (pm *processManager) run(ctx context.Context) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	pm.hup = hup
	var crashes []time.Time
	for {
		code, err := pm.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if code == 0 && err == nil {
			// A clean exit is a stop, not a crash.
			fmt.Fprintln(pm.env.stderr, "shield start: engine stopped")
			return nil
		}
		if code == exitRestart {
			fmt.Fprintln(pm.env.stderr, "shield start: engine asked for a restart")
			continue
		}
		now := time.Now()
		crashes = append(crashes, now)
		for len(crashes) > 0 && now.Sub(crashes[0]) > 60*time.Second {
			crashes = crashes[1:]
		}
		fmt.Fprintf(pm.env.stderr, "shield start: engine exited (status %d, %v); %d crashes in the last 60 s\n", code, err, len(crashes))
		if len(crashes) >= 5 {
			return fmt.Errorf("engine crashed %d times within 60 s; giving up", len(crashes))
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil
		}
	}
}

// once starts the engine, waits for its start-up lines, then for its exit.
func (pm *processManager) once(ctx context.Context) (int, error) {
	cmd := osexec.Command(pm.bin, pm.args...)
	cmd.Stderr = pm.env.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	// Children the engine leaves behind must not keep Wait blocked on their copies of its pipes.
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Start-up protocol: PORT:<port>, then WEB:<port> | WEB_FAILED:<port>:<err> | WEB_DISABLED.
	timeout := time.After(30 * time.Second)
	port := ""
startup:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break startup
			}
			switch {
			case strings.HasPrefix(l, "PORT:"):
				port = strings.TrimPrefix(l, "PORT:")
			case l == "WEB_DISABLED", strings.HasPrefix(l, "WEB:"), strings.HasPrefix(l, "WEB_FAILED:"):
				fmt.Fprintf(pm.env.stdout, "engine ready: client port %s (%s)\n", port, l)
				break startup
			}
		case <-timeout:
			_ = cmd.Process.Kill()
			<-done
			return -1, errors.New("engine did not report its ports within 30 s")
		case <-ctx.Done():
			break startup
		}
	}
	// SIGHUP is the engine's (its appliance reloads the policy bundle): pass it on.
	for {
		select {
		case <-pm.hup:
			_ = cmd.Process.Signal(syscall.SIGHUP)
			continue
		case err := <-done:
			return exitCode(err), err
		case <-ctx.Done():
		}
		break
	}
	select {
	case err := <-done:
		return exitCode(err), err
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			return exitCode(err), err
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			err := <-done
			return exitCode(err), err
		}
	}
}

func exitCode(err error) int {
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func runChat(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "chat", "[--workspace DIR] [--state-dir DIR] [--session ID] [--otr] [--json] MESSAGE")
	workspace := fs.String("workspace", ".", "the workspace of the running engine")
	stateDir := fs.String("state-dir", defaultStateDir(), "state directory of the running engine")
	session := fs.String("session", "", "continue this session")
	otr := fs.Bool("otr", false, "off the record: not persisted, writes refused")
	asJSON := fs.Bool("json", false, "print one event per line as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	msg := strings.Join(fs.Args(), " ")
	if msg == "" {
		return usageError{"a message is required"}
	}
	ws, err := filepath.Abs(*workspace)
	if err != nil {
		return err
	}
	sd, err := filepath.Abs(*stateDir)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(appliance.RegistryPath(sd, ws))
	if err != nil {
		return fmt.Errorf("no running engine for %s (start one with: shield start --workspace %s): %w", ws, ws, err)
	}
	var reg appliance.RegistryEntry
	if err := json.Unmarshal(raw, &reg); err != nil {
		return fmt.Errorf("registry file: %w", err)
	}
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", reg.Port), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+reg.ClientToken)
	mode := agentv1.SessionMode_SESSION_MODE_NORMAL
	if *otr {
		mode = agentv1.SessionMode_SESSION_MODE_OTR
	}
	st, err := agentv1.NewClientServiceClient(conn).SendMessage(ctx, &agentv1.SendMessageRequest{SessionId: *session, Content: msg, Mode: mode})
	if err != nil {
		return err
	}
	failed := false
	for {
		ev, err := st.Recv()
		if err != nil {
			if err.Error() != "EOF" && !strings.Contains(err.Error(), "EOF") {
				return err
			}
			break
		}
		if ev.GetType() == agentv1.PipelineEvent_ERROR {
			failed = true
		}
		if *asJSON {
			b, _ := json.Marshal(map[string]any{"seq": ev.GetSeq(), "type": ev.GetType().String(), "session_id": ev.GetSessionId(),
				"call_id": ev.GetCallId(), "tool": ev.GetToolName(), "text": ev.GetText(), "decision": ev.GetDecision(),
				"reason": ev.GetReason(), "rules": ev.GetRules(), "action_id": ev.GetActionId(), "is_error": ev.GetIsError()})
			fmt.Fprintln(env.stdout, string(b))
			continue
		}
		renderEvent(env, ev)
	}
	if failed {
		return exitError{code: 1}
	}
	return nil
}

func renderEvent(env *cmdEnv, ev *agentv1.PipelineEvent) {
	w := env.stdout
	switch ev.GetType() {
	case agentv1.PipelineEvent_LLM_TOKEN:
		fmt.Fprint(w, ev.GetText())
	case agentv1.PipelineEvent_ACTION_STARTED:
		fmt.Fprintf(w, "\n▶ %s %s\n", ev.GetToolName(), ev.GetText())
	case agentv1.PipelineEvent_SHIELD_VERDICT:
		fmt.Fprintf(w, "  shield: %s %s %s\n", ev.GetDecision(), strings.Join(ev.GetRules(), ","), ev.GetReason())
	case agentv1.PipelineEvent_TIER3_APPROVAL_REQUIRED:
		fmt.Fprintf(w, "  approval required: %s (%s)\n", ev.GetActionId(), ev.GetReason())
	case agentv1.PipelineEvent_OTR_BLOCKED:
		fmt.Fprintf(w, "  off the record: %s\n", ev.GetReason())
	case agentv1.PipelineEvent_ACTION_COMPLETED:
		out := ev.GetText()
		if len(out) > 2000 {
			out = out[:2000] + "…"
		}
		fmt.Fprintf(w, "  result: %s\n", out)
	case agentv1.PipelineEvent_RESPONSE_COMPLETE:
		fmt.Fprintf(w, "\n%s\n[session %s]\n", ev.GetText(), ev.GetSessionId())
	case agentv1.PipelineEvent_ERROR:
		fmt.Fprintf(env.stderr, "error: %s\n", ev.GetText())
	}
}
