package normalize

import (
	"encoding/json"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// No class default without a look at the arguments. A structured tool whose class defaults to
// ALLOW (memory, database, agent state, configuration, query, vcs …) is judged on what its
// arguments ask for, read by the kind of field and the kind of value, not by tool name:
//
//   - a deletion (the tool's verb or an operation field) whose selector field holds a wildcard
//     or "all" in any field but its operation, steps or environment, or all: true
//     (delete_entities {entityNames: ["*"]}) destroys everything it reaches;
//   - an environment field naming production together with a destructive operation (migrate
//     down, reset, drop, purge; "all" steps) destroys shared data;
//   - a process field holding 1, 0 or a negative number (kill init, the process group, every
//     process) destroys the host's processes;
//   - a group, role or admin flag naming an administrative group (admins, root, wheel, sudo,
//     owner, superuser) on a call that creates or changes something grants privilege;
//   - a visibility field that makes a repository, bucket, gist or package public exposes it;
//   - a forge content tool (owner and repo named) reading a credential path reads a secret that
//     is not the workspace's.
//
// Effects carry Detail "argument …" (rego/arguments.rego decides). The field-name and value
// classes below are the reviewable data of this principle.

// DetailArgument prefixes the detail of every effect this file derives. It is API.
const DetailArgument = "argument"

// EffectExpose: a resource made visible to everyone (Target: the resource; Detail: how).
const EffectExpose = "expose"

// Field-name classes (keys folded: lower case, '_' and '-' removed).
var (
	argOperationKeys = set("direction", "action", "operation", "op", "command", "mode", "task", "verb", "method", "type", "subcommand")
	argEnvKeys       = set("env", "environment", "stage", "targetenv", "targetenvironment", "deployenv", "tier", "context", "cluster", "profile", "database", "db", "target", "workspace")
	argStepKeys      = set("steps", "step", "count", "to", "version", "target", "targetversion")
	argPIDKeys       = set("pid", "pids", "processid", "processids", "targetpid", "process", "pgid")
	argGroupKeys     = set("group", "groups", "role", "roles", "permission", "permissions", "accesslevel", "membership", "teamrole", "usertype", "privileges", "privilege", "level", "usergroups", "addgroups", "memberof", "grouplist")
	argAdminFlagKeys = set("isadmin", "admin", "superuser", "issuperuser", "siteadmin", "issiteadmin", "sudo", "isowner", "isroot", "root", "staff", "isstaff")
	argVisibleKeys   = set("visibility", "acl", "access", "cannedacl", "privacy", "audience", "sharing", "sharewith")
	argPublicFlags   = set("public", "ispublic", "publiclyaccessible", "publicaccess", "publicread", "anonymousaccess", "allowpublic")
	argPrivateFlags  = set("private", "isprivate", "internal")
	argSQLKeys       = set("sql", "statement", "statements", "query", "prehook", "posthook", "hook", "hooks", "initsql", "onrunstart", "onrunend", "ddl", "migration", "value")
	argForgeOwner    = set("owner", "org", "organization", "namespace", "user", "workspace", "projectkey")
	argForgeRepo     = set("repo", "repository", "reponame", "project", "projectid", "reposlug")
)

// Value classes.
var (
	argWildcardRE   = regexp.MustCompile(`^(\*+|%|\.\*|all|\*\.\*|everything|\*/\*)$`)
	argProductionRE = regexp.MustCompile(`(?i)^(prod|production|prd|live)([-_.:/].*)?$|[-_.:/](prod|production|prd|live)$`)
	argDestroyRE    = regexp.MustCompile(`(?i)^(down|drop|dropall|destroy|purge|wipe|truncate|delete|deleteall|teardown|tear-down|flush|flushall|reset|rollback|rollbackall|revert|undo|erase|nuke|fresh)$`)
	argAdminRE      = regexp.MustCompile(`(?i)^(.*[-_ .:/])?(admins?|administrators?|root|wheel|sudo|sudoers|owners?|super[-_ ]?users?|super[-_ ]?admins?|sysadmins?|domain admins|enterprise admins|org[-_ ]?admins?|site[-_ ]?admins?|global[-_ ]?admins?|cluster[-_ ]?admins?)$`)
	argPublicRE     = regexp.MustCompile(`(?i)^(public|public-read|public-read-write|publicread|publicreadwrite|anyone|everyone|all ?users|allusers|allauthenticatedusers|world|open|anonymous|internet)$`)
	// Tool verbs: a deletion, a read or listing (a filter naming admins is no grant).
	argDeleteToolRE = regexp.MustCompile(`(?i)(^|[_.-])(delete|remove|clear|purge|wipe|drop|destroy|truncate|erase|forget|reset|flush|prune)([_.-]|$|[A-Z])|^(delete|remove|clear|purge|wipe|drop|destroy|truncate|erase|forget|reset|flush|prune)`)
	argRevertRE     = regexp.MustCompile(`^(down|rollback|revert|undo)$`)
	argReadToolRE   = regexp.MustCompile(`(?i)^(list|get|search|find|describe|show|read|query|fetch|view|check|lookup|count|explain|inspect)([_.-]|[A-Z]|$)`)
)

// maxArgFields bounds the fields read per call; maxArgDepth bounds nesting.
const (
	maxArgFields = 256
	maxArgDepth  = 6
)

// argField is one scalar argument: its folded key (the parent's for list items) and its value.
type argField struct {
	key   string
	value any
}

// argFields flattens args, bounded.
func argFields(args map[string]any) []argField {
	var out []argField
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > maxArgDepth || len(out) >= maxArgFields {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				walk(foldKey(k), x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(key, e, depth+1)
			}
		default:
			out = append(out, argField{key: key, value: v})
		}
	}
	walk("", args, 0)
	return out
}

// argString returns a scalar as text ("" for none).
func argString(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	}
	return ""
}

func argTrue(v any) bool {
	s := strings.ToLower(argString(v))
	return s == "true" || s == "yes" || s == "1" || s == "on"
}

func argFalse(v any) bool {
	s := strings.ToLower(argString(v))
	return s == "false" || s == "no" || s == "0" || s == "off"
}

// argumentEffects derives the effects of a structured call's arguments (see the file comment).
func (s *state) argumentEffects() {
	a := s.act
	if a.Class == ClassExec {
		return // commands are judged by the shell engine
	}
	fields := argFields(a.Args)
	s.forgeCredentialReads(fields)
	s.remoteCredentialURLs()
	switch a.Class {
	case ClassFileRead, ClassFileList, ClassFileSearch, ClassFileWrite:
		return // paths are judged by the path engine
	}
	if len(fields) == 0 {
		return
	}
	tool := a.Tool
	reads := argReadToolRE.MatchString(tool)
	deletes := argDeleteToolRE.MatchString(tool)
	destroyOp, production, allSteps := "", "", false
	for _, f := range fields {
		v := argString(f.value)
		lv := strings.ToLower(v)
		switch {
		case argOperationKeys[f.key] && argDestroyRE.MatchString(lv):
			destroyOp = lv
			if strings.HasPrefix(lv, "delete") || strings.HasPrefix(lv, "remove") || lv == "purge" || lv == "wipe" || lv == "drop" || lv == "clear" {
				deletes = true
			}
		}
		if argEnvKeys[f.key] && argProductionRE.MatchString(lv) {
			production = v
		}
		if argStepKeys[f.key] && (lv == "all" || lv == "0" && f.key == "to" || lv == "-1" || lv == "*") {
			allSteps = true
		}
	}
	if deletes && destroyOp == "" {
		destroyOp = "delete"
	}
	for _, f := range fields {
		v := argString(f.value)
		lv := strings.ToLower(v)
		switch {
		case deletes && !reads && (argWildcardRE.MatchString(lv) && !argOperationKeys[f.key] && !argStepKeys[f.key] && !argEnvKeys[f.key] ||
			(f.key == "all" || f.key == "deleteall" || f.key == "everything") && argTrue(f.value)):
			s.addToolEffect(Effect{Kind: EffectDelete, Target: "all " + f.key + " of " + tool, Detail: DetailArgument + " wildcard deletion"})
		case argPIDKeys[f.key] && !reads:
			if n, err := strconv.ParseFloat(v, 64); err == nil && n <= 1 {
				s.addToolEffect(Effect{Kind: EffectDelete, Target: "process:" + v, Detail: DetailArgument + " signal to init, the process group or every process"})
			}
		case argGroupKeys[f.key] && !reads && argAdminRE.MatchString(lv):
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "account:" + lv, Detail: DetailArgument + " administrative group or role"})
		case argAdminFlagKeys[f.key] && !reads && argTrue(f.value):
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "account:" + f.key, Detail: DetailArgument + " administrative flag"})
		case argVisibleKeys[f.key] && !reads && argPublicRE.MatchString(lv):
			s.addToolEffect(Effect{Kind: EffectExpose, Target: tool, Detail: DetailArgument + " " + f.key + "=" + lv})
		case argPublicFlags[f.key] && !reads && argTrue(f.value):
			s.addToolEffect(Effect{Kind: EffectExpose, Target: tool, Detail: DetailArgument + " " + f.key + "=true"})
		case argPrivateFlags[f.key] && !reads && argFalse(f.value) && !deletes:
			s.addToolEffect(Effect{Kind: EffectExpose, Target: tool, Detail: DetailArgument + " " + f.key + "=false"})
		}
	}
	// SQL in a field named for SQL (a settings hook, an init statement) of a tool that is not a
	// database tool runs when the setting is used: judged as the statements it holds.
	if a.Class == ClassConfigChange || a.Class == "agent_state" {
		for _, f := range fields {
			if v, ok := f.value.(string); ok && argSQLKeys[f.key] && startsAsSQL(v) {
				for _, e := range sqlEffects(v, "database:"+tool, false) {
					s.addToolEffect(e)
				}
			}
		}
	}
	if production != "" && destroyOp != "" && !reads {
		// Stepping back (down, rollback, revert) one step is a human's call; everything else, or
		// every step, destroys.
		d := DetailArgument + " destroy: " + destroyOp + " in production"
		if argRevertRE.MatchString(destroyOp) && !allSteps {
			d = DetailArgument + " revert: " + destroyOp + " in production"
		} else if allSteps {
			d += " (all steps)"
		}
		s.addToolEffect(Effect{Kind: EffectDelete, Target: "environment:" + production, Detail: d})
	}
}

// forgeCredentialReads: a tool naming a repository (owner and repo) and a path reads that path
// from the forge, not from the workspace: a credential path there is a secret read from a
// repository that is not checked out here.
func (s *state) forgeCredentialReads(fields []argField) {
	owner, repo := "", ""
	for _, f := range fields {
		v := argString(f.value)
		if v == "" {
			continue
		}
		if argForgeOwner[f.key] && owner == "" {
			owner = v
		}
		if argForgeRepo[f.key] && repo == "" {
			repo = v
		}
	}
	if repo == "" || owner == "" && !strings.Contains(repo, "/") {
		return
	}
	where := repo
	if owner != "" {
		where = owner + "/" + repo
	}
	for _, p := range s.act.Paths {
		kind := s.n.sens.classify(p.Clean)
		// The forge path is relative to the repository's root, which may be a project or a
		// home directory (a dotfiles repository): a credential name in either table counts.
		for _, root := range []string{s.n.opt.Workspace, s.n.opt.Home} {
			if kind == "" && root != "" {
				kind = s.n.sens.classify(path.Join(root, path.Clean("/"+p.Raw)))
			}
		}
		if kind == "" || !hasKind(s.n.pathEffectKinds(kind), EffectSecret) {
			continue
		}
		s.addToolEffect(Effect{Kind: EffectSecret, Target: "forge:" + where + ":" + p.Raw, Detail: DetailArgument + " forge file " + kind, Sensitive: true, Remote: where})
	}
}

// remoteCredentialURLs: a request URL whose path names a credential file (a raw file of a
// repository, a gist, a file a web server serves by mistake) reads that credential from the
// remote host: a secret read whatever tool fetches it. The file names are the sensitive-path
// tables, matched as if the URL path were a workspace path.
func (s *state) remoteCredentialURLs() {
	for _, u := range s.act.URLs {
		if u.Role != URLRequest || u.Path == "" || u.Path == "/" || !specialSchemes[u.Scheme] || u.Scheme == "file" {
			continue
		}
		p := u.Path
		if len(p) > 1024 {
			continue
		}
		kind := s.n.sens.classify(path.Join(s.n.opt.Workspace, path.Clean("/"+p)))
		if kind == "" || !hasKind(s.n.pathEffectKinds(kind), EffectSecret) {
			continue
		}
		s.addToolEffect(Effect{Kind: EffectSecret, Target: u.Host + u.Path, Detail: DetailArgument + " remote file " + kind, Sensitive: true, Remote: u.Host})
	}
}
