package normalize

import "strings"

// History patches filtered for secrets. A stash, the reflog or the log printed as patches and
// piped into a filter that keeps the lines naming a credential (`git stash list -p | grep -i
// password`, `git log -p --all | rg -i 'api_key|secret'`, `hg log -p | grep token`) reads the
// credentials that were ever committed or stashed, whatever file held them: the path classifier
// never sees a path, the filter's pattern says what is read. historyFilterEffects adds a secret
// effect (Detail "git_history filtered", a read: effects.history-secret) for each such pipeline. A history listing without patches
// (git stash list, git log --oneline | grep fix) prints names and subjects only.

// historyPatchProgs: version-control programs whose history commands print patches.
var historyPatchProgs = set("git", "hg", "svn", "jj", "fossil")

// historyFilterProgs: filters that keep lines by a pattern (first operand or -e).
var historyFilterProgs = set("grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "sift")

// historyFilterEffects: see the file comment.
func (s *state) historyFilterEffects() {
	cmds := s.act.Commands
	for i := 0; i < len(cmds) && i < 256; i++ {
		c := cmds[i]
		if !c.Pipe || !historyPatchProgs[c.Name] || !historyPatch(c.Name, c.Args) {
			continue
		}
		for j := i + 1; j < len(cmds) && j < i+8; j++ {
			f := cmds[j]
			if !f.Pipe || f.PipeIndex <= c.PipeIndex || f.Depth != c.Depth {
				break
			}
			if !historyFilterProgs[f.Name] {
				continue
			}
			if pat := filterPattern(f.Args); pat != "" && (namesSecretKey(pat) || historySecretContentRE.MatchString(pat)) {
				t := c.Name + " history | " + f.Name + " " + pat
				if len(t) > 200 {
					t = t[:200]
				}
				s.addToolEffect(Effect{Kind: EffectSecret, Target: t, Program: c.Name, Detail: DetailHistory + " filtered", Sensitive: true})
				break
			}
		}
	}
}

// historyPatch: a history command that prints patches (log -p, stash show -p, stash list -p,
// reflog -p, show, hg log -p, svn log --diff).
func historyPatch(prog string, args []string) bool {
	if len(args) == 0 || len(args) > 256 {
		return false
	}
	sub := args[0]
	rest := args[1:]
	if prog == "git" && sub == "stash" && len(rest) > 0 && (rest[0] == "show" || rest[0] == "list") {
		return stashPatch(rest[1:])
	}
	switch sub {
	case "show", "diff", "format-patch":
		return prog == "git" || prog == "jj"
	case "log", "reflog", "whatchanged":
	default:
		return false
	}
	for _, a := range rest {
		if a == "--" {
			break
		}
		if a == "-p" || a == "-u" || a == "--patch" || a == "--diff" || strings.HasPrefix(a, "-U") || strings.HasPrefix(a, "-p") && !strings.HasPrefix(a, "--") {
			return true
		}
	}
	return false
}

// filterPattern: a filter's pattern: the value of -e/--regexp, else its first operand.
func filterPattern(args []string) string {
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case (a == "-e" || a == "--regexp") && k+1 < len(args):
			return args[k+1]
		case strings.HasPrefix(a, "--regexp="):
			return strings.TrimPrefix(a, "--regexp=")
		case a == "--":
			if k+1 < len(args) {
				return args[k+1]
			}
			return ""
		case strings.HasPrefix(a, "-"):
			continue
		default:
			return a
		}
	}
	return ""
}

// Object readers of other version-control systems and of archives: `hg cat -r REV PATH`, `svn cat
// -r REV PATH[@REV]`, `fossil cat PATH -r REV`, `git archive REV PATH…` print a committed version
// of PATH, however long ago it left the working tree. A credential PATH (the path classifier
// decides) is a history read (Detail "git_history KIND": effects.history-secret).
func (s *state) historyObjectEffects() {
	for i, c := range s.act.Commands {
		if i >= 256 {
			return
		}
		if len(c.Args) < 2 || len(c.Args) > 128 {
			continue
		}
		var paths []string
		switch {
		case (c.Name == "hg" || c.Name == "svn" || c.Name == "fossil" || c.Name == "jj") && (c.Args[0] == "cat" || c.Args[0] == "file" && c.Name == "jj"):
			args := c.Args[1:]
			if c.Name == "jj" {
				if len(args) == 0 || args[0] != "show" {
					continue
				}
				args = args[1:]
			}
			for k := 0; k < len(args); k++ {
				a := args[k]
				if (a == "-r" || a == "--rev" || a == "--revision" || a == "-o" || a == "--output" || a == "-R" || a == "--repository") && k+1 < len(args) {
					k++
					continue
				}
				if strings.HasPrefix(a, "-") {
					continue
				}
				if j := strings.LastIndexByte(a, '@'); j > 0 && c.Name == "svn" {
					a = a[:j]
				}
				paths = append(paths, a)
			}
		case c.Name == "git" && c.Args[0] == "archive":
			ops := 0
			for k := 1; k < len(c.Args); k++ {
				a := c.Args[k]
				if (a == "-o" || a == "--output" || a == "--prefix" || a == "--format" || a == "--remote") && k+1 < len(c.Args) {
					k++
					continue
				}
				if strings.HasPrefix(a, "-") {
					continue
				}
				if ops++; ops > 1 { // the first operand is the tree-ish
					paths = append(paths, a)
				}
			}
		default:
			continue
		}
		for j, p := range paths {
			if j >= 32 || p == "" || isUnresolvedText(p) || strings.Contains(p, "://") {
				continue
			}
			clean, ok := resolvePath(p, s.cwd, s.n.opt.Home)
			if !ok {
				continue
			}
			if k := s.n.sens.classify(clean); k != "" && hasKind(s.n.pathEffectKinds(k), EffectSecret) {
				s.addToolEffect(Effect{Kind: EffectSecret, Target: c.Name + ":" + clean, Program: c.Name, Detail: DetailHistory + " " + k, Sensitive: true})
			}
		}
	}
}
