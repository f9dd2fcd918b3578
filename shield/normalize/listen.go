package normalize

import (
	"strconv"
	"strings"
)

// Bind addresses of listening sockets. A server or forwarder started by the agent is reachable by
// whoever reaches the address it binds: loopback is this host only, anything else (0.0.0.0, ::,
// "*", a LAN or public address) hands the service to the network. A forwarder (kubectl proxy and
// port-forward, ssh -L/-D, socat LISTEN→CONNECT, an IAP tunnel) relays the user's own access (the
// cluster credentials, the bastion's network) to every client of that address.
//
// The spec roles "bind" (a server's bind address: uvicorn --host, gunicorn -b, jupyter --ip,
// flask run --host, vite --host …) and "relay" (a forwarder's: kubectl port-forward --address)
// record one listen effect per address, Target the host ("0.0.0.0", "::", "192.0.2.4",
// "localhost") and Detail the role; rego/expose.rego judges them (net.listen-exposed,
// net.relay-exposed). An address given only by the program's default (python -m http.server,
// docker run -p 8080:80) is no bind effect: the static-server and container rules judge what is
// served; a bind effect records that the call itself asked for the address.

// Listen effect details.
const (
	DetailBind  = "bind"  // a server's explicit bind address
	DetailRelay = "relay" // a forwarder's bind address (the user's access relayed to its clients)
	// DetailRemoteAccess: this host's shell offered through a vendor relay (code tunnel).
	DetailRemoteAccess = "remote access"
)

// serveWords: sub-commands of project scripts that start a dev server (php artisan serve,
// python manage.py runserver is read by djangoRunserver, node server.js serve …).
var serveWords = set("serve", "server", "runserver", "dev", "start", "preview", "s")

// interpreterServeBinds: an interpreter running a project script with a serve sub-command and a
// bind option (php artisan serve --host=0.0.0.0, ruby bin/rails server -b 0.0.0.0).
func (w *walker) interpreterServeBinds(name string, args words) {
	switch name {
	case "php", "python", "python3", "ruby", "node", "deno", "bun", "perl":
	default:
		return
	}
	a := args.argv
	served := false
	for i, x := range a {
		if i > 0 && serveWords[x] && !strings.HasPrefix(a[i-1], "-") {
			served = true
			continue
		}
		if !served {
			continue
		}
		o, v, eq := strings.Cut(x, "=")
		if !bindFlags[o] && !(o == "-b" && name == "ruby") {
			continue
		}
		if !eq {
			if i+1 >= len(a) || strings.HasPrefix(a[i+1], "-") {
				continue
			}
			v = a[i+1]
		}
		w.bindValue(name, DetailBind, v, args.dyn[i])
	}
}

// bindValue records the bind addresses of one option value (role bind or relay).
func (w *walker) bindValue(prog, role, val string, dyn bool) {
	for _, part := range strings.Split(val, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "-") {
			continue // a bare option (vite --host --port 3000): runnerBinds reads it
		}
		host, port, ok := bindHost(part)
		if !ok {
			continue
		}
		pn, _ := strconv.Atoi(port)
		w.s.addEffect(Effect{Kind: EffectListen, Target: host, Program: prog, Detail: role, Port: pn,
			Unresolved: dyn && isUnresolvedText(part)})
	}
}

// bindHost reads a bind address: HOST, HOST:PORT, [V6]:PORT, V6, tcp://HOST:PORT,
// tcp:PORT:interface=HOST (twistd), "*" or "" (every interface). A bare port, a unix socket and
// an fd:// address bind no network address (ok false).
func bindHost(v string) (host, port string, ok bool) {
	lv := strings.ToLower(v)
	switch {
	case strings.HasPrefix(lv, "unix:"), strings.HasPrefix(lv, "fd://"), strings.HasPrefix(lv, "/"), strings.HasPrefix(lv, "./"):
		return "", "", false
	case isDigits(v) && v != "":
		return "", "", false
	}
	if i := strings.Index(lv, "interface="); i >= 0 {
		h := v[i+len("interface="):]
		if j := strings.IndexByte(h, ':'); j >= 0 && !strings.Contains(h[j+1:], ":") {
			h = h[:j]
		}
		return normBindHost(h), "", true
	}
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	v = strings.TrimSuffix(v, "/")
	if strings.HasPrefix(v, "[") {
		if j := strings.IndexByte(v, ']'); j > 0 {
			return normBindHost(v[1:j]), strings.TrimPrefix(v[j+1:], ":"), true
		}
	}
	if strings.Count(v, ":") == 1 {
		h, p, _ := strings.Cut(v, ":")
		return normBindHost(h), p, true
	}
	return normBindHost(v), "", true
}

// normBindHost: "*", "" and "0" bind every interface, written 0.0.0.0; "::" and "[::]" likewise
// stay as given; names are lower-cased.
func normBindHost(h string) string {
	h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "'\""))
	switch h {
	case "", "*", "0", "all", "any", "true":
		return "0.0.0.0"
	}
	return h
}

// sshForwardBinds records the local bind addresses of ssh -L and -D forwards: -L
// [BIND:]PORT:HOST:HOSTPORT and -D [BIND:]PORT bind loopback unless a bind address is given or
// -g / -o GatewayPorts=yes lets remote hosts connect. (-R binds on the remote side: exec.tunnel.)
func (w *walker) sshForwardBinds(pa parsedArgs, name string) {
	gateway := pa.has("-g")
	for _, v := range pa.vals {
		if v.opt == "-o" {
			k, val, ok := strings.Cut(v.val, "=")
			if !ok {
				k, val, _ = strings.Cut(v.val, " ")
			}
			if strings.EqualFold(strings.TrimSpace(k), "gatewayports") && strings.EqualFold(strings.TrimSpace(val), "yes") {
				gateway = true
			}
		}
	}
	for _, v := range pa.vals {
		fields := -1
		switch v.opt {
		case "-L":
			fields = 4
		case "-D":
			fields = 2
		default:
			continue
		}
		parts := splitForward(v.val)
		switch {
		case len(parts) == fields:
			// An explicit bind address; empty (-L :8080:h:80) or "*" is every interface.
			w.bindValue(name, DetailRelay, parts[0], v.dyn)
		case gateway:
			w.bindValue(name, DetailRelay, "*", false)
		}
	}
}

// splitForward splits an ssh forward spec on ':' outside brackets ([::1]:8080:db:5432).
func splitForward(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				out = append(out, strings.Trim(s[start:i], "[]"))
				start = i + 1
			}
		}
	}
	return append(out, strings.Trim(s[start:], "[]"))
}

// socatListenBind: a socat LISTEN address binds every interface unless it has a bind=ADDR
// option; one that relays to another address is a forwarder.
func (w *walker) socatListenBind(name, opts string, relays, dyn bool) {
	role := DetailBind
	if relays {
		role = DetailRelay
	}
	for _, o := range strings.Split(opts, ",") {
		if v, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(o)), "bind="); ok {
			w.bindValue(name, role, v, dyn)
			return
		}
	}
	w.bindValue(name, role, "*", false)
}

// publishBinds: docker/podman run -p [IP:]HOSTPORT:CONTAINERPORT binds IP when one is given.
func (w *walker) publishBind(name, val string, dyn bool) {
	parts := splitForward(val)
	if len(parts) == 3 && parts[0] != "" {
		w.bindValue(name, DetailBind, parts[0], dyn)
	}
}

// socatRelays: another address of the socat command connects somewhere (TCP, UDP, a unix
// socket, TLS, SOCKS, a program): the listener forwards its clients there.
func socatRelays(argv []string, listen int) bool {
	for i, a := range argv {
		if i == listen || strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		typ, _, _ := strings.Cut(strings.ToLower(a), ":")
		switch typ {
		case "tcp", "tcp4", "tcp6", "tcp-connect", "udp", "udp4", "udp6", "udp-sendto", "unix-connect", "unix-client", "unix",
			"openssl", "openssl-connect", "ssl", "socks4", "socks4a", "socks5", "proxy", "exec", "system", "vsock-connect":
			return true
		}
	}
	return false
}

// bindFlags are the options by which dev servers started through a package runner take their
// bind address (vite, astro, nuxt --host; next -H/--hostname; webpack serve --host; storybook
// --host; others --bind, --ip, --address). A bare --host (vite, astro, nuxt) binds every
// interface.
var bindFlags = set("--host", "--hostname", "--bind", "--ip", "--address", "--bind-address", "--bind-addr")

// runnerBinds reads the bind options given to a dev server through a package runner (npm run dev
// -- --host 0.0.0.0, pnpm dev --host, yarn vite --host, npx next dev -H 0.0.0.0), and a bare
// --host of a program whose spec gives --host the bind role (vite --host).
func (w *walker) runnerBinds(name string, args words) {
	w.djangoRunserver(name, args)
	w.interpreterServeBinds(name, args)
	runner := npmFamily[name]
	if !runner {
		sp := w.s.n.opt.Commands.lookup(name)
		if sp == nil || sp.opts["--host"] != DetailBind {
			return
		}
	}
	for i, a := range args.argv {
		o, v, eq := strings.Cut(a, "=")
		if !bindFlags[o] && !(runner && o == "-H" && hasWord(args.argv, "next")) {
			continue
		}
		if eq {
			if runner {
				w.bindValue(name, DetailBind, v, args.dyn[i])
			}
			continue
		}
		if i+1 < len(args.argv) && !strings.HasPrefix(args.argv[i+1], "-") {
			if runner {
				w.bindValue(name, DetailBind, args.argv[i+1], args.dyn[i+1])
			}
			continue
		}
		if o == "--host" {
			w.bindValue(name, DetailBind, "*", false) // bare --host: every interface
		}
	}
}

// bindEnv: variables that set a server's bind address, and the commands that read them as one
// (OLLAMA_HOST is the client's server address for `ollama run`, a bind only for `ollama serve`).
var bindEnv = map[string]func(c *Command) bool{
	"OLLAMA_HOST":              func(c *Command) bool { return c.Name == "ollama" && len(c.Args) > 0 && c.Args[0] == "serve" },
	"FLASK_RUN_HOST":           func(c *Command) bool { return c.Name == "flask" },
	"UVICORN_HOST":             func(c *Command) bool { return c.Name == "uvicorn" },
	"STREAMLIT_SERVER_ADDRESS": func(c *Command) bool { return c.Name == "streamlit" },
	"GRADIO_SERVER_NAME":       func(c *Command) bool { return strings.HasPrefix(c.Name, "python") || c.Name == "gradio" },
	"HOST": func(c *Command) bool {
		return npmFamily[c.Name] || c.Name == "react-scripts" || c.Name == "next" || c.Name == "nuxt" || c.Name == "nuxi"
	},
}

// envBinds records the bind addresses a command's own assignments give its server.
func (w *walker) envBinds(c *Command) {
	for _, kv := range c.Env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if reads, known := bindEnv[name]; known && reads(c) {
			w.bindValue(c.Name, DetailBind, val, false)
		}
	}
}

// djangoRunserver: python manage.py runserver [ADDR:]PORT and django-admin runserver bind the
// address given (0:8000 and 0.0.0.0:8000 are every interface).
func (w *walker) djangoRunserver(name string, args words) {
	a := args.argv
	i := indexOf(a, "runserver")
	if i < 0 || !(name == "django-admin" || strings.HasPrefix(name, "python") && indexOf(a, "manage.py") >= 0 && indexOf(a, "manage.py") < i) {
		return
	}
	for j := i + 1; j < len(a); j++ {
		if strings.HasPrefix(a[j], "-") {
			continue
		}
		w.bindValue(name, DetailBind, a[j], args.dyn[j])
		return
	}
}
