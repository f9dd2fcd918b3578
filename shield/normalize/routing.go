package normalize

import "strings"

// Request routing overrides: options and environment that send a request somewhere other than
// the host its URL names. curl --resolve HOST:PORT:ADDR and --connect-to HOST:PORT:HOST2:PORT2
// connect to ADDR/HOST2 while the URL (and the Host header, the TLS name, the credentials sent)
// still say HOST; a proxy (curl -x/--preproxy/--socks5…, HTTPie/xh --proxy, HTTPS_PROXY and
// friends set on the command or exported) and a DNS override (--dns-servers, --doh-url) see or
// steer every request. The real destination is a connect effect of its own, so a token sent to
// an allowed name routed to a foreign address is secret egress to that address
// (effects.secret-in-request), and a foreign address alone leaves the envelope.

// proxyEnv: variables naming the proxy of HTTP clients (curl, wget, git, pip, npm, Python, Go …).
var proxyEnv = set("http_proxy", "https_proxy", "all_proxy", "ftp_proxy", "socks_proxy", "socks5_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "pip_proxy", "yarn_proxy", "yarn_https_proxy", "grpc_proxy", "ws_proxy", "wss_proxy")

// routingEnv records the proxies a command's assignments (VAR=v cmd, env VAR=v, export VAR=v) set,
// and the bind addresses its own assignments give a server (listen.go envBinds).
func (w *walker) routingEnv(c *Command) {
	w.envBinds(c) // listen.go: HOST=0.0.0.0 npm start, OLLAMA_HOST=0.0.0.0 ollama serve
	for _, kv := range c.Env {
		name, val, _ := strings.Cut(kv, "=")
		if serverEnv[name] != nil && serverEnv[name][c.Name] {
			if name == "DOCKER_HOST" || name == "CONTAINER_HOST" {
				w.remoteDaemon(c.Name, val, false) // remote_exec.go
			} else {
				w.serverOverride(c.Name, val, false)
			}
		}
	}
	assigns := c.Env
	if declBuiltins[c.Name] {
		assigns = append(append([]string(nil), assigns...), c.Args...)
	}
	for _, kv := range assigns {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !proxyEnv[strings.ToLower(name)] || strings.TrimSpace(val) == "" {
			continue
		}
		w.proxyTarget(c.Name, val, false)
	}
}

// proxyTarget records a connection to a proxy given as URL or HOST[:PORT].
func (w *walker) proxyTarget(prog, v string, dyn bool) {
	v = strings.TrimSpace(v)
	if v == "" || v == "-" || strings.EqualFold(v, "none") || strings.EqualFold(v, "off") {
		return
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	w.markRoute(w.urlEffect(prog, v, dyn), DetailProxy)
}

// Connect effect details of routing overrides (rego expose.rego, net.route-override).
const (
	DetailProxy     = "proxy"      // every request goes through this proxy
	DetailResolve   = "resolve"    // a host name pinned to this address (curl --resolve)
	DetailConnectTo = "connect-to" // connections for a host go here (curl --connect-to)
	DetailDNS       = "dns-server" // name resolution through this server
	DetailServer    = "server"     // a client's server (with its stored credentials) given on the command
)

// serverEnv: variables naming the server a credential-carrying client talks to, and the
// programs that read them.
var serverEnv = map[string]map[string]bool{
	"VAULT_ADDR":       {"vault": true},
	"CONSUL_HTTP_ADDR": {"consul": true},
	"NOMAD_ADDR":       {"nomad": true},
	"DOCKER_HOST":      {"docker": true, "docker-compose": true},
	"CONTAINER_HOST":   {"podman": true},
}

// serverOptions: options naming the server of credential-carrying clients (kubectl --server
// sends the kubeconfig's token or client certificate there; vault -address its token).
var serverOptions = map[string][]string{
	"kubectl": {"-s", "--server"}, "oc": {"-s", "--server"}, "helm": {"--kube-apiserver"},
	"vault": {"-address", "--address"}, "consul": {"-http-addr"}, "nomad": {"-address"},
}

// serverOverride records the connection to a server given on the command.
func (w *walker) serverOverride(prog, v string, dyn bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if !strings.Contains(v, "://") {
		v = "https://" + v
	}
	w.markRoute(w.urlEffect(prog, v, dyn), DetailServer)
}

// markRoute sets the detail of the connect effect at index i (from urlEffect/hostEffect).
func (w *walker) markRoute(i int, detail string) {
	if i >= 0 && i < len(w.s.act.Effects) && w.s.act.Effects[i].Kind == EffectConnect {
		w.s.act.Effects[i].Detail = detail
	}
}

// routingOverrides reads the routing options of HTTP clients (args: the words after the program).
func (w *walker) routingOverrides(name string, args words) {
	if so := serverOptions[name]; so != nil {
		if v, dyn := optValue(args, so...); v != "" {
			w.serverOverride(name, v, dyn)
		}
		return
	}
	var opts map[string]string
	switch name {
	case "curl", "curlie":
		opts = map[string]string{"--resolve": "resolve", "--connect-to": "connectto", "--socks4": "proxy", "--socks4a": "proxy",
			"--socks5": "proxy", "--socks5-hostname": "proxy", "--dns-servers": "dns", "--doh-url": "url", "--proxy": "proxy", "-x": "proxy", "--preproxy": "proxy"}
	case "http", "https", "xh", "xhs":
		opts = map[string]string{"--proxy": "httpieproxy", "--resolve": "resolve"}
	case "aria2c":
		opts = map[string]string{"--all-proxy": "proxy", "--http-proxy": "proxy", "--https-proxy": "proxy", "--ftp-proxy": "proxy", "--async-dns-server": "dns"}
	case "pip", "pip3", "uv", "npm", "pnpm", "yarn":
		opts = map[string]string{"--proxy": "proxy", "--https-proxy": "proxy"}
		// npm config set proxy URL, yarn config set httpsProxy URL, pip config set global.proxy URL:
		// every later install goes through URL.
		if i := indexOf(args.argv, "set"); i > 0 && args.argv[i-1] == "config" && i+1 < len(args.argv) {
			k, v, eq := strings.Cut(args.argv[i+1], "=")
			dyn := args.dyn[i+1]
			if !eq && i+2 < len(args.argv) {
				v, dyn = args.argv[i+2], args.dyn[i+2]
			}
			if strings.Contains(strings.ToLower(k), "proxy") {
				w.proxyTarget(name, v, dyn)
			}
		}
	default:
		return
	}
	a := args.argv
	for i := 0; i < len(a); i++ {
		if a[i] == "--" {
			break
		}
		o, v, eq := strings.Cut(a[i], "=")
		kind, ok := opts[o]
		if !ok {
			continue
		}
		dyn := args.dyn[i]
		if !eq {
			if i+1 >= len(a) {
				break
			}
			i++
			v, dyn = a[i], args.dyn[i]
		}
		switch kind {
		case "proxy":
			w.proxyTarget(name, v, dyn)
		case "httpieproxy":
			// --proxy=PROTOCOL:URL
			if _, u, ok := strings.Cut(v, ":"); ok && strings.Contains(u, "//") {
				v = u
			}
			w.proxyTarget(name, v, dyn)
		case "url":
			w.markRoute(w.urlEffect(name, v, dyn), DetailDNS)
		case "dns":
			for _, h := range strings.Split(v, ",") {
				w.markRoute(w.hostEffect(name, strings.TrimSpace(h), "53", "dns", dyn), DetailDNS)
			}
		case "resolve":
			// curl: [+]HOST:PORT:ADDR[,ADDR…]; xh: HOST:ADDR.
			parts := splitForward(strings.TrimPrefix(v, "+"))
			var addrs, port string
			switch {
			case len(parts) >= 3:
				port, addrs = parts[1], strings.Join(parts[2:], ":")
			case len(parts) == 2:
				addrs = parts[1]
			}
			for _, ad := range strings.Split(addrs, ",") {
				if ad = strings.Trim(strings.TrimSpace(ad), "[]"); ad != "" {
					w.markRoute(w.hostEffect(name, ad, port, "https", dyn), DetailResolve)
				}
			}
		case "connectto":
			// HOST1:PORT1:HOST2:PORT2: connections for HOST1:PORT1 go to HOST2:PORT2.
			if parts := splitForward(v); len(parts) == 4 && parts[2] != "" {
				w.markRoute(w.hostEffect(name, parts[2], parts[3], "https", dyn), DetailConnectTo)
			}
		}
	}
}
