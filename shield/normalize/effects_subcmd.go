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
