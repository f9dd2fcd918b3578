package normalize

import (
	"path"
	"regexp"
	"strings"
)

// Secret sources: commands that print, export or hand over a credential. A command that matches
// gets a secret effect (EffectSecret, Target "PROGRAM WORDS…", Detail the kind of store), which
// keeps it out of the positive-security envelope and, with anything leaving the host in the same
// call, makes it exfiltration (effects.secret-egress).
//
// The model is a table of programs (secretSourceTable) plus idioms that name the act whatever
// the program (secretIdioms): "auth token", "print-access-token", "get-login-password",
// "--show-token", "--with-decryption". It is matched on the words of the command as written,
// with or without a command spec, so a program the specs do not know (gopass, keyctl, bw, cf,
// kubeadm, docker-credential-*) is still a secret source.
//
// Reviewable data; kept beside the matcher because the environment listings (export -p, ps e)
// need their own reading.

// secretRow: a program whose operand words, in order (not necessarily adjacent: option values
// may sit between them), name a secret read. A word may list alternatives ("show|cat"); a
// trailing '*' on a word or a program name is a prefix match. opts: one of these options must be
// present as well (empty: none needed).
type secretRow struct {
	progs  string // "fly,flyctl"
	words  string // "auth token"
	opts   string // "-t,--show-token"
	detail string
}

var secretSourceTable = []secretRow{
	// Environment of this shell, of services and of other processes.
	{"systemctl", "show-environment", "", "env"},
	{"launchctl", "getenv|export", "", "env"},
	{"tmux", "show-environment|showenv", "", "env"},
	{"kubectl,oc", "set env", "--list", "env"},
	// Password managers, keyrings and key stores.
	{"secret-tool", "lookup|search", "", "password_store"},
	{"keyring", "get", "", "password_store"},
	{"gopass", "show|cat|otp|export", "", "password_store"},
	{"keyctl", "print|pipe|read", "", "password_store"},
	{"kwallet-query", "", "-r,--read-password", "password_store"},
	{"kwalletcli", "", "-e", "password_store"},
	{"op", "read|inject", "", "password_store"},
	{"op", "item|document get", "", "password_store"},
	{"op", "signin", "--raw", "password_store"},
	{"bw", "get|list|export|unlock", "", "password_store"},
	{"lpass", "show|export", "", "password_store"},
	{"keepassxc-cli", "show|export|clip", "", "password_store"},
	{"security", "find-*|dump-keychain|export", "", "password_store"},
	{"pass", "show|otp", "", "password_store"},
	{"passage", "show|otp", "", "password_store"},
	{"rbw", "get|list|code", "", "password_store"},
	{"bws", "secret get|list", "", "password_store"},
	{"ksm", "secret get|list|notation", "", "password_store"},
	{"keeper", "get|download", "", "password_store"},
	{"dcli", "password|note|secret", "", "password_store"},
	{"enpass-cli", "show|copy|list", "", "password_store"},
	{"conjur", "variable get", "", "secret_manager"},
	{"akeyless", "get-secret-value|get-dynamic-secret-value|get-rotated-secret-value", "", "secret_manager"},
	{"envkey-source", "", "", "secret_manager"},
	{"teller", "show|export|env", "", "secret_manager"},
	{"berglas", "access|reveal", "", "secret_manager"},
	{"kubeseal", "", "--recovery-unseal", "secret_manager"},
	// Secret managers and encrypted files decrypted to the terminal.
	{"vault", "read", "", "secret_manager"},
	{"vault", "kv get", "", "secret_manager"},
	{"vault", "token create|lookup", "", "secret_manager"},
	{"vault", "print token", "", "secret_manager"},
	{"vault", "login", "", "secret_manager"},
	{"doppler", "secrets", "", "secret_manager"},
	{"infisical", "export|secrets", "", "secret_manager"},
	{"chamber", "export|read|env", "", "secret_manager"},
	{"sops", "decrypt|exec-env|exec-file", "", "secret_manager"},
	{"sops", "", "-d,--decrypt", "secret_manager"},
	{"age,rage", "", "-d,--decrypt", "secret_manager"},
	{"ansible-vault", "view|decrypt", "", "secret_manager"},
	{"pulumi", "", "--show-secrets", "secret_manager"},
	{"terraform,tofu", "output", "-json,-raw", "secret_manager"},
	{"terraform,tofu", "state pull", "", "secret_manager"},
	// Cloud and cluster credentials.
	{"aws", "ssm get-parameter*", "", "cloud_credentials"},
	{"aws", "secretsmanager get-secret-value|batch-get-secret-value", "", "cloud_credentials"},
	{"aws", "configure get|export-credentials", "", "cloud_credentials"},
	{"aws", "sts get-session-token|assume-role*|get-federation-token", "", "cloud_credentials"},
	{"aws", "kms decrypt", "", "cloud_credentials"},
	{"gcloud", "config config-helper", "", "cloud_credentials"},
	{"gcloud", "secrets versions access", "", "cloud_credentials"},
	{"gcloud", "kms decrypt", "", "cloud_credentials"},
	{"az", "keyvault secret show|download", "", "cloud_credentials"},
	{"az", "keys list", "", "cloud_credentials"},
	{"az", "credential show|reset", "", "cloud_credentials"},
	{"az", "acr login", "--expose-token", "cloud_credentials"},
	{"kubectl,oc", "get secret|secrets|secret/*|secrets/*", "-o,--output", "cloud_credentials"},
	{"kubectl,oc", "create token", "", "cloud_credentials"},
	{"kubectl,oc", "config view", "--raw,--flatten", "cloud_credentials"},
	{"kubectl,oc", "view-secret", "", "cloud_credentials"},
	{"kubeadm", "token create|list", "", "cloud_credentials"},
	{"heroku", "config|config:get", "", "cloud_credentials"},
	// Rendered values, manifests and settings printed with their secrets: a release's values and
	// manifest (Secrets included), an app's environment on a platform, state and outputs of IaC.
	{"helm", "get values|manifest|all", "", "cloud_credentials"},
	{"terraform,tofu,terragrunt", "show", "-json", "secret_manager"},
	{"terragrunt", "output", "-json,-raw", "secret_manager"},
	{"terragrunt", "state pull", "", "secret_manager"},
	{"oc", "extract", "", "cloud_credentials"},
	{"az", "appsettings list", "", "cloud_credentials"},
	{"az", "connection-string show", "", "cloud_credentials"},
	{"aws", "lambda get-function-configuration", "", "cloud_credentials"},
	{"cf", "env", "", "cloud_credentials"},
	{"dokku", "config|config:show|config:export|config:get", "", "cloud_credentials"},
	{"railway", "variables|vars", "", "cloud_credentials"},
	{"netlify", "env:get|env:list", "", "cloud_credentials"},
	{"vercel", "env pull", "", "cloud_credentials"},
	{"glab", "variable get|export", "", "cloud_credentials"},
	{"firebase", "functions:config:get", "", "cloud_credentials"},
	{"supabase", "projects api-keys", "", "cloud_credentials"},
	{"stripe", "config", "--list", "token"},
	{"consul", "kv export", "", "secret_manager"},
	{"consul", "acl token read|list", "", "secret_manager"},
	{"nomad", "var get", "", "secret_manager"},
	{"mc,mcli", "alias list|ls|export", "", "cloud_credentials"},
	{"rclone", "config show|dump|redacted", "", "cloud_credentials"},
	{"heroku", "authorizations:create", "", "cloud_credentials"},
	// Forges, registries and credential helpers.
	{"docker-credential-*,git-credential-*", "get", "", "credential_helper"},
	{"git", "credential|credential-* get|fill", "", "credential_helper"},
	{"gh,glab", "auth status", "-t,--show-token", "token"},
	{"getent", "shadow|gshadow", "", "shadow"},
	// What the user copied or typed: the clipboard, the shell's history, other terminals' screens.
	{"pbpaste,wl-paste,termux-clipboard-get", "", "", "clipboard"},
	{"xclip", "", "-o,-out", "clipboard"},
	{"xsel", "", "-o,--output", "clipboard"},
	{"fc", "", "-l", "shell_history"},
	{"tmux", "capture-pane|capturep", "-p", "terminal"},
	{"mysql_config_editor", "print", "", "credentials"},
	// Option-file printers: their output is the options' values, the stored password among them
	// (my_print_defaults decodes .mylogin.cnf; -s shows it unmasked).
	{"my_print_defaults,mariadb-print-defaults,mysql_print_defaults", "", "", "credentials"},
	{"mysql,mariadb,mysqldump,mysqladmin,mariadb-dump,mariadb-admin", "", "--print-defaults", "credentials"},
	{"dotenvx", "get|decrypt", "", "secret_manager"},
	{"dotenv-vault", "decrypt|pull", "", "secret_manager"},
	{"aws-vault", "export|login", "", "cloud_credentials"},
	{"vaultcmd", "", "/listcreds", "password_store"},
	{"npm,pnpm,yarn", "token", "", "token"},
}

// secretIdiomWord: a sub-command word that asks for a credential, whatever the program
// (gcloud auth print-access-token, az account get-access-token, aws ecr get-login-password,
// aws codeartifact get-authorization-token, aws eks get-token, gcloud sql generate-login-token,
// az webapp deployment list-publishing-credentials).
var secretIdiomWord = regexp.MustCompile(`^(print|get|generate|export|batch-get|list|show|reveal|retrieve|fetch)-([a-z0-9]+-)*(token|tokens|password|credential|credentials|secret|secrets|secret-value|access-key|access-keys|keys|auth-token|login-password|connection-strings?)$|^create-(access-key|token|auth-token|login-token)$`)

// secretConfigKey: a configuration key that holds a credential.
var secretConfigKey = regexp.MustCompile(`(?i)(auth|token|password|passwd|secret|credential|_pass\b)`)

// secretIdiomOpts: options that make a command print what it would otherwise hide.
var secretIdiomOpts = set("--show-token", "--show-secrets", "--show-secret", "--show-password", "--reveal", "--with-decryption",
	"--expose-token", "--decrypt")

// secretIdiomExempt: programs whose operands are text, patterns or paths, not sub-commands: a
// word there ("echo auth token") asks for nothing. git has its own rows.
var secretIdiomExempt = set("echo", "printf", "print", "yes", "test", "[", "[[", "expr", "true", "false", "seq", "sleep", "logger",
	"wall", "notify-send", "figlet", "banner", "cowsay", "tr", "let", "alias", "type", "which", "whereis", "command", "man", "help",
	"info", "tldr", "apropos", "whatis", "git", "grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "jq", "yq",
	"cat", "touch", "mkdir", "ls", "rm", "cp", "mv", "find", "fd", "locate", "basename", "dirname", "realpath", "readlink", "stat",
	"file", "wc", "head", "tail", "less", "more", "sort", "uniq", "cut", "tee", "diff", "vim", "vi", "nano", "code", "emacs")

// secretTokenWords: the words of the token idiom.
var secretTokenWords = set("auth:token", "oauth-token", "access-token", "print-token", "show-token", "auth:token:print")

// secretSources adds the secret effects of one command (argv without the program name).
func (w *walker) secretSources(c *Command, args words) {
	name := c.Name
	if name == "" {
		return
	}
	ws, opts := secretWords(args)
	add := func(detail string) {
		target := strings.TrimSpace(name + " " + strings.Join(ws, " "))
		if len(target) > 200 {
			target = target[:200]
		}
		w.s.addEffect(Effect{Kind: EffectSecret, Target: target, Program: name, Detail: detail})
	}
	if d := envListing(name, args.argv, ws); d != "" {
		add(d)
		return
	}
	if textPrinters[name] && !stdoutDiscarded(c) {
		// echo "$GITHUB_TOKEN": the value of a secret-named variable printed, for the caller or
		// the next command of a pipe to carry on.
		for i, a := range args.argv {
			if i >= 64 || len(a) > maxExpandedWord {
				break
			}
			for _, m := range secretVarRE.FindAllStringSubmatchIndex(a, 4) {
				if printsValue(a, m[0]) {
					n := a[m[2]:m[3]]
					w.s.addEffect(Effect{Kind: EffectSecret, Target: "env:" + n, Program: name, Detail: "env_var"})
				}
			}
		}
	}
	if d := injectedEnvDump(name, args.argv, ws); d != "" {
		add(d)
		return
	}
	if d := codeReadsEnv(name, args.argv); d != "" {
		add(d)
		return
	}
	if secretListingNamesOnly(name, ws, args.argv) { // names_only.go
		return
	}
	for _, r := range secretSourceTable {
		if r.matches(name, ws, opts) {
			add(r.detail)
			return
		}
	}
	if secretIdiomExempt[name] {
		return
	}
	if secretIdiom(ws, opts) {
		add("token")
	}
}

// secretWords splits argv into its operand words (up to "--") and its options (names before '=').
func secretWords(args words) (ws []string, opts map[string]bool) {
	opts = map[string]bool{}
	for i, a := range args.argv {
		if i >= 64 {
			break
		}
		if a == "--" {
			break
		}
		if args.dyn[i] && isUnresolvedText(a) {
			ws = append(ws, "\x00") // a word that matches nothing
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			o, _, _ := strings.Cut(a, "=")
			opts[o] = true
			if !strings.HasPrefix(o, "--") && len(o) > 2 {
				// The first letter with its attached value (-oyaml); every letter of a short
				// cluster (-xp), not of a single-dash long option (-selection).
				opts[o[:2]] = true
				if len(o) <= 4 {
					for _, c := range o[1:] {
						opts["-"+string(c)] = true
					}
				}
			}
			continue
		}
		ws = append(ws, a)
	}
	return ws, opts
}

func (r secretRow) matches(name string, ws []string, opts map[string]bool) bool {
	if !matchAlt(r.progs, ',', name) {
		return false
	}
	if r.opts != "" {
		ok := false
		for _, o := range strings.Split(r.opts, ",") {
			if opts[o] {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if r.words == "" {
		return true
	}
	// In order, each word after the previous one; the first word among the first three operands
	// (global option values such as a profile name may come first).
	i := 0
	for k, want := range strings.Fields(r.words) {
		found := false
		for ; i < len(ws); i++ {
			if k == 0 && i > 3 {
				return false
			}
			if matchAlt(want, '|', ws[i]) {
				found = true
				i++
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// matchAlt: word is one of the sep-separated alternatives; an alternative ending in '*' is a
// prefix.
func matchAlt(alts string, sep byte, word string) bool {
	for _, a := range strings.Split(alts, string(sep)) {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(word, p) && len(word) > len(p) || a == word {
			return true
		}
	}
	return false
}

// secretIdiom: the words or options name a credential read, whatever the program.
func secretIdiom(ws []string, opts map[string]bool) bool {
	for o := range opts {
		if secretIdiomOpts[o] {
			return true
		}
	}
	if configSecretQuery(ws) { // config_queries.go
		return true
	}
	for i := 0; i+2 < len(ws) && i < 3; i++ {
		// npm config get //registry.npmjs.org/:_authToken, yarn config get npmAuthToken
		if ws[i] == "config" && ws[i+1] == "get" && secretConfigKey.MatchString(ws[i+2]) {
			return true
		}
	}
	for i, w := range ws {
		if i >= 4 {
			break
		}
		lw := strings.ToLower(w)
		switch {
		case lw == "get-credentials":
			// gcloud container clusters / az aks get-credentials write a kubeconfig; they print
			// nothing (the kubeconfig is judged where it is read).
		case secretTokenWords[lw], secretIdiomWord.MatchString(lw), frameworkSecretTaskRE.MatchString(lw): // unknown_operands.go
			return true
		case lw == "token" && i > 0 && (ws[i-1] == "auth" || ws[i-1] == "create"):
			return true
		case (lw == "token" || lw == "tokens") && i == 0 && i+1 < len(ws):
			switch ws[i+1] {
			case "create", "new", "generate", "print", "show", "get", "lookup", "reveal":
				return true
			}
		}
	}
	return false
}

// declListing: declaration builtins that print variables rather than set them.
var declListing = set("export", "declare", "typeset", "readonly", "local")

// envListing: a command that prints the environment or the shell's variables (with their
// values): export / export -p, declare -p / -x, typeset -x, readonly -p; compgen -e / -v (the
// names); ps with BSD "e" (every process's environment) or -E. Returns the detail or "".
func envListing(name string, argv, ws []string) string {
	switch {
	case declListing[name]:
		names, list := 0, true
		for _, a := range argv {
			switch {
			case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
				if strings.ContainsAny(a, "fF") {
					list = false // functions, not variables
				}
			case a == "":
			default:
				n, _, _ := strings.Cut(a, "=")
				if strings.Contains(a, "=") {
					return "" // an assignment: sets, prints nothing
				}
				names++
				if secretVarRE.MatchString("$" + n) {
					return "env" // declare -p AWS_SECRET_ACCESS_KEY
				}
			}
		}
		if names == 0 && list && name != "local" {
			return "env"
		}
	case name == "compgen":
		for i, a := range argv {
			if a == "-e" || a == "-v" || a == "-A" && i+1 < len(argv) && (argv[i+1] == "variable" || argv[i+1] == "export") {
				return "env"
			}
		}
	case name == "ps":
		for i, a := range argv {
			if a == "-E" {
				return "env"
			}
			if strings.HasPrefix(a, "-") || !bsdPsCluster(a) || !strings.Contains(a, "e") {
				continue
			}
			if i > 0 && psValueOpt(argv[i-1]) {
				continue // "ps -o user": a value
			}
			return "env"
		}
	case name == "docker" || name == "podman" || name == "nerdctl":
		if len(ws) > 0 && (ws[0] == "inspect" || len(ws) > 1 && ws[1] == "inspect") {
			for _, a := range argv {
				if strings.Contains(a, ".Config.Env") || strings.Contains(a, ".Env}") {
					return "env"
				}
			}
		}
	}
	return ""
}

// bsdPsCluster: a BSD-style ps option word (letters of ps's BSD options only).
func bsdPsCluster(a string) bool {
	if a == "" || len(a) > 12 {
		return false
	}
	for _, c := range a {
		if !strings.ContainsRune("aAcefhjlLmMnrsSTuvwxXZoOpqtUkg", c) {
			return false
		}
	}
	return true
}

// psValueOpt: a ps option whose value follows as the next word.
func psValueOpt(a string) bool {
	switch a {
	case "-o", "-O", "-p", "-q", "-u", "-U", "-C", "-G", "-g", "-s", "-t", "--sort", "--format", "--pid", "--ppid", "--user",
		"--User", "--group", "--Group", "--sid", "--tty", "o", "O", "p", "q", "U", "t", "k", "--cols", "--rows", "--width":
		return true
	}
	return false
}

// envCodePrograms: interpreters and filters whose inline program can read the environment.
func envCodeProgram(name string) bool {
	switch name {
	case "node", "deno", "bun", "ruby", "perl", "php", "awk", "gawk", "mawk", "nawk", "jq", "gojq", "yq", "lua", "pwsh", "powershell",
		"pwsh.exe", "powershell.exe", "osascript", "irb":
		return true
	}
	return strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy")
}

// envAccessors: how programs name the whole environment, longest first where one is a prefix of
// another.
var envAccessors = []string{"os.environ", "process.env", "Deno.env.toObject", "System.getenv()", "[Environment]::GetEnvironmentVariables",
	"Get-ChildItem env:", "Get-ChildItem Env:", "gci env:", "dir env:", "ls env:", "%ENV", "$ENV", "ENVIRON", "ENV", "env", "getenv()"}

// codeReadsEnv: inline code (python -c, node -e, ruby -e, perl -e, awk and jq programs, pwsh -c)
// that prints the whole environment (os.environ, process.env, %ENV, for (k in ENVIRON), jq env)
// or a variable whose name says it holds a credential (os.environ["AWS_SECRET_ACCESS_KEY"]).
// Reading an ordinary variable (process.env.NODE_ENV, ENVIRON["HOME"]) is not a secret source.
func codeReadsEnv(name string, argv []string) string {
	if !envCodeProgram(name) {
		return ""
	}
	for _, a := range argv {
		if len(a) > maxExpandedWord {
			continue
		}
		for _, acc := range envAccessors {
			for i := 0; i < len(a) && i < 1<<16; {
				j := strings.Index(a[i:], acc)
				if j < 0 {
					break
				}
				at := i + j
				i = at + len(acc)
				if at > 0 && isIdentByte(a[at-1]) && acc[0] != '%' && acc[0] != '$' && acc[0] != '[' {
					continue // part of a longer name (MYENV)
				}
				if acc == "env" && (name != "jq" && name != "gojq" && name != "yq") {
					continue // jq's env builtin only
				}
				if (acc == "ENV" || acc == "$ENV") && !(name == "ruby" || name == "irb" || name == "jq" || name == "gojq" || name == "yq" || name == "perl") {
					continue
				}
				rest := a[i:]
				if i < len(a) && isIdentByte(a[i]) {
					continue // ENVIRONMENT, envelope
				}
				if strings.HasSuffix(acc, ":") || strings.HasSuffix(acc, "()") || acc == "[Environment]::GetEnvironmentVariables" || acc == "Deno.env.toObject" {
					return "env"
				}
				if acc == "ENVIRON" && !strings.HasPrefix(strings.TrimSpace(rest), "[") {
					return "env" // for (k in ENVIRON)
				}
				v, accessed := envAccessName(rest)
				if !accessed {
					return "env" // the whole environment
				}
				if v == "" || envDumpMethods[v] || secretVarRE.MatchString("$"+v) {
					return "env" // a computed name, or a secret-named variable
				}
			}
		}
	}
	return ""
}

// envDumpMethods: methods of an environment object that return all of it (ENV.to_h,
// os.environ.items()).
var envDumpMethods = set("to_h", "to_a", "to_s", "to_hash", "each", "each_pair", "keys", "values", "inspect", "map", "select",
	"sort", "entries", "items", "copy", "dump", "toObject", "toString", "forEach")

// envAccessName reads the variable name an accessor is followed by: ["NAME"], .get("NAME"),
// {NAME}, .NAME. It reports whether the text accesses one variable at all.
func envAccessName(rest string) (string, bool) {
	r := strings.TrimLeft(rest, " ")
	switch {
	case strings.HasPrefix(r, ".get("), strings.HasPrefix(r, ".fetch("):
		r = r[strings.IndexByte(r, '(')+1:]
	case strings.HasPrefix(r, "["), strings.HasPrefix(r, "{"):
		r = r[1:]
	case strings.HasPrefix(r, ".") && len(r) > 1 && isIdentByte(r[1]):
		r = r[1:]
	default:
		return "", false
	}
	r = strings.TrimLeft(r, " '\"")
	n := 0
	for n < len(r) && isIdentByte(r[n]) {
		n++
	}
	return r[:n], true
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// secretInjectors: sub-commands that run a command with secrets in its environment
// (op run -- CMD). The child's own effects are judged where it is walked; a child that prints
// the environment prints the injected secrets.
var secretInjectors = map[string]string{"op": "run", "doppler": "run", "infisical": "run", "chamber": "exec", "aws-vault": "exec",
	"sops": "exec-env", "teller": "run", "envchain": "", "vault-env": "", "berglas": "exec", "summon": "", "secrethub": "run"}

var envDumpers = set("env", "printenv", "set", "export", "declare", "typeset", "compgen")

func injectedEnvDump(name string, argv, ws []string) string {
	sub, ok := secretInjectors[name]
	if !ok || sub != "" && (len(ws) == 0 || ws[0] != sub) {
		return ""
	}
	child := ""
	for i, a := range argv {
		if a == "--" && i+1 < len(argv) {
			child = argv[i+1]
			break
		}
	}
	if child == "" && len(ws) > 1 && sub != "" {
		child = ws[len(ws)-1] // sops exec-env FILE CMD
	}
	if f := strings.Fields(child); len(f) > 0 && (envDumpers[path.Base(f[0])] || strings.Contains(child, "environ")) {
		return "env"
	}
	return ""
}

// textPrinters: commands that print their arguments.
var textPrinters = set("echo", "printf", "print", "logger", "wall")

// printsValue: the reference at i prints the variable's value: not ${#NAME} (its length) nor
// ${NAME:+word} / ${NAME+word} (a word when it is set).
func printsValue(a string, i int) bool {
	rest := a[i:]
	if !strings.HasPrefix(rest, "${") {
		return true
	}
	if strings.HasPrefix(rest, "${#") || strings.HasPrefix(rest, "${!") {
		return false
	}
	j := 2
	for j < len(rest) && isIdentByte(rest[j]) {
		j++
	}
	return !strings.HasPrefix(rest[j:], ":+") && !strings.HasPrefix(rest[j:], "+")
}

// stdoutDiscarded: the command's standard output goes to /dev/null.
func stdoutDiscarded(c *Command) bool {
	for _, r := range c.Redirects {
		if r.Path == "/dev/null" && (r.Fd == "" || r.Fd == "1") && (r.Op == ">" || r.Op == ">>" || r.Op == "&>" || r.Op == ">|") {
			return true
		}
	}
	return false
}
