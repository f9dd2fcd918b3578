package normalize

import "strings"

// Ordinary developer commands whose target is not an operand path: what the spec's fixed effect
// named by a word ("untracked") is resolved here to the directory it acts on.

// gitClean: git clean removes the untracked files under its pathspecs, or under the working
// directory when none is given (git-clean(1): "starting from the current directory"); -n and
// --dry-run only list them. The directory is the one git runs in (-C moves it).
func (w *walker) gitClean(pa parsedArgs, ops words) {
	s := w.s
	if pa.has("-n", "--dry-run") {
		return
	}
	base := s.cwd
	if v, dyn, ok := pa.val("-C"); ok {
		if dyn && isUnresolvedText(v) {
			s.addUnresolved("git -C " + v + " (git clean)")
			s.addEffect(Effect{Kind: EffectDelete, Target: v, Program: "git", Detail: "untracked", Unresolved: true})
			return
		}
		if c, ok := resolvePath(v, s.cwd, s.n.opt.Home); ok {
			base = c
		}
	}
	if _, _, ok := pa.val("--git-dir", "--work-tree"); ok {
		s.addUnresolved("git clean in another work tree")
		s.addEffect(Effect{Kind: EffectDelete, Target: "untracked", Program: "git", Detail: "untracked", Unresolved: true})
		return
	}
	if len(ops.argv) == 0 {
		ops = words{argv: []string{"."}, dyn: []bool{false}}
	}
	for k, a := range ops.argv {
		if strings.HasPrefix(a, ":") { // pathspec magic (:(exclude)x, :/): within the repository
			a = "."
		}
		if base == unresolvedCwd || ops.dyn[k] && isUnresolvedText(a) {
			s.addUnresolved("git clean " + a + " (in an unresolved directory)")
			s.addEffect(Effect{Kind: EffectDelete, Target: a, Program: "git", Detail: "untracked", Unresolved: true})
			continue
		}
		clean, ok := resolvePath(a, base, s.n.opt.Home)
		if !ok {
			continue
		}
		// What lies under the directory, not the directory: git clean never removes the
		// working tree's root.
		e := Effect{Kind: EffectDelete, Target: clean, Program: "git", Detail: "untracked"}
		e.InWorkspace = inDir(clean, s.n.opt.Workspace)
		if sens := s.n.sens.classify(clean); sens != "" {
			e.Sensitive = true
			e.InWorkspace = false
		}
		s.addEffect(e)
	}
}

// gitList: git ls-files lists files of the repository under the directory git runs in (or under
// its pathspecs): a listing of that tree, so what a pipeline feeds on to the next stage (xargs
// markdownlint) lies under it.
func (w *walker) gitList(pa parsedArgs, ops words) {
	s := w.s
	base := "."
	if v, dyn, ok := pa.val("-C"); ok {
		if dyn && isUnresolvedText(v) {
			s.addUnresolved("git -C " + v + " (git ls-files)")
			s.addEffect(Effect{Kind: EffectRead, Target: v, Program: "git", Detail: "list", Unresolved: true})
			return
		}
		base = v
	}
	roots := []string{}
	for k, a := range ops.argv {
		if strings.HasPrefix(a, "../") || strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || ops.dyn[k] && isUnresolvedText(a) {
			roots = append(roots, a)
		}
	}
	if len(roots) == 0 {
		roots = []string{base}
	} else if base != "." {
		roots = append(roots, base) // relative pathspecs resolve under -C; the listed tree is both
	}
	for _, r := range roots {
		// A repository outside the workspace (a dotfiles repository in the home directory)
		// lists files nobody has looked at: what the next stage does with them is unknown.
		if c, ok := resolvePath(r, s.cwd, s.n.opt.Home); ok && !isUnresolvedText(r) && !inDir(c, s.n.opt.Workspace) {
			s.addUnresolved("git ls-files of " + c + ", outside the workspace")
			s.addEffect(Effect{Kind: EffectRead, Target: c, Program: "git", Detail: "list", Unresolved: true})
			continue
		}
		w.pathEffect("list", "git", r, isUnresolvedText(r))
	}
}

// kubeOutputShowsData: kubectl get prints a Secret's values only in a full or templated output
// (-o yaml|json|jsonpath=…|go-template=…|template|custom-columns=…, --template); the default,
// wide and name outputs list names, types and key counts (and describe lists keys and sizes).
func kubeOutputShowsData(pa parsedArgs, argv []string) bool {
	if _, _, ok := pa.val("--template"); ok {
		return true
	}
	if kubeOutputNamesOnly(argv) { // names_only.go: custom-columns/jsonpath of names
		return false
	}
	for i, a := range argv {
		v := ""
		switch {
		case a == "-o" || a == "--output":
			if i+1 < len(argv) {
				v = argv[i+1]
			}
		case strings.HasPrefix(a, "--output="):
			v = a[len("--output="):]
		case strings.HasPrefix(a, "-o"):
			v = strings.TrimPrefix(a[2:], "=")
		case strings.HasPrefix(a, "--template"):
			return true
		default:
			continue
		}
		if v == "" || isUnresolvedText(v) {
			return true
		}
		f, _, _ := strings.Cut(v, "=")
		switch f {
		case "wide", "name":
		default:
			return true
		}
	}
	return false
}

// composeVolumes: `docker compose down -v` (and `rm -v`) removes the project's volumes, the data
// of its databases, not only its disposable containers: a delete of container volumes, judged
// like `docker volume rm`.
func (w *walker) composeVolumes(name string, argv []string) {
	verb := ""
	for _, a := range argv {
		if verb == "" && (a == "down" || a == "rm") {
			verb = a
			continue
		}
		if verb != "" && (a == "--volumes" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a, "v")) {
			w.s.addEffect(Effect{Kind: EffectDelete, Target: "container_volume", Program: name, Detail: "compose " + verb + " volumes"})
			return
		}
	}
}
