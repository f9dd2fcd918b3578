package normalize

import "strings"

// Static file servers: a command that serves a directory over the network exposes everything
// under it to whoever reaches the listening address. The served directory is recorded as a read
// (list) of that directory, so the envelope judges it like any read, and the listening socket as
// a listen effect whose Target is the bind address and port ("0.0.0.0:8000") and whose Detail is
// "serves DIR", so the rules can tell a dev server on loopback serving the workspace from the
// home directory served to the network (rego/services.rego, net.exposed-server).

type staticServer struct {
	dirOpts       []string // options whose value is the served directory
	dirPositional bool     // the first operand is the served directory
	bindOpts      []string // options whose value is the bind address (host or host:port)
	portOpts      []string // options whose value is the port
	valueOpts     []string // other options that take a value
	defaultBind   string   // the address bound when none is given
	defaultDir    string   // the directory served when none is given, relative to the cwd
	defaultPort   string
}

var staticServers = map[string]staticServer{
	// python -m http.server [PORT] [--bind ADDR] [--directory DIR]: all interfaces by default.
	"http.server":      {dirOpts: []string{"--directory", "-d"}, bindOpts: []string{"--bind", "-b"}, valueOpts: []string{"--protocol", "--cgi"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8000"},
	"SimpleHTTPServer": {defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8000"},
	// npm http-server [DIR] [-a ADDR] [-p PORT]: all interfaces by default, ./public or ./.
	"http-server": {dirPositional: true, bindOpts: []string{"-a", "--address"}, portOpts: []string{"-p", "--port"},
		valueOpts:   []string{"-c", "-e", "--ext", "-S", "-C", "--cert", "-K", "--key", "-P", "--proxy", "-t", "--timeout", "-U", "--username", "--password", "--mimetypes"},
		defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8080"},
	// serve [DIR] [-l tcp://ADDR:PORT]
	"serve": {dirPositional: true, bindOpts: []string{"-l", "--listen"}, valueOpts: []string{"-c", "--config", "--ssl-cert", "--ssl-key"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "3000"},
	// live-server [DIR] [--host=ADDR] [--port=N]
	"live-server":   {dirPositional: true, bindOpts: []string{"--host"}, portOpts: []string{"--port"}, valueOpts: []string{"--open", "--ignore", "--mount", "--proxy", "--middleware", "--entry-file", "--wait", "--watch", "--browser"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8080"},
	"static-server": {dirPositional: true, bindOpts: []string{"-H", "--host"}, portOpts: []string{"-p", "--port"}, valueOpts: []string{"-i", "--index"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "9080"},
	// php -S ADDR:PORT [-t DOCROOT]
	"php": {dirOpts: []string{"-t"}, bindOpts: []string{"-S"}, valueOpts: []string{"-c", "-d", "-z"}, defaultDir: "."},
	// busybox httpd -p [ADDR:]PORT -h HOME
	"httpd": {dirOpts: []string{"-h"}, bindOpts: []string{"-p"}, valueOpts: []string{"-c", "-r", "-u", "-e", "-d"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "80"},
	// ruby -run -e httpd DIR -b ADDR -p PORT
	"ruby-httpd": {dirPositional: true, bindOpts: []string{"-b", "--bind-address"}, portOpts: []string{"-p", "--port"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8080"},
	// caddy file-server --root DIR --listen ADDR
	"caddy file-server": {dirOpts: []string{"-r", "--root"}, bindOpts: []string{"-l", "--listen"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "80"},
	// twistd web --path DIR --listen tcp:PORT:interface=ADDR
	"twistd web": {dirOpts: []string{"--path"}, bindOpts: []string{"--listen"}, defaultBind: "0.0.0.0", defaultDir: ".", defaultPort: "8080"},
}

// serverEffects records what a static file server exposes (argv: the words after the program).
func (w *walker) serverEffects(prog string, args words) {
	name, rest := serverName(prog, args)
	sv, ok := staticServers[name]
	if !ok {
		return
	}
	if name == "php" && !hasWord(rest.argv, "-S") {
		return
	}
	bind, port, dir := sv.defaultBind, sv.defaultPort, sv.defaultDir
	dirDyn := false
	var positional []int
	takes := func(list []string, a string) (string, bool, bool) {
		for _, o := range list {
			if a == o {
				return "", true, true
			}
			if v, ok := strings.CutPrefix(a, o+"="); ok && strings.HasPrefix(o, "--") {
				return v, true, false
			}
		}
		return "", false, false
	}
	for i := 0; i < len(rest.argv); i++ {
		a := rest.argv[i]
		next := func() (string, bool) {
			if i+1 < len(rest.argv) {
				i++
				return rest.argv[i], rest.dyn[i]
			}
			return "", false
		}
		if v, hit, sep := takes(sv.dirOpts, a); hit {
			dirDyn = rest.dyn[i]
			if sep {
				v, dirDyn = next()
			}
			dir = v
			continue
		}
		if v, hit, sep := takes(sv.bindOpts, a); hit {
			bindDyn := rest.dyn[i]
			if sep {
				v, bindDyn = next()
			}
			bind = v
			w.bindValue(prog, DetailBind, v, bindDyn) // listen.go: an address the call asked for
			continue
		}
		if v, hit, sep := takes(sv.portOpts, a); hit {
			if sep {
				v, _ = next()
			}
			port = v
			continue
		}
		if _, hit, sep := takes(sv.valueOpts, a); hit {
			if sep {
				next()
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		positional = append(positional, i)
	}
	for _, i := range positional {
		a := rest.argv[i]
		if isDigits(a) {
			port = a // python -m http.server 8000
			continue
		}
		if sv.dirPositional {
			dir, dirDyn = a, rest.dyn[i]
			sv.dirPositional = false
		}
	}
	addr := serverAddr(bind, port)
	if dir == "" {
		dir = "."
	}
	w.pathEffect("list", prog, dir, dirDyn)
	clean, ok := resolvePath(dir, w.s.cwd, w.s.n.opt.Home)
	if !ok {
		clean = dir
	}
	w.s.addEffect(Effect{Kind: EffectListen, Target: addr, Program: prog, Detail: "serves " + clean, Unresolved: dirDyn})
}

// serverName finds the server a command runs: python -m MODULE, npx/bunx/pnpm dlx PACKAGE,
// busybox httpd, ruby -run -e httpd, and the rest of the words it is given.
func serverName(prog string, args words) (string, words) {
	a := args.argv
	switch {
	case strings.HasPrefix(prog, "python") || strings.HasPrefix(prog, "pypy"):
		for i := 0; i+1 < len(a); i++ {
			if a[i] == "-m" {
				return a[i+1], args.sub(i + 2)
			}
		}
	case prog == "npx" || prog == "bunx" || prog == "pnpx":
		for i := 0; i < len(a); i++ {
			if a[i] == "-p" || a[i] == "--package" {
				i++
				continue
			}
			if !strings.HasPrefix(a[i], "-") {
				return pkgBase(a[i]), args.sub(i + 1)
			}
		}
	case prog == "pnpm" || prog == "yarn" || prog == "bun":
		if len(a) >= 2 && (a[0] == "dlx" || a[0] == "x" || a[0] == "exec") {
			return pkgBase(a[1]), args.sub(2)
		}
	case prog == "busybox":
		if len(a) > 0 && a[0] == "httpd" {
			return "httpd", args.sub(1)
		}
	case prog == "ruby":
		if len(a) >= 3 && a[0] == "-run" && a[1] == "-e" && a[2] == "httpd" {
			return "ruby-httpd", args.sub(3)
		}
	case prog == "caddy" || prog == "twistd":
		if len(a) > 0 {
			return prog + " " + a[0], args.sub(1)
		}
	}
	return prog, args
}

// pkgBase: the package name without a version (http-server@14 → http-server).
func pkgBase(p string) string {
	if i := strings.LastIndexByte(p, '@'); i > 0 {
		p = p[:i]
	}
	return p
}

func hasWord(list []string, w string) bool {
	for _, a := range list {
		if a == w {
			return true
		}
	}
	return false
}

// serverAddr renders a bind address and port as host:port.
func serverAddr(bind, port string) string {
	b := strings.TrimPrefix(strings.TrimPrefix(bind, "tcp://"), "http://")
	if strings.HasPrefix(b, "tcp:") { // twistd tcp:PORT:interface=ADDR
		parts := strings.Split(b, ":")
		host := "0.0.0.0"
		for _, p := range parts {
			if v, ok := strings.CutPrefix(p, "interface="); ok {
				host = v
			}
		}
		if len(parts) > 1 && isDigits(parts[1]) {
			port = parts[1]
		}
		b = host
	}
	if isDigits(b) { // busybox httpd -p 8080
		return "0.0.0.0:" + b
	}
	if b == "" {
		b = "0.0.0.0"
	}
	if strings.Count(b, ":") == 1 || strings.HasPrefix(b, "[") {
		return b // already host:port
	}
	if port == "" {
		return b
	}
	if strings.Contains(b, ":") {
		return "[" + b + "]:" + port
	}
	return b + ":" + port
}

// socketEffects records the unix sockets a socket client talks to (socat UNIX-CONNECT:PATH,
// nc/ncat/netcat -U PATH) as reads of the socket's path, as curl --unix-socket is: the
// envelope judges the path, and the socket of a local admin service is a finding
// (rego/services.rego).
func (w *walker) socketEffects(prog string, args words) {
	switch prog {
	case "socat":
		for i, a := range args.argv {
			kind, rest, ok := strings.Cut(a, ":")
			if !ok {
				continue
			}
			switch strings.ToUpper(kind) {
			case "UNIX-CONNECT", "UNIX-CLIENT", "UNIX", "UNIX-SENDTO", "LOCAL":
				p, _, _ := strings.Cut(rest, ",")
				if p != "" {
					w.pathEffect(EffectRead, prog, p, args.dyn[i])
				}
			}
		}
	case "nc", "ncat", "netcat":
		unix := false
		for _, a := range args.argv {
			if a == "-U" || a == "--unixsock" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "U") {
				unix = true
			}
		}
		if !unix {
			return
		}
		for i, a := range args.argv {
			if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "~") {
				w.pathEffect(EffectRead, prog, a, args.dyn[i])
			}
		}
	}
}
