package normalize

import (
	"regexp"
	"strings"
)

// Reductions through more stages (reducers.go, count_only.go). A count, an exit status or a list
// of names stays one after stages that cannot restore content: line filters and names-tail stages
// (head, tail, sort, uniq), a merge of standard error into the pipe (2>&1: the error messages of a
// filter reading its standard input carry no input), and, once the output is reduced, a copy of it
// into a file of the workspace (> f, >> f, tee [-a] f…): the file then holds a count or names, and
// the write is judged by its path like any other write. A file outside the workspace (/tmp is
// shared with every user of the host) keeps the source's secret effect, as before. Before the reduction, a redirect or a tee would keep the
// content itself, so nothing but standard error may go anywhere there.

// stderrOnly: c redirects nothing but its standard error, to /dev/null or into the pipe (2>&1).
func stderrOnly(c Command) bool {
	for _, r := range c.Redirects {
		if r.Fd != "2" || r.Path != "/dev/null" && !(r.Op == ">&" && r.Path == "1") {
			return false
		}
	}
	return true
}

// reducedRedirects: every redirect of c is one stderrOnly allows or a write of standard output to
// a named file (the output being reduced when the caller allows it); no input redirect (a file read
// into the stage would be content), no descriptor juggling.
func reducedRedirects(c Command) bool {
	for _, r := range c.Redirects {
		switch {
		case r.Fd == "2" && (r.Path == "/dev/null" || r.Op == ">&" && r.Path == "1"):
		case (r.Fd == "" || r.Fd == "1") && (r.Op == ">" || r.Op == ">>" || r.Op == ">|") && r.Path != "" && !isUnresolvedText(r.Path) && !strings.HasPrefix(r.Path, "&"):
		default:
			return false
		}
	}
	return true
}

var teeFileRE = regexp.MustCompile(`^[A-Za-z0-9._/+-][A-Za-z0-9._/+@-]*$`)

// teeFilesOnly: tee [-a] FILE…: copies its input to plain file operands (no process substitution,
// no /dev/tcp, nothing dynamic).
func teeFilesOnly(c Command) bool {
	files := 0
	for _, a := range c.Args {
		switch {
		case a == "-a" || a == "--append" || a == "-i" || a == "--ignore-interrupts" || a == "-p":
		case strings.HasPrefix(a, "-"):
			return false
		case !teeFileRE.MatchString(a) || strings.HasPrefix(a, "/dev/") || strings.HasPrefix(a, "/proc/"):
			return false
		default:
			files++
		}
	}
	return files > 0
}

// workspaceSink: every file c writes its standard output to (redirects, tee operands) lies in the
// workspace. A tee operand is resolved against the caller's directory, so a call that changes
// directory has none.
func (s *state) workspaceSink(c Command) bool {
	ws := s.n.opt.Workspace
	for _, r := range c.Redirects {
		if r.Fd == "2" {
			continue
		}
		if ws == "" || !strings.HasPrefix(r.Path, "/") || !inDir(r.Path, ws) {
			return false
		}
	}
	if c.Name != "tee" {
		return true
	}
	for _, x := range s.act.Commands {
		if x.Name == "cd" || x.Name == "pushd" || x.Name == "popd" {
			return false
		}
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		p, ok := resolvePath(a, s.act.Cwd, s.n.opt.Home)
		if !ok || ws == "" || !inDir(p, ws) {
			return false
		}
	}
	return true
}
