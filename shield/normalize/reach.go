package normalize

import (
	"path"
	"strings"
)

// Reach: what an operation touches without naming it.
//
// Principle 1 — recursion reaches what is under it. A program that reads every file under a
// directory operand (grep -r, rg, an archiver, a secret scanner, the command find -exec or
// fd -x runs on each file, xargs fed a listing) reads the credential files that lie under that
// directory: `grep -rIl aws_secret_access_key ~`, `trufflehog filesystem ~`, `tar czf /tmp/h.tgz
// /etc`, `fd . ~ -x cat`. Which programs recurse is a spec attribute, not a list in Go: the
// directive %reach (the program always recurses) or the flag tag !reach (grep -r, cp -a, zip -r,
// rsync -a). A directory "reaches" credentials when a concrete location of a secret kind of the
// sensitive table (its exemplars, sensitive.go) lies beneath it: the home, /, /etc, /root,
// /var/lib … Directories inside the workspace are the project's own and are left to its rules;
// names-only listings (find without -exec, ls -R, tree, du) have no %reach and stay names.
//
// Principle 3 — a file a program sends is data flowing into its connection. Spec role "send"
// (curl -T, mail -a, swaks --attach, wget --post-file) and "data" (curl -d @FILE, -F f=@FILE)
// read a file whose content goes to the program's own connections: the read flows into them
// ("arg"), so a workspace file posted to a host outside the egress is judged as exfiltration of
// source (exec.outside-envelope), and a credential file as secret egress. "@path" and "<path" are
// the file path; "-" is standard input (a pipe's flow).
//
// Principle 2 — a history dump reads what it contains: git diff, log -p, show, format-patch,
// archive, bundle create, stash show -p, cat-file -p print or pack content of the repository;
// they read the repository (a read of its directory), so the dump flowing into a connection is
// exfiltration of source. Credential paths at revisions are git_history.go's secret reads.
//
// Principle 4 — moving is deleting the source (file tools: move_file, rename, move_path …):
// effects_state.go's moveAwayEffects and reach_move.go.

// DetailReach is the detail of a secret effect a recursive read of a directory reaches.
const DetailReach = "reach"

// maxReachDirs bounds the distinct directories one call's recursive reads are checked for.
const maxReachDirs = 64

// reachExemplars: the concrete locations of the sensitive table's secret kinds (the exemplars
// whose kind is a secret), each with its kind.
func reachExemplars(n *Normalizer) []reachPoint {
	var out []reachPoint
	for _, x := range n.exemplars {
		k := n.sens.classify(x)
		if k == "" {
			continue
		}
		if secretKinds[k] || hasKind(n.pathEffectKinds(k), EffectSecret) {
			out = append(out, reachPoint{path: x, kind: k})
		}
	}
	return out
}

type reachPoint struct{ path, kind string }

// reachedSecret returns a secret kind of a credential location under dir (strictly beneath it),
// or "".
func (n *Normalizer) reachedSecret(dir string) string {
	if dir == "" || inDir(dir, n.opt.Workspace) {
		return ""
	}
	for _, p := range n.reach {
		if p.path != dir && inDir(p.path, dir) {
			return p.kind
		}
	}
	return ""
}

// reachSecret records the secret a recursive read of clean reaches.
func (w *walker) reachSecret(prog, clean string) {
	s := w.s
	x := s.fx()
	if x.reachDirs >= maxReachDirs {
		return
	}
	x.reachDirs++
	if k := s.n.reachedSecret(clean); k != "" {
		s.addEffect(Effect{Kind: EffectSecret, Target: clean, Program: prog, Detail: DetailReach + " " + k, Sensitive: true})
	}
}

// reaching: the parsed command reads every file under its directory operands.
func reaching(pa parsedArgs) bool {
	if pa.spec == nil {
		return false
	}
	if pa.spec.reach || pa.tags["reach"] {
		return true
	}
	if !pa.spec.longSingle {
		return false
	}
	// A spec with single-dash long options (zip -tt) reads an unlisted "-qr" as one flag; a
	// recursive letter in it still recurses.
	for _, f := range pa.flags {
		if len(f) < 3 || f[0] != '-' || f[1] == '-' {
			continue
		}
		if _, listed := pa.spec.flags[f]; listed {
			continue
		}
		for _, c := range f[1:] {
			if pa.spec.flags["-"+string(c)] == "reach" {
				return true
			}
		}
	}
	return false
}

// sendFile records the read of a file whose content prog sends (role "send" or "data") and marks
// the read effects as sent: linkCmd makes them flow into prog's connections.
func (w *walker) sendFile(prog, role, raw string, dyn bool) {
	before := len(w.s.act.Effects)
	if role == "send" {
		raw = strings.TrimPrefix(strings.TrimPrefix(raw, "@"), "<")
		if raw != "-" {
			w.pathEffect(EffectRead, prog, raw, dyn)
		}
	} else {
		w.dataFile(prog, raw, dyn)
	}
	x := w.s.fx()
	for i := before; i < len(w.s.act.Effects) && i < len(x.origin); i++ {
		if k := w.s.act.Effects[i].Kind; (k == EffectRead || k == EffectSecret) && x.origin[i] == "" {
			x.origin[i] = originSent
		}
	}
}

// originSent marks a read whose content the reading program sends (effCtx.origin).
const originSent = "sent"

// dataFile: the file a curl-style data value names ("@file", "name=@file;type=…", "name=<file",
// "name@file").
func (w *walker) dataFile(prog, raw string, dyn bool) {
	if strings.HasPrefix(raw, "@") {
		w.pathEffect(EffectRead, prog, raw[1:], dyn)
	} else if i := strings.Index(raw, "=@"); i >= 0 {
		f := raw[i+2:]
		if j := strings.IndexByte(f, ';'); j >= 0 {
			f = f[:j]
		}
		w.pathEffect(EffectRead, prog, f, dyn)
	} else if i := strings.Index(raw, "=<"); i >= 0 {
		f := raw[i+2:]
		if j := strings.IndexByte(f, ';'); j >= 0 {
			f = f[:j]
		}
		w.pathEffect(EffectRead, prog, f, dyn)
	} else if i := strings.IndexByte(raw, '@'); i > 0 && !strings.ContainsAny(raw[:i], "=&") && isFormName(raw[:i]) {
		// curl --data-urlencode NAME@FILE: FILE's content, url-encoded, is the value.
		w.pathEffect(EffectRead, prog, raw[i+1:], dyn)
	}
}

// gitDumpSubs: git sub-commands that print or pack the content of the repository (files at
// revisions, patches), whatever their pathspec.
var gitDumpSubs = set("diff", "show", "format-patch", "archive", "bundle", "cat-file", "diff-tree", "whatchanged", "blame", "annotate")

// gitReach: a git command that dumps the repository's content reads the repository (principle
// 2); git grep --no-index searches files on disk like grep -r (principle 1).
func (w *walker) gitReach(c *Command, args words) {
	if c.Name != "git" || len(args.argv) == 0 {
		return
	}
	dir := "."
	i := 0
	for i < len(args.argv) && i < 16 && strings.HasPrefix(args.argv[i], "-") {
		a := args.argv[i]
		if (a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace") && i+1 < len(args.argv) {
			if a == "-C" {
				if args.dyn[i+1] {
					return // an unresolved directory: the spec walk reports it
				}
				dir = path.Join(dir, args.argv[i+1])
				if strings.HasPrefix(args.argv[i+1], "/") || strings.HasPrefix(args.argv[i+1], "~") {
					dir = args.argv[i+1]
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
	rest := args.argv[i+1:]
	if len(rest) > 256 {
		rest = rest[:256]
	}
	has := func(opts ...string) bool {
		for _, a := range rest {
			if a == "--" {
				return false
			}
			for _, o := range opts {
				if a == o || strings.HasPrefix(a, o+"=") {
					return true
				}
			}
		}
		return false
	}
	dump := false
	switch sub {
	case "log", "reflog":
		dump = has("-p", "-u", "--patch", "--full-diff") || anyPrefix(rest, "-U")
	case "stash":
		dump = len(rest) > 0 && (rest[0] == "show" || rest[0] == "list") && has("-p", "-u", "--patch", "--include-untracked")
	case "bundle":
		dump = len(rest) > 0 && rest[0] == "create"
	case "cat-file":
		dump = has("-p", "blob", "--batch", "--batch-all-objects", "--filters", "--textconv")
	case "grep":
		if has("--no-index", "--untracked") {
			prev := w.reach
			w.reach = true
			ops := gitGrepPaths(rest)
			for _, p := range ops {
				w.pathEffect(EffectRead, "git", p, false)
			}
			if len(ops) == 0 {
				w.pathEffect(EffectRead, "git", dir, false)
			}
			w.reach = prev
		}
		return
	default:
		dump = gitDumpSubs[sub] && !gitNamesOnly(rest)
	}
	if dump {
		w.pathEffect(EffectRead, "git", dir, false)
	}
}

// gitNamesOnly: options that print names, counts or commit lines only.
func gitNamesOnly(rest []string) bool {
	for _, a := range rest {
		if a == "--" {
			break
		}
		if gitContentOnlyOpts[a] || a == "--list" || a == "-l" {
			return true
		}
	}
	return false
}

func anyPrefix(ws []string, p string) bool {
	for _, a := range ws {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// gitGrepPaths: the path operands of git grep (after the pattern, or after "--").
func gitGrepPaths(rest []string) []string {
	var ops []string
	pattern := false
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if a == "--" {
			return append(ops, rest[k+1:]...)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			switch a {
			case "-e", "-f":
				pattern = true
				k++
			case "-A", "-B", "-C", "-m", "--max-depth", "--threads":
				k++
			}
			continue
		}
		if !pattern {
			pattern = true
			continue
		}
		ops = append(ops, a)
	}
	return ops
}

// fdPlaceholder: fd -x/-X CMD runs CMD with each path appended when CMD has no placeholder ({},
// {/}, {//}, {.}, {/.}): "fd -x cat" is "fd -x cat {}".
func fdPlaceholder(rest words) words {
	for _, a := range rest.argv {
		if strings.Contains(a, "{") && strings.Contains(a, "}") {
			return rest
		}
	}
	if len(rest.argv) == 1 && strings.ContainsAny(rest.argv[0], " \t;|&") {
		return rest // a shell command line in one word (shcmd): its own words are read
	}
	out := words{argv: append(append([]string{}, rest.argv...), "{}"), dyn: append(append([]bool{}, rest.dyn...), false)}
	return out
}

// stashPatch: git stash show/list options that print the patch (-p, -u, --patch, --include-untracked
// with -p implied by configuration is not assumed).
func stashPatch(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-p" || a == "-u" || a == "--patch" || strings.HasPrefix(a, "-U") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "p")) {
			return true
		}
	}
	return false
}

// reachArgs: what a command reads without a spec role saying so: a git history dump reads the
// repository; a cloud CLI's file-valued parameter is sent in the API request.
func (w *walker) reachArgs(c *Command, args words) {
	w.gitReach(c, args)
	w.cloudFileArgs(c, args)
}

// cloudFileArgs: the AWS CLI reads a parameter value "file://PATH" or "fileb://PATH" and sends its
// content in the request (aws ses send-email --text file://…, aws s3api put-object --body); the
// Azure CLI does the same with "@PATH" values of its options. Each is a read whose content flows
// into the CLI's connection.
func (w *walker) cloudFileArgs(c *Command, args words) {
	if c.Name != "aws" && c.Name != "az" {
		return
	}
	for k, a := range args.argv {
		if k >= 256 {
			break
		}
		v := a
		if i := strings.IndexByte(a, '='); i > 0 && strings.HasPrefix(a, "--") {
			v = a[i+1:]
		}
		switch {
		case c.Name == "aws" && strings.Contains(v, "file"):
			// --text file://P, --zip-file fileb://P, shorthand Data=fileb://P,Key=v
			for _, part := range strings.Split(v, ",") {
				if _, after, ok := strings.Cut(part, "="); ok && !strings.HasPrefix(part, "file") {
					part = after
				}
				if p, ok := cutAny(part, "fileb://", "file://"); ok {
					w.sendFile(c.Name, "send", p, args.dyn[k])
				}
			}
		case c.Name == "az" && strings.HasPrefix(v, "@") && len(v) > 1 && k > 0 && strings.HasPrefix(args.argv[k-1], "--"):
			w.sendFile(c.Name, "send", v, args.dyn[k])
		}
	}
}

// cutAny returns s without the first of the prefixes it has.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return "", false
}
