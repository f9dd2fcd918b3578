package normalize

import (
	"regexp"
	"strings"
)

// Emptying a file destroys its content as surely as removing it, and leaves the file in place,
// so nothing that looks for missing files notices. Whatever empties the file, the walker
// records a write effect with Detail "emptied SCOPE" beside the ordinary write or delete:
//
//   - a truncating redirection (>, >|, &>) of a command that prints nothing (: > f, > f alone,
//     true > f, cat /dev/null > f, echo -n > f, printf '' > f);
//   - truncate -s 0 (-s0, --size=0, --size 0, 0K …), cp /dev/null F, install /dev/null F,
//     dd if=/dev/null of=F, shred;
//   - sed -i whose script only deletes (d, 1,$d, ,$d, /./d) and perl -i -n whose code prints
//     nothing, or -p code that clears every line ($_ = "").
//
// SCOPE says how many files: "file" (one named file), "glob" (a pattern; "**" in the target
// reaches every directory), "tree" (every file find selected under its roots, or a list fed to
// xargs from a listing stage), "unresolved" (an expansion). rego/emptied.rego judges them: many
// files emptied is a mass destruction; a single file (a log reset) is ordinary.

// truncRedir is a truncating redirection of the statement being walked: its target as written
// and the effects its path produced.
type truncRedir struct {
	raw      string
	dyn      bool
	from, to int
	appends  bool // >> or &>>: the file keeps its content
}

var (
	zeroSizeRE     = regexp.MustCompile(`^0+(?:[KMGTPEZY]i?B?|[kKMG]B?)?$`)
	sedDeleteAllRE = regexp.MustCompile(`^(?:[01]?,\$|/\^?\.?\*?\$?/|/\^/|/\./)?d;?$`)
	perlClearRE    = regexp.MustCompile(`^(?:\$_=(?:''|""|q\(\)|q\{\});?|undef\$_;?|\$_=undef;?)$`)
	printingRE     = regexp.MustCompile(`\b(?:print|printf|say|syswrite|write)\b`)
)

// silentCommand: the command prints nothing on standard output, so a truncating redirection of
// its output leaves the file empty.
func silentCommand(ws words) bool {
	if len(ws.argv) == 0 {
		return true
	}
	if ws.dyn[0] {
		return false
	}
	name := ws.argv[0]
	args := ws.argv[1:]
	switch name {
	case ":", "true", "false":
		return true
	case "cat":
		return len(args) == 1 && args[0] == "/dev/null"
	case "echo":
		for _, a := range args {
			if a != "-n" && a != "-ne" && a != "-en" && a != "" {
				return false
			}
		}
		return len(args) > 0
	case "printf":
		return len(args) == 1 && args[0] == ""
	}
	return false
}

// emptiedByRedirects records the files a silent command's truncating redirections empty.
func (w *walker) emptiedByRedirects(ws words, trunc []truncRedir) {
	if len(trunc) == 0 || !silentCommand(ws) {
		return
	}
	s := w.s
	for _, t := range trunc {
		if t.appends {
			continue
		}
		scope := emptyScope(t.raw, t.dyn, w.globVars)
		for i := t.from; i < t.to && i < len(s.act.Effects); i++ {
			e := s.act.Effects[i]
			if e.Kind != EffectWrite {
				continue
			}
			sc := scope
			if e.Unresolved && sc == "file" {
				sc = "unresolved"
			}
			s.addEffect(Effect{Kind: EffectWrite, Target: e.Target, Program: "redirect", Detail: "emptied " + sc, InWorkspace: e.InWorkspace, Sensitive: e.Sensitive, Unresolved: e.Unresolved})
		}
	}
}

// emptyScope: how many files an emptying of raw reaches.
func emptyScope(raw string, dyn bool, globVars map[string]string) string {
	switch {
	case raw == "{}":
		return "tree"
	case dyn && hasGlob(raw):
		return "glob"
	case dyn:
		for v := range globVars {
			if strings.Contains(raw, "$"+v) || strings.Contains(raw, "${"+v+"}") {
				return "glob"
			}
		}
		return "unresolved"
	}
	return "file"
}

// emptyingCommand records the files a command empties by its own operation.
func (w *walker) emptyingCommand(f frame, name string, args words) {
	var targets []int // indexes into args.argv
	argv := args.argv
	switch name {
	case "truncate":
		zero := false
		var files []int
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "-s" || a == "--size":
				if i+1 < len(argv) {
					i++
					zero = zeroSizeRE.MatchString(argv[i])
				}
			case strings.HasPrefix(a, "--size="):
				zero = zeroSizeRE.MatchString(strings.TrimPrefix(a, "--size="))
			case strings.HasPrefix(a, "-s") && len(a) > 2:
				zero = zeroSizeRE.MatchString(a[2:])
			case a == "-r" || a == "--reference":
				i++
			case strings.HasPrefix(a, "-") && len(a) > 1:
			default:
				files = append(files, i)
			}
		}
		if zero {
			targets = files
		}
	case "cp", "install":
		ops := operandIndexes(argv)
		if len(ops) >= 2 && argv[ops[0]] == "/dev/null" {
			targets = ops[len(ops)-1:]
		}
	case "dd":
		null := false
		of := -1
		for i, a := range argv {
			switch {
			case a == "if=/dev/null":
				null = true
			case strings.HasPrefix(a, "of="):
				of = i
			}
		}
		if null && of >= 0 {
			w.emptiedPath(f, name, strings.TrimPrefix(argv[of], "of="), args.dyn[of])
		}
		return
	case "shred":
		targets = operandIndexes(argv)
	case "sed", "gsed":
		inPlace, script := false, []string{}
		var files []int
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "-e" || a == "--expression":
				if i+1 < len(argv) {
					i++
					script = append(script, argv[i])
				}
			case a == "-f" || a == "--file":
				return
			case strings.HasPrefix(a, "--in-place") || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i"):
				inPlace = true
			case strings.HasPrefix(a, "-") && len(a) > 1:
			default:
				files = append(files, i)
			}
		}
		if !inPlace {
			return
		}
		if len(script) == 0 && len(files) > 0 {
			script, files = []string{argv[files[0]]}, files[1:]
		}
		for _, sc := range script {
			if !sedDeleteAllRE.MatchString(strings.Join(strings.Fields(sc), "")) {
				return
			}
		}
		if len(script) > 0 {
			targets = files
		}
	case "perl":
		inPlace, n, p, code := false, false, false, ""
		hasCode := false
		var files []int
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			if len(a) > 1 && a[0] == '-' && a[1] != '-' {
				cl := a[1:]
				if j := strings.IndexAny(cl, "eE"); j >= 0 {
					inPlace = inPlace || strings.Contains(cl[:j], "i")
					n = n || strings.Contains(cl[:j], "n")
					p = p || strings.Contains(cl[:j], "p")
					hasCode = true
					if j == len(cl)-1 && i+1 < len(argv) {
						i++
						code += argv[i]
					} else {
						code += cl[j+1:]
					}
					continue
				}
				inPlace = inPlace || strings.Contains(cl, "i")
				n = n || strings.Contains(cl, "n")
				p = p || strings.Contains(cl, "p")
				continue
			}
			if hasCode {
				files = append(files, i)
			}
		}
		c := strings.Join(strings.Fields(code), "")
		if inPlace && hasCode && (n && !p && !printingRE.MatchString(code) || p && perlClearRE.MatchString(c)) {
			targets = files
		}
	}
	for _, i := range targets {
		w.emptiedPath(f, name, argv[i], args.dyn[i])
	}
	if len(targets) == 0 && (f.via == "xargs" || f.via == "parallel") && w.emptiesFromInput(name, argv) {
		for _, r := range w.s.fx().pipeRoots {
			w.emptiedPath(f, name, r, false)
		}
	}
}

// emptiesFromInput: an emptying command fed its files by xargs (find . -name '*.go' | xargs
// truncate -s0): the files are what the listing stage named.
func (w *walker) emptiesFromInput(name string, argv []string) bool {
	switch name {
	case "truncate":
		for i, a := range argv {
			if (a == "-s" || a == "--size") && i+1 < len(argv) && zeroSizeRE.MatchString(argv[i+1]) ||
				strings.HasPrefix(a, "--size=") && zeroSizeRE.MatchString(a[7:]) || strings.HasPrefix(a, "-s") && len(a) > 2 && zeroSizeRE.MatchString(a[2:]) {
				return true
			}
		}
	case "shred":
		return true
	case "cp", "install":
		ops := operandIndexes(argv)
		return len(ops) == 1 && argv[ops[0]] == "/dev/null" // xargs appends the file
	case "sed", "gsed":
		inPlace, del := false, false
		for _, a := range argv {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") || strings.HasPrefix(a, "--in-place") {
				inPlace = true
			} else if sedDeleteAllRE.MatchString(strings.Join(strings.Fields(a), "")) {
				del = true
			}
		}
		return inPlace && del
	}
	return false
}

// emptiedPath records raw, an operand the command empties, with its scope.
func (w *walker) emptiedPath(f frame, prog, raw string, dyn bool) {
	s := w.s
	scope := emptyScope(raw, dyn, w.globVars)
	if f.via == "xargs" || f.via == "parallel" {
		scope = "tree"
	}
	from := len(s.act.Effects)
	i := w.pathEffect(EffectWrite, prog, raw, dyn)
	idx := []int{}
	for j := from; j < len(s.act.Effects); j++ {
		idx = append(idx, j)
	}
	if i >= 0 && i < from {
		idx = append(idx, i)
	}
	for _, j := range idx {
		e := s.act.Effects[j]
		if e.Kind != EffectWrite && e.Kind != EffectDelete {
			continue
		}
		sc := scope
		if e.Unresolved && sc == "file" {
			sc = "unresolved"
		}
		s.addEffect(Effect{Kind: EffectWrite, Target: e.Target, Program: prog, Detail: "emptied " + sc, InWorkspace: e.InWorkspace, Sensitive: e.Sensitive, Unresolved: e.Unresolved})
	}
}

// operandIndexes: the indexes of argv's non-option words (after "--", every word).
func operandIndexes(argv []string) []int {
	var out []int
	for i, a := range argv {
		if a == "--" {
			return append(out, indexRange(i+1, len(argv))...)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		out = append(out, i)
	}
	return out
}
