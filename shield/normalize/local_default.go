package normalize

import (
	"regexp"
	"strings"
)

// No host means the client's default, which is local (issue 11, wave 8). A database or cache
// client given no host option, no URL or connection string and no host-setting environment
// variable anywhere in the call connects where its documentation says it does by default: the
// local socket or localhost (psql, pg_restore, createdb and dropdb: the Unix socket; redis-cli:
// 127.0.0.1:6379; mongosh: 127.0.0.1:27017; mysql: the local socket). Such a call is judged like
// one with an explicit loopback host (local_targets.go, local_dbs.go), with the same requirement
// that a database with a name says it is a development or test one (devDBNameRE).
//
// Decision and its risk: the agent's environment is not part of the call. A PGHOST, PGSERVICE or
// MYSQL_HOST exported in the agent's shell, a service file or a ~/.my.cnf [client] host= can point
// the default connection at a shared server. The development-name requirement is what bounds
// that risk: the database dropped or restored there is one named *_dev, *_test, *_scratch …, not
// the shared one. Redis has no names: redis-cli reads no host from the environment, so its
// default is this machine; a FLUSHDB there (never FLUSHALL) is the developer's own cache. A
// tunnel listening on loopback (ssh -L) is the residual risk, the same as for an explicit
// localhost. Operators whose agents run with a remote default connection should export it as a
// URL in the commands they allow, or replace devDBNameRE's names in a bundle of their own.
//
// Any of these in the call (as an assignment, an export or a word) makes the default unknown.
var hostEnvRE = regexp.MustCompile(`\b(PGHOST|PGHOSTADDR|PGSERVICE|PGSERVICEFILE|PGSYSCONFDIR|PGDATABASE|MYSQL_HOST|MYSQL_UNIX_PORT|MONGODB_URI|MONGO_URL|REDISCLI_[A-Z_]*|DATABASE_URL|REDIS_URL)\b`)

// defaultConnLocal: the call names no host-setting variable (see above).
func (s *state) defaultConnLocal() bool {
	return !hostEnvRE.MatchString(s.act.Command)
}

// localDefaultHost: the host a client call connects to when it names none: "localhost" when the
// default is local (no host-setting variable in the call), "" otherwise.
func (w *walker) localDefaultHost() string {
	if w.s.defaultConnLocal() {
		return "localhost"
	}
	return ""
}

// pgRestore options that take a value; every other option must be one of pgRestoreFlags.
// -C/--create is absent on purpose: with it pg_restore creates (and with --clean drops) the
// database named inside the dump, not the -d one.
var (
	pgRestoreVals  = set("-d", "--dbname", "-h", "--host", "-p", "--port", "-U", "--username", "-F", "--format", "-j", "--jobs", "-n", "--schema", "-N", "--exclude-schema", "-t", "--table", "-T", "--trigger", "-I", "--index", "-P", "--function", "-S", "--superuser", "--role", "-L", "--use-list")
	pgRestoreFlags = set("-c", "--clean", "--if-exists", "-O", "--no-owner", "-x", "--no-privileges", "--no-acl", "-1", "--single-transaction", "-a", "--data-only", "-s", "--schema-only", "-v", "--verbose", "--no-comments", "--disable-triggers", "-w", "--no-password", "-e", "--exit-on-error", "--no-publications", "--no-subscriptions", "--no-security-labels", "--no-tablespaces", "--no-data-for-failed-tables", "--strict-names", "--use-set-session-authorization", "--enable-row-security")
)

// pgRestoreArgs: the host and dev-named database of a pg_restore argv restoring into a local
// development database, or ok false. Operands are dump files (read effects of the spec).
func pgRestoreArgs(c Command) (string, string, bool) {
	host, db := "localhost", ""
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 && pgRestoreVals[a[:2]] {
			opt, val, hasVal = a[:2], a[2:], true // -dapp_dev
		}
		switch {
		case pgRestoreFlags[a]:
		case pgRestoreVals[opt]:
			if !hasVal {
				if i+1 >= len(c.Args) {
					return "", "", false
				}
				i++
				val = c.Args[i]
			}
			switch opt {
			case "-h", "--host":
				if !loopbackName(val) {
					return "", "", false
				}
				host = val
			case "-d", "--dbname":
				db = val
			}
		default:
			return "", "", false
		}
	}
	if !devDBNameRE.MatchString(db) {
		return "", "", false
	}
	return host, db, true
}

// dbDefaultHost: localDefaultHost for a client call that names no server by a URL or connection
// string either (an option value or operand containing "://", "host=" or "service=", or an
// expansion).
func (w *walker) dbDefaultHost(pa parsedArgs, args words) string {
	named := func(v string) bool {
		return strings.Contains(v, "://") || strings.Contains(v, "host=") || strings.Contains(v, "service=")
	}
	for _, v := range pa.vals {
		if v.dyn || named(v.val) {
			return ""
		}
	}
	ops := pa.words(args)
	for k, a := range ops.argv {
		if ops.dyn[k] || named(a) {
			return ""
		}
	}
	return w.localDefaultHost()
}

// pgConnEnvNoHost: libpq variables that choose the user, password, port or TLS of the default
// connection but never its host or database (wave 8: `PGPASSWORD=postgres dropdb app_test` is
// the same local database).
var pgConnEnvNoHost = set("PGPASSWORD", "PGUSER", "PGPORT", "PGCONNECT_TIMEOUT", "PGSSLMODE", "PGAPPNAME")

// pgCredentialEnvOnly: every assignment of a command sets one of pgConnEnvNoHost.
func pgCredentialEnvOnly(env []string) bool {
	for _, v := range env {
		name, _, _ := strings.Cut(v, "=")
		if !pgConnEnvNoHost[name] {
			return false
		}
	}
	return true
}
