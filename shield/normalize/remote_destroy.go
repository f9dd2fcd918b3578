package normalize

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// A destructive verb is destructive in any CLI. Whatever the program (one with a spec whose
// sub-commands the spec does not model, or one without a spec), a call whose sub-command words
// (the first three operands) contain a word of the destroy vocabulary (delete, rm, drop, purge…),
// or whose statement option (--command, --execute, -e, --query, --sql, -c, --eval) carries a
// destructive statement (DROP TABLE, TRUNCATE, DELETE FROM without WHERE, FLUSHALL,
// dropDatabase()), and which names a non-local target — --remote, a URL or host option outside
// loopback, a production-named resource (prod, production, prd) — deletes data of a remote
// service: a delete of "remote_service" (rego/remote_destroy.rego blocks it). Without a
// non-local target nothing is added: the program's spec or the unknown-program rule decides, so
// ordinary local clean-ups (docker volume rm, git stash drop, a --local D1 database) keep their
// judgement. Programs whose destructive sub-commands have their own model are skipped.

const targetRemoteService = "remote_service"

var destroyVocabulary = map[string]bool{
	"delete": true, "del": true, "rm": true, "remove": true, "drop": true, "destroy": true,
	"purge": true, "truncate": true, "wipe": true, "prune": true, "reset": true, "nuke": true,
	"erase": true, "flush": true, "flushall": true, "flushdb": true, "dropdb": true, "terminate": true,
}

// remoteDestroySkip: programs whose destructive forms are modelled elsewhere (git history and
// pushes, file removal) or whose sub-command words are scripts of the workspace.
var remoteDestroySkip = map[string]bool{
	"git": true, "rm": true, "rmdir": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"make": true, "just": true, "task": true, "echo": true, "printf": true, "grep": true, "rg": true,
	"man": true, "help": true, "sudo": true, "env": true, "xargs": true, "find": true,
	// Cloud storage and %verbs CLIs: cloud_ops.go and rules/destructive.yaml judge them, with
	// their local emulators.
	"aws": true, "awslocal": true, "gcloud": true, "gsutil": true, "az": true, "s3cmd": true, "rclone": true, "mc": true,
}

var (
	destructiveStatementRE = regexp.MustCompile(`(?i)\b(drop\s+(table|database|schema|collection|keyspace|index|view|user|role)\b|truncate\s+(table\s+)?\w|delete\s+from\s+[\w."]+\s*(;|$)|flushall\b|flushdb\b)|\.drop(database)?\(\s*\)`)
	networkURLRE           = regexp.MustCompile(`(?i)^(https?|postgres(ql)?|mysql|mariadb|mongodb(\+srv)?|rediss?|tcp|grpcs?|amqps?|clickhouse|influxdb|libsql|wss?)://`)
	productionNameRE       = regexp.MustCompile(`(?i)(^|[-_.:/@=])(prod|production|prd)([-_.:/]|\d|$)`)
)

var statementOptions = map[string]bool{"--command": true, "--execute": true, "-e": true, "--query": true, "--sql": true, "-c": true, "--eval": true, "-q": true, "--statement": true}

var remoteHostOptions = map[string]bool{"--host": true, "-H": true, "--url": true, "--endpoint": true, "--server": true, "--address": true, "--addr": true, "--api-url": true, "--uri": true, "-h": true}

func (w *walker) remoteDestroyEffects(name string, args words) {
	if remoteDestroySkip[name] || len(args.argv) == 0 {
		return
	}
	verb, stmt, remote := "", "", ""
	operands := 0
	for i := 0; i < len(args.argv) && i < 64; i++ {
		a := args.argv[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			opt, val, eq := strings.Cut(a, "=")
			if !eq && i+1 < len(args.argv) && (statementOptions[opt] || remoteHostOptions[opt]) {
				val = args.argv[i+1]
				i++
			}
			switch {
			case opt == "--remote":
				remote = "--remote"
			case statementOptions[opt] && destructiveStatementRE.MatchString(val):
				stmt = val
			case remoteHostOptions[opt] && nonLocalHost(val):
				remote = opt + " " + val
			}
			if !statementOptions[opt] && productionNameRE.MatchString(val) {
				remote = opt + " " + val
			}
			continue
		}
		operands++
		if operands <= 3 && destroyVocabulary[strings.ToLower(a)] {
			verb = a
		}
		if productionNameRE.MatchString(a) || (networkURLRE.MatchString(a) && nonLocalHost(a)) {
			remote = a
		}
	}
	if (verb == "" && stmt == "") || remote == "" {
		return
	}
	what := verb
	if stmt != "" {
		what = stmt
	}
	w.s.addEffect(Effect{Kind: EffectDelete, Target: targetRemoteService, Program: name, Detail: what + " on " + remote})
}

// nonLocalHost: a URL or host[:port] outside this machine.
func nonLocalHost(v string) bool {
	h := v
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil {
			return true
		}
		h = u.Hostname()
	} else if host, _, ok := strings.Cut(v, ":"); ok {
		h = host
	}
	h = strings.ToLower(path.Clean("/" + h))[1:]
	if h == "" || strings.HasPrefix(h, "/") {
		return false
	}
	return !loopbackName(h) && !strings.HasSuffix(h, ".localhost") && h != "0.0.0.0"
}
