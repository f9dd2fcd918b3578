package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shieldsec/shield/shield/proxy/roz"
)

// runProxyRoz serves roz.v1 on --listen and relays to --upstream (seed 002). Loopback only on
// both sides: the proxy has no TLS and authenticates nobody itself (the runtime's bearer token
// is passed through).
func runProxyRoz(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "proxy roz", "--listen HOST:PORT --upstream HOST:PORT [FLAGS]")
	var pf proxyFlags
	pf.register(fs)
	listen := fs.String("listen", "127.0.0.1:50061", "loopback address the IDE connects to")
	upstream := fs.String("upstream", "", "the roz runtime's gRPC address (host:port, plaintext)")
	if _, err := splitCommand(fs, args, false); err != nil {
		return err
	}
	if *upstream == "" {
		return usageError{"give --upstream HOST:PORT"}
	}
	for _, a := range []string{*listen, *upstream} {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return usageError{err.Error()}
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return usageError{a + " is not a loopback address: the proxy speaks plaintext gRPC"}
		}
	}
	c, err := pf.client("roz")
	if err != nil {
		return err
	}
	defer c.Close()
	up, err := grpc.NewClient("passthrough:///"+*upstream, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer up.Close()
	p, err := roz.New(roz.Options{Decider: c, Workspace: pf.workspace, Session: pf.session, Log: proxyLogger(env, "roz")}, up)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(p.ServerOptions()...)
	go func() { <-ctx.Done(); srv.GracefulStop() }()
	fmt.Fprintf(env.stderr, "shield proxy roz: serving %s -> %s\n", l.Addr(), *upstream)
	if err := srv.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}
