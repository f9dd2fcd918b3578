package normalize

import (
	"regexp"
	"strings"
)

// Database clients (spec handler %h:db: psql, mysql, sqlite3, redis-cli, mongosh …): the
// statements they are given by an option (-c, -e, --eval, -cmd), as operands (sqlite3 DB SQL,
// redis-cli COMMAND) or on standard input are code. A statement that destroys data — DROP,
// TRUNCATE, DELETE or UPDATE without WHERE, FLUSHALL/FLUSHDB, dropDatabase() — is a delete effect
// on the database it runs against: "database:HOST" (the -h host, a URL operand's host, "(unresolved)"
// for an expansion, "localhost" for the default socket) or "database:PATH" for a database file.

var (
	redisFlushRE  = regexp.MustCompile(`(?i)(?:^|[\s;'"])(FLUSHALL|FLUSHDB)\b`)
	mongoDropRE   = regexp.MustCompile(`dropDatabase\s*\(|\.drop\s*\(\s*\)|(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)`)
	dbURLSchemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`)
)

// destructiveStatement names the first destructive statement of code, or "".
func destructiveStatement(code string) string {
	if len(code) > maxExpandedWord {
		code = code[:maxExpandedWord]
	}
	for _, f := range sqlFindings(code) { // sqlscan.go
		if f.kind == EffectDelete {
			return f.what
		}
	}
	if m := redisFlushRE.FindStringSubmatch(code); m != nil {
		return strings.ToUpper(m[1])
	}
	if m := mongoDropRE.FindString(code); m != "" {
		return m
	}
	return ""
}

// dbStatements records the destructive statements of code run by a database client against
// target ("database:…").
func (w *walker) dbStatements(prog, target string, inWS bool, code string) {
	if d := destructiveStatement(code); d != "" {
		w.s.addEffect(Effect{Kind: EffectDelete, Target: target, Program: prog, Detail: "database " + d, InWorkspace: inWS})
	}
	for _, e := range sqlEffects(code, target, inWS) { // sqlscan_effects.go: privilege, server-side code
		if e.Kind != EffectDelete {
			e.Program = prog
			w.s.addEffect(e)
		}
	}
}

// db handles a database client: which database it talks to, and what its statements destroy.
func (w *walker) db(pa parsedArgs, name string, args words, stdin string) {
	target, inWS := w.dbTarget(pa, name, args)
	var code []string
	for _, v := range pa.vals {
		if v.role == "code" {
			code = append(code, v.val)
		}
	}
	ops := pa.words(args)
	switch name {
	case "sqlite3":
		if len(ops.argv) > 1 {
			code = append(code, strings.Join(ops.argv[1:], " "))
		}
	case "redis-cli", "valkey-cli", "keydb-cli":
		if len(ops.argv) > 0 {
			code = append(code, strings.Join(ops.argv, " "))
		}
	}
	if stdin != "" {
		code = append(code, stdin)
	}
	start := len(w.s.act.Effects)
	for _, c := range code {
		w.dbStatements(name, target, inWS, c)
	}
	if db := w.localDevDB(pa, name, args); db != "" { // local_targets.go
		for i := start; i < len(w.s.act.Effects); i++ {
			if e := &w.s.act.Effects[i]; e.Kind == EffectDelete && e.Target == target && e.Remote == "" {
				e.Remote = remoteLocalDB + db
			}
		}
	}
	w.markLocalStatements(pa, args, target, start, code) // local_statements.go
}

// dbTarget is the database a client's call addresses.
func (w *walker) dbTarget(pa parsedArgs, name string, args words) (string, bool) {
	s := w.s
	if h, dyn, ok := pa.val("-h", "--host"); ok {
		if dyn {
			return "database:(unresolved)", false
		}
		return "database:" + h, false
	}
	// The server any client's spec names: an option or operand whose role is a host or a URL
	// (sqlcmd -S, cqlsh HOST, trino --server URL).
	for _, v := range pa.vals {
		if v.role != "host" && v.role != "url" {
			continue
		}
		if v.dyn {
			return "database:(unresolved)", false
		}
		return "database:" + dbServerHost(v.val), false
	}
	ops := pa.words(args)
	for k := range ops.argv {
		if r := pa.roleAt(k, len(ops.argv)); (r == "host" || r == "url") && name != "sqlite3" {
			if ops.dyn[k] {
				return "database:(unresolved)", false
			}
			return "database:" + dbServerHost(ops.argv[k]), false
		}
	}
	if name == "sqlite3" {
		if len(ops.argv) == 0 || ops.argv[0] == ":memory:" {
			return "database::memory:", true
		}
		if ops.dyn[0] {
			return "database:(unresolved)", false
		}
		clean, ok := resolvePath(ops.argv[0], s.cwd, s.n.opt.Home)
		if !ok {
			return "database:(unresolved)", false
		}
		return "database:" + clean, inDir(clean, s.n.opt.Workspace)
	}
	for k, a := range ops.argv {
		if ops.dyn[k] && isUnresolvedText(a) {
			return "database:(unresolved)", false
		}
		if dbURLSchemeRE.MatchString(a) {
			if u := parseURL(a, URLConnect, false); u.Host != "" {
				return "database:" + u.Host, false
			}
			return "database:(unresolved)", false
		}
	}
	return "database:localhost", false
}

// dbServerHost: the host of a server given as host, host:port, tcp:host,port or a URL.
func dbServerHost(v string) string {
	if strings.Contains(v, "://") {
		if u := parseURL(v, URLConnect, false); u.Host != "" {
			return u.Host
		}
		return "(unresolved)"
	}
	v = strings.TrimPrefix(strings.TrimPrefix(v, "tcp:"), "np:")
	if i := strings.IndexAny(v, ",\\"); i >= 0 {
		v = v[:i]
	}
	if h, _, ok := strings.Cut(v, ":"); ok && !strings.Contains(v, "]") {
		v = h
	}
	if v == "" || v == "." || v == "(local)" {
		return "localhost"
	}
	return v
}
