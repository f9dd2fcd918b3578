package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/shieldsec/shield/shield/proxy/mcp"
)

func runProxyMCP(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "proxy mcp", "[FLAGS] -- SERVER_COMMAND [ARGS…]  |  --wrap CONFIG.json [--out FILE]")
	var pf proxyFlags
	pf.register(fs)
	server := fs.String("server", "", "the server's name, sent as label mcp.server (default: the command's base name)")
	wrap := fs.String("wrap", "", "rewrite a Claude Code / Codex JSON MCP config (mcpServers) so that every stdio server runs behind this proxy; prints it, or writes --out")
	out := fs.String("out", "", "with --wrap: the file to write (default: standard output)")
	listen := fs.String("listen", "", "Streamable HTTP mode: serve the MCP endpoint on this loopback host:port (with --upstream)")
	upstream := fs.String("upstream", "", "Streamable HTTP mode: the server's MCP endpoint URL, for example http://127.0.0.1:3001/mcp")
	argv, err := splitCommand(fs, args, !containsFlag(args, "wrap") && !containsFlag(args, "listen"))
	if err != nil {
		return err
	}
	if *wrap != "" {
		return wrapMCPConfig(env, *wrap, *out, pf)
	}
	if *listen != "" {
		return serveMCPHTTP(ctx, env, pf, *server, *listen, *upstream)
	}
	if *server == "" {
		*server = baseName(argv[0])
	}
	c, err := pf.client("mcp")
	if err != nil {
		return err
	}
	defer c.Close()
	r, err := mcp.NewRelay(mcp.Options{Decider: c, Server: *server, Workspace: pf.workspace, Session: pf.session,
		Hold: pf.hold, Log: proxyLogger(env, "mcp")})
	if err != nil {
		return err
	}
	ch, err := startChild(ctx, env, argv)
	if err != nil {
		return err
	}
	if err := r.Run(ctx, env.stdin, env.stdout, ch.stdin, ch.stdout); err != nil {
		proxyLogger(env, "mcp")("relay: %v", err)
	}
	return ch.wait()
}

// serveMCPHTTP runs the Streamable HTTP proxy until ctx ends. It listens on loopback only: the
// proxy has no authentication of its own.
func serveMCPHTTP(ctx context.Context, env *cmdEnv, pf proxyFlags, server, listen, upstream string) error {
	if upstream == "" {
		return usageError{"--listen needs --upstream URL"}
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return usageError{"--listen: " + err.Error()}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageError{"--listen must be a loopback address: the proxy authenticates nobody"}
	}
	if server == "" {
		server = "mcp"
	}
	c, err := pf.client("mcp")
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := mcp.NewHTTPProxy(mcp.Options{Decider: c, Server: server, Workspace: pf.workspace, Session: pf.session,
		Hold: pf.hold, Log: proxyLogger(env, "mcp")}, upstream)
	if err != nil {
		return usageError{err.Error()}
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Fprintf(env.stderr, "shield proxy mcp: serving http://%s -> %s\n", l.Addr(), upstream)
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func containsFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-"+name || a == "--"+name || strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// wrapMCPConfig rewrites every stdio server of an mcpServers config to run behind
// `shield proxy mcp`. An HTTP server cannot be wrapped this way: it is an error, so that no
// server is left unguarded by mistake.
func wrapMCPConfig(env *cmdEnv, path, out string, pf proxyFlags) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var servers map[string]map[string]json.RawMessage
	if err := json.Unmarshal(doc["mcpServers"], &servers); err != nil || servers == nil {
		return fmt.Errorf("%s: no mcpServers object", path)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var unguarded []string
	for _, name := range names {
		s := servers[name]
		var typ, cmd string
		_ = json.Unmarshal(s["type"], &typ)
		if json.Unmarshal(s["command"], &cmd) != nil || cmd == "" || (typ != "" && typ != "stdio") {
			unguarded = append(unguarded, name)
			continue
		}
		var sargs []string
		if raw, ok := s["args"]; ok && json.Unmarshal(raw, &sargs) != nil {
			return fmt.Errorf("%s: server %s: args is not a list of strings", path, name)
		}
		if cmd == self && len(sargs) > 1 && sargs[0] == "proxy" {
			continue // already wrapped
		}
		nargs := []string{"proxy", "mcp", "--server", name}
		if pf.socket != "" {
			nargs = append(nargs, "--socket", pf.socket)
		}
		if pf.addr != "" {
			nargs = append(nargs, "--addr", pf.addr)
		}
		if pf.workspace != "" {
			nargs = append(nargs, "--workspace", pf.workspace)
		}
		nargs = append(append(nargs, "--", cmd), sargs...)
		s["command"], _ = json.Marshal(self)
		s["args"], _ = json.Marshal(nargs)
	}
	if len(unguarded) > 0 {
		return fmt.Errorf("%s: servers %s are not stdio commands and cannot be wrapped; remove them or put them behind an HTTP proxy", path, strings.Join(unguarded, ", "))
	}
	doc["mcpServers"], _ = json.Marshal(servers)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if out == "" {
		_, err := env.stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o600)
}
