package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/shieldsec/shield/shield/proxy/modelguard"
)

// runProxyModel serves the model-API guard on --listen in front of --upstream: the tool calls in
// every answer are decided before the runtime sees them (shield/proxy/modelguard). Loopback
// only: the guard authenticates nobody (the runtime's API key is passed through to the upstream).
func runProxyModel(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "proxy model", "--listen HOST:PORT --upstream URL [--api openai-responses|openai-chat|anthropic] [FLAGS]")
	var pf proxyFlags
	pf.register(fs)
	listen := fs.String("listen", "127.0.0.1:8788", "loopback address the runtime's base URL points at")
	upstream := fs.String("upstream", "", "the model API's base URL, for example https://api.openai.com or http://127.0.0.1:8080")
	api := fs.String("api", "", "guard one API only: openai-responses, openai-chat or anthropic (default: route by path)")
	runtime := fs.String("runtime", "model-guard", "the runtime name sent with every call")
	if _, err := splitCommand(fs, args, false); err != nil {
		return err
	}
	if *upstream == "" {
		return usageError{"give --upstream URL"}
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return usageError{"--listen: " + err.Error()}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError{"--listen must be a loopback address: the guard authenticates nobody"}
	}
	hold := pf.hold
	if hold <= 0 {
		hold = modelguard.DefaultHold
	}
	c, err := pf.client(*runtime)
	if err != nil {
		return err
	}
	defer c.Close()
	g, err := modelguard.New(modelguard.Options{Decider: c, Upstream: *upstream, API: *api, Workspace: pf.workspace,
		Session: pf.session, Hold: hold, Log: proxyLogger(env, "model")})
	if err != nil {
		return usageError{err.Error()}
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Fprintf(env.stderr, "shield proxy model: serving http://%s -> %s\n", l.Addr(), *upstream)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
