package normalize

import (
	"path"
	"regexp"
	"strings"
)

// Where a destroying statement runs decides what it destroys (issue 11, wave 6, principle 2,
// the local half; rego/local.rego judges the mark). Besides a development database named by the
// client's own arguments (local_targets.go), two more are the developer's own:
//
//   - the statement names it: DROP DATABASE [IF EXISTS] NAME, alone, with NAME a development or
//     test name (devDBNameRE), run on an explicitly loopback host (psql -h localhost -c 'DROP
//     DATABASE IF EXISTS app_dev');
//   - the client runs inside a container of the workspace's own compose project (docker exec
//     PROJECT-db-1 psql …, PROJECT_db_1), on the container's default or loopback connection, with
//     no other Docker daemon or context in the call: the project's throwaway database.
//
// Either marks the statement's delete effects Remote "local-db:NAME". Any other host, a
// container of another project, a remote daemon or a context stays outside.

// dropDevDBRE: a single DROP DATABASE statement (group 2: the name).
var dropDevDBRE = regexp.MustCompile("(?i)^\\s*DROP\\s+(?:DATABASE|SCHEMA)\\s+(IF\\s+EXISTS\\s+)?[\"`]?([A-Za-z0-9_-]+)[\"`]?\\s*;?\\s*$")

// statementDevDB: the development database a lone DROP DATABASE names on an explicit loopback
// host, or "".
func statementDevDB(pa parsedArgs, code []string, defaultHost string) string {
	h, dyn, ok := pa.val("-h", "--host")
	if !ok {
		h = defaultHost // no host: the client's default (local_default.go)
	}
	if dyn || !loopbackName(h) || len(code) != 1 {
		return ""
	}
	m := dropDevDBRE.FindStringSubmatch(code[0])
	if m == nil || !devDBNameRE.MatchString(m[2]) {
		return ""
	}
	return m[2]
}

// composeDB: "compose:CONTAINER" when the client runs in a container of the workspace's compose
// project on its default or a loopback connection, on the local daemon; "" otherwise.
func (w *walker) composeDB(pa parsedArgs) string {
	s := w.s
	c, ok := strings.CutPrefix(s.fx().remote, "container:")
	if !ok || s.n.opt.Workspace == "" {
		return ""
	}
	if h, dyn, ok := pa.val("-h", "--host"); ok && (dyn || !loopbackName(h)) {
		return ""
	}
	project := strings.ToLower(path.Base(s.n.opt.Workspace))
	lc := strings.ToLower(c)
	if project == "" || project == "/" || !(strings.HasPrefix(lc, project+"-") || strings.HasPrefix(lc, project+"_")) {
		return ""
	}
	if strings.Contains(s.act.Command, "DOCKER_HOST") || strings.Contains(s.act.Command, "DOCKER_CONTEXT") || strings.Contains(s.act.Command, "CONTAINER_HOST") {
		return ""
	}
	for _, cmd := range s.act.Commands {
		switch cmd.Name {
		case "docker", "podman", "nerdctl":
		default:
			continue
		}
		for _, a := range cmd.Args {
			if a == "exec" {
				break // options after the verb are exec's own
			}
			o, _, _ := strings.Cut(a, "=")
			switch o {
			case "-H", "--host", "-c", "--context", "--url", "--connection", "--remote", "-r":
				return ""
			}
		}
	}
	return "compose:" + c
}

// markLocalStatements marks the delete effects of this client call (from index start) that ran
// against a local development database.
func (w *walker) markLocalStatements(pa parsedArgs, args words, target string, start int, code []string) {
	s := w.s
	mark := statementDevDB(pa, code, w.dbDefaultHost(pa, args))
	if mark == "" {
		mark = w.composeDB(pa)
	}
	if mark == "" {
		return
	}
	for i := start; i < len(s.act.Effects); i++ {
		e := &s.act.Effects[i]
		if e.Kind == EffectDelete && e.Target == target && !strings.HasPrefix(e.Remote, remoteLocalDB) {
			e.Remote = remoteLocalDB + mark
		}
	}
}
