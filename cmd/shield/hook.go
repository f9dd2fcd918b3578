package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/hook"
)

func init() {
	register(&command{name: "hook", summary: "PreToolUse hook for Claude Code and Codex (and install it)", run: runHook})
}

const hookUsage = `claude-code|codex [--socket PATH | --addr HOST:PORT [--token-env VAR]] [--timeout DURATION]
       shield hook install claude-code|codex [--project DIR] [--settings FILE] [--codex-home DIR]
           [--socket PATH | --addr HOST:PORT [--token-env VAR]] [--timeout SECONDS] [--shield PATH]

The hook reads the runtime's PreToolUse input on stdin and asks the appliance. ALLOW: exit 0, no
output. Anything else (BLOCK, an ESCALATE a human did not approve in time, an unreachable
appliance, bad input, a timeout): exit 2, the reason on stderr and the deny JSON on stdout.`

// hookConn are the flags naming the appliance, shared by the hook and its install.
type hookConn struct {
	socket, addr, tokenEnv string
}

func (c *hookConn) register(fs *flag.FlagSet) {
	fs.StringVar(&c.socket, "socket", "", "the appliance's unix socket (default $SHIELD_SOCKET, else <state dir>/shield.sock)")
	fs.StringVar(&c.addr, "addr", "", "the appliance's TCP address instead of the socket (loopback, bearer token)")
	fs.StringVar(&c.tokenEnv, "token-env", "SHIELD_TOKEN", "with --addr: environment variable holding the bearer token")
}

func runHook(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) > 0 && args[0] == "install" {
		return runHookInstall(env, args[1:])
	}
	// From here on every failure is exit status 2: both runtimes run the tool on any other
	// status, so even a mistake in the hook's own command line must block.
	deny := func(why string) error {
		r := hook.ResultFor(hook.Denied(why))
		env.stdout.Write(r.Stdout)
		fmt.Fprint(env.stderr, r.Stderr)
		return exitError{code: r.Exit}
	}
	if len(args) == 0 {
		return deny("shield hook: missing runtime (claude-code or codex)")
	}
	rt, err := hook.ParseRuntime(args[0])
	if err != nil {
		return deny("shield hook: " + err.Error())
	}
	fs := newFlagSet(env, "hook "+args[0], hookUsage)
	var conn hookConn
	conn.register(fs)
	timeout := fs.Duration("timeout", hook.DefaultTimeout, "answer (deny) within this long, holding an ESCALATE for a human meanwhile; keep it below the runtime's hook timeout")
	if err := parseFlags(fs, args[1:]); err != nil {
		return exitError{code: 2} // flag has said why on stderr; 2 blocks the call
	}
	if fs.NArg() > 0 {
		return deny("shield hook: unexpected arguments " + strings.Join(fs.Args(), " "))
	}
	opts := client.Options{Socket: conn.socket, Runtime: string(rt), EvalTimeout: min(*timeout, 10*time.Second)}
	if conn.addr != "" {
		opts.Addr, opts.Token = conn.addr, lookupEnv(conn.tokenEnv)
	}
	c, err := client.New(opts)
	if err != nil {
		return deny("shield hook: " + err.Error())
	}
	defer c.Close()
	r := hook.Command(ctx, rt, c, env.stdin, *timeout)
	env.stdout.Write(r.Stdout)
	fmt.Fprint(env.stderr, r.Stderr)
	if r.Exit != 0 {
		return exitError{code: r.Exit}
	}
	return nil
}

func runHookInstall(env *cmdEnv, args []string) error {
	if len(args) == 0 {
		return usageError{"hook install: missing runtime (claude-code or codex)\nUsage: shield hook " + hookUsage}
	}
	rt, err := hook.ParseRuntime(args[0])
	if err != nil {
		return usageError{"hook install: " + err.Error()}
	}
	fs := newFlagSet(env, "hook install "+args[0], hookUsage)
	var conn hookConn
	conn.register(fs)
	project := fs.String("project", "", "install for this project only (DIR/.claude/settings.json, DIR/.codex/hooks.json) instead of for the user")
	settings := fs.String("settings", "", "claude-code: the settings file to edit (default: --project's, else $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json)")
	codexHome := fs.String("codex-home", "", "codex: the Codex home (default $CODEX_HOME, else ~/.codex); its config.toml gets the hook's trust entry")
	timeoutSec := fs.Int("timeout", 300, "the runtime's hook timeout in seconds; the hook itself answers 10 s before it")
	shieldPath := fs.String("shield", "", "absolute path of the shield binary the runtime runs (default: this binary)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"hook install: unexpected arguments " + strings.Join(fs.Args(), " ")}
	}
	if *timeoutSec < 15 || *timeoutSec > 3600 {
		return usageError{"hook install: --timeout must be 15..3600 seconds"}
	}
	command, err := hookCommand(rt, conn, *shieldPath, time.Duration(*timeoutSec-10)*time.Second)
	if err != nil {
		return err
	}
	var dir string
	if *project != "" {
		if dir, err = filepath.Abs(*project); err != nil {
			return err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--project %s: not a directory", dir)
		}
	}
	home, _ := os.UserHomeDir()
	switch rt {
	case hook.ClaudeCode:
		path := *settings
		switch {
		case path != "":
		case dir != "":
			path = filepath.Join(dir, ".claude", "settings.json")
		case lookupEnv("CLAUDE_CONFIG_DIR") != "":
			path = filepath.Join(lookupEnv("CLAUDE_CONFIG_DIR"), "settings.json")
		default:
			path = filepath.Join(home, ".claude", "settings.json")
		}
		old, err := readSettings(path)
		if err != nil {
			return err
		}
		out, err := hook.MergeClaudeSettings(old, command, *timeoutSec)
		if err != nil {
			return err
		}
		if err := writeSettings(path, out); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "Claude Code: PreToolUse hook for every tool in %s\n  %s\n", path, command)
	case hook.Codex:
		chome := *codexHome
		if chome == "" {
			chome = lookupEnv("CODEX_HOME")
		}
		if chome == "" {
			chome = filepath.Join(home, ".codex")
		}
		if chome, err = filepath.Abs(chome); err != nil {
			return err
		}
		hooksPath := filepath.Join(chome, "hooks.json")
		if dir != "" {
			hooksPath = filepath.Join(dir, ".codex", "hooks.json")
		}
		old, err := readSettings(hooksPath)
		if err != nil {
			return err
		}
		out, group, err := hook.MergeCodexHooks(old, command, *timeoutSec)
		if err != nil {
			return err
		}
		key := hook.CodexTrustKey(hooksPath, group)
		trust := hook.CodexTrust{Hooks: map[string]string{key: hook.CodexTrustHash(command, *timeoutSec, "")}}
		if dir != "" {
			// Codex loads a project's .codex/ only for a trusted project; without this the hook
			// would be skipped silently.
			trust.Projects = []string{dir}
		}
		configPath := filepath.Join(chome, "config.toml")
		oldConfig, err := readSettings(configPath)
		if err != nil {
			return err
		}
		newConfig, err := hook.MergeCodexConfig(oldConfig, trust)
		if err != nil {
			return err
		}
		if err := writeSettings(hooksPath, out); err != nil {
			return err
		}
		if err := writeSettings(configPath, newConfig); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "Codex: PreToolUse hook for every tool in %s\n  %s\ntrusted in %s as %s\n", hooksPath, command, configPath, key)
		if dir != "" {
			fmt.Fprintf(env.stdout, "project %s marked trusted in %s (Codex loads a project's hooks only then)\n", dir, configPath)
		}
	}
	return nil
}

// hookCommand is the command line the runtime runs: absolute paths only (a runtime that cannot
// start the hook runs the tool), quoted for sh -c.
func hookCommand(rt hook.Runtime, conn hookConn, shieldPath string, hookTimeout time.Duration) (string, error) {
	if shieldPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("locating this binary (pass --shield): %w", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		shieldPath = exe
	}
	if !filepath.IsAbs(shieldPath) {
		return "", usageError{"hook install: --shield must be an absolute path"}
	}
	parts := []string{shQuote(shieldPath), "hook", string(rt), "--timeout", hookTimeout.String()}
	if conn.addr != "" {
		parts = append(parts, "--addr", shQuote(conn.addr), "--token-env", shQuote(conn.tokenEnv))
	} else {
		sock := conn.socket
		if sock == "" {
			sock = client.DefaultSocket()
		}
		abs, err := filepath.Abs(sock)
		if err != nil {
			return "", err
		}
		parts = append(parts, "--socket", shQuote(abs))
	}
	return strings.Join(parts, " "), nil
}

// shQuote quotes s for sh when it holds anything but plain path characters.
func shQuote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@=,", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func readSettings(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, hook.MaxSettings+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > hook.MaxSettings {
		return nil, fmt.Errorf("%s: over %d bytes", path, hook.MaxSettings)
	}
	return b, nil
}

// writeSettings replaces path atomically, keeping its mode (0600 for a new file).
func writeSettings(path string, b []byte) error {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".shield-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
