package normalize

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Destructive verbs that the spec table cannot say, because what they destroy depends on an
// option's value, on the environment a framework task runs in, or on a sub-command path with
// abbreviations:
//
//   - framework database tasks (rails db:drop, manage.py flush, prisma migrate reset, artisan
//     migrate:fresh, mix ecto.drop, dotnet ef database drop…): a delete of "app_database:CLASS",
//     CLASS being the environment the call names (production, development or unnamed);
//   - local history destruction of the workspace's repository (reflog expire, gc --prune=now, git
//     prune, filter-repo, update-ref -d, stash clear, many branches force-deleted, rm of .git):
//     a delete of "vcs_history";
//   - audit and detection switched off in a cloud (cloudtrail stop-logging, guardduty
//     delete-detector, config stop-configuration-recorder, logging sinks, diagnostic settings…)
//     and a shell's history switched off: a delete of "audit_trail";
//   - btrfs sub-commands, which accept any unique prefix (btrfs su de): a delete of "block_volume".
//
// The policies judge the targets (rego/destroy.rego). commandEffects calls destroyEffects once
// per simple command, before the program's spec.

const (
	targetAppDatabase = "app_database"
	targetVCSHistory  = "vcs_history"
	targetAuditTrail  = "audit_trail"
	targetBlockVolume = "block_volume"
	// targetSecurityControl: a host's confinement (AppArmor profiles) switched off.
	targetSecurityControl = "security_control"
)

func (w *walker) destroyEffects(f frame, c *Command, ws words) {
	if len(ws.argv) == 0 || ws.dyn[0] {
		return
	}
	name := path.Base(ws.argv[0])
	args := ws.sub(1)
	switch name {
	case "git":
		w.gitHistoryEffects(f, args)
	case "rm", "rmdir", "shred", "srm", "wipe", "unlink":
		w.gitDirRemoval(name, args)
	case "aws", "gcloud", "az":
		w.auditOffEffects(name, args)
	case "set":
		// set +o history: the shell stops recording what follows.
		for i := 0; i+1 < len(args.argv); i++ {
			if args.argv[i] == "+o" && args.argv[i+1] == "history" {
				w.s.addEffect(Effect{Kind: EffectDelete, Target: targetAuditTrail, Program: name, Detail: "set +o history"})
			}
		}
	case "btrfs":
		w.btrfsEffects(args)
	case "wevtutil", "auditpol", "Clear-EventLog", "Remove-EventLog", "Limit-EventLog":
		w.windowsAuditEffects(name, args)
	case "aa-teardown", "aa-disable", "aa-complain", "apparmor_parser":
		// AppArmor profiles unloaded or made advisory: the host's confinement is off.
		if name != "apparmor_parser" || hasAnyArg(args, "-R", "--remove") {
			w.s.addEffect(Effect{Kind: EffectDelete, Target: targetSecurityControl, Program: name, Detail: strings.TrimSpace(name + " " + strings.Join(args.argv, " "))})
		}
	case "mvn", "mvnw", "gradle", "gradlew", "sbt", "lein", "mix", "dart", "flutter", "deno", "jsr", "pod", "conan":
		w.registryTaskEffects(name, args)
	case "npx", "pnpx", "bunx":
		if len(args.argv) > 0 && path.Base(args.argv[0]) == "jsr" {
			w.registryTaskEffects("jsr", args.sub(1))
		}
	}
	w.appDatabaseEffects(c, name, args)
	w.remoteDestroyEffects(name, args) // remote_destroy.go
	w.toolSettingEffects(name, args)   // tool_settings.go
}

// ---------------------------------------------------------------------------------------------
// Publishing through build tools and CLIs whose specs model no sub-commands (publish.spec has
// the package managers): a push to the registry, or a delete of a published version.

var publishTaskRE = regexp.MustCompile(`^(:?[\w.-]+:)*(publish[A-Za-z]*|publishSigned|deploy|release:perform|sonatypeBundleRelease|sonatypeRelease|closeAndReleaseRepository)$`)

func (w *walker) registryTaskEffects(name string, args words) {
	var ops []string
	all := map[string]bool{}
	for i, a := range args.argv {
		if args.dyn[i] {
			continue
		}
		all[a] = true
		if !strings.HasPrefix(a, "-") {
			ops = append(ops, a)
		}
	}
	if all["--dry-run"] || all["-n"] && (name == "dart" || name == "flutter") {
		return
	}
	fx := func(kind, target, what string) {
		w.s.addEffect(Effect{Kind: kind, Target: target, Program: name, Detail: name + " " + what})
	}
	first := func(ws ...string) bool {
		if len(ops) < len(ws) {
			return false
		}
		return equalWords(ops[:len(ws)], ws)
	}
	switch name {
	case "mvn", "mvnw", "gradle", "gradlew", "sbt", "lein":
		for _, o := range ops {
			t := strings.TrimPrefix(o, "+") // sbt +publish: every Scala version
			if strings.Contains(t, "publishToMavenLocal") || strings.HasSuffix(t, "publishLocal") || strings.HasSuffix(t, "publishM2") {
				continue
			}
			if publishTaskRE.MatchString(t) && (name != "mvn" && name != "mvnw" || t == "deploy" || strings.HasPrefix(t, "deploy:") || t == "release:perform") {
				fx(EffectPush, "maven_repository", t)
				return
			}
		}
	case "mix":
		switch {
		case first("hex.publish") && all["--revert"]:
			fx(EffectDelete, "hex", "hex.publish --revert")
		case first("hex.publish"), first("hex.retire"), first("hex.owner"):
			fx(EffectPush, "hex", ops[0])
		}
	case "dart", "flutter":
		if first("pub", "publish") || first("pub", "lish") {
			fx(EffectPush, "pub.dev", "pub publish")
		}
	case "deno", "jsr":
		if first("publish") {
			fx(EffectPush, "jsr", "publish")
		}
	case "pod":
		switch {
		case first("trunk", "push"), first("trunk", "add-owner"), first("trunk", "deprecate"):
			fx(EffectPush, "cocoapods", "trunk "+ops[1])
		case first("trunk", "delete"):
			fx(EffectDelete, "cocoapods", "trunk delete")
		}
	case "conan":
		switch {
		case first("upload"):
			fx(EffectPush, "conan", "upload")
		case first("remove") && (all["-r"] || all["--remote"]):
			fx(EffectDelete, "conan", "remove --remote")
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Framework database tasks

// appDBTasks: per framework tool, the tasks that drop, empty or rebuild the application's
// database. Each entry is the task's words; a trailing "+ARG" word requires ARG among the
// remaining arguments (knex migrate:rollback --all), a "=ARG" word requires ARG as the next
// operand (alembic downgrade base). The words may stand anywhere among the operands: rake runs
// every task it is given, and an option's value may come first (alembic -c x.ini downgrade base).
var appDBTasks = map[string][][]string{
	"rails": {{"db:drop"}, {"db:drop:all"}, {"db:drop:_unsafe"}, {"db:reset"}, {"db:schema:load"}, {"db:structure:load"},
		{"db:purge"}, {"db:purge:all"}, {"db:truncate_all"}, {"db:setup"}, {"db:seed:replant"}, {"db:migrate:reset"},
		{"db:test:purge"}, {"db:migrate", "+VERSION=0"}},
	"django":    {{"flush"}, {"reset_db"}, {"dbshell"}, {"migrate", "+zero"}},
	"artisan":   {{"migrate:fresh"}, {"migrate:reset"}, {"migrate:refresh"}, {"db:wipe"}},
	"prisma":    {{"migrate", "reset"}, {"db", "push", "+--force-reset"}, {"db", "push", "+--accept-data-loss"}},
	"sequelize": {{"db:drop"}, {"db:migrate:undo:all"}, {"db:seed:undo:all"}},
	"knex":      {{"migrate:rollback", "+--all"}},
	"typeorm":   {{"schema:drop"}},
	"alembic":   {{"downgrade", "=base"}},
	"flask":     {{"db", "downgrade", "=base"}, {"db", "downgrade", "=-all"}},
	"flyway":    {{"clean"}},
	"liquibase": {{"dropall"}, {"drop-all"}},
	"mix":       {{"ecto.drop"}, {"ecto.reset"}, {"ecto.rollback", "+--all"}},
	"dotnet-ef": {{"database", "drop"}, {"database", "update", "=0"}},
	"diesel":    {{"database", "reset"}, {"database", "drop"}},
	"sqlx":      {{"database", "drop"}, {"database", "reset"}},
	"goose":     {{"reset"}, {"down-to", "=0"}},
	"dbmate":    {{"drop"}},
	"ace":       {{"db:wipe"}, {"migration:fresh"}, {"migration:reset"}, {"migration:refresh"}},
}

// appDBToolAliases: program or package names of the tools above.
var appDBToolAliases = map[string]string{
	"rails": "rails", "rake": "rails", "manage.py": "django", "django": "django", "django-admin": "django", "django-admin.py": "django",
	"artisan": "artisan", "prisma": "prisma", "sequelize": "sequelize", "sequelize-cli": "sequelize", "knex": "knex",
	"typeorm": "typeorm", "typeorm-ts-node-commonjs": "typeorm", "typeorm-ts-node-esm": "typeorm", "alembic": "alembic",
	"flyway": "flyway", "liquibase": "liquibase", "mix": "mix", "dotnet-ef": "dotnet-ef", "diesel": "diesel",
	"sqlx": "sqlx", "sqlx-cli": "sqlx", "goose": "goose", "dbmate": "dbmate", "ace": "ace", "flask": "flask",
}

// appDBTool peels the launchers that run a framework tool (npx, pnpm/yarn/bun exec, python
// manage.py, php artisan, node ace, dotnet ef) and returns the tool and its arguments.
// Wrappers the walker follows itself (bundle exec, poetry run, uv run) need no peeling.
func appDBTool(name string, args words) (string, words) {
	switch name {
	case "npx", "pnpx", "bunx":
		return appDBPackage(args)
	case "npm", "pnpm", "yarn", "bun":
		if len(args.argv) == 0 {
			return "", words{}
		}
		switch args.argv[0] {
		case "exec", "dlx", "x":
			return appDBPackage(args.sub(1))
		}
		if t, ok := appDBToolAliases[args.argv[0]]; ok && name != "npm" {
			return t, args.sub(1) // pnpm prisma migrate reset: a package binary
		}
		return "", words{}
	case "dotnet":
		if len(args.argv) > 0 && args.argv[0] == "ef" {
			return "dotnet-ef", args.sub(1)
		}
		return "", words{}
	}
	if strings.HasPrefix(name, "python") || name == "php" || name == "node" {
		for i, a := range args.argv {
			if args.dyn[i] {
				return "", words{}
			}
			if a == "-m" && i+1 < len(args.argv) {
				if t, ok := appDBToolAliases[args.argv[i+1]]; ok {
					return t, args.sub(i + 2)
				}
				return "", words{}
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if t, ok := appDBToolAliases[path.Base(a)]; ok && (t == "django" || t == "artisan" || t == "ace") {
				return t, args.sub(i + 1)
			}
			return "", words{}
		}
		return "", words{}
	}
	if t, ok := appDBToolAliases[name]; ok {
		return t, args
	}
	return "", words{}
}

// appDBPackage reads "npx [options] PKG[@version] args…".
func appDBPackage(args words) (string, words) {
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if args.dyn[i] {
			return "", words{}
		}
		if a == "-p" || a == "--package" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		pkg := a
		if at := strings.LastIndexByte(pkg, '@'); at > 0 {
			pkg = pkg[:at]
		}
		pkg = path.Base(pkg) // @prisma/cli → cli is no tool; prisma is
		if t, ok := appDBToolAliases[pkg]; ok {
			return t, args.sub(i + 1)
		}
		return "", words{}
	}
	return "", words{}
}

func (w *walker) appDatabaseEffects(c *Command, name string, args words) {
	tool, rest := appDBTool(name, args)
	if tool == "" {
		return
	}
	task, ok := appDBTaskMatch(tool, rest)
	if !ok {
		return
	}
	class := w.appDBEnvClass(c, tool, rest)
	target := targetAppDatabase
	if class != "" {
		target += ":" + class
	}
	w.s.addEffect(Effect{Kind: EffectDelete, Target: target, Program: tool, Detail: "task " + tool + " " + task})
}

// appDBTaskMatch reports the destructive task among the tool's arguments.
func appDBTaskMatch(tool string, rest words) (string, bool) {
	var ops []string
	for i, a := range rest.argv {
		if rest.dyn[i] {
			continue
		}
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			ops = append(ops, strings.ToLower(a))
		}
	}
	all := make(map[string]bool, len(rest.argv))
	for _, a := range rest.argv {
		all[a] = true
		all[strings.ToLower(a)] = true
	}
	for _, pat := range appDBTasks[tool] {
		var words []string
		var needs, eqs []string
		for _, p := range pat {
			switch {
			case strings.HasPrefix(p, "+"):
				needs = append(needs, p[1:])
			case strings.HasPrefix(p, "="):
				eqs = append(eqs, p[1:])
			default:
				words = append(words, p)
			}
		}
		for start := 0; start+len(words) <= len(ops); start++ {
			if !equalWords(ops[start:start+len(words)], words) {
				continue
			}
			if len(eqs) > 0 {
				k := start + len(words)
				if k >= len(ops) || ops[k] != eqs[0] {
					continue
				}
			}
			ok := true
			for _, n := range needs {
				if !all[n] {
					ok = false
				}
			}
			if ok {
				return strings.Join(pat, " "), true
			}
		}
	}
	return "", false
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// appEnvVars name the environment a framework runs in.
var appEnvVars = set("RAILS_ENV", "RACK_ENV", "NODE_ENV", "APP_ENV", "MIX_ENV", "FLASK_ENV", "DJANGO_ENV", "ENV",
	"ENVIRONMENT", "STAGE", "ASPNETCORE_ENVIRONMENT", "DOTNET_ENVIRONMENT", "PRISMA_ENV", "KNEX_ENV", "SEQUELIZE_ENV",
	"FLYWAY_ENVIRONMENT", "GO_ENV", "APP_STAGE", "DEPLOY_ENV")

// appDBURLVars name the database a framework connects to.
var appDBURLVars = set("DATABASE_URL", "DB_URL", "DATABASE_URI", "SQLALCHEMY_DATABASE_URI", "POSTGRES_URL", "MYSQL_URL",
	"PRISMA_DATABASE_URL", "FLYWAY_URL", "LIQUIBASE_COMMAND_URL", "ConnectionStrings__DefaultConnection")

// appDBHostVars name the database host directly.
var appDBHostVars = set("DB_HOST", "PGHOST", "MYSQL_HOST", "DATABASE_HOST", "POSTGRES_HOST")

var (
	prodEnvRE = regexp.MustCompile(`(?i)^(prod|production|prd|live|staging|stage|stg|preprod|pre-prod|uat)$`)
	devEnvRE  = regexp.MustCompile(`(?i)^(dev|development|develop|test|testing|local|ci)$`)
	// Django settings modules name their environment: config.settings.production.
	prodSettingsRE = regexp.MustCompile(`(?i)(^|[._])(prod|production|prd|live|staging|stage)($|[._])`)
	devSettingsRE  = regexp.MustCompile(`(?i)(^|[._])(dev|development|test|testing|local|ci)($|[._])`)
)

// appDBEnvClass: "production" when the call names a production-like environment, a remote
// database or overrides the framework's own protection; "development" when it names only a
// development or test environment or a local database; "" when it names none (the framework's
// default, which the agent's environment may set to anything).
func (w *walker) appDBEnvClass(c *Command, tool string, rest words) string {
	prod, dev := false, false
	judge := func(k, v string) {
		switch {
		case appEnvVars[k]:
			if prodEnvRE.MatchString(v) {
				prod = true
			} else if devEnvRE.MatchString(v) {
				dev = true
			}
		case k == "DJANGO_SETTINGS_MODULE" || k == "--settings":
			if prodSettingsRE.MatchString(v) {
				prod = true
			} else if devSettingsRE.MatchString(v) {
				dev = true
			}
		case k == "DISABLE_DATABASE_ENVIRONMENT_CHECK":
			if v != "" && v != "0" && !strings.EqualFold(v, "false") {
				prod = true // Rails' own guard against dropping a production database, switched off
			}
		case appDBURLVars[k] || k == "--url" || k == "-url" || k == "--database-url" || k == "--db-url" || k == "--connection":
			switch dbURLClass(v) {
			case "remote":
				prod = true
			case "local":
				dev = true
			}
		case appDBHostVars[k]:
			switch hostClass(v) {
			case IPLoopback:
				dev = true
			case IPHostname, IPPublic:
				prod = true
			}
		}
	}
	seen := map[string]bool{}
	for _, kv := range w.inheritedEnv(c) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			seen[k] = true
			judge(k, v)
		}
	}
	for k := range appEnvVars {
		if v, ok := w.vars[k]; ok && !seen[k] {
			judge(k, v)
		}
	}
	for k := range appDBURLVars {
		if v, ok := w.vars[k]; ok && !seen[k] {
			judge(k, v)
		}
	}
	for k := range appDBHostVars {
		if v, ok := w.vars[k]; ok && !seen[k] {
			judge(k, v)
		}
	}
	for _, k := range []string{"DJANGO_SETTINGS_MODULE", "DISABLE_DATABASE_ENVIRONMENT_CHECK"} {
		if v, ok := w.vars[k]; ok && !seen[k] {
			judge(k, v)
		}
	}
	for i := 0; i < len(rest.argv); i++ {
		a := rest.argv[i]
		if rest.dyn[i] {
			continue
		}
		k, v, hasEq := strings.Cut(a, "=")
		if !hasEq && i+1 < len(rest.argv) && !rest.dyn[i+1] {
			v = rest.argv[i+1]
		}
		switch k {
		case "-e", "--environment", "--env", "-E", "--stage":
			judge("ENV", v)
		case "--settings", "--url", "-url", "--database-url", "--db-url", "--connection":
			judge(k, v)
		case "--force":
			if tool == "artisan" {
				prod = true // artisan asks for --force only when the environment is production
			}
		}
		if hasEq && (appEnvVars[k] || appDBURLVars[k] || k == "DISABLE_DATABASE_ENVIRONMENT_CHECK") {
			judge(k, v) // rake db:drop RAILS_ENV=production
		}
	}
	switch {
	case prod:
		return "production"
	case dev:
		return "development"
	}
	return ""
}

// inheritedEnv: the assignments of the command and of the wrappers it runs under
// (RAILS_ENV=production bundle exec rake …, env X=1 nice …, A=1 bash -c '…'): the commands the
// walker emitted before it at each smaller depth.
func (w *walker) inheritedEnv(c *Command) []string {
	env := append([]string(nil), c.Env...)
	if c.Via == "" || c.Via == "subst" {
		return env
	}
	cmds := w.s.act.Commands
	depth := c.Depth
	for i := len(cmds) - 1; i >= 0 && depth > 0; i-- {
		p := cmds[i]
		if p.Depth != depth-1 {
			continue
		}
		env = append(env, p.Env...)
		depth = p.Depth
		if p.Via == "" || p.Via == "subst" {
			break
		}
	}
	return env
}

// dbURLClass: "local" for a database file or a loopback server, "remote" for a named or public
// server, "" for a single-label host (a compose service) or an unreadable value.
func dbURLClass(v string) string {
	lv := strings.ToLower(v)
	if strings.HasPrefix(lv, "file:") || strings.HasPrefix(lv, "sqlite") {
		return "local"
	}
	if strings.Contains(lv, "host=") || strings.Contains(lv, "server=") || strings.Contains(lv, "data source=") {
		// An ADO.NET connection string: Host=db.prod.example;Database=app
		for _, part := range strings.Split(v, ";") {
			k, h, _ := strings.Cut(part, "=")
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "host", "server", "data source":
				h = strings.TrimSpace(h)
				if i := strings.IndexAny(h, ",:"); i >= 0 {
					h = h[:i]
				}
				return hostURLClass(h)
			}
		}
		return ""
	}
	v = strings.TrimPrefix(v, "jdbc:")
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return ""
	}
	return hostURLClass(u.Hostname())
}

func hostURLClass(h string) string {
	switch hostClass(h) {
	case IPLoopback:
		return "local"
	case IPHostname, IPPublic, IPInternal, IPPrivate:
		if !strings.Contains(h, ".") {
			return "" // "db": a compose or cluster service of unknown standing
		}
		return "remote"
	}
	return ""
}

// ---------------------------------------------------------------------------------------------
// Local history of the workspace's repository

// gitGlobalValueOpts: git's options before the sub-command that take a separate value.
var gitGlobalValueOpts = set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path")

func (w *walker) gitHistoryEffects(f frame, args words) {
	i := 0
	for i < len(args.argv) {
		a := args.argv[i]
		if gitGlobalValueOpts[a] {
			i += 2
			continue
		}
		if strings.HasPrefix(a, "-") {
			i++
			continue
		}
		break
	}
	if i >= len(args.argv) || args.dyn[i] {
		return
	}
	sub := args.argv[i]
	rest := args.sub(i + 1)
	destroy := func(what string) {
		w.s.addEffect(Effect{Kind: EffectDelete, Target: targetVCSHistory, Program: "git", Detail: "git " + what})
	}
	has := func(xs ...string) bool {
		for _, a := range rest.argv {
			for _, x := range xs {
				if a == x {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "reflog":
		if len(rest.argv) == 0 {
			return
		}
		switch rest.argv[0] {
		case "delete":
			destroy("reflog delete")
		case "expire":
			for k, a := range rest.argv {
				opt, v, eq := strings.Cut(a, "=")
				if opt != "--expire" && opt != "--expire-unreachable" {
					continue
				}
				if !eq && k+1 < len(rest.argv) {
					v = rest.argv[k+1]
				}
				if !historyKept(v) || rest.dyn[k] {
					destroy("reflog expire " + a)
					return
				}
			}
		}
	case "gc":
		for k, a := range rest.argv {
			if v, ok := strings.CutPrefix(a, "--prune="); ok && (!historyKept(v) || rest.dyn[k]) {
				destroy("gc " + a)
				return
			}
		}
	case "prune":
		if !has("-n", "--dry-run") {
			destroy("prune")
		}
	case "filter-repo":
		if !has("--analyze", "--dry-run", "-h", "--help") {
			destroy("filter-repo")
		}
	case "update-ref":
		if has("-d", "--stdin") {
			destroy("update-ref " + strings.Join(rest.argv, " "))
		}
	case "stash":
		if len(rest.argv) > 0 && rest.argv[0] == "clear" {
			destroy("stash clear")
		}
	case "branch":
		force := has("-D") || (has("-d", "--delete") && has("-f", "--force"))
		if !force {
			return
		}
		n, dyn := 0, false
		for k, a := range rest.argv {
			if rest.dyn[k] {
				dyn = true
			}
			if !strings.HasPrefix(a, "-") {
				n++
			}
		}
		// Several unmerged branches at once, or a list computed at run time: their commits are
		// reachable from nothing but the reflog.
		if n >= 3 || dyn || f.via == "xargs" || f.via == "parallel" {
			destroy("branch -D (several branches)")
		}
	}
}

// historyKept: an expiry that keeps recovery points (never, or a time of days or more ago).
func historyKept(v string) bool {
	v = strings.ToLower(strings.Trim(v, `"'`))
	if v == "never" || v == "false" {
		return true
	}
	for _, u := range []string{"day", "week", "month", "year"} {
		if strings.Contains(v, u) {
			return true
		}
	}
	return false
}

// gitDirRemoval: rm -rf .git (or its objects, refs or logs) of the workspace's repository.
func (w *walker) gitDirRemoval(name string, args words) {
	ws := w.s.n.opt.Workspace
	gitDir := path.Join(ws, ".git")
	for k, a := range args.argv {
		if args.dyn[k] || strings.HasPrefix(a, "-") {
			continue
		}
		clean, ok := resolvePath(a, w.s.cwd, w.s.n.opt.Home)
		if !ok {
			continue
		}
		switch clean {
		case gitDir, gitDir + "/objects", gitDir + "/refs", gitDir + "/logs", gitDir + "/packed-refs":
			w.s.addEffect(Effect{Kind: EffectDelete, Target: targetVCSHistory, Program: name, Detail: name + " " + a})
			return
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Audit and detection in a cloud

// auditOff: per CLI, the "service operation" words that stop, delete or narrow what a cloud
// records or detects; a third word requires that argument (guardduty update-detector
// --no-enable).
var auditOff = map[string][][]string{
	"aws": {
		{"cloudtrail", "stop-logging"}, {"cloudtrail", "delete-trail"}, {"cloudtrail", "update-trail"},
		{"cloudtrail", "put-event-selectors"}, {"cloudtrail", "put-insight-selectors"}, {"cloudtrail", "delete-event-data-store"},
		{"cloudtrail", "stop-event-data-store-ingestion"}, {"cloudtrail", "delete-channel"},
		{"guardduty", "delete-detector"}, {"guardduty", "update-detector", "--no-enable"}, {"guardduty", "disassociate-from-master-account"},
		{"guardduty", "disassociate-from-administrator-account"}, {"guardduty", "disassociate-members"}, {"guardduty", "delete-members"},
		{"guardduty", "stop-monitoring-members"}, {"guardduty", "delete-publishing-destination"}, {"guardduty", "create-filter", "ARCHIVE"},
		{"guardduty", "update-filter", "ARCHIVE"}, {"guardduty", "create-ip-set"}, {"guardduty", "update-ip-set"},
		{"config", "stop-configuration-recorder"}, {"config", "delete-configuration-recorder"}, {"config", "delete-delivery-channel"},
		{"configservice", "stop-configuration-recorder"}, {"configservice", "delete-configuration-recorder"},
		{"configservice", "delete-delivery-channel"}, {"configservice", "delete-config-rule"},
		{"securityhub", "disable-security-hub"}, {"securityhub", "batch-disable-standards"}, {"securityhub", "disable-import-findings-for-product"},
		{"securityhub", "disassociate-from-administrator-account"},
		{"logs", "delete-log-group"}, {"logs", "delete-log-stream"}, {"logs", "delete-subscription-filter"}, {"logs", "put-retention-policy"},
		{"ec2", "delete-flow-logs"}, {"macie2", "disable-macie"}, {"inspector2", "disable"}, {"detective", "delete-graph"},
		{"access-analyzer", "delete-analyzer"}, {"wafv2", "delete-logging-configuration"}, {"cloudwatch", "disable-alarm-actions"},
		{"cloudwatch", "delete-alarms"}, {"s3api", "put-bucket-logging"}, {"route53resolver", "delete-resolver-query-log-config"},
		{"organizations", "disable-aws-service-access"},
	},
	"gcloud": {
		{"logging", "sinks", "delete"}, {"logging", "sinks", "update"}, {"logging", "buckets", "delete"}, {"logging", "buckets", "update"},
		{"logging", "logs", "delete"}, {"logging", "settings", "update"}, {"logging", "exclusions", "create"},
		{"scc", "muteconfigs", "create"}, {"scc", "notifications", "delete"},
		{"services", "disable", "logging.googleapis.com"}, {"services", "disable", "securitycenter.googleapis.com"},
		{"services", "disable", "cloudaudit.googleapis.com"}, {"services", "disable", "monitoring.googleapis.com"},
	},
	"az": {
		{"monitor", "diagnostic-settings", "delete"}, {"monitor", "diagnostic-settings", "update"}, {"monitor", "log-profiles", "delete"},
		{"monitor", "activity-log", "alert", "delete"}, {"monitor", "activity-log", "alert", "update"},
		{"security", "pricing", "create", "free"}, {"security", "auto-provisioning-setting", "update", "off"},
		{"network", "watcher", "flow-log", "delete"}, {"sentinel", "data-connector", "delete"},
	},
}

// cloudGlobalValueOpts: global options of the cloud CLIs that take a separate value.
var cloudGlobalValueOpts = set("--profile", "--region", "--output", "--endpoint-url", "--query", "--cli-connect-timeout",
	"--cli-read-timeout", "--color", "--ca-bundle", "--project", "--account", "--configuration", "--format", "--verbosity",
	"--impersonate-service-account", "--billing-project", "--subscription", "-o", "--resource-group", "-g")

func (w *walker) auditOffEffects(name string, args words) {
	var ops []string
	all := map[string]bool{}
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if args.dyn[i] {
			continue
		}
		all[strings.ToLower(a)] = true
		if strings.HasPrefix(a, "-") {
			if cloudGlobalValueOpts[a] && len(ops) < 4 {
				i++
			}
			continue
		}
		ops = append(ops, strings.ToLower(a))
	}
	for _, row := range auditOff[name] {
		n := len(row)
		req := ""
		// The words are the service path; a last word that is an option or a value is required
		// among the arguments.
		last := row[n-1]
		if strings.HasPrefix(last, "--") || strings.ToUpper(last) == last || strings.Contains(last, ".") || last == "free" || last == "off" {
			req, n = strings.ToLower(last), n-1
		}
		if len(ops) < n || !equalWords(ops[:n], row[:n]) {
			continue
		}
		if req != "" && !all[req] {
			continue
		}
		w.s.addEffect(Effect{Kind: EffectDelete, Target: targetAuditTrail, Program: name, Detail: name + " " + strings.Join(row, " ")})
		return
	}
}

// windowsAuditEffects: Windows event logs cleared (wevtutil cl, Clear-EventLog) or audit policy
// cleared or disabled (auditpol /clear, /remove, /set … /success:disable).
func (w *walker) windowsAuditEffects(name string, args words) {
	off := false
	switch name {
	case "wevtutil":
		off = len(args.argv) > 0 && strings.EqualFold(args.argv[0], "cl") || len(args.argv) > 0 && strings.EqualFold(args.argv[0], "clear-log") ||
			len(args.argv) > 0 && (strings.EqualFold(args.argv[0], "sl") || strings.EqualFold(args.argv[0], "set-log")) && hasArgPrefixFold(args, "/e:false", "/enabled:false")
	case "auditpol":
		off = hasArgPrefixFold(args, "/clear", "/remove", "/success:disable", "/failure:disable")
	default:
		off = true
	}
	if off {
		w.s.addEffect(Effect{Kind: EffectDelete, Target: targetAuditTrail, Program: name, Detail: strings.TrimSpace(name + " " + strings.Join(args.argv, " "))})
	}
}

func hasAnyArg(args words, xs ...string) bool {
	for _, a := range args.argv {
		for _, x := range xs {
			if a == x {
				return true
			}
		}
	}
	return false
}

func hasArgPrefixFold(args words, xs ...string) bool {
	for _, a := range args.argv {
		for _, x := range xs {
			if len(a) >= len(x) && strings.EqualFold(a[:len(x)], x) {
				return true
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------------------------
// btrfs: sub-commands by any unique prefix

func (w *walker) btrfsEffects(args words) {
	var ops []string
	for i, a := range args.argv {
		if args.dyn[i] || strings.HasPrefix(a, "-") {
			continue
		}
		ops = append(ops, strings.ToLower(a))
		if len(ops) == 3 {
			break
		}
	}
	if len(ops) < 2 {
		return
	}
	pre := func(word, full string) bool { return word != "" && strings.HasPrefix(full, word) }
	group, cmd := ops[0], ops[1]
	switch {
	case pre(group, "subvolume") && (pre(cmd, "delete") || cmd == "del"),
		pre(group, "device") && (pre(cmd, "delete") || pre(cmd, "remove")),
		pre(group, "rescue") && (pre(cmd, "zero-log") || pre(cmd, "chunk-recover")):
		w.s.addEffect(Effect{Kind: EffectDelete, Target: targetBlockVolume, Program: "btrfs", Detail: "btrfs " + group + " " + cmd})
	}
}
