package normalize

import (
	"path"
	"regexp"
	"strings"
)

// Environment variables that make a program run code: the loader's preloads, interpreters'
// startup files and module paths, and the command lines git, ssh, pagers and editors run. Setting
// one (VAR=v cmd, env VAR=v cmd, export VAR=v) is an exec effect of what it names, judged like the
// same code run directly: a workspace file is inside the envelope, a file in /tmp, a download or
// an unresolved value is not. The variable reaches every child of the command, so it counts
// whatever program the command runs.

// envKind says how a variable's value runs.
type envKind int

const (
	envFiles     envKind = iota + 1 // files loaded as code, separated by ':' or blanks (LD_PRELOAD)
	envDirs                         // directories searched for code before the system's (PYTHONPATH)
	envFile                         // one file run at startup (BASH_ENV, PYTHONSTARTUP)
	envCommand                      // a command line run by the program (GIT_SSH_COMMAND, PAGER)
	envShell                        // shell code run by the shell itself (PROMPT_COMMAND)
	envOptions                      // an interpreter's option string (NODE_OPTIONS, PERL5OPT, JAVA_TOOL_OPTIONS)
	envGitConfig                    // git configuration from the environment (GIT_CONFIG_PARAMETERS, GIT_CONFIG_KEY_n)
	envPath                         // where programs are looked up (PATH)
)

// codeEnv is the table of variables that run code. Reviewable data; kept beside the engine
// because each kind needs its own reading.
var codeEnv = map[string]envKind{
	"LD_PRELOAD": envFiles, "LD_AUDIT": envFiles, "DYLD_INSERT_LIBRARIES": envFiles,
	"LD_LIBRARY_PATH": envDirs, "DYLD_LIBRARY_PATH": envDirs, "DYLD_FRAMEWORK_PATH": envDirs,
	"PYTHONPATH": envDirs, "PYTHONHOME": envDirs, "PYTHONUSERBASE": envDirs, "PERL5LIB": envDirs, "PERLLIB": envDirs,
	"RUBYLIB": envDirs, "NODE_PATH": envDirs, "GEM_PATH": envDirs, "GEM_HOME": envDirs, "CLASSPATH": envDirs,
	"BASH_ENV": envFile, "ENV": envFile, "PYTHONSTARTUP": envFile, "ZDOTDIR": envFile, "INPUTRC": envFile,
	"GIT_SSH_COMMAND": envCommand, "GIT_SSH": envCommand, "GIT_PAGER": envCommand, "PAGER": envCommand,
	"MANPAGER": envCommand, "SYSTEMD_PAGER": envCommand, "GIT_EDITOR": envCommand, "EDITOR": envCommand,
	"VISUAL": envCommand, "FCEDIT": envCommand, "SUDO_EDITOR": envCommand, "GIT_SEQUENCE_EDITOR": envCommand,
	"GIT_ASKPASS": envCommand, "SSH_ASKPASS": envCommand, "SUDO_ASKPASS": envCommand, "GIT_EXTERNAL_DIFF": envCommand,
	"GIT_PROXY_COMMAND": envCommand, "BROWSER": envCommand, "LESSOPEN": envCommand, "LESSCLOSE": envCommand,
	"PROMPT_COMMAND": envShell,
	"NODE_OPTIONS":   envOptions, "PERL5OPT": envOptions, "RUBYOPT": envOptions, "JAVA_TOOL_OPTIONS": envOptions,
	"_JAVA_OPTIONS": envOptions, "JDK_JAVA_OPTIONS": envOptions, "MAVEN_OPTS": envOptions, "GRADLE_OPTS": envOptions,
	"GIT_CONFIG_PARAMETERS": envGitConfig,
	"PATH":                  envPath,
}

// systemCodeDirs: directories of the system's own libraries and modules; naming them in a search
// path adds nothing the system does not already run.
var systemCodeDirs = []string{"/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin"} // /bin, /sbin: root-owned (merged-usr links to /usr)

// declBuiltins set variables from their "NAME=value" arguments.
var declBuiltins = set("export", "declare", "typeset", "local", "readonly")

// envEffects adds the effects of the code-running variables a command sets: its assignments
// (VAR=v cmd, env VAR=v cmd) and, for export/declare, its arguments.
func (w *walker) envEffects(f frame, c *Command) {
	assigns := c.Env
	if declBuiltins[c.Name] {
		assigns = append(append([]string(nil), assigns...), c.Args...)
	}
	var gitKeys, gitVals map[string]string
	for _, kv := range assigns {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			if gitKeys == nil {
				gitKeys, gitVals = map[string]string{}, map[string]string{}
			}
			if n, ok := strings.CutPrefix(name, "GIT_CONFIG_KEY_"); ok {
				gitKeys[n] = val
			} else {
				gitVals[strings.TrimPrefix(name, "GIT_CONFIG_VALUE_")] = val
			}
			continue
		}
		w.credentialHandleEnv(name, val) // credential_handles.go
		pkg := w.packageEnv("env "+name, name, val)
		if w.buildEnv(f, name, val) || pkg { // effects_env_build.go
			continue
		}
		kind := codeEnv[name]
		if kind == 0 {
			continue
		}
		if kind != envGitConfig {
			val = unquoteValue(val)
		}
		w.envValue(f, name, val, kind)
	}
	for n, k := range gitKeys {
		w.gitEnvConfig(f, "env GIT_CONFIG_KEY_"+n, k, gitVals[n])
	}
}

// unquoteValue strips one level of matching quotes an assignment kept ("'-r x.js'").
func unquoteValue(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// envValue records what one variable's value runs.
func (w *walker) envValue(f frame, name, val string, kind envKind) {
	s := w.s
	prog := "env " + name
	if strings.TrimSpace(val) == "" {
		return
	}
	if kind == envPath {
		w.envPathDirs(prog, val)
		return
	}
	if isUnresolvedText(val) && kind != envShell && kind != envCommand {
		s.addUnresolved("code named by " + name + "=" + val)
		s.addEffect(Effect{Kind: EffectExec, Target: val, Program: prog, Detail: "env " + name, Unresolved: true})
		return
	}
	switch kind {
	case envFiles:
		for _, p := range strings.FieldsFunc(val, func(r rune) bool { return r == ':' || r == ' ' }) {
			w.envFileExec(prog, p)
		}
	case envDirs:
		for _, p := range strings.Split(val, ":") {
			if p == "" || p == "." {
				continue // the working directory: the workspace's own code
			}
			w.envFileExec(prog, p)
		}
	case envFile:
		w.envFileExec(prog, val)
	case envCommand:
		cmd := val
		if name == "LESSOPEN" || name == "LESSCLOSE" {
			cmd = strings.ReplaceAll(strings.TrimLeft(cmd, "|-"), "%s", "FILE")
		}
		w.envScript(f, prog, cmd)
	case envShell:
		w.envScript(f, prog, val)
	case envOptions:
		w.envOptions(f, prog, name, val)
	case envGitConfig:
		// 'key=value' 'key2=value2', as git -c writes them.
		for _, kv := range splitQuoted(val) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				w.gitEnvConfig(f, prog, k, v)
			}
		}
	}
}

// envPathDirs: a PATH that puts a directory before the system's makes every program name a
// lookup there. The previous value ($PATH), system directories and directories of the user's home
// (~/.local/bin, ~/.cargo/bin: written only by calls that are judged for it) add nothing; the
// workspace's are its own code; anything else (/tmp/bin) is code from outside, and an expansion
// that cannot be resolved is unresolved.
func (w *walker) envPathDirs(prog, val string) {
	s := w.s
	for _, d := range strings.Split(val, ":") {
		switch d {
		case "", ".", "$PATH", "${PATH}":
			continue
		}
		if isUnresolvedText(d) {
			s.addUnresolved("program directory " + d + " in PATH")
			s.addEffect(Effect{Kind: EffectExec, Target: d, Program: prog, Detail: "env PATH", Unresolved: true})
			continue
		}
		clean, ok := resolvePath(d, s.cwd, s.n.opt.Home)
		if !ok || inDir(clean, s.n.opt.Home) && !inDir(clean, s.n.opt.Workspace) && s.n.sens.classify(clean) == "" {
			continue
		}
		w.envFileExec(prog, d)
	}
}

// envFileExec records a file or directory loaded as code. System library directories add nothing.
func (w *walker) envFileExec(prog, raw string) {
	s := w.s
	clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	for _, d := range systemCodeDirs {
		if clean == d || strings.HasPrefix(clean, d+"/") {
			return
		}
	}
	w.execFile(prog, raw, false)
}

// envScript walks a command line a program will run as shell, one level deeper.
func (w *walker) envScript(f frame, prog, cmd string) {
	if strings.TrimSpace(cmd) == "" {
		return
	}
	w.s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: cmd})
	w.script(cmd, f.depth+1, prog, f.sudo)
}

// envOptions reads the options of an interpreter's option variable that load code.
func (w *walker) envOptions(f frame, prog, name, val string) {
	s := w.s
	if name == "PERL5OPT" && strings.ContainsAny(val, ";(`") {
		// -MFoo;CODE: perl runs "use Foo;CODE" before the program.
		w.codeEffect("perl", val, false)
		return
	}
	opts := splitQuoted(val)
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		next := func() string {
			if i+1 < len(opts) {
				i++
				return opts[i]
			}
			return ""
		}
		switch name {
		case "NODE_OPTIONS":
			var v string
			switch {
			case o == "-r" || o == "--require" || o == "--import" || o == "--loader" || o == "--experimental-loader":
				v = next()
			case strings.HasPrefix(o, "--require=") || strings.HasPrefix(o, "--import=") || strings.HasPrefix(o, "--loader=") ||
				strings.HasPrefix(o, "--experimental-loader="):
				_, v, _ = strings.Cut(o, "=")
			default:
				continue
			}
			w.nodeModule(prog, v)
		case "PERL5OPT":
			// -M/-m load a module; what follows the module name is code (-MFoo;system(...)).
			if strings.HasPrefix(o, "-M") || strings.HasPrefix(o, "-m") || strings.HasPrefix(o, "-I") {
				if strings.HasPrefix(o, "-I") {
					w.envFileExec(prog, strings.TrimPrefix(o, "-I"))
					continue
				}
				mod := o[2:]
				if strings.ContainsAny(mod, ";(`\"'") || strings.Contains(mod, "=") {
					w.codeEffect("perl", "use "+mod, false)
					continue
				}
				if mod != "" && !perlStdModule(mod) {
					s.addUnresolved("module " + mod + " loaded by " + name)
					s.addEffect(Effect{Kind: EffectExec, Target: mod, Program: prog, Detail: "env " + name, Unresolved: true})
				}
			}
		case "RUBYOPT":
			switch {
			case o == "-r":
				w.envFileExec(prog, next())
			case strings.HasPrefix(o, "-r") && (strings.Contains(o, "/") || strings.HasSuffix(o, ".rb")):
				w.envFileExec(prog, o[2:])
			case strings.HasPrefix(o, "-I"):
				w.envFileExec(prog, strings.TrimPrefix(o, "-I"))
			}
		default: // the JVM's option variables
			for _, pre := range []string{"-javaagent:", "-agentpath:", "-agentlib:", "-Xbootclasspath/a:", "-Xbootclasspath/p:"} {
				if rest, ok := strings.CutPrefix(o, pre); ok {
					if j := strings.IndexByte(rest, '='); j >= 0 && pre == "-javaagent:" {
						rest = rest[:j]
					}
					if pre == "-agentlib:" {
						s.addUnresolved("JVM agent library " + rest + " loaded by " + name)
						s.addEffect(Effect{Kind: EffectExec, Target: rest, Program: prog, Detail: "env " + name, Unresolved: true})
						break
					}
					for _, p := range strings.Split(rest, ":") {
						w.envFileExec(prog, p)
					}
				}
			}
		}
	}
}

// nodeModule records a module node loads before the program: a path is a file run, a data: URL
// is inline code, a bare package name resolves in the workspace's node_modules.
func (w *walker) nodeModule(prog, v string) {
	switch {
	case v == "":
	case strings.HasPrefix(v, "data:"):
		code := v
		if i := strings.IndexByte(v, ','); i >= 0 {
			code = v[i+1:]
		}
		w.codeEffect("node", code, false)
	case strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") || strings.Contains(v, "/") && !strings.HasPrefix(v, "@"):
		w.envFileExec(prog, v)
	default:
		// A package: from the project's own node_modules.
		w.envFileExec(prog, path.Join("node_modules", v))
	}
}

// perlStdModule: pragmas and core modules a PERL5OPT commonly names.
func perlStdModule(m string) bool {
	switch m {
	case "strict", "warnings", "utf8", "diagnostics", "Carp::Always", "Devel::Cover", "Data::Dumper", "open=:std,:utf8":
		return true
	}
	return false
}

// gitEnvConfig: git configuration given in the environment applies to the git commands the call
// runs: a key that runs a command runs it now (not later: nothing is written).
func (w *walker) gitEnvConfig(f frame, prog, key, val string) {
	lk := strings.ToLower(strings.TrimSpace(key))
	val = unquoteValue(strings.TrimSpace(val))
	w.gitRemoteState(strings.TrimSpace(key), lk, val) // effects_state.go: remotes repointed for the push
	if gitInsecureConfig.MatchString(lk + "=" + val) {
		w.verificationOff(prog, lk+"="+val)
		return
	}
	if w.gitConfigTable(f, prog, key, val, "command") { // gitconfig_keys.go
		return
	}
	switch {
	case lk == "core.fsmonitor" || lk == "core.sshcommand" || lk == "core.pager" || lk == "core.editor" ||
		lk == "core.askpass" || lk == "sequence.editor" || lk == "diff.external" || lk == "core.hookspath" ||
		strings.HasPrefix(lk, "credential.") && strings.HasSuffix(lk, "helper") ||
		strings.HasPrefix(lk, "alias.") && strings.HasPrefix(val, "!") ||
		strings.HasSuffix(lk, ".textconv") || strings.HasSuffix(lk, ".command") || strings.HasSuffix(lk, ".driver") ||
		strings.HasSuffix(lk, ".uploadpack") || strings.HasSuffix(lk, ".receivepack") || strings.HasSuffix(lk, ".proxy"):
		code := strings.TrimPrefix(val, "!")
		if lk == "core.hookspath" {
			w.envFileExec(prog, code)
			return
		}
		w.s.addEffect(Effect{Kind: EffectExec, Target: "sh", Program: prog, Detail: code})
		w.script(code, f.depth+1, prog, f.sudo)
	}
}

// gitInsecureConfig: git settings that turn off a transport's protections or object checks
// (protocol.file.allow=always lets a submodule read local repositories).
var gitInsecureConfig = regexp.MustCompile(`(?i)^(protocol(\.[a-z]+)?\.allow=always|http(\..+)?\.sslverify=(false|0|no|off)|transfer\.fsckobjects=(false|0)|core\.protectntfs=(false|0)|core\.protecthfs=(false|0))$`)

// splitQuoted splits a value on blanks, keeping single- or double-quoted parts together and
// dropping the quotes ('a b' c → [a b, c]).
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '\'' || c == '"'):
			q, in = c, true
		case q == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
		if len(out) >= 64 {
			return out
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// secretVarRE matches a reference to an environment variable whose name says it holds a
// credential ($AWS_SECRET_ACCESS_KEY, ${GITHUB_TOKEN}).
var secretVarRE = regexp.MustCompile(`\$\{?#?!?([A-Za-z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|(?:AUTH|SIGNING|ENCRYPTION|MASTER|SESSION|HMAC|JWT)_?KEY|DATABASE_URL|DB_URL|REDIS_URL|MONGO(?:DB)?_UR[IL]|AMQP_URL|CONNECTION_STRING|_DSN|WEBHOOK_URL)[A-Za-z0-9_]*)`)

// requestSecrets: a command that connects somewhere (effects from index start on) and names a
// secret-named environment variable anywhere in its text (a header, the user agent, a form field,
// the URL) carries that secret in its request. The secret is recorded with detail "request":
// the rules tell a credential sent to the service it authenticates (allowed egress) from one sent
// anywhere else.
func (w *walker) requestSecrets(start int, prog, raw string) {
	s := w.s
	if start >= len(s.act.Effects) || len(raw) > maxExpandedWord {
		return
	}
	connects := false
	for _, e := range s.act.Effects[start:] {
		if e.Kind == EffectConnect {
			connects = true
			break
		}
	}
	if !connects {
		return
	}
	for _, m := range secretVarRE.FindAllStringSubmatch(raw, 8) {
		s.addEffect(Effect{Kind: EffectSecret, Target: "env:" + m[1], Program: prog, Detail: "request"})
	}
}
