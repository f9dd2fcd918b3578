package normalize

import (
	"regexp"
	"strings"
)

// Secrets in a repository's history. A credential file removed from the working tree is still
// in every commit that had it, and git prints it on request: `git show REV:deploy/.env`,
// `git cat-file -p REV:config/secrets.yml`, `git diff REV -- .env`, `git log -p -- .env`. A
// search of the history for credential content prints the lines that match or the patches that
// hold them: `git log -p -S AKIA`, `git log -G 'password'`, `git grep PATTERN $(git rev-list --all)`.
//
// historySecrets adds a secret effect for each: Detail "git_history KIND" when a credential path
// (a sensitive kind that is a secret: .env files, credentials, private keys …) is read at a
// revision, "git_history pattern" when the history is searched for credential content. Target:
// "REV:PATH" (the path cleaned) or "git SUB PATTERN". Options that print only names or counts
// (--stat, --name-only, --oneline without a patch) read no content.

// DetailHistory prefixes the details of history secret reads.
const DetailHistory = "git_history"

// gitRevRE: an operand that names a revision rather than a path.
var gitRevRE = regexp.MustCompile(`^(HEAD|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD|@)([~^][0-9]*)*$|^[0-9a-f]{7,40}([~^][0-9]*)*$|^[^-/][^ ]*[~^][0-9]*$|@\{|^(refs|origin|upstream)/|\.\.`)

// gitContentOnlyOpts: options that print names, counts or commit lines only.
var gitContentOnlyOpts = set("--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--summary", "--dirstat", "-s", "--no-patch", "--quiet")

// historySecretContentRE: search patterns that look for credential values by their form (key
// ids, token prefixes, key headers, a password or token assigned a value). A variable's name
// alone (-S AWS_SECRET_ACCESS_KEY, "where was this setting added") finds code, not a value.
var historySecretContentRE = regexp.MustCompile(`AKIA|ASIA[A-Z0-9\[]|PRIVATE[ .*_-]*KEY|BEGIN[ .*\\]+(RSA|OPENSSH|EC|DSA|PGP|ENCRYPTED)|ghp_|gho_|ghs_|gh\[[a-z]+\]_|github_pat_|glpat-|xox[abpr\[]|hf_\[|AKIA\[|sk-[a-zA-Z\[.]|sk_live|rk_live|hvs\.|AIza|npm_[A-Za-z\[.]|(?i)(passw(or)?d|passwd|secret|token|api[_-]?key)["']?(\s|\\s[*+?]?|\.[*+?]|\[[^\]]*\][*+?]?)*[:=]`)

// historySecrets adds the secret effects of a git command that reads credentials from history.
// args: argv without the program name.
func (w *walker) historySecrets(c *Command, args words) {
	if c.Name != "git" || len(args.argv) == 0 {
		return
	}
	// Skip git's global options (-C DIR, -c k=v, --git-dir=…); paths are relative to -C's DIR.
	i := 0
	base := w.s.cwd
	for i < len(args.argv) && i < 16 && strings.HasPrefix(args.argv[i], "-") {
		if a := args.argv[i]; (a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") && i+1 < len(args.argv) {
			if a == "-C" && !args.dyn[i+1] {
				if d, ok := resolvePath(args.argv[i+1], base, w.s.n.opt.Home); ok {
					base = d
				}
			}
			i++
		}
		i++
	}
	if i >= len(args.argv) {
		return
	}
	sub := args.argv[i]
	rest := words{argv: args.argv[i+1:], dyn: args.dyn[i+1:]}
	if len(rest.argv) > 256 {
		rest = words{argv: rest.argv[:256], dyn: rest.dyn[:256]}
	}
	// A stash is a commit: stash show -p prints its patch, stash list -p every stash's (reach.go).
	stash := false
	if sub == "reflog" {
		// git reflog [show] is git log -g: with -p it prints the patches of every reflog entry.
		sub = "log"
		if len(rest.argv) > 0 && rest.argv[0] == "show" {
			rest = words{argv: rest.argv[1:], dyn: rest.dyn[1:]}
		}
	}
	if sub == "stash" && len(rest.argv) > 0 && (rest.argv[0] == "show" || rest.argv[0] == "list") {
		stash = true
		if rest.argv[0] == "list" {
			sub = "log"
		} else {
			sub = "show"
		}
		rest = words{argv: rest.argv[1:], dyn: rest.dyn[1:]}
		if !stashPatch(rest.argv) {
			return // a diffstat or the stash names
		}
	}
	switch sub {
	case "show", "cat-file", "diff", "log", "whatchanged", "blame", "annotate", "grep", "format-patch", "diff-tree", "difftool":
	default:
		return
	}
	var ops []string
	var dyn []bool
	opts := map[string]string{}
	afterDashes := false
	var paths []string
	for k := 0; k < len(rest.argv); k++ {
		a := rest.argv[k]
		switch {
		case afterDashes:
			paths = append(paths, a)
		case a == "--":
			afterDashes = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			name, val, has := strings.Cut(a, "=")
			if !has && gitValueOpt(sub, name) && k+1 < len(rest.argv) {
				k++
				val = rest.argv[k]
			} else if !has && len(name) > 2 && (strings.HasPrefix(name, "-S") || strings.HasPrefix(name, "-G")) && !strings.HasPrefix(name, "--") {
				name, val = name[:2], name[2:]
			}
			opts[name] = val
		default:
			ops = append(ops, a)
			dyn = append(dyn, rest.dyn[k])
		}
	}
	for o := range opts {
		if gitContentOnlyOpts[o] {
			return
		}
	}
	if _, ok := opts["--oneline"]; ok && !hasAnyOpt(opts, "-p", "-u", "--patch") {
		return
	}
	add := func(target, detail string) {
		if len(target) > 200 {
			target = target[:200]
		}
		w.s.addEffect(Effect{Kind: EffectSecret, Target: target, Program: "git", Detail: DetailHistory + " " + detail})
	}
	// A credential path at a revision: REV:PATH operands, or paths after "--" with a revision.
	secretKind := func(raw string) (string, string) {
		if raw == "" || isUnresolvedText(raw) {
			return "", ""
		}
		clean, ok := resolvePath(raw, base, w.s.n.opt.Home)
		if !ok {
			return "", ""
		}
		k := w.s.n.sens.classify(clean)
		if k == "" || !hasKind(w.s.n.pathEffectKinds(k), EffectSecret) {
			return "", ""
		}
		return clean, k
	}
	revs := 0
	for k, o := range ops {
		if dyn[k] {
			revs++ // $(git rev-list --all)
			// $(git rev-list -n1 --all -- .env)^:.env: the revision is computed, the path is not.
			if j := strings.LastIndexByte(o, ':'); j >= 0 {
				// $(git rev-parse HEAD~5:config/secrets.yml): the path ends where the substitution does.
				if clean, kind := secretKind(strings.TrimRight(o[j+1:], ")\"' `")); kind != "" {
					add("(substitution):"+clean, kind)
				}
			}
			continue
		}
		if rev, p, ok := strings.Cut(o, ":"); ok && !strings.Contains(rev, "/") || ok && gitRevRE.MatchString(rev) {
			if clean, kind := secretKind(p); kind != "" {
				add(rev+":"+clean, kind)
			}
			revs++
			continue
		}
		if gitRevRE.MatchString(o) {
			revs++
		}
	}
	if stash {
		revs++ // the stash (stash@{0} when none is named)
	}
	if afterDashes && len(ops) > 0 && (sub == "diff" || sub == "log" || sub == "show" || sub == "whatchanged" || sub == "difftool" || sub == "diff-tree") {
		revs = len(ops) // before "--" every operand is a revision (v1.2.0, main, release/2.1)
	}
	patch := sub != "log" || hasAnyOpt(opts, "-p", "-u", "--patch", "--full-diff", "-U", "--unified")
	for o := range opts {
		if strings.HasPrefix(o, "-U") {
			patch = true
		}
	}
	if len(paths) > 0 && patch && (revs > 0 || sub == "log" || sub == "whatchanged" || sub == "blame" || sub == "annotate" || sub == "show") {
		for _, p := range paths {
			if clean, kind := secretKind(p); kind != "" {
				add("history:"+clean, kind)
			}
		}
	}
	// A search of the history for credential content.
	switch sub {
	case "log", "whatchanged", "diff", "show":
		for _, o := range []string{"-S", "-G"} {
			if v, ok := opts[o]; ok && (patch || o == "-G" && sub != "log") && historySecretContentRE.MatchString(v) {
				add("git "+sub+" "+o+" "+v, "pattern")
			}
		}
		if v, ok := opts["--grep"]; ok && patch && historySecretContentRE.MatchString(v) {
			add("git "+sub+" --grep "+v, "pattern")
		}
	case "grep":
		pattern := ""
		if v, ok := opts["-e"]; ok {
			pattern = v
		} else if len(ops) > 0 {
			pattern = ops[0]
			revs = 0
			for k, o := range ops[1:] {
				if dyn[k+1] || gitRevRE.MatchString(o) {
					revs++
				}
			}
		}
		if c.Via == "xargs" || c.Via == "parallel" {
			revs++ // git rev-list --all | xargs git grep PATTERN: the revisions come from standard input
		}
		if revs > 0 && historySecretContentRE.MatchString(pattern) {
			add("git grep "+pattern, "pattern")
		}
	}
}

func hasAnyOpt(opts map[string]string, names ...string) bool {
	for _, n := range names {
		if _, ok := opts[n]; ok {
			return true
		}
	}
	return false
}

// gitValueOpt: an option of the sub-command that takes the next word as its value.
func gitValueOpt(sub, name string) bool {
	if sub == "grep" {
		switch name {
		case "-e", "-f", "-A", "-B", "-C", "-m", "--max-depth", "--threads", "--max-count", "--after-context", "--before-context", "--context":
			return true
		}
		return false
	}
	switch name {
	case "-S", "-G", "--grep", "--format", "--pretty", "-n", "--max-count", "-L", "--author", "--committer", "--since", "--until", "--skip", "-O":
		return true
	}
	return false
}
