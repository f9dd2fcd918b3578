package normalize

import (
	"strconv"
	"strings"
)

// Readers that take the names of the files they read from a list (issue 11, wave 8): cpio -o
// and -p, pax -w, afio -o, zip -@ read the names on their standard input; tar -T, rsync
// --files-from, git --pathspec-from-file, du/wc --files0-from read them from a file, "-" being
// standard input. The names are read paths whatever the channel:
//
//   - a here-string, a here-document or a literal echo/printf before the pipe: each line (each
//     NUL-separated name) is a read of that path, judged as any operand;
//   - a listing stage before the pipe (find DIR, git ls-files): the files under its roots, as
//     for xargs (effects_shell.go pipeRoots);
//   - any other producer, or a list file whose content is not read here: the names are unknown,
//     an unresolved read (never allowed without review).
//
// The spec says which channel: the role "names" for an option whose value is a list file, the
// flag tag !names for a flag that makes standard input the list (cpio -o,--create!names).

// maxListedNames bounds the names read from one list.
const maxListedNames = 64

// nameLists records the reads of a command's name lists.
func (w *walker) nameLists(f frame, pa parsedArgs, name string, pipe bool, idx int, stdin string) {
	fromStdin := pa.tags["names"]
	for _, v := range pa.vals {
		if v.role != "names" {
			continue
		}
		switch {
		case v.dyn && isUnresolvedText(v.val):
			w.unknownNames(name, "list "+v.val)
		case v.val == "-" || v.val == "/dev/stdin" || v.val == "/proc/self/fd/0":
			fromStdin = true
		default:
			w.pathEffect(EffectRead, name, v.val, v.dyn)
			w.s.addPath(v.val, RoleRead)
			w.unknownNames(name, "list file "+v.val)
		}
	}
	if !fromStdin {
		return
	}
	text := stdin
	if text == "" && pipe && idx > 0 {
		if t, ok := w.echoedText(f, idx); ok { // spec_effects.go
			text = t
		} else if roots := w.s.fx().pipeRoots; len(roots) > 0 {
			for _, root := range roots {
				w.pathEffect(EffectRead, name, root, false)
			}
			return
		}
	}
	if strings.TrimSpace(text) == "" {
		if pipe && idx > 0 || stdin != "" {
			w.unknownNames(name, "standard input")
		}
		return
	}
	n := 0
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == 0 || r == '\r' }) {
		p := strings.TrimSpace(line)
		if p == "" {
			continue
		}
		if n++; n > maxListedNames {
			w.unknownNames(name, "standard input (over "+strconv.Itoa(maxListedNames)+" names)")
			return
		}
		dyn := strings.ContainsAny(p, "$`*?[")
		w.pathEffect(EffectRead, name, p, dyn)
		w.s.addPath(p, RoleRead)
	}
}

// unknownNames: a list of names this reading cannot see.
func (w *walker) unknownNames(name, from string) {
	w.s.addUnresolved("names read from " + from + " (" + name + ")")
	w.s.addEffect(Effect{Kind: EffectRead, Target: "(" + from + ")", Program: name, Detail: "listed names", Unresolved: true})
}
