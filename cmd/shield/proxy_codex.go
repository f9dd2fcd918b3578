package main

import (
	"context"
	"io"

	"github.com/shieldsec/shield/shield/proxy/codex"
)

// codexRelay is what both Codex dialects' relays offer.
type codexRelay interface {
	Run(ctx context.Context, clientIn io.Reader, clientOut io.Writer, serverIn io.WriteCloser, serverOut io.Reader) error
}

func runProxyCodex(ctx context.Context, env *cmdEnv, args []string) error {
	return runCodexRelay(ctx, env, args, "codex", "[FLAGS] -- codex app-server", func(o codex.Options) (codexRelay, error) { return codex.NewAppServer(o) })
}

func runProxyCodexProto(ctx context.Context, env *cmdEnv, args []string) error {
	return runCodexRelay(ctx, env, args, "codex-proto", "[FLAGS] -- codex proto", func(o codex.Options) (codexRelay, error) { return codex.NewProto(o) })
}

func runCodexRelay(ctx context.Context, env *cmdEnv, args []string, name, usage string, build func(codex.Options) (codexRelay, error)) error {
	fs := newFlagSet(env, "proxy "+name, usage)
	var pf proxyFlags
	pf.register(fs)
	deferAllowed := fs.Bool("defer-allowed", false, "pass approval requests Shield allows on to the client (its answer narrowed to a one-shot decision) instead of accepting them")
	keepPolicy := fs.Bool("keep-approval-policy", false, "leave the client's approval policy as sent (default: rewritten to \"untrusted\", so that Codex asks before every command)")
	allowConfig := fs.Bool("allow-config-writes", false, "app-server: let the client change Codex's configuration, plugins and MCP servers")
	argv, err := splitCommand(fs, args, true)
	if err != nil {
		return err
	}
	c, err := pf.client("codex")
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := build(codex.Options{Decider: c, Workspace: pf.workspace, Session: pf.session, Hold: pf.hold,
		DeferAllowed: *deferAllowed, KeepApprovalPolicy: *keepPolicy, AllowConfigWrites: *allowConfig, Log: proxyLogger(env, name)})
	if err != nil {
		return err
	}
	ch, err := startChild(ctx, env, argv)
	if err != nil {
		return err
	}
	if err := r.Run(ctx, env.stdin, env.stdout, ch.stdin, ch.stdout); err != nil {
		proxyLogger(env, name)("relay: %v", err)
	}
	return ch.wait()
}
