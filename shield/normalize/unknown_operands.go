package normalize

import (
	"path"
	"regexp"
	"strings"
)

// What the operands of a program without a model name (issue 11, wave 6). A program without a
// command spec, or an interpreter's arguments that no spec role describes, used to count as
// "confined" when nothing it was given looked like a path outside the workspace or a URL: a bare
// host, a connection string, a destructive statement or a credential file handed to an
// unknown client passed unseen. Principles, each applied once to every operand and option value
// whatever the program:
//
//  1. Hosts in operands. A connection URI of any scheme (postgres://, mongodb+srv://, jdbc:…),
//     a connection string (Server=…; Host=…; Data Source=…), HOST:PORT, the value of a host-like
//     option (hostOptions) or a dotted name whose last label is a host suffix (hostSuffixes, not
//     a file extension) is a connect effect of that program. For a program without a spec a
//     connection beyond loopback and the configured egress leaves the envelope
//     (rego/effects.rego, unknown_programs_confined).
//  2. A destructive statement (SQL/CQL DROP, TRUNCATE, DELETE/UPDATE without WHERE, FLUSHALL …)
//     given to any program without a spec, as an operand, an option value or on standard input,
//     is a delete effect on the database of the host it names ("database:(default)" when it
//     names none: whatever the client's configuration points at).
//  3. An operand that names a credential file is presumed read when no spec declares its role
//     (programs without a spec, an interpreter's script arguments, `-m MODULE` arguments,
//     `-n`/`-p` loops). Programs whose spec says the operand is a name only (ls, stat, chmod,
//     ssh-add's agent key) keep their roles: they have a spec.
//  4. Code is code whatever the channel: a program listed as an interpreter (inline.yaml:
//     languages' programs and capable_programs) and without a spec gets its code options
//     (codeOptions) and its standard input (here-string, here-document) analysed as inline
//     code; an interpreter without an allow list for its language is capable (fails closed).
//     Code of any language that builds a path from the home directory and a literal name
//     (HOME + "/.ssh/id_rsa", Path.of(user.home, ".npmrc")) reads that file.
//
// The tables are reviewable data, kept beside the matcher because each needs its own reading.

// hostOptions take a host, an address or a connection string as their value, for any program.
var hostOptions = set("-h", "--host", "--hostname", "-S", "--server", "--servers", "--endpoint", "--endpoint-url", "--addr",
	"--address", "--uri", "--url", "--dsn", "--connection", "--connection-string", "--conn", "--database-url", "--db-url",
	"--broker", "--brokers", "--bootstrap-server", "--bootstrap-servers", "--cluster", "--node", "--nodes", "--seed", "--master",
	"--api", "--api-url", "--server-url", "--remote", "--target-host", "--proxy-host", "--db-host", "--dbhost", "--redis-host",
	"--mongo-host", "--es-host", "--hosts", "--contact-points", "--coordinator", "--account")

// codeOptions carry code for the interpreters without a spec (guile -c, racket -e, sbcl --eval).
var codeOptions = set("-c", "-e", "-E", "--eval", "--expr", "-x", "--execute", "--command", "-Command", "-r", "--run", "-p",
	"--print", "--exec", "-q", "--query")

// hostSuffixes: last labels that make a dotted operand a host rather than a file: generic and
// common country top-level domains, the reserved documentation names and the suffixes internal
// networks use. Labels that are also common file extensions (py, sh, rs, md, pl, so, mk, cc, in,
// am, ps, ts, go, js, ml, pt) are not listed: "main.py" stays a file. deepSuffixes are also
// file-name suffixes (Dockerfile.dev, config.local, settings.prod, MyApp.app, model.ai): a name
// ending in one is a host only with three labels or more (api.staging.dev, ch.prod.local). A
// name with an upper-case letter is a file (hosts are written in lower case).
var hostSuffixes = set("com", "net", "org", "io", "co", "xyz", "info", "biz", "us", "uk", "de", "fr", "eu", "ru", "cn", "jp",
	"nl", "se", "ch", "at", "be", "br", "ca", "au", "es", "it", "kr", "tw", "hk", "sg", "gov", "edu", "mil", "example",
	"invalid", "internal", "corp", "lan", "intranet", "svc", "localdomain", "arpa", "onion", "consul")

var deepSuffixes = set("dev", "app", "ai", "me", "tv", "cloud", "site", "online", "tech", "host", "systems", "services", "zone",
	"link", "top", "int", "local", "home", "private", "cluster", "localhost", "prod", "production", "stage", "staging", "infra",
	"vpc", "test")

var (
	// connStringHostRE: the host key of a connection string (Server=tcp:db,1433; Host=db;
	// Data Source=db; Address=…).
	connStringHostRE = regexp.MustCompile(`(?i)(?:^|;)\s*(?:server|host|hostname|data source|datasource|address|addr|network address|endpoint|contact points)\s*=\s*([^;]+)`)
	hostPortRE       = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})$`)
	dottedNameRE     = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+\.?$`)
	singleHostRE     = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$`)
	// frameworkSecretTaskRE: a framework task that prints or opens decrypted credentials, by the
	// namespace:verb convention of task runners (rails credentials:show|edit, artisan
	// env:decrypt, secrets:show, vault:view, master-key:print), whatever the program or path.
	frameworkSecretTaskRE = regexp.MustCompile(`^(credentials|secrets?|env|vault|keys?|master[-_]key|encrypted|keychain)(:[a-z0-9_-]+)*:(show|edit|decrypt|reveal|print|cat|view|dump|export|get|read|open|unseal)$|^(show|decrypt|reveal|print|dump)[:-](credentials|secrets|env|keys)$`)
	// homeRefRE: code that refers to the user's home directory.
	homeRefRE = regexp.MustCompile(`\bHOME\b|user\.home|expanduser|homedir|[Hh]ome[Dd]ir|UserHomeDir|home_dir|Path\.home|getpwuid|USERPROFILE|\$HOME|~/|\(getenv "HOME"\)|Sys\.getenv|\bhome\(\)`)
	// homeNameRE: a quoted literal that is a name relative to the home directory (".npmrc",
	// "/.ssh/id_rsa", ".aws/credentials").
	homeNameRE = regexp.MustCompile(`["']/?(\.[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)*)["']`)
)

// operandHost reads the host a value names: (host, port, scheme, ok). hostOpt: the value of a
// host-like option, where a bare single-label name is a host too.
func operandHost(v string, hostOpt bool) (string, string, string, bool) {
	if v == "" || len(v) > 512 || strings.ContainsAny(v, " \t\n") && !strings.Contains(v, "=") {
		return "", "", "", false
	}
	raw := strings.TrimPrefix(v, "jdbc:")
	if dbURLSchemeRE.MatchString(raw) {
		scheme := raw[:strings.Index(raw, "://")]
		rest := raw[len(scheme)+3:]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = rest[at+1:]
		}
		if i := strings.IndexByte(rest, ','); i >= 0 {
			rest = rest[:i] // mongodb://a,b,c: the first host
		}
		if rest == "" || scheme == "file" {
			return "", "", "", false
		}
		h, p := rest, ""
		if hh, pp, ok := cutHostPort(rest); ok {
			h, p = hh, pp
		}
		return h, p, scheme, validHostName(h)
	}
	if m := connStringHostRE.FindStringSubmatch(v); m != nil {
		h := strings.TrimSpace(m[1])
		h = strings.TrimPrefix(strings.TrimPrefix(h, "tcp:"), "TCP:")
		p := ""
		if i := strings.IndexByte(h, ','); i >= 0 {
			h, p = h[:i], h[i+1:]
		}
		if i := strings.IndexByte(h, '\\'); i >= 0 {
			h = h[:i] // SERVER\INSTANCE
		}
		if hh, pp, ok := cutHostPort(h); ok {
			h, p = hh, pp
		}
		return h, p, "db", validHostName(h)
	}
	if strings.Contains(v, "=") || strings.Contains(v, "/") || strings.HasPrefix(v, "-") {
		return "", "", "", false
	}
	if m := hostPortRE.FindStringSubmatch(v); m != nil {
		h := strings.Trim(m[1], "[]")
		if hostOpt || strings.Contains(h, ".") || strings.Contains(h, ":") || h == "localhost" {
			return h, m[2], "tcp", true
		}
		return "", "", "", false
	}
	if _, ok := parseHostAddr(v); ok && (isIPv4(v) || strings.Contains(v, ":")) {
		return strings.Trim(v, "[]"), "", "tcp", true
	}
	if hostOpt && singleHostRE.MatchString(v) && !isDigits(v) {
		if strings.Contains(v, ".") && isFileLike(v) {
			return "", "", "", false
		}
		return v, "", "tcp", true
	}
	if dottedNameRE.MatchString(v) && strings.ToLower(v) == v {
		h := strings.TrimSuffix(v, ".")
		last := h[strings.LastIndexByte(h, '.')+1:]
		if (hostSuffixes[last] || deepSuffixes[last] && strings.Count(h, ".") >= 2) && !isFileLike(h) {
			return h, "", "tcp", true
		}
	}
	return "", "", "", false
}

// validHostName: what a connection target may hold (a name, an IPv4 or IPv6 address, a zone).
var validHostNameRE = regexp.MustCompile(`^[A-Za-z0-9._%:-]{1,253}$`)

func validHostName(h string) bool { return validHostNameRE.MatchString(h) }

// localServiceName: a single-label name given as a host (db, postgres, redis): a compose
// service or /etc/hosts entry on the developer's machine. Not recorded as a connection; a
// destructive statement against it is still a delete on "database:NAME", which is no loopback.
func localServiceName(h string) bool {
	return !strings.ContainsAny(h, ".:")
}

// unknownOperands applies principles 1–4 to a program without a spec (argv without the name).
func (w *walker) unknownOperands(f frame, name string, args words, stdin string) {
	s := w.s
	base := path.Base(name)
	interp := s.n.opt.Inline.Handles(base)
	host := ""
	var texts []string
	n := len(args.argv)
	if n > 64 {
		n = 64
	}
	for i := 0; i < n; i++ {
		a := args.argv[i]
		if args.dyn[i] && isUnresolvedText(a) || len(a) > maxExpandedWord {
			continue // unknown_program_dynamic judges expansions
		}
		val, opt, hostOpt, codeOpt := a, "", false, false
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			o, v, hasVal := strings.Cut(a, "=")
			opt = o
			if !hasVal && codeOptions[o] && !interp && i+1 < len(args.argv) && !args.dyn[i+1] {
				// The code option of a program that is no interpreter here: its escape calls are
				// walked (inline_escapes.go); the value is still read as an operand below.
				w.exprEscapes(f, name, name+" "+o, args.argv[i+1], s.n.opt.Inline.escapeRE(), false)
			}
			if !hasVal {
				// -SHOST, -hHOST are not read: a cluster of short flags looks the same.
				if (hostOptions[o] || interp && codeOptions[o]) && i+1 < len(args.argv) && !args.dyn[i+1] && !strings.HasPrefix(args.argv[i+1], "-") {
					i++
					val = args.argv[i]
				} else {
					continue
				}
			} else {
				val = v
			}
			hostOpt, codeOpt = hostOptions[opt], interp && codeOptions[opt]
		}
		if codeOpt {
			w.unmodelledCode(base, val)
			continue
		}
		if codeOptions[opt] && !interp {
			w.exprEscapes(f, name, name+" "+opt, val, s.n.opt.Inline.escapeRE(), false) // inline_escapes.go
		}
		if h, p, scheme, ok := operandHost(val, hostOpt); ok {
			if host == "" {
				host = h
			}
			if !localServiceName(h) || scheme != "tcp" {
				w.hostEffect(name, h, p, scheme, false)
			}
			continue
		}
		w.presumedRead(name, val)
		if strings.ContainsAny(val, " \t\n;(\"'") || len(val) > 6 {
			texts = append(texts, val)
		}
	}
	if stdin != "" && len(stdin) <= maxExpandedWord {
		if interp {
			w.unmodelledCode(base, stdin)
		} else {
			texts = append(texts, stdin)
			w.exprEscapes(f, name, name+" (standard input)", stdin, s.n.opt.Inline.escapeRE(), false) // inline_escapes.go
		}
	}
	target := "database:(default)"
	if host != "" {
		target = "database:" + host
	}
	for _, t := range texts {
		w.dbStatements(name, target, false, t)
		w.namedInText(name, t)
	}
}

// unmodelledCode: code given to an interpreter that has no spec: analysed as inline code; an
// interpreter without an allow list for its language is capable.
func (w *walker) unmodelledCode(prog, code string) {
	i := w.codeEffect(prog, code, false)
	w.namedInText(prog, code)
	if i >= 0 && w.s.act.Effects[i].Inline == "" {
		w.s.act.Effects[i].Inline = inlineCapable + "no allow list for " + prog + " code"
	}
}

// presumedRead: an operand whose role no spec declares, naming a credential file, is read.
func (w *walker) presumedRead(prog, raw string) {
	if raw == "" || strings.Contains(raw, "://") || !(strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "~") || strings.HasPrefix(raw, ".") || strings.Contains(raw, "/")) {
		return
	}
	s := w.s
	clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	// The workspace's own key stores and certificates (a debug keystore, mkcert's output) are
	// the project's: judged by their path as before, not presumed read.
	if s.n.sens.classify(clean) != "" && !inDir(clean, s.n.opt.Workspace) {
		w.pathEffect(EffectRead, prog, raw, false)
		s.addPath(raw, RoleRead)
	}
}

// presumedReads applies presumedRead to operands (an interpreter's script or module arguments).
func (w *walker) presumedReads(prog string, ops words) {
	for k, a := range ops.argv {
		if k >= 64 {
			break
		}
		if ops.dyn[k] && isUnresolvedText(a) || strings.HasPrefix(a, "-") {
			continue
		}
		w.presumedRead(prog, a)
	}
}

// namedInText: credential files a text names, as a quoted absolute or ~ path, or as a literal
// name joined to the home directory (principle 4, any language).
func (w *walker) namedInText(prog, code string) {
	s := w.s
	if len(code) > maxExpandedWord {
		return
	}
	for _, m := range quotedPathRE.FindAllStringSubmatch(code, 16) {
		if strings.Contains(m[1], "://") {
			continue
		}
		if clean, ok := resolvePath(m[1], s.cwd, s.n.opt.Home); ok && s.n.sens.classify(clean) != "" {
			w.pathEffect(EffectRead, prog, m[1], false)
			s.addPath(m[1], RoleRead)
		}
	}
	w.homeRelativeReads(prog, code)
}

// homeRelativeReads: code that refers to the home directory and names a dot-file literal reads
// that file under home when it is a credential location (os.ReadFile(os.Getenv("HOME") +
// "/.ssh/id_rsa"), Path.of(System.getProperty("user.home"), ".npmrc")).
func (w *walker) homeRelativeReads(prog, code string) {
	s := w.s
	if len(code) > maxExpandedWord || s.n.opt.Home == "" || !homeRefRE.MatchString(code) {
		return
	}
	for _, m := range homeNameRE.FindAllStringSubmatch(code, 16) {
		rel := strings.TrimPrefix(m[1], "/")
		if rel == "" || strings.Contains(rel, "..") {
			continue
		}
		clean := path.Join(s.n.opt.Home, rel)
		if s.n.sens.classify(clean) != "" {
			w.pathEffect(EffectRead, prog, clean, false)
			s.addPath(clean, RoleRead)
		}
	}
}

// compiledStdin: a compiler-runner given its program on standard input (go run - <<< CODE) runs
// that code: analysed like an interpreter's, capable without an allow list for the language.
func (w *walker) compiledStdin(prog string, ops words, stdin string) bool {
	if stdin == "" || len(ops.argv) > 1 || len(ops.argv) == 1 && ops.argv[0] != "-" && ops.argv[0] != "/dev/stdin" {
		return false
	}
	w.unmodelledCode(prog, stdin)
	return true
}

// sqlStartRE: an operand that is a statement from its first word (not a sentence mentioning one).
var sqlStartRE = regexp.MustCompile(`(?i)^\s*(DROP|TRUNCATE|DELETE|UPDATE|ALTER|GRANT|REVOKE|FLUSHALL|FLUSHDB|db\.dropDatabase|db\.[A-Za-z0-9_]+\.drop)\b`)

// undeclaredStatements: principle 2 for programs that have a spec but no database handler
// (supabase db execute --db-url URI 'DROP …', kubectl run … -- psql -h HOST -c 'DROP …', curl
// to a database's HTTP interface with a statement as its body). A destroying statement given as a
// whole operand or option value, in a call that also names where it runs (a connection URI, a
// connection string, a host option's value or a URL), is a delete on that host's database.
// Programs whose operands are text, patterns or messages (echo, git, grep …) are not read.
func (w *walker) undeclaredStatements(sp *cmdSpec, name string, args words) {
	if sp == nil || sp.handler == "db" || verbTextPrograms[name] || secretIdiomExempt[name] {
		return
	}
	host := ""
	var stmts []string
	n := len(args.argv)
	if n > 64 {
		n = 64
	}
	for i := 0; i < n; i++ {
		a := args.argv[i]
		if args.dyn[i] && isUnresolvedText(a) || len(a) > maxExpandedWord {
			continue
		}
		val, hostOpt := a, false
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			o, v, hasVal := strings.Cut(a, "=")
			if !hasVal {
				continue // the value, if any, is the next word: read as an operand
			}
			val, hostOpt = v, hostOptions[o]
		} else if i > 0 && hostOptions[args.argv[i-1]] {
			hostOpt = true
		}
		if sqlStartRE.MatchString(val) {
			stmts = append(stmts, val)
			continue
		}
		if host != "" {
			continue
		}
		if u := strings.ToLower(val); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			if pu := parseURL(val, URLConnect, false); pu.Host != "" {
				host = pu.Host
			}
			continue
		}
		if h, _, scheme, ok := operandHost(val, hostOpt); ok && (scheme != "tcp" || hostOpt) {
			host = h
		}
	}
	if host == "" || len(stmts) == 0 {
		return
	}
	for _, st := range stmts {
		w.dbStatements(name, "database:"+host, false, st)
	}
}

// undeclaredOperand: principle 3 for a program with a spec whose operand role is "_" (not
// declared): a credential file it names is presumed read. Programs whose operands are text,
// patterns or names (echo, grep's pattern, git's messages: verbTextPrograms, secretIdiomExempt)
// and device or kernel files (mdadm --detail /dev/md0) are not read this way.
func (w *walker) undeclaredOperand(prog, raw string) {
	if verbTextPrograms[prog] || secretIdiomExempt[prog] || strings.HasPrefix(raw, "/dev/") || strings.HasPrefix(raw, "/proc/") || strings.HasPrefix(raw, "/sys/") {
		return
	}
	w.presumedRead(prog, raw)
}
