package normalize

import (
	"path"
	"strings"
)

// Git configuration keys whose value git runs, trusts or follows later, derived from git-config(1)
// (the key list of `git help --config`, checked in as testdata/git-config-keys.txt; a test fails
// when a key of that list that names a command, a program, a hook, a helper, a driver, a proxy or
// a transport check is neither in this table nor in gitConfigInertKeys). One table, read both
// for keys written to a configuration file (git config KEY VALUE: the value runs on a later git
// command, persistence) and for keys given to one command (git -c, GIT_CONFIG_COUNT,
// GIT_CONFIG_PARAMETERS: the value runs now, walked as the code it is).
//
// Patterns are lower-case key names; "*" stands for a subsection (which may contain dots:
// url.https://host/.insteadof, http.https://host/.proxy).

// Roles of a key's value.
const (
	gitKeyCommand   = "command"   // a shell command line (mergetool.*.cmd, core.pager)
	gitKeyProgram   = "program"   // a program run by name or path (gpg.program, *.path)
	gitKeyHooksDir  = "hooksdir"  // a directory whose files run (core.hooksPath, init.templateDir)
	gitKeyInclude   = "include"   // another configuration file whose keys apply (include.path)
	gitKeyTransport = "transport" // a transport or object check; off when the value is false
	gitKeyTrustAll  = "trustall"  // trust every repository's own configuration (safe.directory=*)
	gitKeyRedirect  = "redirect"  // fetches or pushes go somewhere else (url.*.insteadOf, proxies)
	gitKeyAlias     = "alias"     // alias.*: a shell command when the value starts with '!'
	gitKeyHelper    = "helper"    // credential helper: a helper name, a path, or !shell
	gitKeyFsmonitor = "fsmonitor" // core.fsmonitor: true/false selects the built-in daemon, else a hook
)

var gitConfigKeys = []struct{ pattern, role string }{
	// Shell command lines.
	{"core.pager", gitKeyCommand}, {"pager.*", gitKeyCommand}, {"core.editor", gitKeyCommand},
	{"sequence.editor", gitKeyCommand}, {"core.sshcommand", gitKeyCommand},
	{"core.alternaterefscommand", gitKeyCommand}, {"diff.external", gitKeyCommand},
	{"diff.*.command", gitKeyCommand}, {"diff.*.textconv", gitKeyCommand}, {"merge.*.driver", gitKeyCommand},
	{"filter.*.clean", gitKeyCommand}, {"filter.*.smudge", gitKeyCommand}, {"filter.*.process", gitKeyCommand},
	{"difftool.*.cmd", gitKeyCommand}, {"mergetool.*.cmd", gitKeyCommand}, {"man.*.cmd", gitKeyCommand},
	{"guitool.*.cmd", gitKeyCommand}, {"browser.*.cmd", gitKeyCommand}, {"trailer.*.cmd", gitKeyCommand},
	{"trailer.*.command", gitKeyCommand}, {"uploadpack.packobjectshook", gitKeyCommand},
	{"interactive.difffilter", gitKeyCommand}, {"tar.*.command", gitKeyCommand},
	{"remote.*.uploadpack", gitKeyCommand}, {"remote.*.receivepack", gitKeyCommand},
	{"sendemail.sendmailcmd", gitKeyCommand}, {"sendemail.tocmd", gitKeyCommand}, {"sendemail.cccmd", gitKeyCommand},
	{"sendemail.headercmd", gitKeyCommand}, {"submodule.*.update", gitKeyCommand}, {"instaweb.httpd", gitKeyCommand},
	{"gpg.ssh.defaultkeycommand", gitKeyCommand}, {"core.gitproxy", gitKeyCommand}, {"imap.tunnel", gitKeyCommand},
	// Programs run by name or path.
	{"core.askpass", gitKeyProgram}, {"gpg.program", gitKeyProgram}, {"gpg.*.program", gitKeyProgram},
	{"difftool.*.path", gitKeyProgram}, {"mergetool.*.path", gitKeyProgram}, {"man.*.path", gitKeyProgram},
	{"browser.*.path", gitKeyProgram}, {"sendemail.smtpserver", gitKeyProgram}, {"remote.*.vcs", gitKeyProgram},
	{"gui.editor", gitKeyProgram},
	// Directories and files whose contents run or apply.
	{"core.hookspath", gitKeyHooksDir}, {"init.templatedir", gitKeyHooksDir},
	{"include.path", gitKeyInclude}, {"includeif.*.path", gitKeyInclude},
	// Checks of what is fetched.
	{"http.sslverify", gitKeyTransport}, {"http.*.sslverify", gitKeyTransport}, {"http.sslcainfo", gitKeyTransport},
	{"http.*.sslcainfo", gitKeyTransport}, {"http.sslcapath", gitKeyTransport}, {"http.*.sslcapath", gitKeyTransport},
	{"transfer.fsckobjects", gitKeyTransport}, {"fetch.fsckobjects", gitKeyTransport}, {"receive.fsckobjects", gitKeyTransport},
	{"core.protectntfs", gitKeyTransport}, {"core.protecthfs", gitKeyTransport}, {"protocol.allow", gitKeyTransport},
	{"protocol.*.allow", gitKeyTransport}, {"imap.sslverify", gitKeyTransport}, {"sendemail.smtpsslcertpath", gitKeyTransport},
	{"safe.directory", gitKeyTrustAll},
	// Where fetches and pushes go.
	{"url.*.insteadof", gitKeyRedirect}, {"url.*.pushinsteadof", gitKeyRedirect}, {"http.proxy", gitKeyRedirect},
	{"https.proxy", gitKeyRedirect}, {"http.*.proxy", gitKeyRedirect}, {"remote.*.proxy", gitKeyRedirect},
	{"http.proxysslcainfo", gitKeyTransport},
	// Keys whose value is a command only in one form.
	{"alias.*", gitKeyAlias}, {"credential.helper", gitKeyHelper}, {"credential.*.helper", gitKeyHelper},
	{"core.fsmonitor", gitKeyFsmonitor},
}

// gitConfigInertKeys are keys of git-config(1) whose names look like a command, program, hook,
// proxy or path setting but whose value git never runs, trusts or follows to another host (a
// tool's name selects a *.cmd/*.path key, which the table judges; a path only read or written).
var gitConfigInertKeys = set("advice.ignoredhook", "advice.waitingforeditor", "color.pager", "column.clean",
	"commitgraph.maxnewfilters", "completion.commands", "core.fsmonitorhookversion", "core.quotepath",
	"credential.usehttppath", "diff.*.binary", "diff.*.cachetextconv", "diff.*.wordregex", "diff.*.xfuncname",
	"fsck.gitmodulespath", "gitcvs.dbdriver", "help.htmlpath", "http.proxyauthmethod", "http.proxysslcert",
	"http.proxysslcertpasswordprotected", "http.proxysslkey", "instaweb.modulepath", "merge.*.name",
	"merge.*.recursive", "notes.rewrite.*", "rebase.abbreviatecommands", "receive.fsck.gitmodulespath",
	"remote.*.partialclonefilter", "remote.*.proxyauthmethod", "clone.filtersubmodules", "uploadpack.allowfilter",
	"uploadpackfilter.*.allow", "uploadpackfilter.allow", "uploadpackfilter.tree.maxdepth", "help.browser",
	"web.browser", "instaweb.browser", "diff.tool", "diff.guitool", "merge.tool", "merge.guitool", "man.viewer",
	"core.excludesfile", "core.attributesfile", "commit.template", "blame.ignorerevsfile", "core.worktree",
	"mailmap.file", "http.cookiefile", "gpg.ssh.allowedsignersfile", "gpg.ssh.revocationfile", "core.hidedotfiles",
	"fetch.writecommitgraph", "difftool.prompt", "mergetool.prompt", "difftool.trustexitcode", "difftool.*.trustexitcode",
	"mergetool.*.trustexitcode", "mergetool.keepbackup", "mergetool.keeptemporaries", "mergetool.writetotemp",
	"mergetool.hidebasetool", "mergetool.*.hidebasetool", "mergetool.meld.hasoutput", "mergetool.meld.useautomerge",
	"mergetool.vimdiff.layout", "mergetool.*.layout", "mergetool.prompt", "core.sparsecheckoutcone", "status.showuntrackedfiles",
	"sendemail.smtpserverport", "sendemail.smtpserveroption", "sendemail.smtpuser", "sendemail.smtpencryption",
	"sendemail.smtpdomain", "sendemail.smtppass", "sendemail.smtpauth", "sendemail.smtpbatchsize", "sendemail.smtpreloginsdelay",
	"trailer.*.key", "trailer.*.where", "trailer.*.ifexists", "trailer.*.ifmissing", "trailer.where", "trailer.ifexists",
	"trailer.ifmissing", "trailer.separators", "gpg.format", "gpg.mintrustlevel", "pager.*.color",
	"http.sslbackend", "http.sslcipherlist", "http.sslversion", "http.sslcert", "http.sslkey", "http.sslcertpasswordprotected",
	"http.sslcerttype", "http.sslkeytype", "http.schannelcheckrevoke", "http.schannelusesslcainfo", "http.sslkeytype",
	"http.*.sslcert", "http.*.sslkey", "http.*.sslcertpasswordprotected", "http.*.sslbackend", "http.*.sslcipherlist", "http.*.sslversion",
	"http.pinnedpubkey", "http.*.pinnedpubkey", "http.*.proxyauthmethod", "http.*.cookiefile")

// gitKeyRole is the role of a git configuration key's value, "" for keys git does not run,
// trust or follow.
func gitKeyRole(key string) string {
	lk := strings.ToLower(strings.TrimSpace(key))
	for _, k := range gitConfigKeys {
		if gitKeyMatch(k.pattern, lk) {
			return k.role
		}
	}
	return ""
}

// gitKeyMatch matches a lower-case key against a pattern with at most one "*" (a subsection, one or
// more characters that may include dots).
func gitKeyMatch(pattern, key string) bool {
	pre, post, star := strings.Cut(pattern, "*")
	if !star {
		return pattern == key
	}
	return len(key) > len(pre)+len(post) && strings.HasPrefix(key, pre) && strings.HasSuffix(key, post)
}

// gitKeySubsection is the subsection of a three-part key (url.BASE.insteadof → BASE).
func gitKeySubsection(key string) string {
	i := strings.IndexByte(key, '.')
	j := strings.LastIndexByte(key, '.')
	if i < 0 || j <= i {
		return ""
	}
	return key[i+1 : j]
}

// gitFalse: a git boolean that is false.
func gitFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return true
	}
	return false
}

func gitBool(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "false", "no", "off", "0":
		return true
	}
	return false
}

// gitOrdinaryTools are the editors, pagers, diff/merge tools and signing programs developers name
// in their git configuration. A value that is one of them run by name (or from a system bin
// directory), with plain arguments and no shell syntax, runs nothing but that tool.
var gitOrdinaryTools = set("vi", "vim", "nvim", "gvim", "mvim", "nano", "emacs", "emacsclient", "micro", "hx", "helix", "kak",
	"code", "code-insiders", "codium", "subl", "mate", "atom", "zed", "idea", "charm", "gedit", "kate", "notepad", "notepad++",
	"less", "more", "most", "cat", "delta", "diff-so-fancy", "bat", "difftastic", "difft", "ydiff", "riff", "diff-highlight",
	"meld", "kdiff3", "vimdiff", "nvimdiff", "gvimdiff", "opendiff", "bcompare", "p4merge", "tkdiff", "xxdiff", "diffuse",
	"smerge", "araxis", "gpg", "gpg2", "ssh-keygen", "gpgsm", "true", "git-lfs", "lfs", "firefox", "chromium",
	"google-chrome", "xdg-open", "open", "w3m", "lynx", "git-credential-manager", "sendmail", "msmtp", "cargo-credential")

// gitOrdinaryHelpers are credential helpers git ships or that keep credentials in a system store.
var gitOrdinaryHelpers = set("store", "cache", "osxkeychain", "manager", "manager-core", "libsecret", "wincred",
	"gnome-keyring", "netrc", "oauth", "")

// gitOrdinaryValue: a command or program value that runs only a developer tool.
func gitOrdinaryValue(val string) bool {
	v := strings.TrimSpace(val)
	if v == "" || strings.ContainsAny(v, "$`;|&<>(){}\\!\n'\"") {
		return false
	}
	f := strings.Fields(v)
	prog := f[0]
	if strings.Contains(prog, "/") {
		if !systemBinDirs[path.Dir(prog)] {
			return false
		}
		prog = path.Base(prog)
	}
	if !gitOrdinaryTools[prog] {
		return false
	}
	for _, a := range f[1:] {
		// Plain options and placeholders ($LOCAL is excluded above; %s, -R, --wait); a path
		// argument could name code.
		if strings.Contains(a, "/") || strings.Contains(a, "=") && strings.Contains(a, ",") {
			return false
		}
	}
	return true
}

// gitConfigTable records the effect of a git configuration key from the table. scope is
// "command" for a key given to one command (git -c, the environment: it applies now) and the file
// scope otherwise (local, global, system: it applies to later git commands). It reports whether
// the table knew the key; the caller's own handling applies to the others.
func (w *walker) gitConfigTable(f frame, prog, key, val, scope string) bool {
	s := w.s
	lk := strings.ToLower(strings.TrimSpace(key))
	role := gitKeyRole(lk)
	if role == "" {
		return false
	}
	val = strings.TrimSpace(val)
	w.gitRemoteState(key, lk, val) // effects_state.go: redirected pushes
	now := scope == "command"
	// A key given to one command (git -c) is recorded like a written one as well: the command it
	// names becomes git's transport, editor or filter for this run, and what git feeds it (the
	// repository's objects on a push through core.sshCommand) is not modelled as a flow.
	persist := func() {
		s.addEffect(Effect{Kind: EffectPersistence, Target: "git config " + key, Program: prog, Detail: scope + ": " + val})
	}
	// runs records code the key's value makes git run: walked now, recorded for later.
	runs := func(code string) {
		persist()
		s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: code})
		if now {
			w.script(code, f.depth+1, prog, f.sudo)
		}
	}
	switch role {
	case gitKeyCommand:
		if gitOrdinaryValue(val) || strings.HasPrefix(lk, "pager.") && gitBool(val) {
			return true
		}
		runs(val)
	case gitKeyProgram:
		if gitOrdinaryValue(val) {
			return true
		}
		persist()
		if now {
			w.envFileExec(prog, val)
		} else {
			s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: val})
		}
	case gitKeyAlias:
		if !strings.HasPrefix(val, "!") {
			// A git sub-command alias; "-c KEY=VALUE" inside it sets keys when the alias runs.
			fs := strings.Fields(val)
			for i := 0; i+1 < len(fs); i++ {
				if fs[i] == "-c" {
					k, v, _ := strings.Cut(strings.Trim(fs[i+1], `'"`), "=")
					w.gitConfigTable(f, prog, k, v, scope)
				}
			}
			return true
		}
		runs(strings.TrimPrefix(val, "!"))
	case gitKeyHelper:
		if gitOrdinaryHelpers[strings.Fields(val + " x")[0]] && !strings.ContainsAny(val, "$`;|&<>!") {
			w.plaintextCredentialHelper(prog, key, val) // ops_effects.go
			return true
		}
		runs(strings.TrimPrefix(val, "!"))
	case gitKeyFsmonitor:
		if gitBool(val) {
			return true
		}
		runs(val)
	case gitKeyHooksDir:
		// A directory of the workspace holds the project's own hooks (written files there are
		// judged when written): a change of what every commit runs, reviewed; anywhere else it
		// is code planted outside the project.
		if clean, ok := resolvePath(val, s.cwd, s.n.opt.Home); ok && !now && !isUnresolvedText(val) &&
			inDir(clean, s.n.opt.Workspace) && clean != s.n.opt.Workspace {
			s.addEffect(Effect{Kind: EffectPersistence, Target: clean, Program: prog, Detail: "git_hooks_path", InWorkspace: true})
			return true
		}
		persist()
		if now {
			w.envFileExec(prog, val)
		} else {
			s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: val})
		}
	case gitKeyInclude:
		persist()
	case gitKeyTransport:
		off := gitFalse(val)
		if strings.HasSuffix(lk, "sslcainfo") || strings.HasSuffix(lk, "sslcapath") || strings.HasSuffix(lk, "sslcertpath") {
			off = val != "" // another trust anchor: whoever holds its key is trusted
		}
		if strings.HasSuffix(lk, ".allow") {
			off = strings.EqualFold(val, "always")
		}
		if lk == "core.protectntfs" || lk == "core.protecthfs" {
			off = gitFalse(val)
		}
		if off {
			w.verificationOff(prog, lk+"="+val)
			persist()
		}
	case gitKeyTrustAll:
		if val == "*" {
			w.verificationOff(prog, lk+"="+val)
			persist()
		}
	case gitKeyRedirect:
		target := val
		if strings.HasSuffix(lk, "insteadof") {
			target = gitKeySubsection(strings.TrimSpace(key))
		}
		if strings.Contains(target, "://") {
			w.packageSource(prog, target)
		} else if h, ok := remoteHost(target); ok {
			w.packageSource(prog, "ssh://"+h+"/")
		} else {
			w.packageSource(prog, target)
		}
		persist()
	}
	return true
}
