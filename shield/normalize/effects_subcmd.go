package normalize

import "strings"

// Tool sub-languages: a build tool's own command set that is a coreutils in disguise. cmake -E
// (rm, remove_directory, copy, rename, make_directory, touch, create_symlink, tar, env, chdir,
// time …) is judged as the coreutils command it is, so "cmake -E rm -rf ~/.ssh" is the delete it
// performs and "cmake -E make_directory build" the workspace mkdir it is.

// cmakeTools maps a cmake -E command to the argv prefix of the command it behaves as; "" runs the
// rest of argv as a command (env, time, chdir after its directory).
var cmakeTools = map[string][]string{
	"rm":                          {"rm"},
	"remove":                      {"rm"},
	"remove_directory":            {"rm", "-r"},
	"copy":                        {"cp"},
	"copy_if_different":           {"cp"},
	"copy_if_newer":               {"cp"},
	"copy_directory":              {"cp", "-r"},
	"copy_directory_if_different": {"cp", "-r"},
	"copy_directory_if_newer":     {"cp", "-r"},
	"rename":                      {"mv"},
	"make_directory":              {"mkdir", "-p"},
	"touch":                       {"touch"},
	"touch_nocreate":              {"touch", "-c"},
	"create_symlink":              {"ln", "-s"},
	"create_hardlink":             {"ln"},
	"tar":                         {"tar"},
	"env":                         {"env"},
	"cat":                         {"cat"},
	"echo":                        {"echo"},
	"echo_append":                 {"echo"},
	"compare_files":               {"cmp"},
	"md5sum":                      {"md5sum"},
	"sha1sum":                     {"sha1sum"},
	"sha224sum":                   {"sha224sum"},
	"sha256sum":                   {"sha256sum"},
	"sha384sum":                   {"sha384sum"},
	"sha512sum":                   {"sha512sum"},
	"sleep":                       {"sleep"},
	"true":                        {"true"},
	"false":                       {"false"},
	"time":                        {},
	"chdir":                       {},
	"capabilities":                {"true"},
	"environment":                 {"printenv"},
	"delete_regv":                 {"true"},
	"write_regv":                  {"true"},
	"server":                      nil, // a cmake server: unknown
}

// cmakeTool walks "cmake … -E CMD ARGS…" as the command CMD stands for. An unknown or computed
// CMD is unresolved (fail closed).
func (w *walker) cmakeTool(f frame, args words, pipe bool, idx int, stdin string) {
	s := w.s
	i := 0
	for i < len(args.argv) && args.argv[i] != "-E" {
		i++
	}
	if i >= len(args.argv) {
		return
	}
	if i+1 >= len(args.argv) {
		return
	}
	cmd := args.argv[i+1]
	rest := args.sub(i + 2)
	pre, ok := cmakeTools[cmd]
	if args.dyn[i+1] || !ok || pre == nil {
		s.addUnresolved("cmake -E " + cmd)
		s.addEffect(Effect{Kind: EffectExec, Target: "cmake -E " + cmd, Program: "cmake", Detail: "cmake -E", Unresolved: true})
		return
	}
	if cmd == "chdir" {
		if len(rest.argv) < 2 {
			return
		}
		// The command runs in DIR: judged as "cd DIR" then the command.
		ws := words{argv: append([]string{"cd"}, rest.argv[0]), dyn: []bool{false, rest.dyn[0]}}
		w.subTool(f, "cmake -E", ws, pipe, idx, stdin)
		rest = rest.sub(1)
	}
	ws := words{argv: append(append([]string{}, pre...), rest.argv...), dyn: append(make([]bool, len(pre)), rest.dyn...)}
	w.subTool(f, "cmake -E", ws, pipe, idx, stdin)
}

func (w *walker) subTool(f frame, via string, ws words, pipe bool, idx int, stdin string) {
	if len(ws.argv) == 0 {
		return
	}
	child := frame{depth: f.depth + 1, via: via, sudo: f.sudo}
	if child.depth > w.s.n.opt.MaxDepth {
		w.s.act.Truncated = true
		return
	}
	w.emit(child, ws, strings.Join(ws.argv, " "), nil, nil, pipe, idx, false, stdin)
}

// ---------------------------------------------------------------------------------------------
// Dependency sources redirected by a command: go mod edit -replace, cargo --config patch./source.

// vcsShorthand expands the shorthands package managers accept for a repository (npm
// github:o/r, gitlab:o/r, bitbucket:o/r, o/r; git@host:path) to the git URL they fetch, so the
// install is judged as the foreign source it is. Other values are returned unchanged.
func vcsShorthand(prog, raw string) string {
	lp := strings.ToLower(raw)
	for _, h := range [][2]string{{"github:", "github.com"}, {"gitlab:", "gitlab.com"}, {"bitbucket:", "bitbucket.org"}, {"gist:", "gist.github.com"}} {
		if strings.HasPrefix(lp, h[0]) {
			return "git+https://" + h[1] + "/" + raw[len(h[0]):]
		}
	}
	if strings.HasPrefix(lp, "git@") {
		if host, p, ok := strings.Cut(raw[4:], ":"); ok {
			return "git+ssh://git@" + host + "/" + p
		}
	}
	if npmFamily[prog] && !strings.HasPrefix(raw, "@") && !strings.Contains(raw, "://") && strings.Count(raw, "/") == 1 && !strings.Contains(raw, "@") &&
		!strings.Contains(raw, ".") && !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "~") && !strings.HasPrefix(raw, "git+") {
		return "git+https://github.com/" + strings.SplitN(raw, "#", 2)[0] // npm owner/repo
	}
	if strings.HasSuffix(lp, ".git") && !strings.Contains(lp, "://") && !strings.HasPrefix(lp, "git+") && !strings.HasPrefix(raw, ".") &&
		!strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "~") {
		return "git+https://" + raw
	}
	return raw
}

// npmFamily: installers that read "owner/repo" as a GitHub repository.
var npmFamily = set("npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx")

// goModReplace: "go mod edit -replace OLD=NEW[@v]" makes every build take OLD's code from NEW. A
// replacement by a directory is that directory's code (a path install); by another module path it
// is a foreign source (a module other than the one the project requires); the same path at
// another version is an ordinary pin.
func (w *walker) goModReplace(args words) {
	if len(args.argv) < 2 || args.argv[0] != "mod" || args.argv[1] != "edit" {
		return
	}
	for i := 2; i < len(args.argv); i++ {
		a, dyn := args.argv[i], args.dyn[i]
		var v string
		switch {
		case a == "-replace" && i+1 < len(args.argv):
			i++
			v, dyn = args.argv[i], args.dyn[i]
		case strings.HasPrefix(a, "-replace="):
			v = strings.TrimPrefix(a, "-replace=")
		default:
			continue
		}
		if dyn && isUnresolvedText(v) {
			w.installEffect("go", v, true)
			continue
		}
		old, repl, ok := strings.Cut(v, "=")
		if !ok {
			continue
		}
		oldPath, _, _ := strings.Cut(old, "@")
		newPath, _, _ := strings.Cut(repl, "@")
		switch {
		case strings.HasPrefix(repl, ".") || strings.HasPrefix(repl, "/") || strings.HasPrefix(repl, "~"):
			w.installEffect("go", repl, false)
			w.sourceDir("go mod edit -replace", repl) // the directory's code is built: outside the workspace, code from outside
		case newPath != oldPath:
			w.installEffect("go", "git+https://"+newPath, false)
		}
	}
}

// cargoConfigSources: "cargo --config KEY=VALUE" entries that change where crates come from
// (patch.<registry>.<crate>.git/path, source.<name>.registry/replace-with, registries.<name>.index).
func (w *walker) cargoConfigSources(pa parsedArgs) {
	for _, v := range pa.vals {
		if v.opt != "--config" {
			continue
		}
		key, val, ok := strings.Cut(v.val, "=")
		if !ok {
			continue // a config file: read as a file by its role
		}
		key = strings.TrimSpace(key)
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		if !(strings.HasPrefix(key, "patch.") || strings.HasPrefix(key, "source.") || strings.HasPrefix(key, "registries.") ||
			strings.HasPrefix(key, "registry.")) {
			continue
		}
		switch {
		case v.dyn && isUnresolvedText(val):
			w.installEffect("cargo", val, true)
		case strings.HasSuffix(key, ".path") || strings.HasSuffix(key, ".directory") || strings.HasSuffix(key, ".local-registry"):
			w.sourceDir("cargo --config "+key, val) // a directory's crate: outside the workspace, code from outside
		case strings.Contains(val, "://"):
			u := strings.TrimPrefix(strings.TrimPrefix(val, "sparse+"), "registry+")
			if !strings.HasPrefix(u, "git+") {
				u = "git+" + u
			}
			w.installEffect("cargo", u, false)
		}
	}
}

// sourceDir: a dependency taken from a directory. The workspace's and the user's own directories
// (a sibling checkout, ../lib) are the user's code; elsewhere (/tmp, another user's) it is code
// from outside, an exec of that directory.
func (w *walker) sourceDir(prog, p string) {
	s := w.s
	clean, ok := resolvePath(p, s.cwd, s.n.opt.Home)
	if !ok || inDir(clean, s.n.opt.Home) && s.n.sens.classify(clean) == "" {
		return
	}
	w.envFileExec(prog, p)
}

// npxSystemPrograms: programs npx/npm exec/pnpm dlx run from the system, not from an npm package,
// when named after "--": interpreters and system tools.
var npxSystemPrograms = set("node", "nodejs", "python", "python3", "perl", "ruby", "php", "deno", "bun", "env", "xargs", "sudo",
	"doas", "curl", "wget", "nc", "ncat", "netcat", "socat", "rm", "cp", "mv", "dd", "cat", "tar", "ssh", "scp", "rsync", "git",
	"find", "chmod", "chown", "ln", "tee", "base64", "openssl", "awk", "sed", "gpg", "docker", "kubectl", "aws", "gcloud", "az",
	"zip", "unzip", "crontab", "nohup", "setsid", "timeout", "install", "mkdir", "touch", "printenv", "osascript", "pwsh", "powershell")
