package normalize

import (
	"path"
	"regexp"
	"strings"
)

// The spec roles whose value is code, a command or a file named inside a sub-language (spec.go:
// sh, shcmd, prog, src, opaque, vim, sed, tarcp, sshopt, gdb, tcl, wgetrc, cookie, item), the
// %verbs directive of cloud and platform CLIs, and the handlers of programs whose argv is a command
// language (tmux, screen, kill). An option value that is code becomes an exec effect judged as the
// code it contains: shell is walked recursively (its commands have their own effects); code the
// engine cannot read, or a value that is an unresolved expansion, is unresolved (fail closed).

// specEffects applies the roles and directives above to one parsed command. commandEffects calls
// it before the program's handler.
func (w *walker) specEffects(f frame, pa parsedArgs, name string, args words, pipe bool, idx int, stdin string) {
	for _, v := range pa.vals {
		w.specRole(f, name, v.opt, v.role, v.val, v.dyn)
	}
	n := len(pa.operands)
	for k, i := range pa.operands {
		w.specRole(f, name, "", pa.roleAt(k, n), args.argv[i], args.dyn[i])
	}
	for _, c := range pa.spec.condFx {
		if pa.tags[c[1]] {
			w.fixedEffect(name, c[0])
		}
	}
	if pa.shRest >= 0 {
		start := len(w.s.act.Effects)
		w.runRest(f, pa.name, args.sub(pa.shRest), pipe, idx, stdin)
		w.launched(pa, name, args.sub(pa.shRest), start) // launchers.go
	}
	if pa.optRole != "" {
		w.optCommand(f, pa, name, args, pipe, idx, stdin)
	}
	if sp := w.s.n.opt.Commands.lookup(name); sp != nil && (sp.verbs || defaultVerbs(sp, name)) {
		w.verbEffects(sp, name, args)
		if sp.verbs {
			w.cloudOperation(sp, name, args) // cloud_ops.go
		}
	}
	if name == "git" {
		w.gitConfigCommands(f, pa)
	}
	switch name { // effects_subcmd.go
	case "cmake":
		w.cmakeTool(f, args, pipe, idx, stdin)
	case "go":
		w.goModReplace(args)
	case "cargo":
		w.cargoConfigSources(pa)
	}
	for _, v := range pa.vals {
		if v.role == "code" {
			w.codeShellOuts(f, name, v.val, v.dyn)
		}
	}
	switch pa.spec.handler {
	case "busybox":
		w.busyboxShell(f, args, pipe, idx, stdin)
	case "sed":
		w.sedOperand(f, pa, name, args)
	case "awk":
		w.awkProgram(f, pa, name, args)
	case "httpie":
		w.httpItems(pa, name, args)
	case "vim":
		ops := pa.words(args)
		for k, a := range ops.argv {
			if strings.HasPrefix(a, "+") && len(a) > 1 {
				w.specRole(f, name, "+", "vim", a[1:], ops.dyn[k])
			}
		}
		if pa.has("-e", "-E", "-es", "-Es") && pipe && idx > 0 && stdin == "" && !w.literalStdin(f, idx) {
			w.s.addUnresolved("Ex commands from standard input (" + name + ")")
			w.s.addEffect(Effect{Kind: EffectExec, Target: name, Program: name, Detail: "stdin", Unresolved: true})
		}
	case "atjob":
		// at/batch read the job's commands from standard input unless -f names a file.
		if _, _, ok := pa.val("-f"); ok {
			break
		}
		switch {
		case stdin != "":
			w.shellValue(f, name, name+" job", stdin, false)
		case pipe && idx > 0:
			if text, ok := w.echoedText(f, idx); ok {
				w.shellValue(f, name, name+" job", text, false)
			} else {
				w.stdinExec(name, "stdin", !w.literalStdin(f, idx))
			}
		}
	case "ed":
		// ed reads its commands from standard input: !CMD, r !CMD and w !CMD run shell.
		text, ok := stdin, stdin != ""
		if !ok && pipe && idx > 0 {
			text, ok = w.echoedText(f, idx)
			if !ok {
				w.stdinExec(name, "stdin", !w.literalStdin(f, idx))
			}
		}
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			for _, p := range []string{"!", "r !", "w !", "W !", "e !"} {
				if c, ok := strings.CutPrefix(line, p); ok {
					w.shellValue(f, name, name+" !", c, false)
					break
				}
			}
		}
	case "parallel":
		// parallel without a command runs its inputs (after ::: ) as command lines; inputs from a
		// file (::::) or standard input are unknown commands.
		sp := pa.spec
		i := 0
		for i < len(args.argv) && len(args.argv[i]) > 1 && args.argv[i][0] == '-' && args.argv[i] != ":::" {
			if args.argv[i] == "--" {
				i++
				break
			}
			if sp.opts[args.argv[i]] != "" {
				i++
			}
			i++
		}
		if i >= len(args.argv) || args.argv[i] != ":::" && args.argv[i] != "::::" {
			break
		}
		if args.argv[i] == "::::" {
			w.opaque(name, "parallel ::::", strings.Join(args.argv[i:], " "))
			break
		}
		for k := i + 1; k < len(args.argv) && k < i+1+maxLoopItems; k++ {
			if args.argv[k] == ":::" || args.argv[k] == "::::" {
				break
			}
			w.shellValue(f, name, "parallel :::", args.argv[k], args.dyn[k])
		}
	case "less":
		// less +CMD runs a less command at start: ! and | run shell commands.
		ops := pa.words(args)
		for k, a := range ops.argv {
			if strings.HasPrefix(a, "+") && strings.ContainsAny(a, "!|") {
				w.opaque(name, name+" +", a)
			} else if strings.HasPrefix(a, "+") && ops.dyn[k] {
				w.opaque(name, name+" +", a)
			}
		}
	case "capsh":
		// capsh [OPTIONS] -- ARGS: ARGS are given to /bin/bash.
		for i, a := range args.argv {
			if a == "--" && i+1 < len(args.argv) && f.depth+1 <= w.s.n.opt.MaxDepth {
				rest := words{argv: append([]string{"bash"}, args.argv[i+1:]...), dyn: append([]bool{false}, args.dyn[i+1:]...)}
				w.emit(frame{depth: f.depth + 1, via: "capsh --", sudo: f.sudo}, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
				break
			}
		}
	case "tmux":
		w.tmux(f, name, args, pipe, idx)
	case "screen":
		w.screen(f, pa, name, args, pipe, idx)
	case "kill":
		w.killAll(pa, name, args)
	case "db":
		w.dbEscapes(f, pa, name, args, stdin)
	case "make":
		// make VAR=VALUE: SHELL and .SHELLFLAGS choose what runs every recipe; a value holding shell
		// syntax is command text substituted into recipes. Neither is read: unresolved.
		ops := pa.words(args)
		for k, a := range ops.argv {
			name, val, ok := strings.Cut(a, "=")
			if !ok || !isName(strings.TrimSuffix(strings.TrimSuffix(name, "+"), ":")) {
				continue
			}
			if name == "SHELL" || name == ".SHELLFLAGS" || name == "MAKESHELL" ||
				!ops.dyn[k] && (strings.ContainsAny(val, ";|&`<>") || strings.Contains(val, "$(shell") || strings.Contains(val, "$(eval") || strings.Contains(val, "${shell")) {
				w.opaque("make", "make "+name+"=", a)
			}
		}
	case "jq":
		w.jqFilter(pa, name, args)
	}
}

// specRole records one value of a code-carrying role; other roles are applyRole's.
func (w *walker) specRole(f frame, prog, opt, role, val string, dyn bool) {
	s := w.s
	via := strings.TrimSpace(prog + " " + opt)
	if opt != "" && opt != "+" && (role == "sh" || role == "prog" || role == "pipeout") {
		// A command given as an option value is fed the program's data (psql -o '|cmd', man -P,
		// git -c core.pager, tar --to-command): what the program read flows into what it connects to.
		defer w.feed(prog, len(s.act.Effects))
	}
	switch role {
	case "sh":
		w.shellValue(f, prog, via, val, dyn)
	case "prog":
		w.progValue(f, prog, via, val, dyn)
	case "src":
		switch {
		case val == "-":
			w.stdinExec(prog, "stdin", true)
		case strings.Contains(val, "://"):
			w.urlEffect(prog, val, dyn)
			s.addUnresolved("code fetched from " + val + " (" + via + ")")
			s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: "download " + val, Unresolved: true})
		default:
			w.execFile(prog, val, dyn)
		}
	case "opaque":
		w.opaque(prog, via, val)
	case "expr":
		w.exprCode(f, prog, via, val, dyn) // inline_escapes.go
	case "vim":
		w.vimEx(f, prog, via, val, dyn, 0)
	case "sed":
		w.sedScript(f, prog, val, dyn)
	case "tarcp":
		if c, ok := strings.CutPrefix(val, "exec="); ok {
			w.shellValue(f, prog, via, c, dyn)
		}
	case "sshopt":
		key, v, ok := strings.Cut(val, "=")
		if !ok {
			key, v, _ = strings.Cut(val, " ")
		}
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "proxycommand", "localcommand", "knownhostscommand":
			w.shellValue(f, prog, via+" "+key, strings.TrimSpace(v), dyn)
		case "proxyjump":
			for _, h := range strings.Split(strings.TrimSpace(v), ",") {
				if h != "" && h != "none" {
					w.hostEffect(prog, h, "", "ssh", dyn)
				}
			}
		}
	case "gdb":
		w.debuggerCmd(f, prog, via, val, dyn)
	case "tcl":
		w.tclCode(f, prog, via, val, dyn)
	case "wgetrc":
		key, v, _ := strings.Cut(val, "=")
		switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(key), "-", "_")) {
		case "post_file", "body_file", "input", "load_cookies", "certificate", "private_key", "ca_certificate", "config":
			w.pathEffect(EffectRead, prog, strings.TrimSpace(v), dyn)
		case "output_document", "save_cookies", "logfile", "dir_prefix":
			w.pathEffect(EffectWrite, prog, strings.TrimSpace(v), dyn)
		case "use_askpass":
			w.progValue(f, prog, via, strings.TrimSpace(v), dyn)
		case "http_proxy", "https_proxy", "ftp_proxy":
			w.proxyTarget(prog, v, dyn) // routing.go
		}
	case "cookie":
		if !strings.Contains(val, "=") && val != "" && val != "-" {
			w.pathEffect(EffectRead, prog, val, dyn)
		}
	case "item":
		if p, ok := uploadItem(val); ok {
			w.sendFile(prog, "send", p, dyn) // reach.go: the request carries it
		}
	case DetailBind, DetailRelay:
		w.bindValue(prog, role, val, dyn) // listen.go
	case "pipeout":
		if c, ok := strings.CutPrefix(strings.TrimSpace(val), "|"); ok {
			w.shellValue(f, prog, via, c, dyn)
		} else {
			w.pathEffect(EffectWrite, prog, val, dyn)
		}
	}
}

// codeShellOuts walks the literal shell command lines that inline code of an interpreter hands to a
// shell, in the idioms the generic reading (effects_shell.go inlineCode) does not know: an argv
// "sh", "-c", "CMD" in any language, AppleScript do shell script, Lua os.execute/io.popen, Groovy
// "CMD".execute(), Erlang/Elixir os:cmd, Java Runtime.exec, Ruby %x{}, Perl qx{}, backticks of
// Perl/Ruby/PHP/Julia.
var (
	shellArgvRE  = regexp.MustCompile(`["'](?:/bin/|/usr/bin/)?(?:ba|z|da|k)?sh["']\s*,\s*["']-c["']\s*,\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')`)
	shellIdiomRE = regexp.MustCompile(`(?:do shell script\s+|os\.execute\s*\(\s*|io\.popen\s*\(\s*|os:cmd\s*\(\s*|Runtime\.getRuntime\(\)\.exec\s*\(\s*|Process\.Start\s*\(\s*|shell_exec\s*\(\s*)(?:"((?:[^"\\]|\\.)*)"|'([^']*)')|(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\.execute\(\)|%x[{(\[]([^})\]]*)[})\]]|\bqx\s*[{(/]([^})/]*)[})/]`)
	backtickRE   = regexp.MustCompile("`([^`]+)`")
)

func (w *walker) codeShellOuts(f frame, prog, code string, dyn bool) {
	if len(code) > maxExpandedWord || shells[prog] {
		return
	}
	via := prog + " code"
	walk := func(ms [][]string) {
		for _, m := range ms {
			for _, g := range m[1:] {
				if g != "" {
					w.shellValue(f, prog, via, strings.ReplaceAll(g, `\"`, `"`), dyn)
					break
				}
			}
		}
	}
	walk(shellArgvRE.FindAllStringSubmatch(code, 8))
	walk(shellIdiomRE.FindAllStringSubmatch(code, 8))
	switch prog {
	case "perl", "ruby", "php", "julia":
		walk(backtickRE.FindAllStringSubmatch(code, 8))
	}
}

// feed links the source effects of prog (reads, secrets, connections: its data) to the connections
// recorded since index before (by the command prog fed).
func (w *walker) feed(prog string, before int) {
	s := w.s
	var srcs []int
	for i := before - 1; i >= 0 && len(srcs) < 16; i-- {
		if e := s.act.Effects[i]; e.Program == prog && isSource(e) {
			srcs = append(srcs, i)
		}
	}
	for j := before; j < len(s.act.Effects); j++ {
		if s.act.Effects[j].Kind != EffectConnect {
			continue
		}
		for _, i := range srcs {
			s.addFlow(i, j, prog+" output")
		}
	}
}

// shellValue records and walks a shell command line run by prog.
func (w *walker) shellValue(f frame, prog, via, code string, dyn bool) {
	s := w.s
	if strings.TrimSpace(code) == "" {
		return
	}
	if f.depth+1 > s.n.opt.MaxDepth {
		s.act.Truncated = true
		return
	}
	s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: code})
	w.script(code, f.depth+1, via, f.sudo)
}

// progValue records a program prog runs (scp -S PROG): a path is an exec of that file (a system
// binary by its name), a name is walked as a command; a name without a spec is unresolved.
func (w *walker) progValue(f frame, prog, via, val string, dyn bool) {
	s := w.s
	val = strings.TrimSpace(val)
	switch {
	case val == "":
		return
	case dyn && isUnresolvedText(val):
		s.addUnresolved("program " + val + " (" + via + ")")
		s.addEffect(Effect{Kind: EffectExec, Target: val, Program: prog, Detail: "program", Unresolved: true})
		return
	case strings.ContainsAny(val, " \t;|&<>`$("):
		w.shellValue(f, prog, via, val, dyn)
		return
	}
	if strings.Contains(val, "/") {
		clean, ok := resolvePath(val, s.cwd, s.n.opt.Home)
		if !ok {
			return
		}
		if !systemBinDirs[path.Dir(clean)] {
			w.execFile(prog, val, dyn)
			return
		}
		val = path.Base(clean)
	}
	if s.n.opt.Commands.lookup(val) == nil {
		s.addUnresolved("program " + val + " (" + via + ")")
		s.addEffect(Effect{Kind: EffectExec, Target: val, Program: prog, Detail: "program", Unresolved: true})
		return
	}
	w.shellValue(f, prog, via, val, false)
}

// opaque records code in a language the engine does not read: unresolved.
func (w *walker) opaque(prog, via, code string) {
	if strings.TrimSpace(code) == "" {
		return
	}
	w.s.addUnresolved("code not read (" + via + ")")
	w.s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: code, Unresolved: true})
}

// runRest runs the rest of argv of a shcmd operand: one word is a shell command line, several an
// argv.
func (w *walker) runRest(f frame, via string, rest words, pipe bool, idx int, stdin string) {
	s := w.s
	if len(rest.argv) == 0 {
		return
	}
	if f.depth+1 > s.n.opt.MaxDepth {
		s.act.Truncated = true
		return
	}
	if len(rest.argv) == 1 || strings.ContainsAny(rest.argv[0], " \t\n;|&") {
		// One word, or a first word that is itself a command line (pm2 start 'a | b' --name x):
		// shell. The words after it are the launcher's own.
		prog, _, _ := strings.Cut(via, " ")
		w.shellValue(f, prog, via, rest.argv[0], rest.dyn[0])
		return
	}
	child := frame{depth: f.depth + 1, via: via, sudo: f.sudo}
	w.emit(child, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
}

// optCommand runs the command of a cmd/shcmd option (fd -x CMD, xterm -e CMD). For fd, "{}" in it
// stands for what fd walks: its path operands (after the pattern), or ".".
func (w *walker) optCommand(f frame, pa parsedArgs, name string, args words, pipe bool, idx int, stdin string) {
	s := w.s
	rest := pa.optRest
	if len(rest.argv) == 0 {
		return
	}
	x := s.fx()
	prev := x.roots
	defer func() { x.roots = prev }()
	if pa.spec.handler == "fd" {
		ops := pa.words(args)
		roots := []string{"."}
		if len(ops.argv) > 1 {
			roots = ops.argv[1:]
		}
		x.roots = roots
		rest = fdPlaceholder(rest) // reach.go: fd appends the path when the command names none
	}
	if pa.optRole == "shcmd" {
		w.runRest(f, pa.name, rest, pipe, idx, stdin)
		return
	}
	if f.depth+1 > s.n.opt.MaxDepth {
		s.act.Truncated = true
		return
	}
	child := frame{depth: f.depth + 1, via: pa.name, sudo: f.sudo}
	w.emit(child, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
}

// gitCommandKeys: configuration whose value git runs as a shell command line (or a program) while it
// works. Given with -c for one command, the command runs in this call: walked.
var gitCommandKeys = regexp.MustCompile(`^(?:core\.(?:sshcommand|pager|editor|askpass|fsmonitor|gitproxy)|sequence\.editor|gpg\.(?:[a-z0-9]+\.)?program|diff\.external|diff\.[^.]+\.(?:textconv|command)|merge\.[^.]+\.driver|filter\.[^.]+\.(?:clean|smudge|process)|uploadpack\.packobjectshook|remote\.[^.]+\.(?:uploadpack|receivepack)|pager\.[^.]+|interactive\.difffilter|web\.browser|browser\.[^.]+\.cmd|man\.[^.]+\.cmd|sendemail\.(?:sendmailcmd|tocmd|cccmd)|credential\.(?:[^=]+\.)?helper|alias\.[^.]+)$`)

func (w *walker) gitConfigCommands(f frame, pa parsedArgs) {
	for _, v := range pa.vals {
		if v.opt != "-c" && v.opt != "--config" {
			continue
		}
		key, val, _ := strings.Cut(v.val, "=")
		lk := strings.ToLower(key)
		if !gitCommandKeys.MatchString(lk) || val == "" {
			continue
		}
		switch {
		case strings.HasPrefix(val, "!"):
			w.shellValue(f, "git", "git -c "+key, val[1:], v.dyn)
		case strings.HasPrefix(lk, "alias."):
			// An alias without '!' is git arguments, walked when it is used.
		case strings.HasPrefix(lk, "credential.") && !strings.ContainsAny(val, "/ "):
			// credential.helper=store: git-credential-store, a helper of git's own.
		case lk == "core.fsmonitor" && (val == "true" || val == "false"):
		default:
			w.shellValue(f, "git", "git -c "+key, val, v.dyn)
		}
	}
}

// echoedText is the literal text "echo ARGS" or "printf FORMAT" writes into pipeline stage idx
// (at this frame's depth), when that stage is one of them and fully literal.
func (w *walker) echoedText(f frame, idx int) (string, bool) {
	cmds := w.s.act.Commands
	for k := len(cmds) - 1; k >= 0; k-- {
		c := cmds[k]
		if c.Depth != f.depth || !c.Pipe || c.PipeIndex != idx-1 {
			continue
		}
		if c.Dynamic || c.Name != "echo" && c.Name != "printf" {
			return "", false
		}
		args := c.Args
		for len(args) > 0 && c.Name == "echo" && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne") {
			args = args[1:]
		}
		text := strings.Join(args, " ")
		if c.Name == "printf" && len(args) > 0 {
			text = strings.NewReplacer(`\n`, "\n", "%s", " ").Replace(strings.Join(args, " "))
		}
		return text, text != ""
	}
	return "", false
}

// unknownLauncher reads the arguments of a program without a spec for a command it may run: an
// argv that starts with a shell ("PROG sh -c CODE", "PROG bash script.sh") is walked from there, and
// a single argument that is a command line of a known program ("PROG 'sleep 1; curl … | sh'") is
// walked as shell. What the unknown program does with them stays unknown (it is an unknown
// program); what they would do is seen, so a launcher missing from the specs hides nothing.
func (w *walker) unknownLauncher(f frame, name string, args words, pipe bool, idx int, stdin string) {
	s := w.s
	if f.depth+1 > s.n.opt.MaxDepth {
		return
	}
	if w.dashDashUnknown(f, name, args, pipe, idx, stdin) { // launchers.go: "PROG … -- CMD …"
		return
	}
	for i, a := range args.argv {
		if args.dyn[i] {
			continue
		}
		if shells[path.Base(a)] && i+1 < len(args.argv) {
			child := frame{depth: f.depth + 1, via: name + " (unknown program)", sudo: f.sudo}
			rest := args.sub(i)
			w.emit(child, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
			return
		}
		if !strings.ContainsAny(a, " \t\n") || len(a) > maxExpandedWord {
			continue
		}
		fields := strings.FieldsFunc(a, func(r rune) bool { return strings.ContainsRune(" \t\n;|&()<>", r) })
		if len(fields) == 0 {
			continue
		}
		if p := path.Base(fields[0]); shells[p] || s.n.opt.Commands.lookup(p) != nil && strings.ContainsAny(a, "|;&$`<>") {
			w.shellValue(f, name, name+" (unknown program)", a, false)
		}
	}
	// An unknown CLI's sub-command words are classified as a %verbs CLI's: "velero backup delete"
	// is a delete whatever velero is.
	w.verbEffects(&cmdSpec{}, name, args)
}

// defaultVerbs: a program whose spec does not model its sub-commands (no %sub, no handler, every
// operand ignored) gets %verbs by default, so "argocd app delete" is a delete although the spec only
// says "argocd: _*". Programs whose operands are text, targets or code (echo, make, python) do not:
// their words name no action of theirs.
func defaultVerbs(sp *cmdSpec, name string) bool {
	if sp.sub || sp.handler != "" || sp.posix || verbTextPrograms[name] {
		return false
	}
	for _, r := range sp.operands {
		if r != "_*" && r != "_" {
			return false
		}
	}
	for _, fx := range sp.fx {
		if strings.HasPrefix(fx, EffectExec) || strings.HasPrefix(fx, EffectDelete) {
			return false // a runner of targets or scripts (make, just, gradle), or already a delete
		}
	}
	for _, role := range sp.opts {
		switch role {
		case "code", "script", "sh", "shcmd", "cmd", "src", "opaque":
			return false // an interpreter or launcher: its operands are code or a command
		}
	}
	return true
}

// verbTextPrograms take free text, names or expressions as operands (echo delete, test -n, which
// rm, man rm), never a sub-command of their own.
var verbTextPrograms = set("echo", "printf", "print", "yes", "seq", "date", "sleep", "test", "[", "expr", "factor", "numfmt", "true",
	"false", "tr", "basename", "dirname", "which", "whereis", "type", "hash", "alias", "unalias", "local", "readonly", "unset",
	"shopt", "read", "mapfile", "readarray", "popd", "pushd", "dirs", "exit", "return", "shift", "wait", "trap", "ulimit", "umask",
	"fc", "jobs", "bg", "fg", "disown", "getopts", "let", "break", "continue", "export", "declare", "typeset", "set", "tput",
	"stty", "say", "notify-send", "envsubst", "info", "man", "tldr", "whatis", "apropos", "fzf", "locate", "command", "builtin",
	"figlet", "cowsay", "logger", "wall", "write", "pgrep", "pidof", "ps", "host", "nslookup", "whois", "dig", "traceroute",
	"getconf", "locale", "csplit", "grpcurl", "open", "xdg-open", "code", "delta", "tig", "lazygit", "stern", "mockgen",
	"stringer", "swag", "commitlint", "changeset", "cd", "mknod", "sync", "df")

// ---------------------------------------------------------------------------------------------
// Cloud and platform CLIs (%verbs)

// destroyVerbs select a destructive action; tokenVerbs print a credential.
var (
	destroyVerbs = set("delete", "destroy", "remove", "rm", "rb", "rmi", "prune", "purge", "terminate", "teardown", "wipe", "nuke",
		"erase", "deprovision", "drop", "truncate", "uninstall", "unprovision", "decommission", "deregister", "unregister", "empty", "del",
		"rmdir", "rmdirs", "deletefile", "revoke", "reset", "kill", "scale-to-zero", "obliterate", "shred", "zap", "evict", "expunge",
		"unpublish", "undeploy", "flushall", "flushdb")
	tokenVerbs = set("token", "tokens", "print-access-token", "print-identity-token", "get-access-token", "access-token", "api-key",
		"api-keys", "apikey", "apikeys", "print-credentials", "show-credentials", "get-token", "print-token",
		"show-token", "auth-token", "get-login-password", "get-password", "get-secret", "reveal", "login:ci", "secrets:get", "export-credentials",
		"docker-config", "kubeconfig:get", "config-helper", "get-role-credentials", "get-federation-token", "get-session-token",
		"assume-role", "assume-role-with-web-identity", "get-authorization-token", "create-access-key", "generate-db-auth-token",
		"print-secret", "access-secret")
	// readVerbs select a read-only action; words after them are operands, not sub-commands.
	readVerbs = set("get", "list", "ls", "describe", "show", "status", "logs", "log", "version", "help", "diff", "plan", "info",
		"inspect", "view", "top", "history", "search", "explain", "lint", "template", "whoami", "validate", "check")
	// destroyFlags make an otherwise reversible sub-command destroy its object.
	destroyFlags = set("-purge", "--purge")
	// tokenFlags make an otherwise plain sub-command print a credential.
	tokenFlags = set("--expose-token", "--show-token", "--show-secrets", "--reveal", "--show-sensitive", "--decrypt")
)

// verbWords are the leading operand words of a CLI call (its sub-command path), options and the
// values of the options the spec lists skipped: at most 4.
func verbWords(sp *cmdSpec, args words) []string {
	var out []string
	for i := 0; i < len(args.argv) && len(out) < 4; i++ {
		a := args.argv[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			if _, ok := sp.opts[a]; ok {
				i++
			}
			continue
		}
		if args.dyn[i] {
			out = append(out, "$")
			continue
		}
		out = append(out, strings.ToLower(a))
	}
	return out
}

// verbClass reports whether word w (or one of its ':'-separated parts) starts with a verb of set:
// "destroy", "apps:destroy", "delete-db-instance", "terminate-instances".
func verbClass(word string, verbs map[string]bool) bool {
	if verbs[word] {
		return true
	}
	for _, p := range strings.Split(word, ":") {
		if verbs[p] {
			return true
		}
		if i := strings.IndexByte(p, '-'); i > 0 && verbs[p[:i]] {
			return true
		}
	}
	return false
}

func (w *walker) verbEffects(sp *cmdSpec, name string, args words) {
	s := w.s
	ws := verbWords(sp, args)
	for _, a := range args.argv {
		if a == "--" {
			break
		}
		if f, _, _ := strings.Cut(a, "="); tokenFlags[f] {
			s.addEffect(Effect{Kind: EffectSecret, Target: name + " " + f, Program: name, Detail: "cloud_token"})
			break
		}
		if destroyFlags[a] {
			// "nomad job stop -purge api": the flag makes a stop a delete.
			s.addEffect(Effect{Kind: EffectDelete, Target: "cloud", Program: name, Detail: name + " " + a})
			break
		}
	}
	for k, v := range ws {
		detail := name + " " + strings.Join(ws[:k+1], " ")
		switch {
		case v == "$":
			// A sub-command from an expansion: what the CLI does is unknown.
			s.addUnresolved("sub-command " + args.argv[0] + " (" + name + ")")
			return
		case verbClass(v, tokenVerbs) || strings.HasSuffix(v, "-token") || strings.HasSuffix(v, ":token"):
			s.addEffect(Effect{Kind: EffectSecret, Target: detail, Program: name, Detail: "cloud_token"})
			return
		case verbClass(v, destroyVerbs):
			s.addEffect(Effect{Kind: EffectDelete, Target: "cloud", Program: name, Detail: detail})
			return
		case readVerbs[v]:
			return // "argocd app get delete-me": the words after a read verb are its operands
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Editors: Ex commands (vim -c, --cmd, +CMD; ex -c)

var (
	vimRangeRE  = regexp.MustCompile(`^(?:[%.$]|\d+|'[<>a-z]|/[^/]*/|\?[^?]*\?|[+-]\d*|[,;])*`)
	vimSystemRE = regexp.MustCompile(`\b(?:system|systemlist|job_start|jobstart|termopen|term_start|libcall|libcallnr)\s*\(\s*(?:(["'])((?:[^"'\\]|\\.)*)["']|([^)]*))`)
)

func (w *walker) vimEx(f frame, prog, via, cmd string, dyn bool, depth int) {
	s := w.s
	if depth > 3 {
		s.addUnresolved("nested Ex commands (" + via + ")")
		return
	}
	cmd = strings.TrimLeft(cmd, ": \t")
	cmd = cmd[len(vimRangeRE.FindString(cmd)):]
	cmd = strings.TrimLeft(cmd, " \t")
	if cmd == "" {
		return
	}
	if m := vimSystemRE.FindStringSubmatch(cmd); m != nil {
		if m[1] != "" && !strings.ContainsAny(m[2], "\\") {
			w.shellValue(f, prog, via, m[2], dyn)
		} else {
			s.addUnresolved("Ex code running a computed command (" + via + ")")
			s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: cmd, Unresolved: true})
		}
	}
	if cmd[0] == '!' {
		w.shellValue(f, prog, via, strings.TrimPrefix(cmd[1:], "!"), dyn)
		return
	}
	word := cmd
	for i, r := range cmd {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && i > 0) {
			word = cmd[:i]
			break
		}
	}
	rest := strings.TrimSpace(strings.TrimPrefix(cmd[len(word):], "!"))
	bang := strings.HasPrefix(cmd[len(word):], "!")
	switch word {
	case "sil", "sile", "silen", "silent", "exe", "exec", "execu", "execut", "execute", "norm", "norma", "normal", "keepalt", "noautocmd",
		"keepj", "keepjumps", "keepp", "keeppatterns", "unsilent", "vert", "vertical", "tab", "bo", "botright", "to", "topleft", "lefta",
		"leftabove", "rightb", "rightbelow", "aboveleft", "belowright", "hide", "windo", "bufdo", "tabdo", "argdo", "cdo", "ldo", "folddoopen",
		"au", "autocmd", "com", "command", "call", "cal", "echo", "ec", "let", "if", "wh", "while", "for", "try", "lockmarks":
		switch {
		case strings.HasPrefix(word, "exe"):
			// :execute EXPR: the command is computed.
			if q := strings.TrimSpace(rest); len(q) > 1 && (q[0] == '"' || q[0] == '\'') && strings.LastIndexByte(q, q[0]) == len(q)-1 && !strings.ContainsAny(q[1:len(q)-1], "\"'.") {
				w.vimEx(f, prog, via, q[1:len(q)-1], dyn, depth+1)
			} else if q != "" {
				s.addUnresolved("computed Ex command (" + via + ")")
				s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: cmd, Unresolved: true})
			}
		case strings.HasPrefix(word, "norm"):
			if strings.ContainsAny(rest, ":!") || strings.Contains(rest, "Q") {
				s.addUnresolved("typed keys run Ex commands (" + via + ")")
				s.addEffect(Effect{Kind: EffectExec, Target: prog, Program: prog, Detail: cmd, Unresolved: true})
			}
		case word == "au" || word == "autocmd":
			// :autocmd EVENT PAT CMD: CMD runs later in this session.
			if fs := strings.Fields(rest); len(fs) > 2 {
				w.vimEx(f, prog, via, strings.Join(fs[2:], " "), dyn, depth+1)
			}
		case word == "com" || word == "command":
			if fs := strings.Fields(rest); len(fs) > 1 {
				k := 0
				for k < len(fs) && strings.HasPrefix(fs[k], "-") {
					k++
				}
				if k+1 < len(fs) {
					w.vimEx(f, prog, via, strings.Join(fs[k+1:], " "), dyn, depth+1)
				}
			}
		case word == "call" || word == "cal" || word == "echo" || word == "ec" || word == "let" || word == "if" || word == "wh" || word == "while" || word == "for" || word == "try":
			// Expressions: system() and friends were read above.
		default:
			w.vimEx(f, prog, via, rest, dyn, depth+1)
		}
	case "r", "re", "rea", "read":
		if strings.HasPrefix(rest, "!") {
			w.shellValue(f, prog, via, rest[1:], dyn)
		} else if rest != "" && !strings.HasPrefix(rest, "++") {
			w.pathEffect(EffectRead, prog, rest, dyn)
		}
	case "w", "wr", "wri", "writ", "write", "sav", "saveas", "wq", "x", "xi", "xit", "exi", "exit", "up", "update", "wa", "wall", "wqa", "wqall", "xa", "xall":
		if strings.HasPrefix(rest, "!") {
			w.shellValue(f, prog, via, rest[1:], dyn)
		} else if strings.HasPrefix(rest, ">>") {
			w.pathEffect(EffectWrite, prog, strings.TrimSpace(rest[2:]), dyn)
		} else if rest != "" && !strings.HasPrefix(rest, "++") {
			w.pathEffect(EffectWrite, prog, rest, dyn)
		}
		_ = bang
	case "e", "ed", "edi", "edit", "sp", "split", "vs", "vsplit", "new", "vne", "vnew", "tabe", "tabedit", "tabnew", "vie", "view", "sv", "sview", "fin", "find", "badd", "arge", "argedit", "args":
		if rest != "" && !strings.HasPrefix(rest, "++") && !strings.HasPrefix(rest, "+") {
			w.pathEffect(EffectRead, prog, rest, dyn)
		}
	case "so", "sou", "sour", "sourc", "source", "ru", "runtime", "luafile", "pyf", "pyfile", "py3f", "py3file", "pyxfile", "perld", "perldo", "rubyf", "rubyfile", "tclf", "tclfile":
		if rest != "" {
			w.execFile(prog, rest, dyn)
		}
	case "ter", "term", "termi", "termin", "termina", "terminal", "sh", "she", "shel", "shell", "mak", "make", "lmak", "lmake", "gr", "grep", "lgr", "lgrep", "dif", "diffpatch", "star", "startinsert":
		switch {
		case strings.HasPrefix(word, "ter"):
			// :terminal [++opts] CMD
			for strings.HasPrefix(rest, "++") {
				_, rest, _ = strings.Cut(rest, " ")
				rest = strings.TrimSpace(rest)
			}
			if rest == "" {
				rest = "sh"
			}
			w.shellValue(f, prog, via, rest, dyn)
		case strings.HasPrefix(word, "sh"):
			w.shellValue(f, prog, via, "sh", dyn)
		case strings.Contains(word, "mak"):
			w.shellValue(f, prog, via, strings.TrimSpace("make "+rest), dyn)
		}
	case "py", "pyt", "pyth", "pytho", "python", "py3", "python3", "pyx", "pythonx", "pydo", "py3do":
		w.codeEffect("python3", rest, dyn)
	case "lua", "luado":
		w.codeEffect("lua", rest, dyn)
	case "perl", "pe":
		w.codeEffect("perl", rest, dyn)
	case "rub", "ruby", "rubydo":
		w.codeEffect("ruby", rest, dyn)
	case "tcl", "tcldo", "mz", "mzscheme":
		w.opaque(prog, via, rest)
	case "se", "set", "setl", "setlocal", "setg", "setglobal":
		for _, o := range strings.Fields(rest) {
			k, v, _ := strings.Cut(o, "=")
			switch strings.TrimRight(k, "+^-") {
			case "shell", "sh", "makeprg", "mp", "grepprg", "gp", "keywordprg", "kp", "equalprg", "ep", "formatprg", "fp", "shellcmdflag", "shcf", "diffexpr", "dex", "patchexpr", "pex", "charconvert", "ccv", "printexpr", "pexpr":
				w.opaque(prog, via, "set "+k+"="+v)
			}
		}
	}
	// ":cmd | cmd": a bar ends a command that does not take it (not !, :r !, :w !, :normal).
	if i := strings.Index(cmd, "|"); i > 0 && !strings.Contains(cmd[:i], "!") && !strings.HasPrefix(word, "norm") && !strings.HasPrefix(word, "exe") &&
		word != "au" && word != "autocmd" && word != "com" && word != "command" {
		w.vimEx(f, prog, via, cmd[i+1:], dyn, depth+1)
	}
}

// ---------------------------------------------------------------------------------------------
// sed scripts (GNU): e runs shell, s///e runs the pattern space, w/W write, r/R read.

func (w *walker) sedOperand(f frame, pa parsedArgs, name string, args words) {
	for _, v := range pa.vals {
		if v.role == "sed" || v.opt == "-f" || v.opt == "--file" {
			return // the script was given by -e/-f (specRole read it); operands are files
		}
	}
	ops := pa.words(args)
	if len(ops.argv) > 0 {
		w.sedScript(f, name, ops.argv[0], ops.dyn[0])
	}
}

func (w *walker) sedScript(f frame, prog, script string, dyn bool) {
	s := w.s
	via := prog + " script"
	i := 0
	n := len(script)
	toEOL := func() string {
		j := strings.IndexByte(script[i:], '\n')
		if j < 0 {
			j = n - i
		}
		v := script[i : i+j]
		i += j
		return v
	}
	skipAddr := func() {
		for i < n {
			c := script[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' || c == '!' || c == ' ' || c == '\t':
				i++
			case c == '/' || c == '\\':
				d := byte('/')
				if c == '\\' && i+1 < n {
					i++
					d = script[i]
				}
				i++
				for i < n && script[i] != d {
					if script[i] == '\\' {
						i++
					}
					i++
				}
				i++
				for i < n && (script[i] == 'I' || script[i] == 'M') {
					i++
				}
			default:
				return
			}
		}
	}
	for steps := 0; i < n && steps < 256; steps++ {
		for i < n && strings.IndexByte(" \t\n;{}", script[i]) >= 0 {
			i++
		}
		if i >= n {
			break
		}
		skipAddr()
		if i >= n {
			break
		}
		c := script[i]
		i++
		switch c {
		case '#':
			toEOL()
		case ':':
			// A label: GNU sed ends it at ';' as well as at a newline (":a;N;ba").
			for i < n && script[i] != ';' && script[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c':
			toEOL()
		case 'b', 't', 'T':
			for i < n && script[i] != ';' && script[i] != '\n' {
				i++
			}
		case 'e':
			cmd := strings.TrimSpace(toEOL())
			if cmd == "" {
				s.addUnresolved("sed e runs the pattern space (" + prog + ")")
				s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: "sed e: pattern space", Unresolved: true})
			} else {
				w.shellValue(f, prog, via, cmd, dyn)
			}
		case 'r', 'R':
			w.pathEffect(EffectRead, prog, strings.TrimSpace(toEOL()), dyn)
		case 'w', 'W':
			w.pathEffect(EffectWrite, prog, strings.TrimSpace(toEOL()), dyn)
		case 'y', 's':
			if i >= n {
				return
			}
			d := script[i]
			i++
			parts := []string{}
			for p := 0; p < 2 && i <= n; p++ {
				start := i
				for i < n && script[i] != d {
					if script[i] == '\\' {
						i++
					}
					i++
				}
				if i > n {
					i = n
				}
				parts = append(parts, script[start:i])
				i++
			}
			if c == 'y' || i > n {
				continue
			}
			// Flags: g p i I m M e NUMBER w FILE.
			for i < n {
				fl := script[i]
				if fl == 'w' {
					i++
					w.pathEffect(EffectWrite, prog, strings.TrimSpace(toEOL()), dyn)
					break
				}
				if fl == 'e' {
					repl := ""
					if len(parts) == 2 {
						repl = parts[1]
					}
					if repl != "" && !strings.ContainsAny(repl, "\\&") {
						w.shellValue(f, prog, via, repl, dyn)
					} else {
						s.addUnresolved("sed s///e runs the pattern space (" + prog + ")")
						s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: "sed s///e", Unresolved: true})
					}
				}
				if strings.IndexByte("gpiImMe0123456789", fl) < 0 {
					break
				}
				i++
			}
		default:
			// q Q l L = d D g G h H n N p P x z F: no file, no command; an optional number.
			for i < n && (script[i] >= '0' && script[i] <= '9' || script[i] == ' ') {
				i++
			}
		}
	}
}

// ---------------------------------------------------------------------------------------------
// awk programs: literal commands of system(), "cmd" | getline and print | "cmd" are walked;
// print > "file" writes, getline < "file" reads.

var (
	awkSystemRE  = regexp.MustCompile(`\bsystem\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)`)
	awkGetlineRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*\|\s*getline`)
	awkPipeRE    = regexp.MustCompile(`(?:^|[^|])\|&?\s*"((?:[^"\\]|\\.)*)"`)
	awkWriteRE   = regexp.MustCompile(`\bprintf?\b[^;}]*?>>?\s*"((?:[^"\\]|\\.)*)"`)
	awkReadRE    = regexp.MustCompile(`\bgetline\b\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*)?<\s*"((?:[^"\\]|\\.)*)"`)
)

func (w *walker) awkProgram(f frame, pa parsedArgs, name string, args words) {
	if _, _, ok := pa.val("-f", "--file"); ok {
		return
	}
	ops := pa.words(args)
	if len(ops.argv) == 0 || len(ops.argv[0]) > maxExpandedWord {
		return
	}
	prog, dyn := ops.argv[0], ops.dyn[0]
	for _, re := range []*regexp.Regexp{awkSystemRE, awkGetlineRE, awkPipeRE} {
		for _, m := range re.FindAllStringSubmatch(prog, 8) {
			w.shellValue(f, name, name+" program", strings.ReplaceAll(m[1], `\"`, `"`), dyn)
		}
	}
	for _, m := range awkWriteRE.FindAllStringSubmatch(prog, 8) {
		w.pathEffect(EffectWrite, name, m[1], dyn)
	}
	for _, m := range awkReadRE.FindAllStringSubmatch(prog, 8) {
		w.pathEffect(EffectRead, name, m[1], dyn)
	}
}

// ---------------------------------------------------------------------------------------------
// HTTPie request items (http, https, xh, xhs, curlie): NAME@FILE uploads FILE; NAME=@FILE and
// NAME:=@FILE embed it.

// uploadItem returns the file an HTTPie request item reads.
func uploadItem(a string) (string, bool) {
	i := strings.IndexByte(a, '@')
	if i == 0 && len(a) > 1 {
		return a[1:], true // @FILE: the raw request body (HTTPie, xh)
	}
	if i <= 0 || i == len(a)-1 {
		return "", false
	}
	name := a[:i]
	name = strings.TrimSuffix(strings.TrimSuffix(name, ":="), "=")
	if name == "" || !isFormName(strings.ReplaceAll(strings.ReplaceAll(name, "[", ""), "]", "")) {
		return "", false
	}
	f := a[i+1:]
	if j := strings.IndexByte(f, ';'); j > 0 {
		f = f[:j] // NAME@FILE;type=MIME
	}
	return f, true
}

func (w *walker) httpItems(pa parsedArgs, name string, args words) {
	ops := pa.words(args)
	urlSeen := false
	for k, a := range ops.argv {
		if !urlSeen {
			if strings.Contains(a, "://") || looksLikeHost(a) || strings.HasPrefix(a, ":") || strings.HasPrefix(a, "localhost") {
				urlSeen = true
			}
			continue
		}
		if p, ok := uploadItem(a); ok {
			w.sendFile(name, "send", p, ops.dyn[k]) // reach.go: the request carries it
		}
	}
}

// ---------------------------------------------------------------------------------------------
// busybox/toybox: an applet shell reading its standard input runs what the pipe feeds it.

func (w *walker) busyboxShell(f frame, args words, pipe bool, idx int, stdin string) {
	if len(args.argv) == 0 || !shells[args.argv[0]] {
		return
	}
	_, hasC, file := shellScript(args.argv[1:])
	if hasC || file != "" || stdin != "" {
		return // follow() walked the -c script, the file or the literal input
	}
	w.stdinExec(args.argv[0], "stdin", pipe && idx > 0 && !w.literalStdin(f, idx))
}

// ---------------------------------------------------------------------------------------------
// Debuggers (gdb -ex, lldb -o) and expect/Tcl code.

var callSystemRE = regexp.MustCompile(`\b(?:system|popen|execl|execlp|execv|execve|execvp)\s*\(\s*(?:\(char\s*\*\)\s*)?(?:"((?:[^"\\]|\\.)*)"|([^)]*))`)

func (w *walker) debuggerCmd(f frame, prog, via, cmd string, dyn bool) {
	c := strings.TrimSpace(cmd)
	word, rest, _ := strings.Cut(c, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(c, "!"):
		w.shellValue(f, prog, via, c[1:], dyn)
	case word == "shell" || word == "she":
		w.shellValue(f, prog, via, rest, dyn)
	case word == "platform" && strings.HasPrefix(rest, "shell"):
		w.shellValue(f, prog, via, strings.TrimSpace(strings.TrimPrefix(rest, "shell")), dyn)
	case word == "pipe" || word == "|":
		if i := strings.IndexByte(rest, '|'); i >= 0 {
			w.shellValue(f, prog, via, rest[i+1:], dyn)
		}
	case word == "python" || word == "py" || word == "python-interactive" || word == "pi" || word == "script":
		w.codeEffect("python3", rest, dyn)
	case word == "source" || word == "command" && strings.HasPrefix(rest, "source"):
		w.execFile(prog, strings.TrimSpace(strings.TrimPrefix(rest, "source")), dyn)
	case word == "guile" || word == "gu" || word == "compile" || word == "jit-reader-load" || word == "load":
		w.opaque(prog, via, c)
	}
	if m := callSystemRE.FindStringSubmatch(c); m != nil {
		if m[2] == "" && m[1] != "" {
			w.shellValue(f, prog, via, m[1], dyn)
		} else {
			w.opaque(prog, via, c)
		}
	}
}

var tclRunRE = regexp.MustCompile(`(?:^|[;\n\[{]\s*)(spawn|exec|system|open\s+"\|)\s+([^;\n\]}]*)`)

func (w *walker) tclCode(f frame, prog, via, code string, dyn bool) {
	for _, m := range tclRunRE.FindAllStringSubmatch(code, 16) {
		cmd := strings.TrimSpace(m[2])
		if strings.HasPrefix(m[1], "spawn") || strings.HasPrefix(m[1], "exec") {
			for strings.HasPrefix(cmd, "-") && !strings.HasPrefix(cmd, "--") {
				_, cmd, _ = strings.Cut(cmd, " ")
				cmd = strings.TrimSpace(cmd)
			}
			cmd = strings.TrimSpace(strings.TrimPrefix(cmd, "--"))
		}
		if strings.ContainsAny(cmd, "$[") {
			w.opaque(prog, via, m[0])
			continue
		}
		// Tcl braces quote like shell single quotes; double quotes are the same in both.
		w.shellValue(f, prog, via, strings.NewReplacer("{", "'", "}", "'").Replace(cmd), dyn)
	}
	if strings.Contains(code, "eval") || strings.Contains(code, "uplevel") {
		w.opaque(prog, via, code)
	}
}

// ---------------------------------------------------------------------------------------------
// tmux and screen: command languages whose commands run shell command lines.

// tmuxValueFlags: for each tmux command that runs a shell command, the flags taking a value.
var tmuxCommands = map[string]string{
	"new-session": "cefnstxyFX", "new": "cefnstxyFX", "new-window": "censtF", "neww": "censtF", "split-window": "celtFp", "splitw": "celtFp",
	"respawn-pane": "cet", "respawnp": "cet", "respawn-window": "cet", "respawnw": "cet", "run-shell": "dtc", "run": "dtc",
	"if-shell": "t", "if": "t", "pipe-pane": "t", "pipep": "t", "display-popup": "cdehstwxyBSTb", "popup": "cdehstwxyBSTb",
	"send-keys": "NtT", "send": "NtT", "set-hook": "t", "bind-key": "NTt", "bind": "NTt", "source-file": "t", "source": "t",
	"set-option": "t", "set": "t", "set-window-option": "t", "setw": "t", "command-prompt": "ItpT", "confirm-before": "ptc",
}

func (w *walker) tmux(f frame, name string, args words, pipe bool, idx int) {
	// Global options: -L SOCKET -S PATH -f FILE -T FEATURES -c SHELL-COMMAND.
	i := 0
	for i < len(args.argv) {
		a := args.argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for k := 1; k < len(a); k++ {
			if strings.IndexByte("LSfTc", a[k]) >= 0 {
				v := a[k+1:]
				if v == "" && i+1 < len(args.argv) {
					i++
					v = args.argv[i]
				}
				switch a[k] {
				case 'c':
					w.shellValue(f, name, name+" -c", v, args.dyn[i])
				case 'f':
					w.execFile(name, v, args.dyn[i])
				}
				break
			}
		}
		i++
	}
	w.tmuxCommands(f, name, args.sub(i), 0)
}

func (w *walker) tmuxCommands(f frame, name string, args words, depth int) {
	s := w.s
	if depth > 3 {
		s.addUnresolved("nested tmux commands (" + name + ")")
		return
	}
	// Commands are separated by ";" words (written \; in the shell) or words ending in ";".
	start := 0
	for i := 0; i <= len(args.argv); i++ {
		end := i == len(args.argv)
		if !end && args.argv[i] != ";" && !strings.HasSuffix(args.argv[i], "\\;") && !(strings.HasSuffix(args.argv[i], ";") && len(args.argv[i]) > 1) {
			continue
		}
		cmd := words{argv: append([]string{}, args.argv[start:i]...), dyn: append([]bool{}, args.dyn[start:i]...)}
		if !end && args.argv[i] != ";" {
			cmd.argv = append(cmd.argv, strings.TrimSuffix(strings.TrimSuffix(args.argv[i], ";"), "\\"))
			cmd.dyn = append(cmd.dyn, args.dyn[i])
		}
		w.tmuxCommand(f, name, cmd, depth)
		start = i + 1
	}
}

func (w *walker) tmuxCommand(f frame, name string, cmd words, depth int) {
	s := w.s
	if len(cmd.argv) == 0 {
		return // plain "tmux": a new session running the default shell
	}
	if cmd.dyn[0] {
		s.addUnresolved("tmux command " + cmd.argv[0])
		return
	}
	verb := cmd.argv[0]
	vals, ok := tmuxCommands[verb]
	if !ok {
		return // list-sessions, attach, kill-session…: no command run
	}
	via := name + " " + verb
	var ops words
	flags := ""
	i := 1
	for i < len(cmd.argv) {
		a := cmd.argv[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for k := 1; k < len(a); k++ {
			if strings.IndexByte(vals, a[k]) >= 0 {
				if a[k+1:] == "" {
					i++
				}
				break
			}
			flags += string(a[k])
		}
		i++
	}
	if i < len(cmd.argv) {
		ops = cmd.sub(i)
	}
	switch verb {
	case "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp", "respawn-window", "respawnw", "display-popup", "popup", "pipe-pane", "pipep":
		w.runRest(f, via, ops, false, 0, "")
	case "run-shell", "run":
		if strings.Contains(flags, "C") {
			w.tmuxLine(f, name, strings.Join(ops.argv, " "), depth)
		} else if len(ops.argv) > 0 {
			w.shellValue(f, name, via, strings.Join(ops.argv, " "), ops.dyn[0])
		}
	case "if-shell", "if":
		if len(ops.argv) > 0 && !strings.Contains(flags, "F") {
			w.shellValue(f, name, via, ops.argv[0], ops.dyn[0])
		}
		for k := 1; k < len(ops.argv); k++ {
			w.tmuxLine(f, name, ops.argv[k], depth)
		}
	case "send-keys", "send":
		// Keys typed into the pane's shell: the text is a command line.
		var keys []string
		for k, a := range ops.argv {
			if ops.dyn[k] {
				s.addUnresolved("keys typed into a tmux pane: " + a)
			}
			switch a {
			case "Enter", "C-m", "KPEnter", "C-j", "Space", "Tab", "C-c", "C-d", "Escape":
				keys = append(keys, "\n")
			default:
				keys = append(keys, a)
			}
		}
		if len(keys) > 0 {
			w.shellValue(f, name, via, strings.Join(keys, " "), false)
		}
	case "set-hook", "bind-key", "bind", "command-prompt", "confirm-before":
		if len(ops.argv) > 1 {
			w.tmuxLine(f, name, strings.Join(ops.argv[1:], " "), depth)
		} else if verb == "confirm-before" || verb == "command-prompt" {
			if len(ops.argv) == 1 {
				w.tmuxLine(f, name, ops.argv[0], depth)
			}
		}
	case "source-file", "source":
		for k, a := range ops.argv {
			w.execFile(name, a, ops.dyn[k])
		}
	case "set-option", "set", "set-window-option", "setw":
		if len(ops.argv) > 1 && (ops.argv[0] == "default-command" || ops.argv[0] == "default-shell" || strings.HasPrefix(ops.argv[0], "@") == false && strings.HasSuffix(ops.argv[0], "-command")) {
			w.shellValue(f, name, via, strings.Join(ops.argv[1:], " "), ops.dyn[1])
		}
	}
}

// tmuxLine reads a tmux command given as one string (bind-key's, set-hook's, if-shell's).
func (w *walker) tmuxLine(f frame, name, line string, depth int) {
	ws := words{argv: splitQuoted(line)} // effects_env.go: quoted arguments kept whole
	ws.dyn = make([]bool, len(ws.argv))
	w.tmuxCommands(f, name, ws, depth+1)
}

// screen -X CMD ARGS: a command to a running session (stuff types text into its shell, exec and
// screen run a program).
func (w *walker) screen(f frame, pa parsedArgs, name string, args words, pipe bool, idx int) {
	x, dyn, ok := pa.val("-X")
	if !ok {
		return
	}
	ops := pa.words(args)
	if pa.rest >= 0 {
		rest := args.sub(pa.rest)
		ops.argv = append(ops.argv, rest.argv...)
		ops.dyn = append(ops.dyn, rest.dyn...)
	}
	if dyn {
		w.s.addUnresolved("screen command " + x)
		return
	}
	switch x {
	case "stuff":
		if len(ops.argv) > 0 {
			text := strings.NewReplacer(`\n`, "\n", `\r`, "\n", "^M", "\n", `\015`, "\n", `\012`, "\n").Replace(strings.Join(ops.argv, " "))
			w.shellValue(f, name, "screen -X stuff", text, ops.dyn[0])
		}
	case "exec", "screen":
		for len(ops.argv) > 0 && strings.HasPrefix(ops.argv[0], "-") {
			ops = ops.sub(1)
		}
		w.runRest(f, "screen -X "+x, ops, false, 0, "")
	case "eval", "source":
		w.opaque(name, "screen -X "+x, strings.Join(ops.argv, " "))
	}
}

// ---------------------------------------------------------------------------------------------
// Signals to every process: kill -1, kill -- -1, kill 1, pkill -u USER / pkill -v, killall -u,
// killall5.

var psAllRE = regexp.MustCompile(`\bps\s+(?:-[a-zA-Z]*[eA]|a?u?x|-?aux)\b`)

func (w *walker) killAll(pa parsedArgs, name string, args words) {
	s := w.s
	all := ""
	switch name {
	case "killall5":
		all = "killall5"
	case "kill":
		sigSeen := false
		pids := false
		for i := 0; i < len(args.argv); i++ {
			a := args.argv[i]
			switch {
			case pids:
			case a == "--":
				pids = true
				continue
			case a == "-s" || a == "-n" || a == "--signal":
				i++
				sigSeen = true
				continue
			case a == "-l" || a == "-L" || a == "--list" || a == "--table":
				return
			case strings.HasPrefix(a, "-") && !sigSeen && i == 0:
				sigSeen = true // -9, -KILL, -SIGTERM
				continue
			case strings.HasPrefix(a, "-") && a != "-1":
				continue
			}
			if a == "-1" || a == "1" {
				all = "kill " + a
			}
			if args.dyn[i] && psAllRE.MatchString(a) {
				all = "kill " + a // kill $(ps -e -o pid=): every process
			}
		}
	case "pkill", "killall", "pgrep":
		if name == "pgrep" {
			return
		}
		ops := pa.words(args)
		users := pa.has("-u", "-U", "--euid", "--uid", "--user", "-G", "--group", "-g", "--pgroup", "-s", "--session")
		if pa.has("-v", "--inverse") {
			all = name + " -v"
		}
		if len(ops.argv) == 0 && users {
			all = name + " of a user"
		}
		for _, a := range ops.argv {
			switch a {
			case ".", ".*", "^", "$", "", ".+", "^.*", "^.*$", "[a-z]", "[^ ]", "\\w":
				all = name + " " + a
			}
		}
		if name == "killall" && len(ops.argv) == 0 && users {
			all = "killall of a user"
		}
	}
	if all != "" {
		s.addEffect(Effect{Kind: EffectDelete, Target: "processes", Program: name, Detail: "signals every process (" + all + ")"})
	}
}

// ---------------------------------------------------------------------------------------------
// Database clients: meta-commands that leave SQL (psql \! and \o |cmd, mysql system and \!,
// sqlite3 .shell/.system/.output |cmd/.load, COPY … PROGRAM).

var (
	dbShellRE   = regexp.MustCompile(`(?m)(?:^|;)\s*(?:\\!|\.shell\b|\.system\b|system\b)[ \t]*([^\n]*)`)
	dbPipeOutRE = regexp.MustCompile(`(?m)(?:\\o|\\g|\\gx|\\out|\.output|\.once)[ \t]+\|[ \t]*([^\n]*)`)
	dbOutFileRE = regexp.MustCompile(`(?m)(?:\.output|\.once|\\o|\\out)[ \t]+([^|\s][^\s]*)`)
	dbReadRE    = regexp.MustCompile(`(?m)(?:\.import|\.read|\\i|\\ir|\\include)[ \t]+(?:--\S+[ \t]+)*([^\s;]+)`)
	dbOpaqueRE  = regexp.MustCompile(`(?i)\bPROGRAM\s+'|\.load\b|\bload_extension\s*\(|\blo_import\s*\(|\bpg_read_file\s*\(|\bsys_exec\s*\(|\bLOAD_FILE\s*\(|\bINTO\s+(?:OUT|DUMP)FILE\b`)
)

func (w *walker) dbEscapes(f frame, pa parsedArgs, name string, args words, stdin string) {
	var texts []string
	var dyn []bool
	for _, v := range pa.vals {
		if v.role == "code" {
			texts, dyn = append(texts, v.val), append(dyn, v.dyn)
		}
	}
	ops := pa.words(args)
	if name == "sqlite3" && len(ops.argv) > 1 {
		texts, dyn = append(texts, strings.Join(ops.argv[1:], "\n")), append(dyn, false)
	}
	if stdin != "" {
		texts, dyn = append(texts, stdin), append(dyn, false)
	}
	for k, t := range texts {
		if len(t) > maxExpandedWord {
			continue
		}
		for _, m := range dbShellRE.FindAllStringSubmatch(t, 8) {
			w.shellValue(f, name, name+" shell escape", m[1], dyn[k])
		}
		for _, m := range dbPipeOutRE.FindAllStringSubmatch(t, 8) {
			w.shellValue(f, name, name+" output pipe", m[1], dyn[k])
		}
		for _, m := range dbOutFileRE.FindAllStringSubmatch(t, 8) {
			w.pathEffect(EffectWrite, name, strings.Trim(m[1], `'"`), dyn[k])
		}
		for _, m := range dbReadRE.FindAllStringSubmatch(t, 8) {
			w.pathEffect(EffectRead, name, strings.Trim(m[1], `'"`), dyn[k])
		}
		if m := dbOpaqueRE.FindString(t); m != "" {
			w.opaque(name, name+" "+strings.TrimSpace(m), t)
		}
	}
}

// jq and yq filters: $ENV and env print the environment; yq load()/load_str() read files.
var (
	jqEnvRE  = regexp.MustCompile(`(?:\$ENV|(?:^|[^A-Za-z0-9_.$"])env)\b(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*"([^"]+)"\s*\])?|\b(?:str)?env\s*\(\s*"?([A-Za-z_][A-Za-z0-9_]*)?`)
	yqLoadRE = regexp.MustCompile(`\bload(?:_str|_xml|_props|_base64)?\s*\(\s*"([^"]+)"`)
)

func (w *walker) jqFilter(pa parsedArgs, name string, args words) {
	if _, _, ok := pa.val("-f", "--from-file"); ok {
		return
	}
	ops := pa.words(args)
	if name == "yq" && len(ops.argv) > 1 && (ops.argv[0] == "eval" || ops.argv[0] == "e" || ops.argv[0] == "eval-all" || ops.argv[0] == "ea") {
		ops = ops.sub(1)
	}
	if len(ops.argv) == 0 || len(ops.argv[0]) > maxExpandedWord {
		return
	}
	filter := ops.argv[0]
	// The whole environment ($ENV, env) or a variable whose name says it holds a credential.
	for _, m := range jqEnvRE.FindAllStringSubmatch(filter, 8) {
		v := m[1] + m[2] + m[3]
		if v == "" || secretVarRE.MatchString("$"+v) {
			w.s.addEffect(Effect{Kind: EffectSecret, Target: name + " env", Program: name, Detail: "env"})
			break
		}
	}
	for _, m := range yqLoadRE.FindAllStringSubmatch(filter, 8) {
		w.pathEffect(EffectRead, name, m[1], ops.dyn[0])
	}
}
