package normalize

import (
	"path"
	"strconv"
	"strings"
)

// Operations that weaken what a team relies on later, whatever program does them:
//
//   - credentials stored in plaintext: a git credential helper that writes every password it is
//     given to a file (store, or store/cache pointed at another file or socket) or keeps them
//     cached for more than a day. The file the helper writes is a write of a sensitive location;
//     a file given explicitly (--file /tmp/.gc) is persistence: every later fetch leaves the
//     password there.
//   - forged timestamps (anti-forensics): a file's times set to a chosen date (touch -d/-t/-r,
//     SetFile -d/-m, debugfs set_inode_field … time), a commit dated in the past (git commit
//     --date, GIT_COMMITTER_DATE/GIT_AUTHOR_DATE in its environment). A write of the target
//     "timestamps" (rego/ops_supply.rego escalates it): the change hides when something changed.

// maxCredentialCacheSeconds: a credential cache that keeps passwords longer is a store.
const maxCredentialCacheSeconds = 86400

func (w *walker) plaintextCredentialHelper(prog, key, val string) {
	f := strings.Fields(val)
	if len(f) == 0 {
		return
	}
	s := w.s
	file := ""
	timeout := 0
	for i := 1; i < len(f); i++ {
		o, v, eq := strings.Cut(f[i], "=")
		if !eq && i+1 < len(f) && (o == "--file" || o == "--timeout" || o == "--socket") {
			v = f[i+1]
			i++
		}
		switch o {
		case "--file", "--socket":
			file = strings.Trim(v, `'"`)
		case "--timeout":
			timeout, _ = strconv.Atoi(strings.Trim(v, `'"`))
		}
	}
	switch {
	case file != "":
		clean, ok := resolvePath(file, s.cwd, s.n.opt.Home)
		if !ok {
			clean = file
		}
		s.addEffect(Effect{Kind: EffectPersistence, Target: clean, Program: prog, Detail: "plaintext credentials (" + key + " " + val + ")",
			InWorkspace: ok && inDir(clean, s.n.opt.Workspace)})
	case f[0] == "store":
		s.addEffect(Effect{Kind: EffectWrite, Target: path.Join(s.n.opt.Home, ".git-credentials"), Program: prog,
			Detail: "plaintext credentials (" + key + " store)", Sensitive: true})
	case f[0] == "cache" && timeout > maxCredentialCacheSeconds:
		s.addEffect(Effect{Kind: EffectWrite, Target: "credential cache", Program: prog, Detail: "credentials kept " + strconv.Itoa(timeout) + "s (" + key + ")"})
	}
}

// opsEffects: forged timestamps (see above). commandEffects calls it once per simple command.
func (w *walker) opsEffects(c *Command, name string, args words) {
	forged := ""
	switch name {
	case "touch":
		for i, a := range args.argv {
			o, v, eq := strings.Cut(a, "=")
			switch {
			case o == "-d" || o == "--date" || o == "-t" || o == "-r" || o == "--reference":
				if !eq && i+1 < len(args.argv) {
					v = args.argv[i+1]
				}
				if !strings.EqualFold(strings.TrimSpace(v), "now") {
					forged = strings.TrimSpace(name + " " + o + " " + v)
				}
			case len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "dtr"):
				forged = name + " " + a // a cluster ending in -d, -t or -r (touch -md 2020-01-01)
			}
		}
	case "SetFile", "setfile":
		if hasArgPrefixFold(args, "-d", "-m") {
			forged = name + " " + strings.Join(args.argv, " ")
		}
	case "debugfs":
		for _, a := range args.argv {
			l := strings.ToLower(a)
			if strings.Contains(l, "set_inode_field") && strings.Contains(l, "time") || strings.Contains(l, "sif ") && strings.Contains(l, "time") {
				forged = name + " set_inode_field"
			}
		}
	case "git":
		if len(args.argv) > 0 && (args.argv[0] == "commit" || args.argv[0] == "rebase" || args.argv[0] == "commit-tree") {
			for _, a := range args.argv {
				if a == "--date" || strings.HasPrefix(a, "--date=") || a == "--committer-date-is-author-date" || a == "--ignore-date" {
					forged = "git " + args.argv[0] + " " + a
				}
			}
			for _, v := range c.Env {
				if strings.HasPrefix(v, "GIT_COMMITTER_DATE=") || strings.HasPrefix(v, "GIT_AUTHOR_DATE=") {
					forged = v + " git " + args.argv[0]
				}
			}
		}
	}
	w.supplyEffects(name, args)
	w.identityEffects(name, args) // cloud_ops.go
	w.inPlaceEdits(name, args)
	if forged != "" {
		w.s.addEffect(Effect{Kind: EffectWrite, Target: "timestamps", Program: name, Detail: "forged time: " + forged})
	}
}

// Supply sources and releases (rego/ops_supply.rego judges the owners with shield/ops data):
//
//   - go install/run MODULE@VERSION: an install effect (Detail "module") of the module path, whose
//     host and owner decide whether it is a known publisher's;
//   - docker/podman/nerdctl pull IMAGE (run and create: containerImage): an install effect
//     (Detail "container_image") of the image reference;
//   - a release marked the latest (gh release create --latest) or published by a release tool
//     (goreleaser release without --snapshot or a skipped publish): a push of "release:PROGRAM",
//     outside the envelope: consumers take it.
func (w *walker) supplyEffects(name string, args words) {
	s := w.s
	ops := leadingWords(args, 2)
	switch name {
	case "go":
		if len(ops) == 0 || ops[0] != "install" && ops[0] != "run" {
			return
		}
		for i, a := range args.argv[1:] {
			if strings.HasPrefix(a, "-") || !strings.Contains(a, "@") || args.dyn[i+1] {
				continue
			}
			mod, _, _ := strings.Cut(a, "@")
			if strings.Count(mod, "/") >= 2 && strings.Contains(strings.SplitN(mod, "/", 2)[0], ".") {
				s.addEffect(Effect{Kind: EffectInstall, Target: a, Program: name, Detail: "module"})
			}
		}
	case "docker", "podman", "nerdctl":
		if len(ops) > 0 && ops[0] == "pull" || len(ops) > 1 && ops[0] == "image" && ops[1] == "pull" {
			for i := len(args.argv) - 1; i > 0; i-- {
				if !strings.HasPrefix(args.argv[i], "-") {
					w.containerImage(name, args.argv[i], args.dyn[i])
					break
				}
			}
		}
	case "gh":
		if len(ops) == 2 && ops[0] == "release" && ops[1] == "create" {
			for _, a := range args.argv {
				if a == "--latest" || a == "--latest=true" {
					s.addEffect(Effect{Kind: EffectPush, Target: "release:gh", Program: name, Detail: "release marked latest"})
				}
			}
		}
	case "goreleaser":
		if len(ops) > 0 && ops[0] == "release" && !hasAnyArg(args, "--snapshot", "--skip=publish", "--skip-publish") {
			s.addEffect(Effect{Kind: EffectPush, Target: "release:goreleaser", Program: name, Detail: "release published"})
		}
	}
}

// containerImage records the image a container runs or a pull fetches.
func (w *walker) containerImage(name, image string, dyn bool) {
	if image == "" {
		return
	}
	w.s.addEffect(Effect{Kind: EffectInstall, Target: strings.ToLower(image), Program: name, Detail: "container_image", Unresolved: dyn})
}

// inPlaceEdits: perl and ruby -i (-pi, -ni, -i.bak) rewrite their file operands in place: each
// is a write, whatever the code does (its code is judged as code by the interpreter's model).
func (w *walker) inPlaceEdits(name string, args words) {
	if name != "perl" && name != "ruby" {
		return
	}
	inPlace, code := false, false
	var files []int
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		switch {
		case a == "--":
			files = append(files, indexRange(i+1, len(args.argv))...)
			i = len(args.argv)
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			cl := a[1:]
			if j := strings.IndexAny(cl, "eE"); j >= 0 {
				if strings.Contains(cl[:j], "i") {
					inPlace = true
				}
				code = true
				if j == len(cl)-1 {
					i++ // the code is the next word
				}
				continue
			}
			if strings.Contains(cl, "i") {
				inPlace = true
			}
		case !code && len(files) == 0:
			code = true // the script file
		default:
			files = append(files, i)
		}
	}
	if !inPlace {
		return
	}
	for _, i := range files {
		w.pathEffect(EffectWrite, name, args.argv[i], args.dyn[i])
	}
}

func indexRange(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
