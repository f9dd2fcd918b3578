package normalize

import (
	"regexp"
	"strings"
)

// Local development databases, continued (local_targets.go holds psql/mysql): the same rule — an
// explicit loopback host and a database named as a development or test one (devDBNameRE) — for
// the other clients and for the whole-database commands.
//
//   - mongosh/mongo: a mongodb:// URL operand with a loopback host and a dev-named database
//     (mongodb://localhost:27017/app_test), or --host LOOPBACK with a dev-named first operand; a
//     URL with several hosts, options or credentials is not local.
//   - redis-cli/valkey-cli: Redis databases have numbers, not names. A FLUSHDB (never FLUSHALL)
//     of one database (-n 0…15, 0 when absent) on a loopback -h or the default connection
//     (redis-cli reads no host from the environment: 127.0.0.1), with no -u URL, is the
//     developer's own (wave 8, local_default.go; wave 5 asked for -n 1…15 and an explicit -h).
//   - dropdb/createdb: the operand is the database itself, so its name decides: a dev-named
//     database on a loopback host or on the default connection (no -h, and no PGHOST/PGSERVICE in
//     the call) is a development database; dropping and re-creating it is a test set-up. Their
//     effects are marked Remote "local-db:NAME" and Target "database:HOST" (rules:
//     rego/local.rego).

// localDevMongo: the dev database a mongosh call names on a loopback host, or "".
func (w *walker) localDevMongo(pa parsedArgs, args words) string {
	host, _, hasHost := pa.val("--host")
	db := ""
	ops := pa.words(args)
	for k, a := range ops.argv {
		if ops.dyn[k] {
			return ""
		}
		if k > 0 {
			continue // script files after the connection operand: judged as scripts
		}
		if strings.Contains(a, "://") {
			if hasHost || !strings.HasPrefix(a, "mongodb://") {
				return ""
			}
			u := parseURL(a, URLConnect, false)
			if u.Query != "" || u.UserInfo || strings.Contains(strings.TrimPrefix(a, "mongodb://"), ",") {
				return ""
			}
			host, db = u.Host, strings.TrimPrefix(u.Path, "/")
			continue
		}
		db = a
	}
	if host == "" && !hasHost {
		host = w.localDefaultHost() // mongosh's default is 127.0.0.1:27017 (local_default.go)
	}
	if !loopbackName(host) || !devDBNameRE.MatchString(db) {
		return ""
	}
	return db
}

var redisDBIndexRE = regexp.MustCompile(`^([0-9]|1[0-5])$`)

// localDevRedis: "redis-N" for a FLUSHDB of a numbered test database on loopback, or "".
func (w *walker) localDevRedis(pa parsedArgs, args words) string {
	if _, _, ok := pa.val("-u"); ok {
		return ""
	}
	host, dyn, ok := pa.val("-h")
	if !ok {
		host, dyn = w.localDefaultHost(), false // redis-cli's default is 127.0.0.1 (local_default.go)
	}
	if dyn || !loopbackName(host) {
		return ""
	}
	n, dyn, ok := pa.val("-n")
	if !ok {
		n, dyn = "0", false
	}
	if dyn || !redisDBIndexRE.MatchString(n) {
		return ""
	}
	ops := pa.words(args)
	if len(ops.argv) != 1 || ops.dyn[0] || !strings.EqualFold(ops.argv[0], "FLUSHDB") {
		return ""
	}
	return "redis-" + n
}

// pgWholeDB: options of dropdb/createdb that take a value; every other option must be a flag of
// pgWholeDBFlags.
var (
	pgWholeDBVals  = set("-h", "--host", "-p", "--port", "-U", "--username", "-O", "--owner", "-T", "--template", "-E", "--encoding", "-l", "--locale", "--maintenance-db")
	pgWholeDBFlags = set("--if-exists", "-f", "--force", "-e", "--echo", "-w", "--no-password", "-i", "--interactive")
)

// markLocalDBs marks the effects of dropdb/createdb on a development database (see above).
func (s *state) markLocalDBs() {
	if !s.defaultConnLocal() { // local_default.go
		return
	}
	names := map[string]string{} // program → database:host
	dbs := map[string]string{}
	for _, c := range s.act.Commands {
		var host, db string
		var ok bool
		switch c.Name {
		case "dropdb", "createdb":
			host, db, ok = pgWholeDBArgs(c)
		case "pg_restore":
			host, db, ok = pgRestoreArgs(c) // local_default.go
		default:
			continue
		}
		if !ok || c.Dynamic || !pgCredentialEnvOnly(c.Env) {
			return
		}
		if prev, seen := dbs[c.Name]; seen && prev != db {
			return // one database per program: effects do not say which command they came from
		}
		names[c.Name], dbs[c.Name] = "database:"+host, db
	}
	for i := range s.act.Effects {
		e := &s.act.Effects[i]
		if t, ok := names[e.Program]; ok && e.Target == "database" && e.Remote == "" && (e.Kind == EffectDelete || e.Kind == EffectWrite) {
			e.Target, e.Remote = t, remoteLocalDB+dbs[e.Program]
		}
	}
}

// pgWholeDBArgs: the host ("localhost" for the default connection) and the database of a
// dropdb/createdb argv, when both are local and dev-named.
func pgWholeDBArgs(c Command) (string, string, bool) {
	host, db := "localhost", ""
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		opt, val, hasVal := strings.Cut(a, "=")
		switch {
		case pgWholeDBFlags[a]:
		case pgWholeDBVals[opt]:
			if !hasVal {
				if i+1 >= len(c.Args) {
					return "", "", false
				}
				i++
				val = c.Args[i]
			}
			if opt == "-h" || opt == "--host" {
				if !loopbackName(val) {
					return "", "", false
				}
				host = val
			}
			if opt == "--maintenance-db" && strings.Contains(val, "=") {
				return "", "", false // a connection string
			}
		case strings.HasPrefix(a, "-"):
			return "", "", false
		case db == "":
			db = a
		default:
			if c.Name == "dropdb" {
				return "", "", false
			}
			// createdb DBNAME DESCRIPTION
		}
	}
	if !devDBNameRE.MatchString(db) {
		return "", "", false
	}
	return host, db, true
}
