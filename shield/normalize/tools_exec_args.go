package normalize

import (
	"path"
	"strings"
)

// An exec tool's command, whatever field holds it. A catalog entry of class exec names the fields
// its runtime puts the command in; a server, a version or a wildcard-matched tool (`*_exec`,
// `run_*command*`, a `kubectl` tool) may put it elsewhere: an argv list under args/argv/arguments,
// or code under code/source/program. What is found is walked like a shell call's argv (a tool
// named after a program with a spec and given its arguments without the program name runs that
// program); when nothing can be read as the command, its effects are unknown: the call is marked
// unresolved and never reaches ALLOW without tier 2 or 3 (exec.unknown-effects).

// execArgvKeys hold an argv list; execCodeKeys hold code whose language the call does not say.
var (
	execArgvKeys = []string{"argv", "args", "arguments", "cmd_args", "command_args", "command", "cmd"}
	execCodeKeys = []string{"code", "source", "program", "script", "input", "snippet", "python", "js", "javascript"}
)

// execFallback reads the command of an exec call that has none yet (see the file comment).
func (s *state) execFallback() {
	a := s.act
	if a.Class != ClassExec || a.Command != "" || len(a.Commands) > 0 {
		return
	}
	prog := strings.ToLower(path.Base(a.Tool))
	for _, k := range execArgvKeys {
		list, ok := a.Args[k].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		argv := make([]any, 0, len(list)+1)
		for _, x := range list {
			if _, ok := x.(string); !ok {
				s.addUnresolved("exec tool " + a.Tool + ": an argument of " + k + " is not a string")
				return
			}
		}
		first, _ := list[0].(string)
		if s.n.opt.Commands.lookup(prog) != nil && path.Base(first) != prog {
			argv = append(argv, prog) // a `kubectl` tool given ["delete", "ns", "prod"]
		}
		argv = append(argv, list...)
		s.command(argv)
		return
	}
	for _, k := range execCodeKeys {
		if v, ok := a.Args[k].(string); ok && strings.TrimSpace(v) != "" {
			s.addUnresolved("exec tool " + a.Tool + ": code under " + k + " in an unknown language")
			return
		}
	}
	s.addUnresolved("exec tool " + a.Tool + ": no command could be read from its arguments")
}
