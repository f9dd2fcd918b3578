package normalize

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/gobwas/glob"
)

// The shell side of the effect model: each simple command is read with its spec (spec.go) and
// yields Effects; what could not be resolved is marked so; data moving between effects through
// pipes, substitutions, variables and files is recorded as Flows.

// secretKinds are sensitive-path kinds whose contents are credentials: reading one is a secret
// source.
var secretKinds = set("ssh_key", "cloud_credentials", "kube_config", "k8s_service_account", "docker_config", "credentials",
	"dotenv", "gpg_keyring", "private_key", "shadow", "proc_environ", "proc_mem", "shell_history", "browser_credentials",
	"password_store")

// persistenceKinds are sensitive-path kinds where a write makes code run later (or grants access).
var persistenceKinds = set("ssh_authorized_keys", "shell_rc", "cron", "service_unit", "autostart", "git_hooks", "ld_preload",
	"agent_config", "sudoers", "pam")

// gitPersistKeys are git configuration keys whose value is run or trusted later.
var gitPersistPrefixes = []string{"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor",
	"core.askpass", "core.gitproxy", "alias.", "credential.", "filter.", "diff.external", "sequence.editor", "gpg.program",
	"gpg.ssh.program", "include.path", "includeif.", "url.", "http.proxy", "https.proxy", "remote.", "merge.", "diff.",
	"pager.", "uploadpack.", "receive.", "instaweb."}

// evalSafe are programs whose output is meant for eval and sets up the shell's environment.
var evalSafe = set("ssh-agent", "direnv", "pyenv", "rbenv", "nodenv", "goenv", "starship", "zoxide", "brew", "conda",
	"dircolors", "opam", "fnm", "mise", "rtx", "keychain", "gpg-agent", "thefuck", "jenv", "luarocks", "register-python-argcomplete")

// systemBinDirs: a program named by one of these paths is the program of that name.
var systemBinDirs = set("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin")

// effCtx is what the effect walker keeps per call beyond the Action.
type effCtx struct {
	effCmd    []int             // effect index → index of the command that produced it
	origin    []string          // effect index → "redirect" or ""
	seen      map[effKey]int    // dedupe key → effect index
	mcAliases map[string]bool   // mc alias → points at loopback (local_emulators.go)
	flowSeen  map[[2]int]bool   // (from, to)
	lists     map[string]bool   // values already in Unresolved / UnknownPrograms
	varTaint  map[string][]int  // variable → source effects its value carries
	fileT     map[string][]int  // written path → source effects its content carries
	links     map[string]string // symlink path → its target (both clean)
	remote    string            // where the commands being walked run ("" here)
	roots     []string          // find roots, for "{}" in -exec
	// rootsFiltered: find selects with a test (-name, -type …), so "{}" is what matched under
	// the roots rather than the roots themselves.
	rootsFiltered bool
	// pipeRoots: what the previous pipeline stage lists (find, ls, git ls-files …): the paths an
	// xargs in this stage receives lie under them.
	pipeRoots []string
	// findGlobs: what a find's name tests select under its roots ("{}" in -exec);
	// stageGlobs / pipeGlobs: the same for the find of a pipeline stage and of the previous
	// stage (find_secrets.go).
	findGlobs, stageGlobs, pipeGlobs []string
	// stageFiltered / pipeFiltered: the find of this / the previous stage selects with a test,
	// so what it prints lies under its roots, never the roots themselves.
	stageFiltered, pipeFiltered bool
	subst                       map[int]bool // command index → reached through a substitution
	// State earlier commands changed for later ones (effects_state.go).
	oldPwd    string    // the directory before the last cd ("" = the caller's, unknown)
	dirStack  []string  // pushd's stack, as built by this call
	git       *gitState // git remotes and push rewrites configured by this call
	curEnv    []string  // the assignments before the command whose effects are being read
	reachDirs int       // directories checked by recursive reads (reach.go)
}

func (s *state) fx() *effCtx {
	if s.eff == nil {
		s.eff = &effCtx{seen: make(map[effKey]int, 8)} // the other maps are made on first write
	}
	return s.eff
}

// effKey identifies an effect for deduplication.
type effKey struct{ kind, target, program, detail, remote string }

// addEffect appends e (once) and returns its index, or -1 when the bound is hit.
func (s *state) addEffect(e Effect) int {
	x := s.fx()
	if e.Remote == "" {
		e.Remote = x.remote
	}
	key := effKey{e.Kind, e.Target, e.Program, e.Detail, e.Remote}
	if i, ok := x.seen[key]; ok {
		if e.Unresolved {
			s.act.Effects[i].Unresolved = true
		}
		return i
	}
	if len(s.act.Effects) >= s.n.opt.MaxStrings {
		s.act.Truncated = true
		return -1
	}
	if len(e.Detail) > maxEffectDetail {
		e.Detail = e.Detail[:maxEffectDetail] + "…"
	}
	x.seen[key] = len(s.act.Effects)
	s.act.Effects = append(s.act.Effects, e)
	x.effCmd = append(x.effCmd, len(s.act.Commands)-1)
	x.origin = append(x.origin, "")
	return len(s.act.Effects) - 1
}

const maxEffectDetail = 512

func (s *state) addUnresolved(what string) {
	x := s.fx()
	k := "u\x00" + what
	if x.lists[k] || len(s.act.Unresolved) >= s.n.opt.MaxStrings {
		return
	}
	if x.lists == nil {
		x.lists = map[string]bool{}
	}
	x.lists[k] = true
	s.act.Unresolved = append(s.act.Unresolved, what)
}

func (s *state) addUnknown(prog string) {
	x := s.fx()
	k := "p\x00" + prog
	if x.lists[k] || len(s.act.UnknownPrograms) >= s.n.opt.MaxStrings {
		return
	}
	if x.lists == nil {
		x.lists = map[string]bool{}
	}
	x.lists[k] = true
	s.act.UnknownPrograms = append(s.act.UnknownPrograms, prog)
}

// isUnresolvedText: a word whose value depends on an expansion that was not resolved.
func isUnresolvedText(a string) bool { return strings.ContainsAny(a, "$`") }

// pathEffect records a path effect (read, write, delete, list, move) of an operand, with its
// derived secret or persistence effect. It returns the effect's index or -1.
func (w *walker) pathEffect(kind, prog, raw string, dyn bool) int {
	s := w.s
	if raw == "" || raw == "-" {
		return -1
	}
	switch raw {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom":
		return -1
	}
	if strings.HasPrefix(raw, "/dev/tcp/") || strings.HasPrefix(raw, "/dev/udp/") {
		rest := strings.SplitN(raw[len("/dev/tcp/"):], "/", 2)
		port := ""
		if len(rest) == 2 {
			port = rest[1]
		}
		return w.hostEffect(prog, rest[0], port, raw[5:8], dyn)
	}
	if raw == "{}" && len(s.fx().roots) == 0 {
		s.addUnresolved(kind + " {} (" + prog + ")")
		return s.addEffect(Effect{Kind: kind, Target: raw, Program: prog, Unresolved: true})
	}
	if raw == "{}" {
		last := -1
		if s.fx().rootsFiltered {
			w.filteredDelete = true // "{}" is what find's tests matched under its roots
			defer func() { w.filteredDelete = false }()
		}
		if kind == EffectRead {
			s.findSecretReads(prog, s.fx().findGlobs) // find_secrets.go
			if len(s.fx().findGlobs) == 0 {
				// Every file under the roots, unless name tests chose them (reach.go).
				prev := w.reach
				w.reach = true
				defer func() { w.reach = prev }()
			}
		}
		for _, r := range s.fx().roots {
			if r == "{}" { // a root that is itself "{}" would substitute into itself forever
				s.addUnresolved(kind + " {} (" + prog + ")")
				last = s.addEffect(Effect{Kind: kind, Target: r, Program: prog, Unresolved: true})
				continue
			}
			last = w.pathEffect(kind, prog, r, false)
		}
		return last
	}
	if kind == "move" {
		w.pathEffect(EffectRead, prog, raw, dyn)
		kind = EffectDelete
	}
	list := kind == "list"
	if list {
		kind = EffectRead
	}
	if dyn && (strings.HasPrefix(raw, "<(") || strings.HasPrefix(raw, ">(")) && strings.HasSuffix(raw, ")") {
		// A process substitution is a pipe (/dev/fd/N), not a path: what it reads or writes are
		// the effects of its own commands, which were walked. Its text may hold glob characters
		// (grep -o '^[A-Z_]*'), which name no file here.
		return -1
	}
	if dyn && isUnresolvedText(raw) {
		s.addUnresolved(kind + " " + raw + " (" + prog + ")")
		return s.addEffect(Effect{Kind: kind, Target: raw, Program: prog, Unresolved: true})
	}
	clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
	if !ok {
		return -1
	}
	clean = w.throughLinks(clean)
	if inUnresolvedCwd(clean) {
		// Relative to a directory an earlier cd left unknown (effects_state.go).
		s.addUnresolved(kind + " " + raw + " (" + prog + ", relative to an unresolved working directory)")
		return s.addEffect(Effect{Kind: kind, Target: clean, Program: prog, Unresolved: true})
	}
	if dyn && hasGlob(raw) {
		return w.globEffect(kind, prog, raw, clean)
	}
	sens := s.n.sens.classify(clean)
	inWS := inDir(clean, s.n.opt.Workspace)
	if kind == EffectDelete && isWorkspaceOrAncestor(clean, s.n.opt.Workspace) && !(w.filteredDelete && clean == s.n.opt.Workspace) {
		inWS = false // removing or moving away the workspace itself is no change inside it
	}
	e := Effect{Kind: kind, Target: clean, Program: prog, Detail: sens, InWorkspace: inWS, Sensitive: sens != ""}
	if kind == EffectDelete && sens == "" && !inWS && isUserCache(clean, s.n.opt.Home) {
		e.Detail = detailUserCache // local_targets.go
	}
	i := s.addEffect(e)
	if !list { // listing a directory of secrets reads names, not the secrets
		w.derived(kind, prog, clean, sens, e.InWorkspace, false)
		if w.reach && kind == EffectRead && !inWS {
			w.reachSecret(prog, clean) // reach.go
		}
	}
	return i
}

// derived adds the secret, persistence or privilege effect a path effect implies.
func (w *walker) derived(kind, prog, clean, sens string, inWS, unresolved bool) {
	s := w.s
	if sens == "container_socket" {
		// Whoever talks to the container runtime's socket controls the host.
		s.addEffect(Effect{Kind: EffectEscape, Target: clean, Program: prog, Detail: "docker_socket", Sensitive: true, Unresolved: unresolved})
	}
	switch {
	case kind == EffectRead && secretKinds[sens]:
		s.addEffect(Effect{Kind: EffectSecret, Target: clean, Program: prog, Detail: sens, InWorkspace: inWS, Sensitive: true, Unresolved: unresolved})
	case (kind == EffectWrite || kind == EffectDelete) && persistenceKinds[sens]:
		s.addEffect(Effect{Kind: EffectPersistence, Target: clean, Program: prog, Detail: sens, InWorkspace: inWS, Sensitive: true, Unresolved: unresolved})
		if sens == "sudoers" || sens == "pam" {
			s.addEffect(Effect{Kind: EffectPrivilege, Target: clean, Program: prog, Detail: sens, Unresolved: unresolved})
		}
	}
}

// throughLinks rewrites a path under a symlink created earlier in the same call to the link's
// target ("ln -s / r && cat r/etc/shadow" reads /etc/shadow).
//
// Links already on disk are followed too when the normaliser resolves them (links.go).
func (w *walker) throughLinks(clean string) string {
	links := w.s.fx().links
	if len(links) == 0 {
		return w.s.n.onDisk(clean)
	}
	for i := 0; i < 8; i++ {
		changed := false
		for l, t := range links {
			if clean == l {
				clean, changed = t, true
			} else if strings.HasPrefix(clean, l+"/") {
				clean, changed = path.Clean(t+clean[len(l):]), true
			}
		}
		if !changed {
			break
		}
	}
	return w.s.n.onDisk(clean)
}

// globEffect records a path effect whose operand is a glob: matched against sensitive exemplars
// ("cat /etc/shado?" reads /etc/shadow). A glob below a workspace directory that matches nothing
// sensitive is bounded (every match lies in the workspace) and counts as resolved.
func (w *walker) globEffect(kind, prog, raw, clean string) int {
	s := w.s
	g, err := glob.Compile(clean, '/')
	static := clean
	if i := strings.IndexAny(static, "*?["); i >= 0 {
		static = path.Dir(static[:i] + "x")
	}
	inWS := inDir(static, s.n.opt.Workspace)
	if err != nil {
		s.addUnresolved(kind + " " + raw + " (" + prog + ")")
		return s.addEffect(Effect{Kind: kind, Target: clean, Program: prog, Detail: "glob", Unresolved: true})
	}
	base := clean[strings.LastIndexByte(clean, '/')+1:]
	var bg *glob.Pattern
	if base != "" && base[0] != '*' && base[0] != '?' && base[0] != '[' {
		bg, _ = glob.Compile(base)
	}
	last := -1
	matched := false
	hits := 0
	for _, ex := range s.n.exemplars {
		hit := g.Match(ex)
		if !hit && bg != nil {
			eb := ex[strings.LastIndexByte(ex, '/')+1:]
			hit = bg.Match(eb)
			if hit {
				ex = path.Join(path.Dir(clean), eb)
			}
		}
		if !hit {
			continue
		}
		sens := s.n.sens.classify(ex)
		if sens == "" {
			continue
		}
		matched = true
		if hits++; hits > maxGlobMatches {
			break
		}
		ws := inDir(ex, s.n.opt.Workspace)
		s.addUnresolved(kind + " " + raw + " (" + prog + ", may match " + ex + ")")
		last = s.addEffect(Effect{Kind: kind, Target: ex, Program: prog, Detail: "glob " + raw, InWorkspace: ws, Sensitive: true, Unresolved: true})
		w.derived(kind, prog, ex, sens, ws, true)
	}
	if matched {
		return last
	}
	if !inWS && kind == EffectDelete && isUserCache(static, s.n.opt.Home) {
		// Every match lies under a cache root (the glob's fixed directory is one or below one) and
		// none is a sensitive exemplar: a cache clean (local_targets.go).
		return s.addEffect(Effect{Kind: kind, Target: clean, Program: prog, Detail: detailUserCache})
	}
	if !inWS {
		s.addUnresolved(kind + " " + raw + " (" + prog + ")")
	}
	return s.addEffect(Effect{Kind: kind, Target: clean, Program: prog, Detail: "glob", InWorkspace: inWS, Unresolved: !inWS})
}

// maxGlobMatches bounds the sensitive paths one glob is reported as matching.
const maxGlobMatches = 8

// sensitiveExemplars lists concrete paths that stand for the sensitive table's patterns, to match
// globs against.
func sensitiveExemplars(home string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, r := range sensitiveTable {
		for _, p := range r.Patterns {
			for _, x := range expandBraces(p) {
				switch {
				case strings.HasPrefix(x, "~/"):
					x = home + x[1:]
				case strings.HasPrefix(x, "**/"):
					x = home + "/" + x[3:]
				}
				x = strings.TrimSuffix(x, "/**")
				x = strings.ReplaceAll(x, "/*/", "/self/")
				x = strings.ReplaceAll(x, "/**/", "/x/")
				if strings.HasPrefix(path.Base(x), "*.") {
					x = path.Dir(x) + "/x" + path.Base(x)[1:]
				}
				if strings.ContainsAny(x, "*?[") {
					continue
				}
				add(x)
			}
		}
	}
	for _, x := range []string{"/etc/crontab", "/proc/1/environ", "/etc/ssh/ssh_host_rsa_key", home + "/.ssh/id_rsa", home + "/.aws/credentials",
		home + "/.kube/config", home + "/.docker/config.json", home + "/.config/gcloud/credentials.db"} {
		add(x)
	}
	return out
}

// hostEffect records a connection to host[:port] (user@ and :path removed).
func (w *walker) hostEffect(prog, raw, port, scheme string, dyn bool) int {
	s := w.s
	h := raw
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	if h == "" {
		return -1
	}
	if dyn && isUnresolvedText(h) {
		s.addUnresolved("connect " + raw + " (" + prog + ")")
		return s.addEffect(Effect{Kind: EffectConnect, Target: h, Program: prog, Detail: scheme, Unresolved: true})
	}
	if hh, p, ok := cutHostPort(h); ok {
		h = hh
		if port == "" {
			port = p
		}
	}
	if i := strings.IndexByte(h, '/'); i >= 0 {
		h = h[:i]
	}
	u := parseURL("tcp://"+bracket(h), URLConnect, false)
	pn, _ := strconv.Atoi(port)
	if pn == 0 {
		pn = defaultPorts[scheme]
	}
	return s.addEffect(Effect{Kind: EffectConnect, Target: u.Host, Program: prog, Detail: scheme, Port: pn, Sensitive: internalHost(u.IPClass)})
}

func bracket(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + h + "]"
	}
	return h
}

func internalHost(class string) bool {
	return class == IPMetadata || class == IPLinkLocal || class == IPPrivate
}

// urlEffect records a connection to the host of a URL operand (bare hosts read as http).
func (w *walker) urlEffect(prog, raw string, dyn bool) int {
	s := w.s
	if raw == "" {
		return -1
	}
	if dyn && isUnresolvedText(raw) {
		// The host may still be literal: https://api.example.com/$ID.
		pre := raw[:strings.IndexAny(raw, "$`")]
		if i := strings.Index(pre, "://"); i >= 0 && strings.ContainsAny(pre[i+3:], "/?#") {
			raw = pre
		} else if i < 0 && strings.ContainsAny(pre, "/") && looksLikeHost(pre) {
			raw = pre
		} else {
			s.addUnresolved("connect " + raw + " (" + prog + ")")
			return s.addEffect(Effect{Kind: EffectConnect, Target: raw, Program: prog, Unresolved: true})
		}
	}
	if !strings.Contains(raw, "://") && !looksLikeHost(raw) {
		return -1
	}
	u := parseURL(raw, URLRequest, true)
	if u.Host == "" {
		return -1
	}
	return s.addEffect(Effect{Kind: EffectConnect, Target: u.Host, Program: prog, Detail: u.Scheme, Port: u.Port, Sensitive: internalHost(u.IPClass)})
}

// installEffect records a package install with its source.
func (w *walker) installEffect(prog, raw string, dyn bool) {
	s := w.s
	if raw == "" {
		return
	}
	if dyn && isUnresolvedText(raw) {
		s.addUnresolved("install " + raw + " (" + prog + ")")
		s.addEffect(Effect{Kind: EffectInstall, Target: raw, Program: prog, Unresolved: true})
		return
	}
	raw = vcsShorthand(prog, raw) // effects_subcmd.go: github:o/r is git+https://github.com/o/r
	src := installSource(raw)
	e := Effect{Kind: EffectInstall, Target: raw, Program: prog, Detail: src}
	switch src {
	case SourceURL, SourceVCS:
		u := strings.TrimPrefix(strings.TrimPrefix(raw, "git+"), "hg+")
		if at := strings.Index(u, " @ "); at >= 0 { // pip "name @ URL"
			u = u[at+3:]
		}
		if strings.Contains(u, "://") {
			w.urlEffect(prog, u, false)
		} else if strings.HasPrefix(u, "git@") {
			w.hostEffect(prog, strings.SplitN(u, ":", 2)[0], "", "ssh", false)
		}
	case SourcePath:
		if clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home); ok {
			e.InWorkspace = inDir(clean, s.n.opt.Workspace)
			e.Target = clean
		}
	}
	s.addEffect(e)
	if src == SourceRegistry {
		w.lookalikeInstall(prog, raw) // effects_lookalike.go: typosquats of popular packages
	}
}

func installSource(p string) string {
	lp := strings.ToLower(p)
	switch {
	case strings.HasPrefix(lp, "git+") || strings.HasPrefix(lp, "hg+") || strings.HasPrefix(lp, "svn+") || strings.HasPrefix(lp, "git@") ||
		strings.HasPrefix(lp, "github:") || strings.HasPrefix(lp, "gitlab:") || strings.HasPrefix(lp, "bitbucket:") || strings.HasSuffix(lp, ".git"):
		return SourceVCS
	case strings.Contains(lp, " @ ") || strings.Contains(lp, "://"):
		if strings.Contains(lp, "github.com/") && !strings.Contains(lp, "/archive/") && !strings.Contains(lp, "/releases/") {
			return SourceVCS
		}
		return SourceURL
	case strings.HasPrefix(p, ".") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return SourcePath
	case strings.HasSuffix(lp, ".whl") || strings.HasSuffix(lp, ".tar.gz") || strings.HasSuffix(lp, ".tgz") || strings.HasSuffix(lp, ".zip") ||
		strings.HasSuffix(lp, ".deb") || strings.HasSuffix(lp, ".rpm") || strings.HasSuffix(lp, ".gem") || strings.HasSuffix(lp, ".crate"):
		return SourcePath
	case !strings.HasPrefix(p, "@") && strings.Count(p, "/") == 1 && !strings.Contains(p, ".") && !strings.Contains(p, "@"):
		return SourceVCS // npm owner/repo shorthand
	}
	return SourceRegistry
}

// codeEffect records inline code run by prog, and what the code visibly names: quoted paths
// (read, secret when sensitive) and URLs (connect).
func (w *walker) codeEffect(prog, code string, dyn bool) int {
	s := w.s
	e := Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: code}
	if dyn && isUnresolvedText(code) && !shells[prog] {
		e.Unresolved = true
		s.addUnresolved("code " + code + " (" + prog + ")")
	}
	var iv InlineVerdict
	if !shells[prog] && s.n.opt.Inline.Handles(prog) {
		iv = s.n.opt.Inline.Analyse(prog, code) // inline_code.go
		e.Inline = iv.Field()
	}
	i := s.addEffect(e)
	if shells[prog] {
		return i // walked as shell
	}
	for _, p := range iv.Reads {
		w.pathEffect(EffectRead, prog, p, false)
	}
	for _, m := range quotedPathRE.FindAllStringSubmatch(code, 16) {
		if !strings.Contains(m[1], "://") {
			if clean, ok := resolvePath(m[1], s.cwd, s.n.opt.Home); ok {
				if sens := s.n.sens.classify(clean); sens != "" {
					w.pathEffect(EffectRead, prog, m[1], false)
					s.addPath(m[1], RoleArg) // named by the code: judged by the credential rules (files.read-secret)
				}
			}
		}
	}
	w.barePathReads(prog, code) // inline_escapes.go: ~/.netrc written bare (Tcl, Nix, shell-like languages)
	for _, m := range urlInTextRE.FindAllString(code, 16) {
		w.urlEffect(prog, strings.TrimRight(m, ".,:;!?"), false)
	}
	w.homeRelativeReads(prog, code) // unknown_operands.go: HOME + "/.ssh/id_rsa" in any language
	w.inlineCode(prog, code)
	return i
}

// Inline code of interpreters (python -c, perl -e, node -e, ruby -e, php -r, awk): what it visibly
// does. A reading for rules, not a parser of five languages: literal arguments of shell-outs are
// walked as shell, literal paths of delete and write calls become effects, literal hosts near
// socket calls become connections, and decoded-then-evaluated code is unresolved.
var (
	shellOutRE = regexp.MustCompile(`(?:os\.system|os\.popen|subprocess\.(?:call|run|Popen|check_output|check_call|getoutput|getstatusoutput)|\bsystem|shell_exec|passthru|\bpopen|execSync|spawnSync|\bexec|\bspawn|IO\.popen|Kernel\.system)\s*\(?\s*\[?\s*["']([^"']+)["']`)
	deleteRE   = regexp.MustCompile(`(?:shutil\.rmtree|os\.remove|os\.unlink|os\.rmdir|os\.removedirs|Path\(["'][^"']+["']\)\.unlink|fs\.rmSync|fs\.rmdirSync|fs\.unlinkSync|fs\.rm|rimraf|Deno\.remove(?:Sync)?|FileUtils\.rm_rf|FileUtils\.rm_r|FileUtils\.rm|File\.delete|\bunlink|\brmtree)\s*\(?\s*["']([^"']+)["']`)
	writeRE    = regexp.MustCompile(`(?:open\s*\(\s*["']([^"']+)["']\s*,\s*["'][wax]b?\+?["']|(?:fs\.writeFileSync|fs\.appendFileSync|fs\.writeFile|Deno\.writeTextFile(?:Sync)?|Deno\.writeFile(?:Sync)?|File\.write|file_put_contents)\s*\(\s*["']([^"']+)["'])`)
	netWordRE  = regexp.MustCompile(`socket|connect|fsockopen|TCPSocket|/inet/tcp|/dev/tcp|net\.connect|createConnection|urlopen|requests\.|http\.client|fetch\(|XMLHttpRequest|LWP|Net::|HTTP::Tiny|curl_init`)
	hostLitRE  = regexp.MustCompile(`["'/]((?:\d{1,3}\.){3}\d{1,3}|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})["'/,:]`)
	obfuscRE   = regexp.MustCompile(`b64decode|base64|Buffer\.from|fromCharCode|pack\s*\(\s*["']H|codecs\.decode|zlib\.decompress|marshal\.loads|\\x[0-9a-fA-F]{2}.*\\x[0-9a-fA-F]{2}|rot13|atob\(|unhexlify|bytes\.fromhex`)
	evalRE     = regexp.MustCompile(`\b(?:exec|eval|system|compile|Function|instance_eval|class_eval|assert)\s*\(`)
	// envAllRE: code that takes the whole environment (secrets among it), as env/printenv do;
	// envNameRE: code that reads one variable by a literal name (group 1).
	envAllRE  = regexp.MustCompile(`\bos\.environ\b(?:\s*[^\s\[.]|\s*$|\.(?:copy|items|values)\b)|\bprocess\.env\b(?:\s*[^\s\[.]|\s*$)|\bENV\.(?:to_h|to_a|each|map|inspect)\b|%ENV\b|\bSystem\.getenv\(\s*\)|\bos\.Environ\(\)|\bDeno\.env\.toObject\(\)|\bgetenv\(\s*\)|\$_ENV\b(?:\s*[^\s\[]|$)`)
	envNameRE = regexp.MustCompile(`(?:os\.environ(?:\.get)?\s*[\[(]|os\.getenv\s*\(|process\.env\.|process\.env\s*\[|ENV\s*(?:\[|\.fetch\s*\()|\$ENV\{|getenv\s*\(|System\.getenv\s*\(|Deno\.env\.get\s*\(|\$_ENV\s*\[)\s*['"]?([A-Za-z_][A-Za-z0-9_]*)`)
)

func (w *walker) inlineCode(prog, code string) {
	s := w.s
	if len(code) > maxExpandedWord {
		return
	}
	for _, m := range shellOutRE.FindAllStringSubmatch(code, 8) {
		if d := w.s.fx(); d != nil && len(m[1]) > 0 {
			w.script(m[1], 1, prog+" code", false)
		}
	}
	for _, m := range deleteRE.FindAllStringSubmatch(code, 8) {
		w.pathEffect(EffectDelete, prog, m[1], false)
	}
	for _, m := range writeRE.FindAllStringSubmatch(code, 8) {
		w.pathEffect(EffectWrite, prog, m[1]+m[2], false)
	}
	if netWordRE.MatchString(code) {
		for _, m := range hostLitRE.FindAllStringSubmatch(code, 8) {
			h := m[1]
			if strings.Contains(h, ".") && !strings.HasSuffix(h, ".py") && !strings.HasSuffix(h, ".js") && !strings.HasSuffix(h, ".sh") &&
				(looksLikeHost(h) || isIPv4(h)) && !isFileLike(h) {
				w.hostEffect(prog, h, "", "tcp", false)
			}
		}
	}
	// The environment read from code is a secret source like env and printenv in the shell.
	if envAllRE.MatchString(code) {
		s.addEffect(Effect{Kind: EffectSecret, Target: "environment", Program: prog, Detail: "env"})
	}
	// A credential variable read by name matters where it is sent: carried in a request (judged
	// by the egress it goes to, as $TOKEN in a curl header is).
	if netWordRE.MatchString(code) || urlInTextRE.MatchString(code) {
		for _, m := range envNameRE.FindAllStringSubmatch(code, 8) {
			if secretVarRE.MatchString("$" + m[1]) {
				s.addEffect(Effect{Kind: EffectSecret, Target: "env:" + m[1], Program: prog, Detail: "request"})
			}
		}
	}
	if obfuscRE.MatchString(code) && evalRE.MatchString(code) {
		s.addUnresolved("code decoded at run time (" + prog + ")")
		s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: "decoded code", Unresolved: true})
	}
}

func isIPv4(h string) bool {
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if !isDigits(p) || len(p) > 3 {
			return false
		}
	}
	return true
}

// isFileLike: a dotted word that names a file or module rather than a host (os.path, index.html).
func isFileLike(h string) bool {
	ext := h[strings.LastIndexByte(h, '.')+1:]
	switch strings.ToLower(ext) {
	case "py", "js", "ts", "sh", "rb", "pl", "php", "html", "htm", "json", "txt", "md", "yaml", "yml", "toml", "csv", "log", "conf",
		"path", "system", "environ", "popen", "call", "run", "connect", "socket", "stdin", "stdout", "stderr", "exe", "dll", "so", "tar", "gz", "zip":
		return true
	}
	return false
}

// execFile records prog running a script file (or prog itself being a file).
func (w *walker) execFile(prog, raw string, dyn bool) int {
	s := w.s
	if raw == "-" {
		return s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: "stdin"})
	}
	if dyn && (strings.HasPrefix(raw, "<(") || strings.HasPrefix(raw, "/dev/fd/")) {
		// The code run is the output of a process substitution: unknown unless the substitution
		// is a program whose output is meant to be run (ssh-agent, direnv; completion scripts).
		e := Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: raw}
		if !codeProducer(raw) {
			e.Unresolved = true
			s.addUnresolved("code from a process substitution (" + prog + " " + raw + ")")
		}
		return s.addEffect(e)
	}
	if dyn && isUnresolvedText(raw) {
		s.addUnresolved("exec " + raw + " (" + prog + ")")
		return s.addEffect(Effect{Kind: EffectExec, Target: raw, Program: prog, Unresolved: true})
	}
	clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
	if !ok {
		return -1
	}
	clean = w.throughLinks(clean)
	w.pathEffect(EffectRead, prog, raw, dyn)
	if inUnresolvedCwd(clean) {
		return s.addEffect(Effect{Kind: EffectExec, Target: clean, Program: prog, Detail: "file", Unresolved: true})
	}
	sens := s.n.sens.classify(clean)
	return s.addEffect(Effect{Kind: EffectExec, Target: clean, Program: prog, Detail: "file", InWorkspace: inDir(clean, s.n.opt.Workspace), Sensitive: sens != ""})
}

// applyRole records the effect of one operand or option value.
func (w *walker) applyRole(prog, role, raw string, dyn bool) {
	switch role {
	case "read", "write", "delete", "list", "move":
		w.pathEffect(role, prog, raw, dyn)
	case "data", "send":
		w.sendFile(prog, role, raw, dyn) // reach.go: the file's content goes to prog's connections
	case "agentkey":
		// ssh-add KEY: the key goes to the local agent, not to the caller; the secret effect says so.
		before := len(w.s.act.Effects)
		w.pathEffect(EffectRead, prog, raw, dyn)
		for i := before; i < len(w.s.act.Effects); i++ {
			if e := &w.s.act.Effects[i]; e.Kind == EffectSecret {
				e.Detail = DetailAgentLoad
			}
		}
	case "code":
		w.codeEffect(prog, raw, dyn)
	case "script":
		if u := strings.ToLower(raw); strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "ftp://") {
			// deno run URL, bun URL: code fetched and run, not a file of that name.
			w.urlEffect(prog, raw, dyn)
			w.s.addUnresolved("code fetched from " + raw + " (" + prog + ")")
			w.s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: "download " + raw, Unresolved: true})
			break
		}
		w.execFile(prog, raw, dyn)
	case "url":
		w.urlEffect(prog, raw, dyn)
	case "host":
		w.hostEffect(prog, raw, "", "", dyn)
	case "pkg":
		w.installEffect(prog, raw, dyn)
	case "pid":
		// Attaching to another process (gdb -p, strace -p, gcore PID) reads its memory: an
		// ssh-agent's keys, a shell's tokens. A secret whatever the process is.
		w.s.addEffect(Effect{Kind: EffectSecret, Target: "process " + raw, Program: prog, Detail: "process_memory"})
	}
}

// isFormName: a form field name (curl --data-urlencode NAME@FILE).
func isFormName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// fixedEffect records a spec's "+kind[:detail]" effect.
func (w *walker) fixedEffect(prog, fx string) {
	kind, detail, _ := strings.Cut(fx, ":")
	e := Effect{Kind: kind, Target: prog, Program: prog, Detail: detail}
	switch kind {
	case EffectConnect:
		e.Target = detail
	case EffectPrivilege:
		e.Target = "root"
	case EffectRead:
		e.Target = "system:" + prog
	case EffectSecret:
		e.Target = prog
	case EffectWrite, EffectDelete, EffectPush, EffectPersistence, EffectInstall:
		e.Target = detail
	}
	if w.s.cwd == unresolvedCwd && (kind == EffectExec || kind == EffectWrite || kind == EffectDelete) {
		// A build, a test run or a clean acts on the working directory, which is unknown.
		e.Unresolved = true
		w.s.addUnresolved(fx + " (" + prog + ", in an unresolved working directory)")
	}
	w.s.addEffect(e)
}

// commandEffects derives the effects of one simple command. It is called once per command the
// walker emits (wrappers' inner commands are emitted, and handled, on their own).
func (w *walker) commandEffects(f frame, c *Command, ws words, pipe bool, idx int, stdin string) {
	s := w.s
	name := c.Name
	if ws.dyn[0] {
		s.addUnresolved("program " + ws.argv[0])
		s.addEffect(Effect{Kind: EffectExec, Target: ws.argv[0], Program: ws.argv[0], Detail: "program", Unresolved: true})
		return
	}
	w.destroyEffects(f, c, ws) // effects_destroy.go: framework database tasks, history, audit
	if strings.Contains(ws.argv[0], "/") {
		clean, _ := resolvePath(ws.argv[0], s.cwd, s.n.opt.Home)
		if !systemBinDirs[path.Dir(clean)] {
			w.secretSources(c, ws.sub(1)) // bin/rails credentials:show: the task words, whatever the path
			w.execFile(clean, ws.argv[0], false)
			return
		}
	}
	w.secretSources(c, ws.sub(1))       // secret_sources.go: with or without a spec
	w.historySecrets(c, ws.sub(1))      // git_history.go: credentials read from a repository's history
	w.reachArgs(c, ws.sub(1))           // reach.go: history dumps read the repository; files CLIs send
	w.packageSources(name, ws.sub(1))   // package_sources.go
	w.serverEffects(name, ws.sub(1))    // servers.go: static file servers
	w.runnerBinds(name, ws.sub(1))      // listen.go: dev servers' bind options
	w.remoteExec(f, name, ws.sub(1))    // remote_exec.go: code run on other machines
	w.routingOverrides(name, ws.sub(1)) // routing.go: --resolve, --connect-to, proxies
	w.socketEffects(name, ws.sub(1))    // servers.go: unix sockets of socket clients

	// effects_env_persist.go: environment stored for later (go env -w, launchctl setenv, setx).
	w.persistentEnv(f, name, ws.sub(1))
	// autorun_edits.go: files that run later edited by commands (npm pkg set, sed -i, gh api).
	w.laterEdits(name, ws.sub(1))
	w.emptyingCommand(f, name, ws.sub(1)) // emptied.go: truncate -s0, cp /dev/null, sed -i d …
	w.downloadDests(name, ws.sub(1))      // later_downloads.go: curl -O, wget -P, aria2c -d, gh release download
	w.goModEdits(name, ws.sub(1))         // lookalike_go.go: go mod edit -require/-replace
	w.orchestratorImages(name, ws.sub(1)) // image_refs.go: kubectl run --image, docker service create, helm --set image
	w.opsEffects(c, name, ws.sub(1))      // ops_effects.go: forged timestamps
	sp := s.n.opt.Commands.lookup(name)
	if sp == nil {
		if name != "" && !shellBuiltinNoop[name] && !w.funcs[name] {
			s.addUnknown(name)
			w.unknownLauncher(f, name, ws.sub(1), pipe, idx, stdin) // spec_effects.go
			w.unknownOperands(f, name, ws.sub(1), stdin)            // unknown_operands.go: hosts, statements, credential files, code
		}
		return
	}
	args := ws.sub(1)
	pa := parseArgs(sp, name, args)
	if pa.subName != "" {
		s.addUnknown(pa.subName)
	}
	if host := w.localEmulator(name, args, s.fx().curEnv); host != "" { // local_emulators.go
		defer w.markLocalEmulator(len(s.act.Effects), host)
	}
	if loopbackScan(pa, name, args) { // loopback_scans.go
		defer w.markLoopbackScan(len(s.act.Effects))
	}
	prevReach := w.reach
	w.reach = reaching(pa) // reach.go: a recursive reader reads what lies under its directories
	defer func() { w.reach = prevReach }()
	inspect := inspectOnly(pa, name)             // metadata_only.go: ssh-keygen -l -f KEY reads KEY
	unlock := w.credentialUnlock(pa, name, args) // credential_options.go
	defer w.markUnlocked(len(s.act.Effects), name, unlock)
	if publicInspect[name] {
		if s.inspected == nil {
			s.inspected = map[string]bool{}
		}
		prev, seen := s.inspected[name]
		s.inspected[name] = inspect && !unlock && (!seen || prev) // every run of the program inspects
	}
	for _, v := range pa.vals {
		role := v.role
		if inspect && role == "write" {
			role = "read"
		}
		w.applyRole(name, role, v.val, v.dyn)
	}
	n := len(pa.operands)
	for k, i := range pa.operands {
		role := pa.roleAt(k, n)
		if pa.tags["inplace"] && role == "read" {
			role = "write"
		}
		if pa.spec.handler == "" || !handlerOwnsOperands[pa.spec.handler] {
			w.applyRole(name, role, args.argv[i], args.dyn[i])
		}
		if strings.TrimSuffix(role, "*") == "_" && !args.dyn[i] {
			w.undeclaredOperand(name, args.argv[i]) // unknown_operands.go: an undeclared operand naming a credential file
		}
	}
	dry := pa.tags["dryrun"] && dryRun(args.argv)
	for _, fx := range pa.spec.fx {
		if dry && (strings.HasPrefix(fx, EffectWrite) || strings.HasPrefix(fx, EffectDelete)) {
			continue // --dry-run=client|server: the change is computed, not made
		}
		w.fixedEffect(name, fx)
	}
	w.specEffects(f, pa, name, args, pipe, idx, stdin) // spec_effects.go: code-carrying roles, %verbs
	w.nameLists(f, pa, name, pipe, idx, stdin)         // name_lists.go: names read from a list or standard input
	w.xferCommands(f, pa, name, stdin)                 // xfer_commands.go: sftp -b, lftp -c, smbclient -c
	w.undeclaredStatements(pa.spec, name, args)        // unknown_operands.go: a statement and where it runs
	w.handle(f, pa, name, args, pipe, idx, stdin)
	// Operands fed from standard input (xargs, parallel without :::) are unknown, unless the
	// previous pipeline stage lists a known tree (find . | xargs grep): then they lie under it.
	if f.via == "xargs" || f.via == "parallel" {
		for _, r := range pa.spec.operands {
			r = strings.TrimSuffix(r, "*")
			switch r {
			case "read", "write", "delete", "move", "list":
				if r == "read" {
					s.findSecretReads(name, s.fx().pipeGlobs) // find_secrets.go
				}
				if roots := s.fx().pipeRoots; len(roots) > 0 {
					// Every file listed under the roots, unless name tests chose them (reach.go).
					w.reach = w.reach || len(s.fx().pipeGlobs) == 0
					// find ROOT -name X | xargs rm: the operands are the files find printed, under
					// the root, not the root itself (pipeFiltered: it had a test).
					prevFiltered := w.filteredDelete
					w.filteredDelete = w.filteredDelete || s.fx().pipeFiltered
					defer func() { w.filteredDelete = prevFiltered }()
					for _, root := range roots {
						w.pathEffect(r, name, root, false)
					}
					break
				}
				fallthrough
			case "url", "host", "script", "pkg":
				s.addUnresolved(r + " operands from standard input (" + f.via + " " + name + ")")
				k := r
				if k == "move" {
					k = EffectDelete
				} else if k == "list" {
					k = EffectRead
				} else if k == "url" || k == "host" {
					k = EffectConnect
				} else if k == "script" {
					k = EffectExec
				} else if k == "pkg" {
					k = EffectInstall
				}
				s.addEffect(Effect{Kind: k, Target: "(" + f.via + " input)", Program: name, Unresolved: true})
			default:
				continue
			}
			break
		}
	}
	w.reach = prevReach
	// A spec "cmd" operand: the rest of argv is a command the program runs (uv run, bundle exec).
	if pa.rest >= 0 && !followed(name) {
		child := frame{depth: f.depth + 1, via: pa.name, sudo: f.sudo}
		if child.depth > s.n.opt.MaxDepth {
			s.act.Truncated = true
			return
		}
		rest := args.sub(pa.rest)
		start := len(s.act.Effects)
		w.emit(child, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
		w.tracedCapture(pa, name, rest, start) // launchers.go: a tracer captures what its command handles
		return
	}
	w.dashDashCommand(f, pa, name, args, pipe, idx, stdin) // launchers.go: "PROG … -- CMD …"
}

// dryRun: the arguments ask for a dry run (--dry-run, --dry-run=client|server|true); "none" and
// "false" make the change.
func dryRun(args []string) bool {
	dry := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--dry-run" {
			dry = true
		} else if v, ok := strings.CutPrefix(a, "--dry-run="); ok {
			dry = v == "client" || v == "server" || v == "true"
		}
	}
	return dry
}

// shellBuiltinNoop are builtins with no effect and no spec line (their names cannot be spec
// names).
var shellBuiltinNoop = set(":", "{", "}", "!")

// handlerOwnsOperands: handlers that read every operand themselves.
var handlerOwnsOperands = set("tar", "remotecopy", "grep", "sed", "awk", "ln", "find", "nc", "interp", "shell", "install",
	"gitpush", "gitclone", "gitconfig", "gitremote", "container", "containerexec", "kubeexec", "ssh", "fmt", "7z", "unzip",
	"compress", "httpie", "dig", "chmod", "npx", "cargoinstall", "gorun", "uvrun", "dockercp", "dev", "setcap", "pip", "hyperfine", "adb", "ztcp",
	"npmconfig")

// followed: commands whose inner command follow() walks already.
func followed(name string) bool {
	_, wr := wrappers[name]
	return wr || shells[name] || name == "eval" || name == "su" || name == "runuser" || name == "find" || name == "busybox" || name == "watch" || name == "env" || name == "script"
}

// operandVals returns the operand words of pa.
func (pa *parsedArgs) words(args words) words {
	out := words{}
	for _, i := range pa.operands {
		out.argv = append(out.argv, args.argv[i])
		out.dyn = append(out.dyn, args.dyn[i])
	}
	return out
}

func (pa *parsedArgs) val(opts ...string) (string, bool, bool) {
	for _, v := range pa.vals {
		for _, o := range opts {
			if v.opt == o {
				return v.val, v.dyn, true
			}
		}
	}
	return "", false, false
}

// handle runs a spec's Go handler: semantics the table cannot say.
func (w *walker) handle(f frame, pa parsedArgs, name string, args words, pipe bool, idx int, stdin string) {
	s := w.s
	ops := pa.words(args)
	if name == "git" {
		for _, v := range pa.vals {
			if v.opt == "-c" || v.opt == "--config" {
				key, val, _ := strings.Cut(v.val, "=")
				if gitCommandKeys.MatchString(strings.ToLower(key)) {
					continue // a command for this call only: walked (spec_effects.go), not planted
				}
				if !w.gitConfigTable(f, name, key, val, "command") { // gitconfig_keys.go
					w.gitConfig(name, key, val, "command")
				}
			}
		}
		// An upstream set now is where a later push naming no remote goes.
		if pa.name == "git branch" {
			if v, _, ok := pa.val("-u", "--set-upstream-to"); ok {
				w.git().pushDefault, _, _ = strings.Cut(v, "/")
			}
		}
		if (pa.name == "git branch" || pa.name == "git checkout" || pa.name == "git switch") && pa.has("-t", "--track") {
			for _, i := range pa.operands {
				if r, _, ok := strings.Cut(args.argv[i], "/"); ok && r != "" && !args.dyn[i] {
					w.git().pushDefault = r // the new branch tracks R/B: a bare push goes to R
					break
				}
			}
		}
	}
	if w.forge(pa, name, args, ops) { // effects_forge.go, effects_upload.go
		return
	}
	switch pa.spec.handler {
	case "":
		return
	case "env":
		rest := skipOptions(args, wrappers["env"].valueOpts, 0)
		for len(rest.argv) > 0 && strings.Contains(rest.argv[0], "=") && !strings.HasPrefix(rest.argv[0], "=") {
			rest = rest.sub(1)
		}
		hasS := false
		for _, a := range args.argv {
			if a == "-S" || strings.HasPrefix(a, "--split-string") || (strings.HasPrefix(a, "-S") && len(a) > 2) {
				hasS = true
			}
		}
		if len(rest.argv) == 0 && !hasS {
			s.addEffect(Effect{Kind: EffectSecret, Target: "env", Program: name, Detail: "env"})
		}
	case "db":
		w.db(pa, name, args, stdin)
	case "printenv":
		// printenv alone prints every variable (secrets among them); printenv NAME… prints those:
		// a secret source only when a name says it holds a credential or is not known.
		if len(ops.argv) == 0 {
			s.addEffect(Effect{Kind: EffectSecret, Target: name, Program: name, Detail: "env"})
		}
		for k, a := range ops.argv {
			if ops.dyn[k] || !isName(a) || secretVarRE.MatchString("$"+a) {
				s.addEffect(Effect{Kind: EffectSecret, Target: "env:" + a, Program: name, Detail: "env"})
			}
		}
	case "set":
		if len(args.argv) == 0 {
			s.addEffect(Effect{Kind: EffectSecret, Target: "set", Program: name, Detail: "env"})
		}
	case "declare":
		if len(args.argv) == 0 || (len(args.argv) == 1 && (args.argv[0] == "-p" || args.argv[0] == "-x" || args.argv[0] == "-px")) {
			s.addEffect(Effect{Kind: EffectSecret, Target: name, Program: name, Detail: "env"})
		}
	case "shell":
		script, hasC, file := shellScript(args.argv)
		switch {
		case hasC:
			w.codeEffect(name, script, false)
		case file != "":
			i := indexOf(args.argv, file)
			w.execFile(name, file, i >= 0 && args.dyn[i])
		default:
			d := "stdin"
			if stdin != "" {
				d = stdin
			}
			w.stdinExec(name, d, pipe && idx > 0 && stdin == "" && !w.literalStdin(f, idx))
		}
	case "interp":
		w.interp(f, pa, name, args, pipe, idx, stdin)
	case "grep", "sed", "awk":
		start := 1
		if _, _, ok := pa.val("-e", "--regexp", "-f", "--file", "--expression"); ok {
			start = 0
		}
		if name == "awk" || name == "gawk" || name == "mawk" || name == "nawk" {
			if _, _, ok := pa.val("-f", "--file"); !ok && len(ops.argv) > 0 {
				prog := ops.argv[0]
				if strings.Contains(prog, "system(") || strings.Contains(prog, "| getline") || strings.Contains(prog, "|getline") || strings.Contains(prog, "print |") ||
					strings.Contains(prog, "printf |") || strings.Contains(prog, "|&") || strings.Contains(prog, "/inet/") {
					w.codeEffect(name, prog, ops.dyn[0])
				}
			}
		}
		if name == "sed" || name == "gsed" {
			if len(ops.argv) > 0 && start == 1 && sedRunsCode(ops.argv[0]) {
				w.codeEffect(name, ops.argv[0], ops.dyn[0])
			}
		}
		role := EffectRead
		if pa.tags["inplace"] {
			role = EffectWrite
		}
		files := 0
		for k := start; k < len(ops.argv); k++ {
			w.pathEffect(role, name, ops.argv[k], ops.dyn[k])
			files++
		}
		if pat, _, ok := pa.val("-e", "--regexp", "--expression"); ok {
			w.configSecretGrep(name, pat, ops.argv) // config_grep.go: credential keys picked out of configuration
		} else if start == 1 && len(ops.argv) > 1 && !ops.dyn[0] {
			w.configSecretGrep(name, ops.argv[0], ops.argv[1:])
		}
		if files == 0 && (name == "rg" || name == "ag" || name == "ack" || pa.has("-r", "-R", "--recursive", "--dereference-recursive")) && !pipe {
			w.pathEffect(EffectRead, name, ".", false)
		}
	case "ln":
		sym := pa.has("-s", "--symbolic")
		var tgts []string
		link := ""
		if dir, _, ok := pa.val("-t", "--target-directory"); ok {
			tgts = ops.argv
			link = dir
		} else if len(ops.argv) == 1 {
			tgts = ops.argv
			link = "."
		} else if len(ops.argv) > 1 {
			tgts, link = ops.argv[:len(ops.argv)-1], ops.argv[len(ops.argv)-1]
		}
		for _, t := range tgts {
			l := link
			if len(tgts) > 1 || link == "." {
				l = path.Join(link, path.Base(t))
			}
			lc, ok := resolvePath(l, s.cwd, s.n.opt.Home)
			if !ok {
				continue
			}
			base := s.cwd
			if sym {
				base = path.Dir(lc)
			}
			tc, ok := resolvePath(t, base, s.n.opt.Home)
			if !ok {
				continue
			}
			kind := "symlink"
			if !sym {
				kind = "hardlink"
			}
			if !isUnresolvedText(t) && len(s.fx().links) < maxTrackedVars {
				if s.fx().links == nil {
					s.fx().links = map[string]string{}
				}
				s.fx().links[lc] = tc
			}
			sens := s.n.sens.classify(tc)
			s.addEffect(Effect{Kind: EffectWrite, Target: lc, Program: name, Detail: kind + " " + tc, InWorkspace: inDir(lc, s.n.opt.Workspace) && inDir(tc, s.n.opt.Workspace),
				Sensitive: sens != "" || s.n.sens.classify(lc) != "", Unresolved: isUnresolvedText(t)})
			w.derived(EffectWrite, name, lc, s.n.sens.classify(lc), false, false)
		}
	case "chmod":
		if len(ops.argv) == 0 {
			return
		}
		mode := ops.argv[0]
		setuid := strings.ContainsAny(mode, "s") && (strings.Contains(mode, "+") || strings.Contains(mode, "="))
		if len(mode) == 4 && mode[0] >= '2' && mode[0] <= '7' && mode[0] != '1' && isDigits(mode) {
			setuid = true
		}
		restrict := !ops.dyn[0] && restrictingMode(mode)
		for k := 1; k < len(ops.argv); k++ {
			// A mode that only takes access away from group and others (600, 700, go-rwx) grants
			// nothing and changes no content: no effect on a literal path.
			if restrict && !isUnresolvedText(ops.argv[k]) {
				continue
			}
			w.pathEffect(EffectWrite, name, ops.argv[k], ops.dyn[k])
			if setuid {
				if c, ok := resolvePath(ops.argv[k], s.cwd, s.n.opt.Home); ok {
					s.addEffect(Effect{Kind: EffectPrivilege, Target: c, Program: name, Detail: "setuid"})
				}
			}
		}
	case "unshare":
		// A user namespace (-U, -r) maps the caller to root inside it only: no privilege on the
		// host. Any other namespace needs real privilege.
		if !pa.tags["userns"] || f.sudo {
			s.addEffect(Effect{Kind: EffectPrivilege, Target: "root", Program: name, Detail: "unshare"})
		}
	case "setcap":
		for k := 1; k < len(ops.argv); k++ {
			w.pathEffect(EffectWrite, name, ops.argv[k], ops.dyn[k])
			s.addEffect(Effect{Kind: EffectPrivilege, Target: ops.argv[k], Program: name, Detail: "capabilities " + ops.argv[0]})
		}
	case "dd":
		for i, a := range args.argv {
			switch {
			case strings.HasPrefix(a, "if="):
				w.pathEffect(EffectRead, name, a[3:], args.dyn[i])
			case strings.HasPrefix(a, "of="):
				w.pathEffect(EffectWrite, name, a[3:], args.dyn[i])
			}
		}
	case "dev":
		for k, a := range ops.argv {
			w.pathEffect(EffectWrite, name, a, ops.dyn[k])
		}
	case "find":
		// find -delete with a test (-name, -type …) removes what matches under its roots, not the
		// roots themselves: a root that is the workspace stays "in the workspace".
		if pa.tags["delete"] && findFilters(args.argv) {
			w.filteredDelete = true
			defer func() { w.filteredDelete = false }()
		}
		for k, r := range args.argv {
			if strings.HasPrefix(r, "-") || r == "(" || r == "!" {
				if k == 0 {
					w.pathEffect(EffectRead, name, ".", false)
					if pa.tags["delete"] {
						w.pathEffect(EffectDelete, name, ".", false)
					}
				}
				break
			}
			w.pathEffect(EffectRead, name, r, args.dyn[k])
			if pa.tags["delete"] {
				w.pathEffect(EffectDelete, name, r, args.dyn[k])
			}
		}
		if len(args.argv) == 0 {
			w.pathEffect(EffectRead, name, ".", false)
		}
	case "tar":
		w.tar(pa, name, args)
	case "zip":
	case "unzip":
		if len(ops.argv) > 0 {
			w.pathEffect(EffectRead, name, ops.argv[0], ops.dyn[0])
		}
		dir, d, ok := pa.val("-d")
		if !ok {
			dir = "."
		}
		if !pa.has("-l", "-t", "-p", "-v", "-Z") {
			w.pathEffect(EffectWrite, name, dir, d)
		}
	case "7z":
		if len(ops.argv) < 2 {
			return
		}
		switch ops.argv[0] {
		case "a", "u":
			w.pathEffect(EffectWrite, name, ops.argv[1], ops.dyn[1])
			for k := 2; k < len(ops.argv); k++ {
				w.pathEffect(EffectRead, name, ops.argv[k], ops.dyn[k])
			}
		case "x", "e":
			w.pathEffect(EffectRead, name, ops.argv[1], ops.dyn[1])
			dir, d, ok := pa.val("-o")
			if !ok {
				dir = "."
			}
			w.pathEffect(EffectWrite, name, dir, d)
		default:
			w.pathEffect(EffectRead, name, ops.argv[1], ops.dyn[1])
		}
	case "compress":
		for k, a := range ops.argv {
			w.pathEffect(EffectRead, name, a, ops.dyn[k])
			if !pa.tags["stdout"] {
				w.pathEffect(EffectWrite, name, a, ops.dyn[k])
			}
		}
	case "curl", "wget":
	case "httpie":
		urlDone := false
		for k, a := range ops.argv {
			if !urlDone && (strings.Contains(a, "://") || looksLikeHost(a) || strings.HasPrefix(a, ":")) {
				if strings.HasPrefix(a, ":") {
					a = "localhost" + a
				}
				w.urlEffect(name, a, ops.dyn[k])
				urlDone = true
				continue
			}
			if i := strings.Index(a, "@"); i > 0 && (a[i-1] == '=' || strings.HasSuffix(a[:i], ":=")) {
				w.sendFile(name, "send", a[i+1:], ops.dyn[k]) // reach.go: the request carries it
			}
		}
	case "nc":
		if pa.tags["listen"] {
			port, _, ok := pa.val("-p", "--source-port")
			if !ok && len(ops.argv) > 0 {
				port = ops.argv[len(ops.argv)-1]
			}
			pn, _ := strconv.Atoi(port)
			s.addEffect(Effect{Kind: EffectListen, Target: port, Program: name, Port: pn})
			return
		}
		if len(ops.argv) >= 1 {
			port := ""
			if len(ops.argv) >= 2 {
				port = ops.argv[1]
			}
			w.hostEffect(name, ops.argv[0], port, "tcp", ops.dyn[0])
		}
	case "socat":
		w.socat(name, args)
	case "openssl":
		for i := 0; i+1 < len(args.argv); i++ {
			switch args.argv[i] {
			case "-connect":
				w.hostEffect(name, args.argv[i+1], "", "tls", args.dyn[i+1])
			case "-in":
				w.pathEffect(EffectRead, name, args.argv[i+1], args.dyn[i+1])
			case "-out", "-keyout":
				w.pathEffect(EffectWrite, name, args.argv[i+1], args.dyn[i+1])
			}
		}
		if len(args.argv) > 0 && args.argv[0] == "s_server" {
			s.addEffect(Effect{Kind: EffectListen, Target: "", Program: name})
		}
	case "dig":
		for k, a := range ops.argv {
			if strings.HasPrefix(a, "@") {
				w.hostEffect(name, a[1:], "53", "dns", ops.dyn[k])
			} else if strings.Contains(a, ".") || isUnresolvedText(a) {
				w.hostEffect(name, a, "53", "dns", ops.dyn[k])
			}
		}
	case "ssh":
		w.ssh(f, pa, name, args, pipe, idx)
	case "remotecopy":
		w.remoteCopy(pa, name, ops)
	case "gitpush":
		remote := ""
		var refs []string
		if len(ops.argv) > 0 {
			remote = ops.argv[0]
			refs = ops.argv[1:]
		}
		if r, _, ok := pa.val("--repo"); ok {
			remote = r
		}
		var details []string
		force := pa.tags["force"]
		del := pa.tags["delete"]
		for _, r := range refs {
			if strings.HasPrefix(r, "+") {
				force = true
			}
			if strings.HasPrefix(r, ":") {
				del = true
			}
		}
		tagDetail := tagRewrite(refs, force, del)                                              // push_tags.go
		if own := ownBranchRewrite(pa, args, refs, force, del); own != "" && tagDetail == "" { // push_own_branch.go
			details = append(details, own)
			force, del = false, false
		}
		if force {
			details = append(details, "force")
		}
		if del {
			details = append(details, "delete")
		}
		if tagDetail != "" {
			details = append(details, tagDetail)
		}
		if pa.has("--mirror") {
			details = append(details, "mirror")
		}
		if remote == "" {
			remote = "(upstream)"
		}
		unres := len(ops.dyn) > 0 && ops.dyn[0] && isUnresolvedText(remote)
		// Where the remote points after what earlier commands of the call changed.
		target, via, stateUnres := w.gitPushTarget(remote)
		if via != "" {
			details = append(details, "remote="+via)
		}
		if stateUnres {
			unres = true
		}
		if !strings.Contains(target, "://") && !strings.Contains(target, "@") {
			// A remote by name is the repository's own only in the workspace's repository.
			if dir, known := w.gitRepoDir(pa); !known || !inDir(dir, s.n.opt.Workspace) {
				target += " (repository " + dir + ")"
				if !known {
					unres = true
				}
			}
		}
		if unres {
			s.addUnresolved("push " + target + " (git)")
		}
		if remote != "(upstream)" && (pa.has("-u") || pa.has("--set-upstream")) {
			w.git().pushDefault = remote
		}
		s.addEffect(Effect{Kind: EffectPush, Target: target, Program: "git", Detail: strings.Join(details, ","), Unresolved: unres})
		w.gitRemote(target, unres || len(ops.dyn) > 0 && ops.dyn[0])
	case "gitremoteadd":
		w.gitRemoteCmd(args.sub(pa.base))
	case "gitremote":
		if len(ops.argv) > 0 {
			w.gitRemote(ops.argv[0], ops.dyn[0])
		}
	case "gitclone":
		if len(ops.argv) == 0 {
			return
		}
		w.gitRemote(ops.argv[0], ops.dyn[0])
		dest := ""
		if len(ops.argv) > 1 {
			dest = ops.argv[1]
		} else {
			dest = strings.TrimSuffix(path.Base(strings.TrimRight(ops.argv[0], "/")), ".git")
		}
		w.pathEffect(EffectWrite, "git", dest, len(ops.dyn) > 1 && ops.dyn[1])
	case "gitconfig":
		if k, ok := gitConfigSecretQuery(pa, ops); ok { // config_queries.go
			s.addEffect(Effect{Kind: EffectSecret, Target: "git config " + k, Program: "git", Detail: "config_key"})
		}
		if len(ops.argv) >= 3 && (ops.argv[0] == "set" || ops.argv[0] == "--add") {
			ops = ops.sub(1) // git config set KEY VALUE (git 2.46)
		}
		if len(ops.argv) >= 2 && !pa.has("--get", "--get-all", "--get-regexp", "-l", "--list", "--unset", "--unset-all") {
			scope := "local"
			if pa.has("--global") {
				scope = "global"
			} else if pa.has("--system") {
				scope = "system"
			}
			if !w.gitConfigTable(f, "git", ops.argv[0], ops.argv[1], scope) { // gitconfig_keys.go
				w.gitConfig("git", ops.argv[0], ops.argv[1], scope)
			}
		}
	case "gitclean":
		w.gitClean(pa, ops) // ordinary.go
	case "gitlist":
		w.gitList(pa, ops) // ordinary.go
	case "gitrebase":
		if v, d, ok := pa.val("-x", "--exec"); ok {
			w.codeEffect("git", v, d)
		}
	case "gitsubmodule":
		for k, a := range ops.argv {
			if strings.Contains(a, "://") || strings.HasPrefix(a, "git@") {
				w.gitRemote(a, ops.dyn[k])
			}
		}
	case "ghauth":
		if len(ops.argv) > 0 && (ops.argv[0] == "token" || (ops.argv[0] == "status" && pa.has("-t", "--show-token"))) {
			s.addEffect(Effect{Kind: EffectSecret, Target: "gh auth " + ops.argv[0], Program: "gh", Detail: "token"})
		}
	case "pip":
		// Only the sub-commands install.
	case "install":
		n := 0
		for k, a := range ops.argv {
			w.installEffect(name, a, ops.dyn[k])
			n++
		}
		for _, v := range pa.vals {
			if v.role == "pkg" {
				n++
			}
			if v.role == "read" && (v.opt == "-r" || v.opt == "--requirement") {
				n++
				w.installManifest(name, v.val)
			}
		}
		if n == 0 {
			w.installManifest(name, ".")
		}
	case "cargoinstall":
		if v, d, ok := pa.val("--git"); ok {
			s.addEffect(Effect{Kind: EffectInstall, Target: v, Program: "cargo", Detail: SourceVCS, Unresolved: d && isUnresolvedText(v)})
			w.urlEffect("cargo", v, d)
			return
		}
		if v, _, ok := pa.val("--path"); ok {
			s.addEffect(Effect{Kind: EffectInstall, Target: v, Program: "cargo", Detail: SourcePath})
			return
		}
		for k, a := range ops.argv {
			w.installEffect("cargo", a, ops.dyn[k])
		}
	case "npx":
		if v, dyn, ok := pa.val("-c", "--call"); ok {
			w.shellValue(f, name, name+" --call", v, dyn) // npm exec -c 'CMD': a shell command line
		}
		if len(ops.argv) == 0 {
			return
		}
		pkg := ops.argv[0]
		if v, _, ok := pa.val("-p", "--package", "--from", "--spec", "--with"); ok {
			w.installEffect(name, v, false)
		}
		if _, isPath := map[bool]bool{true: true}[strings.HasPrefix(pkg, ".") || strings.HasPrefix(pkg, "/")]; !isPath {
			w.installEffect(name, pkg, ops.dyn[0])
		}
		s.addEffect(Effect{Kind: EffectExec, Target: pkg, Program: name, Detail: "package"})
		// npx -- sh -c '…', npm exec -- python3 x.py: a shell, an interpreter or a system tool
		// (no npm package of that name is what runs) is run as itself, judged as that command.
		if !ops.dyn[0] && (shells[pkg] || npxSystemPrograms[pkg]) {
			w.subTool(f, name, ops, pipe, idx, stdin)
		}
	case "gorun":
		if w.compiledStdin("go", ops, stdin) { // unknown_operands.go: go run - <<< CODE
			return
		}
		for k, a := range ops.argv {
			if strings.Contains(a, "@") || (strings.Contains(a, ".") && strings.Contains(a, "/") && !strings.HasPrefix(a, ".")) {
				w.installEffect("go", a, ops.dyn[k])
				s.addEffect(Effect{Kind: EffectExec, Target: a, Program: "go", Detail: "package"})
				return
			}
		}
		s.addEffect(Effect{Kind: EffectExec, Target: "go", Program: "go", Detail: "build"})
	case "uvrun":
		if v, _, ok := pa.val("--with"); ok {
			w.installEffect("uv", v, false)
		}
		if len(ops.argv) > 0 {
			a := ops.argv[0]
			if strings.HasSuffix(a, ".py") {
				w.execFile("python", a, ops.dyn[0])
				return
			}
			child := frame{depth: f.depth + 1, via: "uv run", sudo: f.sudo}
			if child.depth <= s.n.opt.MaxDepth {
				w.emit(child, ops, strings.Join(ops.argv, " "), nil, nil, pipe, idx, false, stdin)
			}
		}
	case "spark":
		w.sparkMaster(pa, name) // local_targets.go
	case "container":
		w.container(f, pa, name, args.sub(pa.base), pipe, idx)
	case "containerexec", "kubeexec":
		w.containerExec(f, pa, name, args.sub(pa.base), pipe, idx)
	case "kuberun":
		if pa.has("--privileged") {
			s.addEffect(Effect{Kind: EffectEscape, Target: "pod", Program: "kubectl", Detail: "privileged"})
		}
		if v, _, ok := pa.val("--overrides"); ok {
			for _, k := range []string{"hostPID", "hostNetwork", "hostIPC", "privileged", "hostPath"} {
				if strings.Contains(v, k) {
					s.addEffect(Effect{Kind: EffectEscape, Target: "pod", Program: "kubectl", Detail: k})
				}
			}
		}
	case "kubeget":
		for _, a := range ops.argv {
			if (a == "secret" || a == "secrets" || strings.HasPrefix(a, "secret/") || strings.HasPrefix(a, "secrets/")) && kubeOutputShowsData(pa, args.argv) { // ordinary.go
				s.addEffect(Effect{Kind: EffectSecret, Target: "kubernetes secrets", Program: "kubectl", Detail: "cluster_secret"})
			}
		}
	case "kubeconfig":
		if len(ops.argv) > 0 && ops.argv[0] == "view" && pa.has("--raw", "--flatten") {
			s.addEffect(Effect{Kind: EffectSecret, Target: "kubeconfig", Program: "kubectl", Detail: "kube_config"})
		}
	case "dockercp":
		if len(ops.argv) == 2 {
			src, dst := ops.argv[0], ops.argv[1]
			if !isContainerPath(src) {
				w.pathEffect(EffectRead, name, src, ops.dyn[0])
			}
			if !isContainerPath(dst) {
				w.pathEffect(EffectWrite, name, dst, ops.dyn[1])
			}
		}
	case "compose":
		w.composeVolumes(name, args.argv)          // ordinary.go
		w.composeCommand(f, name, args, pipe, idx) // launchers.go
		for _, a := range ops.argv {
			if a == "up" || a == "run" || a == "start" || a == "create" {
				s.addEffect(Effect{Kind: EffectExec, Target: "docker compose", Program: name, Detail: "compose " + a})
				break
			}
		}
	case "crontab":
		switch {
		case pa.has("-l"):
			s.addEffect(Effect{Kind: EffectRead, Target: "crontab", Program: name, Detail: "cron"})
		case pa.has("-r"):
			s.addEffect(Effect{Kind: EffectDelete, Target: "crontab", Program: name, Detail: "cron"})
		default:
			s.addEffect(Effect{Kind: EffectPersistence, Target: "crontab", Program: name, Detail: "cron"})
			for k, a := range ops.argv {
				w.pathEffect(EffectRead, name, a, ops.dyn[k])
			}
		}
	case "systemctl", "loginctl":
		for k, a := range ops.argv {
			switch a {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue":
				// The host's power state (systemctl and loginctl verbs, like poweroff/reboot themselves).
				s.addEffect(Effect{Kind: EffectPrivilege, Target: "root", Program: name, Detail: "power"})
			case "enable-linger":
				s.addEffect(Effect{Kind: EffectPersistence, Target: strings.Join(ops.argv[k+1:], " "), Program: name, Detail: "service_unit"})
			case "enable", "link", "edit", "preset", "preset-all", "reenable", "set-property", "add-wants", "add-requires", "revert", "mask", "unmask", "set-default":
				t := strings.Join(ops.argv[k+1:], " ")
				s.addEffect(Effect{Kind: EffectPersistence, Target: t, Program: name, Detail: "service_unit"})
			case "start", "restart", "stop", "reload", "kill", "try-restart", "reload-or-restart", "isolate", "daemon-reload", "disable":
				t := strings.Join(ops.argv[k+1:], " ")
				s.addEffect(Effect{Kind: EffectPrivilege, Target: t, Program: name, Detail: "service " + a})
			default:
				continue
			}
			break
		}
	case "launchctl":
		for _, a := range ops.argv {
			if a == "load" || a == "bootstrap" || a == "enable" || a == "submit" {
				s.addEffect(Effect{Kind: EffectPersistence, Target: strings.Join(ops.argv, " "), Program: name, Detail: "launchd"})
				break
			}
		}
	case "eval":
		joined := strings.Join(args.argv, " ")
		dyn := false
		for _, d := range args.dyn {
			dyn = dyn || d
		}
		if dyn && isUnresolvedText(joined) {
			if p := substProgram(joined); evalSafe[p] {
				s.addEffect(Effect{Kind: EffectExec, Target: "eval", Program: name, Detail: "environment setup: " + p})
				return
			}
			s.addUnresolved("code " + joined + " (eval)")
			s.addEffect(Effect{Kind: EffectExec, Target: "eval", Program: name, Detail: joined, Unresolved: true})
		}
	case "command":
		// command -v NAME only looks NAME up; otherwise follow() walks the command.
	case "parallel", "watch", "busybox":
		// follow() walks their commands.
	case "fmt":
		write := pa.has("--fix", "--write", "-w", "-i", "--in-place")
		start := 0
		if len(ops.argv) > 0 && (ops.argv[0] == "format" || ops.argv[0] == "check" || ops.argv[0] == "lint") {
			if ops.argv[0] == "format" {
				write = true
			}
			start = 1
		}
		role := EffectRead
		if write {
			role = EffectWrite
		}
		for k := start; k < len(ops.argv); k++ {
			w.pathEffect(role, name, ops.argv[k], ops.dyn[k])
		}
	case "terraform":
		for _, a := range ops.argv {
			switch a {
			case "apply", "import":
				s.addEffect(Effect{Kind: EffectWrite, Target: "cloud", Program: name, Detail: "terraform " + a})
			case "destroy":
				s.addEffect(Effect{Kind: EffectDelete, Target: "cloud", Program: name, Detail: "terraform destroy"})
			case "init":
				s.addEffect(Effect{Kind: EffectInstall, Target: "providers", Program: name, Detail: SourceRegistry})
			default:
				continue
			}
			break
		}
	case "precommit":
		if len(ops.argv) > 0 && ops.argv[0] == "install" {
			s.addEffect(Effect{Kind: EffectPersistence, Target: ".git/hooks", Program: name, Detail: "git_hooks", InWorkspace: true})
		} else {
			if len(ops.argv) > 1 && ops.argv[0] == "try-repo" {
				// pre-commit try-repo REPO: the hooks of REPO are fetched and run.
				w.installEffect(name, ops.argv[1], ops.dyn[1])
			}
			s.addEffect(Effect{Kind: EffectExec, Target: name, Program: name, Detail: "build"})
		}
	case "dpkg":
		if v, d, ok := pa.val("-i", "--install"); ok {
			w.installEffect(name, v, d)
			s.addEffect(Effect{Kind: EffectPrivilege, Target: "root", Program: name, Detail: "package_manager"})
		}
	case "rpm", "pacman":
		for _, a := range args.argv {
			if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "-U") || strings.HasPrefix(a, "-S") || a == "--install" {
				for k, o := range ops.argv {
					w.installEffect(name, o, ops.dyn[k])
				}
				s.addEffect(Effect{Kind: EffectPrivilege, Target: "root", Program: name, Detail: "package_manager"})
				break
			}
		}
	case "aws":
		w.cloud(name, ops, [][]string{{"configure", "get"}, {"configure", "export-credentials"}, {"sts", "get-session-token"},
			{"sts", "assume-role"}, {"secretsmanager", "get-secret-value"}, {"ssm", "get-parameter"}, {"ssm", "get-parameters"},
			{"ecr", "get-login-password"}, {"iam", "create-access-key"}, {"codeartifact", "get-authorization-token"}})
	case "gcloud":
		w.cloud(name, ops, [][]string{{"auth", "print-access-token"}, {"auth", "print-identity-token"}, {"secrets", "versions", "access"},
			{"auth", "application-default", "print-access-token"}, {"iam", "service-accounts", "keys", "create"}})
	case "gsutil":
		w.cloud(name, ops, nil)
	case "az":
		w.cloud(name, ops, [][]string{{"account", "get-access-token"}, {"keyvault", "secret", "show"}, {"keyvault", "secret", "download"}, {"ad", "sp", "create-for-rbac"}})
	case "vault", "op", "pass", "gpg", "security", "secrettool":
		w.secretStore(pa, name, ops)
	case "hyperfine":
		// Each operand is a shell command line it benchmarks.
		for k, a := range ops.argv {
			if !ops.dyn[k] {
				w.script(a, f.depth+1, "hyperfine", f.sudo)
			}
		}
	case "adb":
		if len(ops.argv) == 0 {
			return
		}
		s.addEffect(Effect{Kind: EffectConnect, Target: "android device", Program: name, Detail: "adb"})
		switch ops.argv[0] {
		case "shell", "exec-out":
			if len(ops.argv) > 1 {
				cmd := strings.Join(ops.argv[1:], " ")
				// Recorded, not walked: device shell text (input text …) is mostly typed data.
				s.addEffect(Effect{Kind: EffectExec, Target: "android:device", Program: name, Detail: cmd, Remote: "android:device"})
			}
		case "push":
			for k := 1; k < len(ops.argv)-1; k++ {
				w.pathEffect(EffectRead, name, ops.argv[k], ops.dyn[k])
			}
		case "pull":
			if len(ops.argv) > 2 {
				w.pathEffect(EffectWrite, name, ops.argv[len(ops.argv)-1], ops.dyn[len(ops.argv)-1])
			}
		case "install":
			for k := 1; k < len(ops.argv); k++ {
				w.pathEffect(EffectRead, name, ops.argv[k], ops.dyn[k])
			}
		case "root", "remount", "disable-verity":
			s.addEffect(Effect{Kind: EffectPrivilege, Target: "android:device", Program: name, Detail: "adb " + ops.argv[0]})
		}
	case "ztcp":
		if len(ops.argv) >= 2 {
			w.hostEffect(name, ops.argv[0], ops.argv[1], "tcp", ops.dyn[0])
		} else if pa.has("-l") {
			s.addEffect(Effect{Kind: EffectListen, Target: strings.Join(ops.argv, " "), Program: name})
		}
	case "npmconfig":
		// npm config set registry URL (or @scope:registry): later installs come from URL.
		if len(ops.argv) >= 3 && ops.argv[0] == "set" && strings.HasSuffix(ops.argv[1], "registry") {
			s.addEffect(Effect{Kind: EffectPersistence, Target: "npm config " + ops.argv[1], Program: "npm", Detail: "package source: " + ops.argv[2]})
			w.urlEffect("npm", ops.argv[2], ops.dyn[2])
		}
	case "sshkeygen", "capsh":
	}
}

func (w *walker) installManifest(prog, file string) {
	s := w.s
	clean, ok := resolvePath(file, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	s.addEffect(Effect{Kind: EffectInstall, Target: clean, Program: prog, Detail: SourceManifest, InWorkspace: inDir(clean, s.n.opt.Workspace)})
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func isContainerPath(p string) bool {
	i := strings.IndexByte(p, ':')
	return i > 0 && !strings.Contains(p[:i], "/")
}

// sedRunsCode: a sed script with the e command or the e flag of s (GNU: run the pattern space).
func sedRunsCode(script string) bool {
	if strings.HasPrefix(strings.TrimSpace(script), "e ") || strings.TrimSpace(script) == "e" {
		return true
	}
	if len(script) > 2 && script[0] == 's' {
		d := script[1]
		parts := strings.Split(script, string(d))
		if len(parts) >= 4 && strings.ContainsRune(parts[len(parts)-1], 'e') {
			return true
		}
	}
	return false
}

// codeProducer: a process substitution "<(PROG …)" whose program prints shell code meant to be run:
// environment setup (evalSafe) or a completion script (PROG completion SHELL).
func codeProducer(raw string) bool {
	if !strings.HasPrefix(raw, "<(") || !strings.HasSuffix(raw, ")") || strings.ContainsAny(raw[2:len(raw)-1], "|;&$`<>()") {
		return false
	}
	f := strings.Fields(raw[2 : len(raw)-1])
	if len(f) == 0 {
		return false
	}
	if evalSafe[path.Base(f[0])] {
		return true
	}
	return len(f) >= 2 && len(f) <= 4 && (f[1] == "completion" || f[1] == "completions") && !strings.Contains(f[0], "/")
}

// substProgram is the program of the first command substitution in s: "$(ssh-agent -s)" →
// "ssh-agent".
func substProgram(s string) string {
	i := strings.Index(s, "$(")
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+2:])
	if len(f) == 0 {
		return ""
	}
	return path.Base(strings.TrimRight(f[0], ")"))
}

// interp handles language runtimes: inline code, script files, modules, standard input.
func (w *walker) interp(f frame, pa parsedArgs, name string, args words, pipe bool, idx int, stdin string) {
	s := w.s
	ops := pa.words(args)
	for _, v := range pa.vals {
		if v.role == "code" || v.role == "script" {
			// applyRole recorded it (and the operands are the script's arguments, presumed
			// read when they name a credential file: unknown_operands.go).
			w.presumedReads(name, ops)
			return
		}
	}
	if len(pa.spec.operands) > 0 && strings.TrimSuffix(pa.spec.operands[0], "*") == "code" {
		// The first operand is the code (deno eval CODE).
		if len(ops.argv) > 0 {
			w.codeEffect(name, ops.argv[0], ops.dyn[0])
		} else {
			w.stdinExec(name, "stdin", pipe && idx > 0 && !w.literalStdin(f, idx))
		}
		return
	}
	if m, _, ok := pa.val("-m"); ok {
		switch m {
		case "http.server", "SimpleHTTPServer", "pydoc", "smtpd", "ftplib":
			port := "8000"
			for _, a := range ops.argv {
				if isDigits(a) {
					port = a
				}
			}
			pn, _ := strconv.Atoi(port)
			s.addEffect(Effect{Kind: EffectListen, Target: port, Program: name, Detail: "module " + m, Port: pn})
		case "pip", "pip3":
			if sp := s.n.opt.Commands.lookup("pip"); sp != nil {
				rest := args.sub(indexOf(args.argv, m) + 1)
				w.commandEffects(f, &Command{Name: "pip"}, words{argv: append([]string{"pip"}, rest.argv...), dyn: append([]bool{false}, rest.dyn...)}, pipe, idx, stdin)
			}
		case "venv", "virtualenv":
			for k, a := range ops.argv {
				w.pathEffect(EffectWrite, name, a, ops.dyn[k])
			}
		default:
			s.addEffect(Effect{Kind: EffectExec, Target: name, Program: name, Detail: "module " + m})
			w.presumedReads(name, ops) // python3 -m base64 FILE: the module's operands
		}
		return
	}
	if len(ops.argv) > 0 && ops.argv[0] != "-" {
		w.applyRole(name, "script", ops.argv[0], ops.dyn[0]) // a file, or a URL fetched and run (deno run URL)
		w.presumedReads(name, ops.sub(1))
		return
	}
	if (pipe && idx > 0) || stdin != "" || (len(ops.argv) > 0 && ops.argv[0] == "-") {
		d := "stdin"
		if stdin != "" {
			d = stdin
			w.codeEffect(name, stdin, false)
			return
		}
		if code, ok := w.pipedCode(f, idx); ok && pipe && s.n.opt.Inline.Handles(name) {
			w.codeEffect(name, code, false) // inline_stdin.go: echo 'code' | python3
			return
		}
		w.stdinExec(name, d, pipe && idx > 0 && !w.literalStdin(f, idx))
	}
}

// stdinExec records a shell or interpreter running code from its standard input; unresolved when
// a pipe feeds it something other than literal text (curl … | sh, base64 -d <<< … | bash).
func (w *walker) stdinExec(prog, detail string, unresolved bool) {
	if unresolved {
		w.s.addUnresolved("code from standard input (" + prog + ")")
	}
	w.s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: detail, Unresolved: unresolved})
}

// literalStdin reports whether pipeline stage idx-1 (at the frame's depth) writes literal text
// that the walker read as a script: echo/printf of literals, possibly through base64 -d.
func (w *walker) literalStdin(f frame, idx int) bool {
	cmds := w.s.act.Commands
	for k := len(cmds) - 1; k >= 0; k-- {
		c := cmds[k]
		if c.Depth != f.depth || !c.Pipe || c.PipeIndex != idx-1 {
			continue
		}
		if c.Dynamic {
			return false
		}
		if isEcho(c.Name) {
			return true
		}
		if c.Name == "base64" && hasDecodeFlag(c.Args) {
			return idx >= 2 && w.literalStdin(f, idx-1)
		}
		return false
	}
	return false
}

// tar reads tar's mode (-c, -x, -t; also the old "tar czf" form) and archive.
func (w *walker) tar(pa parsedArgs, name string, args words) {
	ops := pa.words(args)
	archive, adyn, hasF := pa.val("-f", "--file")
	if !pa.tags["create"] && !pa.tags["extract"] && !pa.tags["list"] && len(ops.argv) > 0 && isOldTar(ops.argv[0]) {
		re := words{argv: append([]string{"-" + ops.argv[0]}, args.argv[1:]...), dyn: args.dyn}
		pa = parseArgs(pa.spec, name, re)
		ops = pa.words(re)
		archive, adyn, hasF = pa.val("-f", "--file")
	}
	dir, ddyn, hasC := pa.val("-C", "--directory")
	base := "."
	if hasC {
		base = dir
	}
	switch {
	case pa.tags["create"]:
		if hasF {
			w.pathEffect(EffectWrite, name, archive, adyn)
		}
		for k, a := range ops.argv {
			p := a
			if hasC && !strings.HasPrefix(a, "/") {
				p = path.Join(dir, a)
			}
			w.pathEffect(EffectRead, name, p, ops.dyn[k] || ddyn)
		}
	case pa.tags["extract"]:
		if hasF {
			w.pathEffect(EffectRead, name, archive, adyn)
		}
		w.pathEffect(EffectWrite, name, base, ddyn)
	default:
		if hasF {
			w.pathEffect(EffectRead, name, archive, adyn)
		}
	}
}

func isOldTar(s string) bool {
	if s == "" || !strings.ContainsAny(s, "cxtru") {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("cxtrufvzjJapPkmowhO", r) {
			return false
		}
	}
	return true
}

func (w *walker) socat(name string, args words) {
	s := w.s
	for i, a := range args.argv {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		la := strings.ToLower(a)
		typ, rest, _ := strings.Cut(la, ":")
		_, orig, _ := strings.Cut(a, ":")
		orig = strings.SplitN(orig, ",", 2)[0]
		switch typ {
		case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "openssl", "tcp-connect", "ssl", "udp-sendto", "socks4", "socks4a", "socks5":
			if j := strings.LastIndexByte(orig, ':'); j > 0 {
				w.hostEffect(name, orig[:j], orig[j+1:], typ, args.dyn[i])
			}
		case "tcp-listen", "tcp4-listen", "tcp6-listen", "udp-listen", "openssl-listen", "udp-recvfrom":
			p := strings.SplitN(rest, ",", 2)[0]
			pn, _ := strconv.Atoi(p)
			s.addEffect(Effect{Kind: EffectListen, Target: p, Program: name, Port: pn})
			w.socatListenBind(name, rest, socatRelays(args.argv, i), args.dyn[i]) // listen.go
		case "exec", "system":
			w.codeEffect("sh", orig, args.dyn[i])
			if typ == "system" || typ == "exec" {
				w.script(strings.SplitN(a[len(typ)+1:], ",", 2)[0], 1, "socat "+typ, false)
			}
		case "file", "open", "create", "gopen":
			w.pathEffect(EffectRead, name, orig, args.dyn[i])
		}
	}
}

// ssh: a connection, and a command run on the remote host (walked with Remote set).
func (w *walker) ssh(f frame, pa parsedArgs, name string, args words, pipe bool, idx int) {
	s := w.s
	// -o ProxyCommand=CMD (and LocalCommand, KnownHostsCommand) runs CMD on this host.
	for _, v := range pa.vals {
		if v.opt != "-o" {
			continue
		}
		k, code, ok := strings.Cut(v.val, "=")
		if !ok {
			k, code, _ = strings.Cut(v.val, " ")
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			code = strings.TrimSpace(code)
			if code == "" || strings.EqualFold(code, "none") {
				continue
			}
			s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: name, Detail: code, Unresolved: v.dyn && isUnresolvedText(code)})
			w.script(strings.ReplaceAll(code, "%h", "HOST"), f.depth+1, name+" -o "+k, f.sudo)
		}
	}
	ops := pa.words(args)
	if len(ops.argv) == 0 {
		return
	}
	port, _, _ := pa.val("-p")
	w.hostEffect(name, ops.argv[0], port, "ssh", ops.dyn[0])
	for _, o := range []string{"-R", "-L", "-D"} {
		if v, _, ok := pa.val(o); ok {
			s.addEffect(Effect{Kind: EffectListen, Target: v, Program: name, Detail: "tunnel " + o})
		}
	}
	w.sshForwardBinds(pa, name) // listen.go
	w.sshTunnels(pa, name)      // tunnels.go: -o forwards, -w
	if len(ops.argv) < 2 {
		return
	}
	host := ops.argv[0]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	cmd := strings.Join(ops.argv[1:], " ")
	remote := "ssh:" + host
	s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: cmd, Remote: remote})
	w.remoteScript(remote, cmd, f.depth+1, name)
}

// remoteScript walks cmd as a script that runs at remote.
func (w *walker) remoteScript(remote, cmd string, depth int, via string) {
	x := w.s.fx()
	prev := x.remote
	x.remote = remote
	w.script(cmd, depth, via, false)
	x.remote = prev
}

func (w *walker) remoteArgv(f frame, remote string, argv words, via string, pipe bool, idx int) {
	x := w.s.fx()
	if f.depth+1 > w.s.n.opt.MaxDepth {
		w.s.act.Truncated = true
		return
	}
	prev := x.remote
	x.remote = remote
	w.emit(frame{depth: f.depth + 1, via: via}, argv, strings.Join(argv.argv, " "), nil, nil, pipe, idx, false, "")
	x.remote = prev
}

// remoteCopy: scp and rsync operands, local paths or [user@]host:path.
func (w *walker) remoteCopy(pa parsedArgs, name string, ops words) {
	n := len(ops.argv)
	for k, a := range ops.argv {
		last := k == n-1 && n > 1
		if h, ok := remoteHost(a); ok {
			w.hostEffect(name, h, "", "ssh", ops.dyn[k])
			continue
		}
		role := EffectRead
		if last {
			role = EffectWrite
		}
		w.pathEffect(role, name, a, ops.dyn[k])
		if last && pa.tags["delete"] {
			w.pathEffect(EffectDelete, name, a, ops.dyn[k])
		}
		if !last && pa.tags["movesrc"] {
			w.pathEffect(EffectDelete, name, a, ops.dyn[k]) // rsync --remove-source-files: a move (reach.go)
		}
	}
}

func remoteHost(a string) (string, bool) {
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, ".") || strings.HasPrefix(a, "~") {
		return "", false
	}
	if strings.HasPrefix(a, "rsync://") {
		u := parseURL(a, URLRequest, false)
		return u.Host, u.Host != ""
	}
	i := strings.IndexByte(a, ':')
	if i <= 0 || strings.Contains(a[:i], "/") {
		return "", false
	}
	return a[:i], true
}

// gitRemote records a connection when a remote is a URL or scp-like address (named remotes are
// configuration and unknown here).
func (w *walker) gitRemote(r string, dyn bool) {
	switch {
	case strings.Contains(r, "://"):
		w.urlEffect("git", r, dyn)
	case strings.HasPrefix(r, "/") || strings.HasPrefix(r, "."):
	default:
		if h, ok := remoteHost(r); ok {
			w.hostEffect("git", h, "", "ssh", dyn)
		}
	}
}

// gitConfig records the effect of setting a git configuration key.
func (w *walker) gitConfig(prog, key, val, scope string) {
	s := w.s
	lk := strings.ToLower(key)
	w.gitRemoteState(key, lk, val) // effects_state.go
	for _, p := range gitPersistPrefixes {
		if strings.HasPrefix(lk, p) {
			if p == "remote." && !strings.HasSuffix(lk, ".uploadpack") && !strings.HasSuffix(lk, ".receivepack") && !strings.HasSuffix(lk, ".proxy") {
				return
			}
			if (p == "merge." || p == "diff.") && !strings.HasSuffix(lk, ".driver") && !strings.HasSuffix(lk, ".textconv") && !strings.HasSuffix(lk, ".command") {
				return
			}
			s.addEffect(Effect{Kind: EffectPersistence, Target: "git config " + key, Program: prog, Detail: scope + ": " + val})
			if strings.HasPrefix(val, "!") || p == "core.fsmonitor" || p == "core.sshcommand" || p == "core.pager" || p == "credential." || p == "core.hookspath" {
				// The value runs later, as shell: recorded as code, not walked as if it ran now.
				s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: strings.TrimPrefix(val, "!")})
			}
			return
		}
	}
}

// container handles docker/podman run and create: escape shapes, and the command in the image.
func (w *walker) container(f frame, pa parsedArgs, name string, args words, pipe bool, idx int) {
	s := w.s
	// Options of run/create are too many to list per runtime; read them here.
	valueOpts := set("-v", "--volume", "--mount", "-e", "--env", "--env-file", "--name", "-p", "--publish", "-w", "--workdir", "-u", "--user",
		"--network", "--net", "--pid", "--ipc", "--uts", "--userns", "--cap-add", "--cap-drop", "--security-opt", "--device", "--entrypoint",
		"-h", "--hostname", "--add-host", "-l", "--label", "--restart", "-m", "--memory", "--cpus", "--shm-size", "--tmpfs", "--platform",
		"--pull", "--ulimit", "--gpus", "--runtime", "--log-driver", "--log-opt", "--dns", "--cidfile", "--volumes-from", "--cgroupns",
		"--group-add", "--link", "--expose", "--health-cmd", "--stop-signal", "--stop-timeout", "--memory-swap", "--cpuset-cpus", "-a", "--attach",
		"--label-file", "--mac-address", "--ip", "--ip6", "--device-cgroup-rule", "--pids-limit", "--cgroup-parent", "--isolation", "--sysctl")
	img := -1
	opt := func(o, v string) {
		switch o {
		case "-v", "--volume", "--mount":
			src := v
			if o == "--mount" {
				src = ""
				for _, kv := range strings.Split(v, ",") {
					if k, val, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
						src = val
					}
				}
			} else if i := strings.IndexByte(v, ':'); i >= 0 {
				src = v[:i]
			}
			if !(strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.HasPrefix(src, ".") || strings.HasPrefix(src, "$")) {
				return // a named volume
			}
			if isUnresolvedText(src) {
				s.addUnresolved("mount " + src + " (" + name + ")")
				s.addEffect(Effect{Kind: EffectEscape, Target: src, Program: name, Detail: "host_mount", Unresolved: true})
				return
			}
			clean, _ := resolvePath(src, s.cwd, s.n.opt.Home)
			sens := s.n.sens.classify(clean)
			switch {
			case sens == "container_socket":
				s.addEffect(Effect{Kind: EffectEscape, Target: clean, Program: name, Detail: "docker_socket", Sensitive: true})
			case inDir(clean, s.n.opt.Workspace):
				ro := strings.HasSuffix(v, ":ro") || strings.Contains(v, "readonly")
				k := EffectWrite
				if ro {
					k = EffectRead
				}
				s.addEffect(Effect{Kind: k, Target: clean, Program: name, Detail: "mount", InWorkspace: true})
			case sens != "" || hostSystemDir(clean):
				s.addEffect(Effect{Kind: EffectEscape, Target: clean, Program: name, Detail: "host_mount", Sensitive: true})
			default:
				// Any other host directory: the container reads and writes it, nothing more.
				k := EffectWrite
				if strings.HasSuffix(v, ":ro") || strings.Contains(v, "readonly") {
					k = EffectRead
				}
				s.addEffect(Effect{Kind: k, Target: clean, Program: name, Detail: "mount"})
			}
		case "--pid", "--ipc", "--uts", "--userns", "--network", "--net", "--cgroupns":
			if v == "host" {
				d := "host_" + strings.TrimPrefix(o, "--")
				if o == "--net" || o == "--network" {
					d = "host_network"
				}
				s.addEffect(Effect{Kind: EffectEscape, Target: "host", Program: name, Detail: d})
			}
		case "--cap-add":
			switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(v), "CAP_")) {
			case "ALL", "SYS_ADMIN", "SYS_PTRACE", "SYS_MODULE", "DAC_READ_SEARCH", "DAC_OVERRIDE", "NET_ADMIN", "SYS_RAWIO", "BPF":
				s.addEffect(Effect{Kind: EffectEscape, Target: v, Program: name, Detail: "cap_add"})
			}
		case "--security-opt":
			if strings.Contains(v, "unconfined") || strings.Contains(v, "no-new-privileges=false") {
				s.addEffect(Effect{Kind: EffectEscape, Target: v, Program: name, Detail: "unconfined"})
			}
		case "--device":
			s.addEffect(Effect{Kind: EffectEscape, Target: v, Program: name, Detail: "device"})
		case "--env-file":
			w.pathEffect(EffectRead, name, v, false)
		case "-p", "--publish":
			w.publishBind(name, v, false) // listen.go
		}
	}
	i := 0
	for ; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			img = i
			break
		}
		o, v, hasEq := strings.Cut(a, "=")
		if o == "--privileged" {
			s.addEffect(Effect{Kind: EffectEscape, Target: "host", Program: name, Detail: "privileged"})
			continue
		}
		if valueOpts[o] {
			if !hasEq && i+1 < len(args.argv) {
				i++
				v = args.argv[i]
			}
			opt(o, v)
			continue
		}
		// Short clusters ending in a value option (-itv /:/h).
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			last := "-" + string(a[len(a)-1])
			if valueOpts[last] && i+1 < len(args.argv) {
				i++
				opt(last, args.argv[i])
			}
		}
	}
	if img < 0 && i < len(args.argv) {
		img = i
	}
	if img < 0 || img >= len(args.argv) {
		return
	}
	image := args.argv[img]
	w.containerImage(name, image, args.dyn[img]) // ops_effects.go
	rest := args.sub(img + 1)
	if len(rest.argv) > 0 {
		remote := "container:" + image
		s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: strings.Join(rest.argv, " "), Remote: remote})
		w.remoteArgv(f, remote, rest, name+" run", pipe, idx)
	}
}

// containerExec: docker/podman exec CONTAINER CMD…, kubectl exec POD [--] CMD….
func (w *walker) containerExec(f frame, pa parsedArgs, name string, ops words, pipe bool, idx int) {
	s := w.s
	valueOpts := set("-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys", "-c", "--container", "-n", "--namespace", "-f", "--filename")
	args := ops
	// The spec has no option list for exec: parse here from the raw operands.
	start := 0
	target := ""
	for ; start < len(args.argv); start++ {
		a := args.argv[start]
		if a == "--" {
			start++
			break
		}
		if strings.HasPrefix(a, "-") {
			if a == "--privileged" {
				s.addEffect(Effect{Kind: EffectEscape, Target: "host", Program: name, Detail: "privileged"})
			}
			if valueOpts[a] {
				start++
			}
			continue
		}
		if target == "" {
			target = a
			continue
		}
		break
	}
	if target == "" && start < len(args.argv) {
		target = args.argv[start]
		start++
	}
	kind := "container:"
	if name == "kubectl" {
		kind = "pod:"
	}
	rest := args.sub(start)
	if len(rest.argv) == 0 {
		return
	}
	remote := kind + target
	s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: strings.Join(rest.argv, " "), Remote: remote})
	w.remoteArgv(f, remote, rest, name+" exec", pipe, idx)
}

// cloud: cloud CLIs reach their API; some sub-commands print credentials.
func (w *walker) cloud(name string, ops words, secrets [][]string) {
	s := w.s
	s.addEffect(Effect{Kind: EffectConnect, Target: name + " api", Program: name, Detail: "cloud_api"})
	for _, sec := range secrets {
		if hasSeq(ops.argv, sec) {
			s.addEffect(Effect{Kind: EffectSecret, Target: name + " " + strings.Join(sec, " "), Program: name, Detail: "cloud_credentials"})
		}
	}
	for k, a := range ops.argv {
		if strings.HasPrefix(a, "s3://") || strings.HasPrefix(a, "gs://") {
			continue
		}
		if (name == "aws" || name == "gsutil") && k > 0 && (ops.argv[0] == "s3" || name == "gsutil") && looksLikePathArg(a) {
			w.pathEffect(EffectRead, name, a, ops.dyn[k])
		}
	}
}

// restrictingMode: a chmod mode that only removes access of group and others: an octal mode
// without special bits whose group and other digits are 0 and whose owner keeps read (600, 0700,
// 400), or symbolic clauses that only subtract from g and o (go-rwx, o-w, g-w,o-r).
func restrictingMode(m string) bool {
	if isDigits(m) {
		m = strings.TrimLeft(m, "0")
		if len(m) != 3 {
			return false
		}
		return m[1] == '0' && m[2] == '0' && m[0] >= '4' && m[0] <= '7'
	}
	if m == "" {
		return false
	}
	for _, clause := range strings.Split(m, ",") {
		who, perms, ok := strings.Cut(clause, "-")
		if !ok || who == "" || strings.Trim(who, "go") != "" || perms == "" || strings.Trim(perms, "rwxXst") != "" {
			return false
		}
	}
	return true
}

// hostSystemDir: mounting it (or a parent of it) into a container hands the container the host.
func hostSystemDir(p string) bool {
	if p == "/" {
		return true
	}
	for _, d := range []string{"/etc", "/root", "/home", "/var", "/proc", "/sys", "/dev", "/boot", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/run", "/opt", "/srv"} {
		if p == d || inDir(p, d) && (d == "/etc" || d == "/root" || d == "/proc" || d == "/sys" || d == "/dev" || d == "/boot" || d == "/run" || p == d) {
			return true
		}
	}
	return false
}

func hasSeq(xs, seq []string) bool {
	for i := 0; i+len(seq) <= len(xs); i++ {
		ok := true
		for j := range seq {
			if xs[i+j] != seq[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// secretStore: password managers and key stores; reading from one is a secret source.
func (w *walker) secretStore(pa parsedArgs, name string, ops words) {
	s := w.s
	read := false
	switch name {
	case "vault":
		read = len(ops.argv) > 0 && (ops.argv[0] == "read" || hasSeq(ops.argv, []string{"kv", "get"}) || hasSeq(ops.argv, []string{"token", "create"}) || ops.argv[0] == "login")
	case "op":
		read = len(ops.argv) > 0 && (ops.argv[0] == "read" || hasSeq(ops.argv, []string{"item", "get"}) || ops.argv[0] == "inject")
	case "pass":
		read = len(ops.argv) == 0 || ops.argv[0] == "show" || (ops.argv[0] != "ls" && ops.argv[0] != "list" && ops.argv[0] != "init" && ops.argv[0] != "insert" && ops.argv[0] != "generate" && ops.argv[0] != "rm" && ops.argv[0] != "git")
	case "gpg":
		read = pa.has("--export-secret-keys", "--export-secret-subkeys", "-d", "--decrypt")
	case "security":
		read = len(ops.argv) > 0 && (strings.HasPrefix(ops.argv[0], "find-") || ops.argv[0] == "dump-keychain" || ops.argv[0] == "export")
	case "secrettool":
		read = len(ops.argv) > 0 && ops.argv[0] == "lookup"
	}
	if read {
		s.addEffect(Effect{Kind: EffectSecret, Target: name + " " + strings.Join(ops.argv, " "), Program: name, Detail: "password_store"})
	}
}

// --- data flow ---

// isSource: an effect whose data can move on (secrets, reads, downloads).
func isSource(e Effect) bool {
	return e.Kind == EffectSecret || e.Kind == EffectRead || e.Kind == EffectConnect
}

func isSink(e Effect) bool { return e.Kind == EffectConnect || e.Kind == EffectExec }

func (s *state) addFlow(from, to int, via string) {
	x := s.fx()
	if from == to || from < 0 || to < 0 {
		return
	}
	k := [2]int{from, to}
	if x.flowSeen[k] || len(s.act.Flows) >= s.n.opt.MaxStrings {
		return
	}
	if x.flowSeen == nil {
		x.flowSeen = map[[2]int]bool{}
	}
	x.flowSeen[k] = true
	s.act.Flows = append(s.act.Flows, Flow{From: from, To: to, Via: via})
}

// linkCmd records the flows of one simple-command statement whose effects start at index start:
// from variables and files it reads that carry earlier sources, from its command substitutions and
// input redirections, and from secrets it names itself (curl -d @~/.ssh/id_rsa) to its sinks. It
// returns the sources the statement carries (for a variable assigned from it); files it writes
// carry them too.
func (w *walker) linkCmd(start int, raw string) []int {
	s := w.s
	x := s.fx()
	effs := s.act.Effects
	if start > len(effs) {
		start = len(effs)
	}
	var carried []int
	sinks := func(from int, via string) {
		for j := start; j < len(effs); j++ {
			if isSink(effs[j]) {
				s.addFlow(from, j, via)
			}
		}
	}
	if len(x.varTaint) > 0 && strings.Contains(raw, "$") {
		for _, m := range varRE.FindAllStringSubmatch(raw, 32) {
			for _, i := range x.varTaint[m[1]+m[2]] {
				carried = append(carried, i)
				sinks(i, "var")
			}
		}
	}
	if len(x.fileT) > 0 {
		for j := start; j < len(effs); j++ {
			if effs[j].Kind == EffectRead || effs[j].Kind == EffectExec {
				for _, i := range x.fileT[effs[j].Target] {
					carried = append(carried, i)
					sinks(i, "file")
				}
			}
		}
	}
	var srcs, snks []int
	for i := start; i < len(effs); i++ {
		if isSource(effs[i]) {
			srcs = append(srcs, i)
		}
		if isSink(effs[i]) {
			snks = append(snks, i)
		}
	}
	if len(srcs)*len(snks) > maxFlowPairs {
		s.act.Truncated = true // too many to pair: the call is not read in full
		srcs = srcs[:0]
	}
	for _, i := range srcs {
		carried = append(carried, i)
		ci := x.effCmd[i]
		for _, j := range snks {
			if i == j {
				continue
			}
			cj := x.effCmd[j]
			switch {
			case x.origin[i] == "redirect":
				s.addFlow(i, j, "redirect")
			case x.origin[j] == "redirect" && effs[j].Kind == EffectConnect:
				s.addFlow(i, j, "redirect") // output redirected to /dev/tcp
			case x.subst[ci] && ci < cj:
				s.addFlow(i, j, "subst")
			case ci == cj && effs[j].Kind == EffectConnect && (effs[i].Kind == EffectSecret || (effs[i].Kind == EffectRead && effs[i].Sensitive) || x.origin[i] == originSent):
				s.addFlow(i, j, "arg")
			}
		}
	}
	w.taintWrites(start, len(effs), carried)
	return carried
}

// taintWrites marks the files written by effects [from, to) as carrying sources.
func (w *walker) taintWrites(from, to int, sources []int) {
	if len(sources) == 0 {
		return
	}
	x := w.s.fx()
	effs := w.s.act.Effects
	for j := from; j < to && j < len(effs); j++ {
		if effs[j].Kind == EffectWrite && !effs[j].Unresolved && len(x.fileT) < maxTrackedVars {
			if x.fileT == nil {
				x.fileT = map[string][]int{}
			}
			x.fileT[effs[j].Target] = dedupeInts(append(x.fileT[effs[j].Target], sources...))
		}
	}
}

// linkPipe records flows between the stages of a pipeline: the sources of a stage reach the sinks
// of every later stage. starts[i] is the first effect index of stage i; end the pipeline's end.
func (w *walker) linkPipe(starts []int, end int) {
	s := w.s
	effs := s.act.Effects
	var carried []int
	for st := range starts {
		lo, hi := starts[st], end
		if st+1 < len(starts) {
			hi = starts[st+1]
		}
		for j := lo; j < hi && j < len(effs); j++ {
			if isSink(effs[j]) {
				for _, i := range carried {
					s.addFlow(i, j, "pipe")
				}
			}
		}
		w.taintWrites(lo, hi, carried)
		for i := lo; i < hi && i < len(effs); i++ {
			if isSource(effs[i]) {
				carried = append(carried, i)
			}
		}
		// Sources a stage inherited from variables or files flow on too.
		for j := lo; j < hi && j < len(effs); j++ {
			if effs[j].Kind == EffectRead {
				carried = append(carried, s.fx().fileT[effs[j].Target]...)
			}
		}
		if len(carried) > 256 {
			carried = carried[:256]
		}
	}
}

// maxFlowPairs bounds the source × sink pairs one statement is linked over.
const maxFlowPairs = 1 << 14

func dedupeInts(xs []int) []int {
	seen := map[int]bool{}
	out := make([]int, 0, len(xs))
	for _, x := range xs {
		if !seen[x] && len(out) < 64 {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// listers are programs whose output is a list of paths under what they read.
var listers = set("find", "fd", "fdfind", "ls", "git", "grep", "egrep", "rg", "ag", "ack", "tree", "locate")

// listedRoots returns the trees a pipeline stage (effects [from, to)) lists when its program is a
// lister: the paths the next stage receives on standard input lie under them. nil otherwise.
func (w *walker) listedRoots(from, to int) []string {
	var roots []string
	effs := w.s.act.Effects
	for i := from; i < to && i < len(effs); i++ {
		e := effs[i]
		if !listers[e.Program] {
			return nil
		}
		if e.Kind == EffectRead && !e.Unresolved {
			roots = append(roots, e.Target)
		}
	}
	if len(roots) > maxLoopItems {
		return nil
	}
	return roots
}
