package normalize

import (
	"strings"
)

// Structured tools named after a program are that program: an MCP server or runtime tool called
// "kubectl", "docker", "git", "gh", "aws", "terraform", "helm" or "npm" (also as the last part of
// an MCP name, mcp__k8s__kubectl) whose arguments are the program's argv — a list or a string in
// args, argv, arguments, command or cmd — runs that command line. It is normalised as the shell
// call it stands for, by the same command specs, so `kubectl {"args": ["delete", "namespace",
// "prod"]}` is the delete it is. Tools the catalog gives another class than exec keep it; a call
// is read this way only when every argument key is one the reading accounts for (the argv, a working directory, a
// timeout): a key the reading would drop could change what runs, so such a call stays unknown
// (ESCALATE).

// programToolArgvKeys hold the argv; programToolOtherKeys may accompany it.
var (
	programToolArgvKeys  = []string{"args", "argv", "arguments", "command", "cmd"}
	programToolOtherKeys = set("cwd", "workdir", "working_directory", "directory", "timeout", "timeout_ms", "timeoutMs", "description")
)

// programToolCommand returns the command line a program-named tool call stands for, its working
// directory (or ""), and whether the call is one.
func (n *Normalizer) programToolCommand(tool string, args map[string]any) (string, string, bool) {
	if e, known := n.cat.Lookup(tool); known && e.Class != ClassExec {
		return "", "", false
	}
	prog := strings.ToLower(tool)
	if i := strings.LastIndex(prog, "__"); i >= 0 {
		prog = prog[i+2:]
	}
	if prog == "" || shells[prog] || n.opt.Commands.lookup(prog) == nil {
		return "", "", false
	}
	var argv any
	cwd := ""
	for k, v := range args {
		switch {
		case indexOf(programToolArgvKeys, k) >= 0:
			if argv != nil {
				return "", "", false // two argv keys: which one runs is the server's choice
			}
			argv = v
		case programToolOtherKeys[k]:
			if s, ok := v.(string); ok && (k == "cwd" || k == "workdir" || k == "working_directory" || k == "directory") {
				cwd = s
			}
		default:
			return "", "", false
		}
	}
	w := &cliWords{args: map[string]any{"argv": argv}}
	switch x := argv.(type) {
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return "", "", false
		}
		if f := strings.Fields(s); strings.ToLower(f[0]) != prog {
			w.lit(prog)
		}
		w.lit(s)
		w.n += len(s)
	case []any:
		if len(x) == 0 {
			return "", "", false
		}
		if s, ok := x[0].(string); !ok || strings.ToLower(s) != prog {
			w.lit(prog)
		}
		w.argv("argv")
	default:
		return "", "", false
	}
	if w.bad || w.n > maxEquivalentBytes {
		return "", "", false
	}
	return strings.Join(w.words, " "), cwd, true
}
