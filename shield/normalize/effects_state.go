package normalize

import (
	"path"
	"strings"
)

// State a command changes for the commands after it (issue 11, cause 7). Effects are judged where
// they land, so what an earlier command of the same call changed must be applied before a later
// command is read:
//
//   - the working directory: cd, pushd and popd move it; a move the walker cannot resolve (cd
//     "$X", cd - or popd without a known earlier directory) leaves it unknown, and every relative
//     path after it is unresolved (never an allow without a higher tier);
//   - git remotes: `git remote add|set-url|rename|remove`, `git config remote.NAME.url|pushurl`,
//     `git -c remote.NAME.url=…`, remote.pushDefault and branch.*.pushRemote, and url.*.insteadOf /
//     pushInsteadOf rewrites change where a later `git push NAME` goes: the push's target is the
//     URL the remote has then, not its name. Remote changes persist on disk, so they also reach
//     later calls of the session (sessions.go);
//   - the workspace root itself: deleting or moving away the workspace or a directory that holds
//     it is not a change "in the workspace" (pathEffect, addPath).
//
// Each piece of state is bounded; past a bound the state is unknown and treated so.

// unresolvedCwd is the working directory after a change the walker could not resolve. It is no
// directory of any host: paths resolved against it are outside the workspace and unresolved.
const unresolvedCwd = "/(unresolved cwd)"

// Bounds of the per-call state.
const (
	maxTrackedRemotes = 32 // git remotes redefined in one call (past it: every push is unresolved)
	maxDirStack       = 32 // pushd depth
)

// inUnresolvedCwd: clean was resolved against a working directory the walker does not know.
func inUnresolvedCwd(clean string) bool { return inDir(clean, unresolvedCwd) }

// chdir applies cd, pushd or popd (argv[0] is name) to the walker's working directory.
func (w *walker) chdir(name string, ws words) {
	s := w.s
	x := s.fx()
	args, dyn := ws.argv[1:], ws.dyn[1:]
	// Options (cd -L/-P/-e/-@, pushd/popd -n) change how, not where; "--" ends them.
	for len(args) > 0 && !dyn[0] && len(args[0]) > 1 && args[0][0] == '-' && !isDigits(args[0][1:]) {
		stop := args[0] == "--"
		args, dyn = args[1:], dyn[1:]
		if stop {
			break
		}
	}
	prev := s.cwd
	unknown := func(what string) {
		s.cwd = unresolvedCwd
		s.addUnresolved("working directory after " + name + " " + what)
	}
	to := func(dir string, d bool) {
		switch {
		case d && isUnresolvedText(dir):
			unknown(dir)
		case w.cdpath && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~") && dir != "." && dir != ".." &&
			!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../"):
			unknown(dir + " (CDPATH)") // a relative name is looked up in CDPATH first
		default:
			s.setCwd(dir)
		}
	}
	switch name {
	case "cd", "chdir":
		switch {
		case len(args) == 0:
			if h, ok := w.varValue("HOME"); ok {
				s.setCwd(h)
			} else {
				unknown("$HOME")
			}
		case args[0] == "-" && !dyn[0]:
			if x.oldPwd == "" {
				unknown("- (OLDPWD)") // the caller's previous directory
			} else {
				s.cwd = x.oldPwd
			}
		default:
			to(args[0], dyn[0])
		}
	case "pushd":
		switch {
		case len(args) == 0 || (!dyn[0] && (strings.HasPrefix(args[0], "+") || strings.HasPrefix(args[0], "-"))):
			// Exchange or rotate the stack: known only when this call built it.
			if len(x.dirStack) == 0 {
				unknown("(directory stack)")
			} else {
				top := x.dirStack[len(x.dirStack)-1]
				x.dirStack[len(x.dirStack)-1] = prev
				s.cwd = top
			}
		default:
			if len(x.dirStack) >= maxDirStack {
				unknown("(directory stack over its bound)")
				break
			}
			x.dirStack = append(x.dirStack, prev)
			to(args[0], dyn[0])
		}
	case "popd":
		if len(x.dirStack) == 0 {
			unknown("(directory stack)") // the stack of an earlier call of a persistent shell
		} else {
			s.cwd = x.dirStack[len(x.dirStack)-1]
			x.dirStack = x.dirStack[:len(x.dirStack)-1]
		}
	}
	if s.cwd != prev {
		x.oldPwd = prev
	}
}

// gitState is what the git commands of one call changed in the repository's configuration.
type gitState struct {
	// remotes: remote name → the URL it was given in this call (a rename carries it over).
	remotes map[string]gitRemoteURL
	// pushDefault: the remote a push that names none goes to (remote.pushDefault,
	// branch.*.pushRemote, branch.*.remote, git push -u / branch -u), when set in this call.
	pushDefault string
	// rewrites: url.BASE.insteadOf / pushInsteadOf PREFIX set in this call.
	rewrites []urlRewrite
	// over: more remotes were redefined than maxTrackedRemotes; every push is unresolved.
	over bool
}

type gitRemoteURL struct {
	url string
	dyn bool // the URL came from an expansion the walker could not resolve
}

type urlRewrite struct{ base, prefix string }

func (w *walker) git() *gitState {
	x := w.s.fx()
	if x.git == nil {
		x.git = &gitState{}
	}
	return x.git
}

// setRemote records that remote name now points at url.
func (w *walker) setRemote(name, url string, dyn bool) {
	g := w.git()
	if name == "" {
		return
	}
	if isUnresolvedText(name) {
		g.over = true // some remote, nobody knows which, now points elsewhere
		return
	}
	if g.remotes == nil {
		g.remotes = map[string]gitRemoteURL{}
	}
	if _, ok := g.remotes[name]; !ok && len(g.remotes) >= maxTrackedRemotes {
		g.over = true
		return
	}
	g.remotes[name] = gitRemoteURL{url: url, dyn: dyn && isUnresolvedText(url)}
}

// gitRemoteState reads the configuration keys that redirect pushes (key as written, lk lower-cased).
func (w *walker) gitRemoteState(key, lk, val string) {
	g := w.git()
	switch {
	case strings.HasPrefix(lk, "remote.") && (strings.HasSuffix(lk, ".url") || strings.HasSuffix(lk, ".pushurl")):
		name := key[len("remote."):strings.LastIndexByte(key, '.')]
		w.setRemote(name, val, true)
	case lk == "remote.pushdefault",
		strings.HasPrefix(lk, "branch.") && (strings.HasSuffix(lk, ".pushremote") || strings.HasSuffix(lk, ".remote")):
		g.pushDefault = val
	case strings.HasPrefix(lk, "url.") && (strings.HasSuffix(lk, ".insteadof") || strings.HasSuffix(lk, ".pushinsteadof")):
		base := key[len("url."):strings.LastIndexByte(key, '.')]
		if len(g.rewrites) < maxTrackedRemotes {
			g.rewrites = append(g.rewrites, urlRewrite{base: base, prefix: val})
		} else {
			g.over = true
		}
	}
}

// gitRemoteCmd reads `git remote …` (args: the words after "remote"): the remotes it defines,
// repoints, renames or removes.
func (w *walker) gitRemoteCmd(args words) {
	var ops []string
	var dyn []bool
	var flags []string
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		switch {
		case a == "-t" || a == "-m" || a == "--track" || a == "--master":
			i++ // value
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
		default:
			ops = append(ops, a)
			dyn = append(dyn, args.dyn[i])
		}
	}
	if len(ops) == 0 {
		return
	}
	has := func(f string) bool { return indexOf(flags, f) >= 0 }
	switch ops[0] {
	case "add":
		if len(ops) >= 3 {
			w.setRemote(ops[1], ops[2], dyn[2])
			if has("-f") || has("--fetch") {
				w.gitRemote(ops[2], dyn[2])
			}
		}
	case "set-url":
		if len(ops) >= 3 && !has("--delete") {
			w.setRemote(ops[1], ops[2], dyn[2])
		}
	case "rename":
		if len(ops) >= 3 {
			g := w.git()
			if r, ok := g.remotes[ops[1]]; ok {
				w.setRemote(ops[2], r.url, r.dyn)
				delete(g.remotes, ops[1])
			} else if ops[1] != ops[2] {
				// The old remote keeps its (unknown) URL under the new name: a push to the new
				// name goes where the old one went.
				w.setRemote(ops[2], "="+ops[1], false)
			}
			if g.pushDefault == ops[1] {
				g.pushDefault = ops[2]
			}
		}
	case "remove", "rm":
		if len(ops) >= 2 {
			delete(w.git().remotes, ops[1])
		}
	}
}

// gitPushTarget is where a push to remote (a name, a URL, or "(upstream)") goes after what this
// call changed: the URL a redefined remote has now. unres: that URL is not known.
func (w *walker) gitPushTarget(remote string) (target, via string, unres bool) {
	g := w.s.fx().git
	if g == nil {
		return remote, "", false
	}
	if g.over {
		return remote, "", true
	}
	name := remote
	if name == "(upstream)" {
		switch {
		case g.pushDefault != "":
			name = g.pushDefault
		case g.remotes["origin"].url != "":
			name = "origin" // the upstream of a clone's branches
		}
	}
	target = name
	for hops := 0; hops < 4; hops++ {
		r, ok := g.remotes[target]
		if !ok {
			break
		}
		via = name
		if strings.HasPrefix(r.url, "=") { // renamed: the old name's URL
			target = r.url[1:]
			continue
		}
		target, unres = r.url, r.dyn
		break
	}
	if target == name && via == "" && name != remote {
		target = name // pushDefault naming a remote this call did not change
		via = remote
	}
	for _, rw := range g.rewrites {
		switch {
		case strings.HasPrefix(target, rw.prefix) && (strings.Contains(target, "://") || strings.Contains(target, "@")):
			target, via = rw.base+target[len(rw.prefix):], remote
		case !strings.Contains(target, "://") && !strings.Contains(target, ":"):
			// A named remote whose URL is not in this call may start with the prefix: the push
			// may go to the rewrite's base.
			target, via = rw.base, remote
		}
	}
	return target, via, unres
}

// remoteChanges lists the remotes this call redefined (name → URL), for the session.
func (s *state) remoteChanges() map[string]string {
	if s.eff == nil || s.eff.git == nil || len(s.eff.git.remotes) == 0 && !s.eff.git.over {
		return nil
	}
	out := make(map[string]string, len(s.eff.git.remotes)+1)
	if s.eff.git.over {
		out["*"] = "" // a remote nobody can name was repointed: every named push is unresolved
	}
	for k, v := range s.eff.git.remotes {
		if strings.HasPrefix(v.url, "=") {
			continue
		}
		out[k] = v.url
	}
	return out
}

// isWorkspaceOrAncestor: clean is the workspace root or a directory that holds it.
func isWorkspaceOrAncestor(clean, ws string) bool {
	return clean == ws || clean == "/" || strings.HasPrefix(ws, strings.TrimSuffix(clean, "/")+"/")
}

// findFilters: find's expression has a test that selects what it acts on (-name, -type, -path,
// -mtime …), beyond options that only steer the walk.
func findFilters(args []string) bool {
	for _, a := range args {
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			return false // what follows is the command run, not a test
		case "-delete", "-depth", "-d", "-maxdepth", "-mindepth", "-xdev", "-mount", "-print", "-print0", "-L", "-H", "-P",
			"-O0", "-O1", "-O2", "-O3", "-ignore_readdir_race", "-noleaf", "-daystart", "-follow", "-true":
			continue
		}
		return true
	}
	return false
}

// gitRepoDir is the repository a git command works on: the working directory, moved by -C, or
// --git-dir / GIT_DIR (the directory holding it). known is false when a part is unresolved.
func (w *walker) gitRepoDir(pa parsedArgs) (dir string, known bool) {
	s := w.s
	dir = s.cwd
	if dir == unresolvedCwd {
		return dir, false
	}
	for _, v := range pa.vals {
		switch v.opt {
		case "-C":
			if v.dyn && isUnresolvedText(v.val) {
				return v.val, false
			}
			dir, _ = resolvePath(v.val, dir, s.n.opt.Home)
		case "--git-dir", "--work-tree":
			if v.dyn && isUnresolvedText(v.val) {
				return v.val, false
			}
			d, _ := resolvePath(v.val, dir, s.n.opt.Home)
			if v.opt == "--git-dir" && path.Base(d) == ".git" {
				d = path.Dir(d)
			}
			if !inDir(d, s.n.opt.Workspace) {
				return d, true
			}
		}
	}
	for _, kv := range s.fx().curEnv {
		name, val, _ := strings.Cut(kv, "=")
		if name != "GIT_DIR" && name != "GIT_WORK_TREE" {
			continue
		}
		val = unquoteValue(val)
		if isUnresolvedText(val) {
			return val, false
		}
		d, _ := resolvePath(val, dir, s.n.opt.Home)
		if name == "GIT_DIR" && path.Base(d) == ".git" {
			d = path.Dir(d)
		}
		if !inDir(d, s.n.opt.Workspace) {
			return d, true
		}
	}
	return dir, true
}

// moveAwayEffects: a file tool that moves (not copies) the workspace root or a directory holding
// it deletes the workspace from where it was.
func (s *state) moveAwayEffects() {
	a := s.act
	if a.Class != ClassFileMove || strings.Contains(strings.ToLower(a.Tool), "copy") {
		return
	}
	for _, p := range a.Paths {
		if p.Role == RoleSource && isWorkspaceOrAncestor(p.Clean, s.n.opt.Workspace) {
			s.addToolEffect(Effect{Kind: EffectDelete, Target: p.Clean, Detail: "moved away"})
		} else if p.Role == RoleSource {
			// Moving or renaming anything deletes its source (reach.go, principle 4).
			d := p
			d.Role = RoleDelete
			s.pathEffects(d)
		}
	}
}
