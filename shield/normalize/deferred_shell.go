package normalize

import "strings"

// Deferred shell code is code. A trap body, a key binding's command, a completion command, a job
// handed to at/batch: the shell (or atd) runs the text later, so the walker reads it now, as the
// shell would when the signal, key or time comes. What the text does is then an effect of this
// call, like the body of bash -c.

// deferredShell names the builtins and programs whose operand or stdin is shell code run later.
var deferredShell = set("trap", "bind", "complete", "compgen", "at", "batch")

// deferred walks the code that name schedules.
func (w *walker) deferred(name string, args words, depth int, sudo bool, stdin string) {
	argv := args.argv
	switch name {
	case "trap":
		// trap [-lp] [--] BODY SIGNAL…: BODY is shell code; "-" or "" resets the signal.
		i := 0
		for i < len(argv) && strings.HasPrefix(argv[i], "-") && argv[i] != "-" {
			if argv[i] == "--" {
				i++
				break
			}
			if argv[i] == "-l" || argv[i] == "-p" {
				return // lists traps, runs nothing
			}
			i++
		}
		if i+1 < len(argv) && argv[i] != "-" && argv[i] != "" {
			w.script(argv[i], depth, "trap", sudo)
		}
	case "bind":
		// bind -x 'KEYSEQ: CMD' runs CMD when the keys are pressed.
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == "-x" {
				if _, cmd, ok := strings.Cut(argv[i+1], ":"); ok {
					w.script(strings.Trim(strings.TrimSpace(cmd), `"'`), depth, "bind -x", sudo)
				}
			}
		}
	case "complete", "compgen":
		// complete -C CMD NAME runs CMD on every completion of NAME.
		if cmd, ok := optionValue(argv, 'C', "-C"); ok {
			w.script(cmd, depth, name+" -C", sudo)
		}
	case "at", "batch":
		// at TIME / batch read the job from stdin (or -f FILE); the job is shell code.
		if file, ok := optionValue(argv, 'f', "-f"); ok {
			w.s.addPath(file, RoleExec)
			return
		}
		if stdin != "" {
			w.script(stdin, depth, name, sudo)
		}
	}
}
