package celrules

import (
	"path"
	"sort"
	"strings"

	"github.com/shieldsec/shield/shield/normalize"
)

// testNorm is a small stand-in for the shield/normalize normaliser, enough for the rules in
// testdata: Bash runs a command (split on ;, &&, || and |, words on blanks), Read reads a path.
func testNorm(tool string, args map[string]any, cwd string) *normalize.Action {
	a := &normalize.Action{Tool: tool, Class: normalize.ClassUnknown, Args: args, Cwd: cwd}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := args[k].(string); ok {
			a.Strings = append(a.Strings, s)
		}
	}
	switch tool {
	case "Bash":
		a.Class, a.Known = normalize.ClassExec, true
		a.Command, _ = args["command"].(string)
		r := strings.NewReplacer("&&", ";", "||", ";")
		for _, seg := range strings.Split(r.Replace(a.Command), ";") {
			parts := strings.Split(seg, "|")
			for i, part := range parts {
				argv := strings.Fields(part)
				if len(argv) == 0 {
					continue
				}
				c := normalize.Command{Raw: strings.TrimSpace(part), Pipe: len(parts) > 1, PipeIndex: i}
				if argv[0] == "sudo" && len(argv) > 1 {
					c.Sudo, c.Via = true, "sudo"
					argv = argv[1:]
				}
				c.Argv, c.Name, c.Args = argv, path.Base(argv[0]), argv[1:]
				a.Commands = append(a.Commands, c)
			}
		}
	case "Read":
		a.Class, a.Known = normalize.ClassFileRead, true
		p, _ := args["file_path"].(string)
		clean := p
		if !path.IsAbs(p) {
			clean = path.Join(cwd, p)
		}
		a.Paths = append(a.Paths, normalize.Path{Raw: p, Clean: path.Clean(clean), Role: "read"})
	}
	return a
}
