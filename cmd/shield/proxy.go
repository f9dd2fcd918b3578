package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
)

const proxyUsage = `RUNTIME [FLAGS] -- COMMAND [ARGS…]

Runtimes:
  mcp          an MCP server on stdio: shield proxy mcp [--server NAME] -- npx @modelcontextprotocol/server-filesystem DIR
               or rewrite an MCP config so that every server runs behind Shield:
               shield proxy mcp --wrap .mcp.json [--out FILE]
  codex        Codex app-server (JSON-RPC on stdio): shield proxy codex -- codex app-server
  codex-proto  Codex 0.42 "proto" (SQ/EQ JSON lines):  shield proxy codex-proto -- codex proto
  roz          a roz.v1 runtime (gRPC, seed 002):      shield proxy roz --listen 127.0.0.1:50061 --upstream 127.0.0.1:8080
  model        a model API (OpenAI Responses / chat, Anthropic Messages): tool calls in the answer decided
               shield proxy model --listen 127.0.0.1:8788 --upstream https://api.openai.com [--api openai-responses]

The proxy speaks to the client on its own stdin/stdout, runs COMMAND with pipes, and asks the
running appliance (--socket, $SHIELD_SOCKET, or the default state directory's socket) about
every proposed action. Anything that goes wrong refuses the action.`

func init() {
	register(&command{name: "proxy", summary: "put Shield in front of an MCP server, Codex app-server, Codex proto or roz", run: runProxy})
}

// proxyFlags are the flags every proxy shares.
type proxyFlags struct {
	socket, addr, tokenEnv, session, workspace string
	hold, evalTimeout                          time.Duration
}

func (p *proxyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.socket, "socket", "", "the appliance's unix socket (default $SHIELD_SOCKET, else the state directory's shield.sock)")
	fs.StringVar(&p.addr, "addr", "", "the appliance's TCP address instead of the socket (loopback, with a bearer token)")
	fs.StringVar(&p.tokenEnv, "token-env", "SHIELD_TOKEN", "environment variable holding the bearer token for --addr")
	fs.StringVar(&p.session, "session", "", "session id sent with every call (default: a random id per proxy process)")
	fs.StringVar(&p.workspace, "workspace", "", "the agent's workspace, sent as the calls' cwd (default: the current directory)")
	fs.DurationVar(&p.hold, "hold", 0, "how long an ESCALATE waits for a human before it is refused (default per runtime)")
	fs.DurationVar(&p.evalTimeout, "eval-timeout", 10*time.Second, "bound on one Evaluate call")
}

func (p *proxyFlags) client(runtime string) (*client.Client, error) {
	if p.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		p.workspace = wd
	}
	abs, err := filepath.Abs(p.workspace)
	if err != nil {
		return nil, err
	}
	p.workspace = abs
	if p.session == "" {
		var b [8]byte
		rand.Read(b[:])
		p.session = runtime + "-" + hex.EncodeToString(b[:])
	}
	o := client.Options{Socket: p.socket, Addr: p.addr, Runtime: runtime, EvalTimeout: p.evalTimeout}
	if p.addr != "" && p.tokenEnv != "" {
		o.Token = os.Getenv(p.tokenEnv)
	}
	return client.New(o)
}

func runProxy(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.stderr, "Usage: shield proxy "+proxyUsage)
		if len(args) == 0 {
			return exitError{code: 2}
		}
		return nil
	}
	switch args[0] {
	case "mcp":
		return runProxyMCP(ctx, env, args[1:])
	case "codex":
		return runProxyCodex(ctx, env, args[1:])
	case "codex-proto":
		return runProxyCodexProto(ctx, env, args[1:])
	case "roz":
		return runProxyRoz(ctx, env, args[1:])
	case "model":
		return runProxyModel(ctx, env, args[1:])
	}
	return usageError{fmt.Sprintf("unknown runtime %q\nUsage: shield proxy %s", args[0], proxyUsage)}
}

// splitCommand parses flags up to "--" and returns the command after it.
func splitCommand(fs *flag.FlagSet, args []string, needCommand bool) ([]string, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	if !needCommand {
		if len(rest) > 0 {
			return nil, usageError{"unexpected arguments: " + fmt.Sprint(rest)}
		}
		return nil, nil
	}
	if len(rest) == 0 {
		return nil, usageError{"give the command to run after --"}
	}
	return rest, nil
}

// child runs a runtime or server with its stdin and stdout piped to the proxy and its stderr
// passed through. Ending ctx sends SIGTERM, then SIGKILL 5 s later.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
}

func startChild(ctx context.Context, env *cmdEnv, argv []string) (*child, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = env.stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return &child{cmd: cmd, stdin: in, stdout: out}, nil
}

// wait ends with the child's exit status.
func (c *child) wait() error {
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitError{code: code}
		}
		return exitError{code: 1}
	}
	return err
}

func proxyLogger(env *cmdEnv, runtime string) func(string, ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(env.stderr, "shield proxy %s: %s\n", runtime, fmt.Sprintf(format, a...))
	}
}
