package normalize

import (
	"path"
	"strings"
)

// Launchers by kind (issue 11, wave 8). Whatever runs an argv is a wrapper, whether the specs
// say so or not, and what it adds to the command it runs is an effect of its own:
//
//  1. "PROG … -- CMD ARGS": the argv convention of launchers (mise exec --, aws-vault exec P --,
//     dotenv -e F --, op run --, nix develop -c, a version manager's exec). When a program's spec
//     ignores the words after "--" (or the program has no spec) and the first of them is a program
//     the specs know or a shell, they are walked as a command: what they would do is seen. A
//     program whose spec gives those words a role (cp -- SRC DST, git log -- PATH) keeps it.
//  2. A tracer (%trace in the specs: strace, ltrace, perf, valgrind, rr) observes its command's
//     system and library calls: a password typed into a privileged program it runs (sudo, su,
//     passwd), a secret that program reads or decrypts, is captured in the trace. That capture is
//     a secret effect of the tracer (Detail "traced_credentials").
//  3. A launcher that loads an environment into its command (envLoaders: secret managers, dotenv
//     loaders, version managers with an [env] table, project environments) hands a command that
//     prints the environment the values it loaded: a secret effect (Detail "injected_env"),
//     beside the plain environment dump of the child.
//  4. Compose runs a command in a service container (docker compose run|exec SERVICE CMD…,
//     podman-compose, docker-compose): the command is walked in that container like docker exec.
//
// The rules judging the new secret details are in policies/default/rego/launchers.rego.

// envLoaders: launchers that put an environment of their own into the command they run. Every
// one of them, run with an environment dump, prints what it loaded.
var envLoaders = set("mise", "rtx", "direnv", "dotenv", "dotenvx", "env-cmd", "devbox", "flox", "nix", "nix-shell",
	"pipenv", "poetry", "pdm", "hatch", "uv", "foreman", "honcho", "forego", "heroku", "railway", "vercel", "netlify",
	"op", "doppler", "infisical", "chamber", "aws-vault", "sops", "teller", "envchain", "vault-env", "berglas",
	"summon", "secrethub", "saml2aws", "aws-sso", "granted", "assume", "envconsul", "with-contenv", "envdir", "dotenv-cli",
	"conda", "micromamba", "mamba", "pixi", "asdf")

// tracedCredentialPrograms: programs that take a password, a passphrase or a key on their
// input or decrypt a secret into their memory; tracing them captures it.
var tracedCredentialPrograms = set("sudo", "su", "doas", "pkexec", "passwd", "chpasswd", "login", "ssh", "ssh-add",
	"ssh-keygen", "scp", "sftp", "gpg", "gpg2", "gpg-agent", "pinentry", "openssl", "age", "sops", "vault", "op", "pass",
	"keepassxc-cli", "mysql", "psql", "htpasswd", "kinit", "git-credential-store", "git-credential-cache", "security",
	"secret-tool", "gnome-keyring-daemon", "runuser", "sshpass", "expect")

// launched judges what a launcher adds to the command it ran: effects since start were added
// by walking that command (rest).
func (w *walker) launched(pa parsedArgs, name string, rest words, start int) {
	s := w.s
	if start > len(s.act.Effects) || len(rest.argv) == 0 {
		return
	}
	child := path.Base(rest.argv[0])
	added := s.act.Effects[start:]
	if pa.spec != nil && pa.spec.trace {
		captured := !rest.dyn[0] && tracedCredentialPrograms[child]
		for _, e := range added {
			if e.Kind == EffectSecret || e.Kind == EffectPrivilege || e.Kind == EffectRead && e.Sensitive {
				captured = true
			}
		}
		if captured {
			s.addEffect(Effect{Kind: EffectSecret, Target: "traced " + child, Program: name, Detail: "traced_credentials"})
		}
	}
	if envLoaders[name] {
		for _, e := range added {
			if e.Kind == EffectSecret && e.Detail == "env" {
				s.addEffect(Effect{Kind: EffectSecret, Target: pa.name + " environment", Program: name, Detail: "injected_env"})
				break
			}
		}
	}
}

// tracedCapture is launched for the cmd operand of a spec (kept as its own name where the spec
// engine calls it).
func (w *walker) tracedCapture(pa parsedArgs, name string, rest words, start int) {
	w.launched(pa, name, rest, start)
}

// dashDashPathspec: programs whose words after "--" are paths or patterns, never a command.
var dashDashPathspec = set("git", "hg", "svn", "jj", "sl", "rg", "grep", "ag", "ack", "fd", "find", "ls", "rm", "cp",
	"mv", "echo", "printf", "cat", "test", "[", "set", "getopt", "getopts", "shift")

// dashDashArgv returns the words after a literal "--" when the first of them names a program
// the specs know (not itself) or a shell; ok false otherwise.
func (w *walker) dashDashArgv(name string, args words) (int, bool) {
	if dashDashPathspec[name] {
		return 0, false
	}
	for i, a := range args.argv {
		if a != "--" || args.dyn[i] {
			continue
		}
		if i+1 >= len(args.argv) || args.dyn[i+1] {
			return 0, false
		}
		first := args.argv[i+1]
		base := path.Base(first)
		if strings.HasPrefix(first, "-") || base == name {
			return 0, false
		}
		if strings.Contains(first, "/") && !systemBinDirs[path.Dir(first)] {
			return 0, false
		}
		if shells[base] || w.s.n.opt.Commands.lookup(base) != nil {
			return i + 1, true
		}
		return 0, false
	}
	return 0, false
}

// dashDashCommand walks "PROG … -- CMD …" for a program with a spec that gives the words after
// "--" no role of their own (principle 1).
func (w *walker) dashDashCommand(f frame, pa parsedArgs, name string, args words, pipe bool, idx int, stdin string) {
	s := w.s
	if pa.spec == nil || pa.rest >= 0 || pa.shRest >= 0 || pa.optRole != "" || pa.spec.handler != "" {
		return
	}
	at, ok := w.dashDashArgv(name, args)
	if !ok {
		return
	}
	n := len(pa.operands)
	for k, i := range pa.operands {
		if i >= at && strings.TrimSuffix(pa.roleAt(k, n), "*") != "_" {
			return // the spec says what these words are
		}
	}
	w.walkLaunched(f, pa, name, args.sub(at), pipe, idx, stdin, s)
}

// dashDashUnknown walks "PROG … -- CMD …" for a program without a spec; it reports whether it did.
func (w *walker) dashDashUnknown(f frame, name string, args words, pipe bool, idx int, stdin string) bool {
	at, ok := w.dashDashArgv(name, args)
	if !ok {
		return false
	}
	pa := parsedArgs{name: name, rest: -1, shRest: -1}
	w.walkLaunched(f, pa, name, args.sub(at), pipe, idx, stdin, w.s)
	return true
}

func (w *walker) walkLaunched(f frame, pa parsedArgs, name string, rest words, pipe bool, idx int, stdin string, s *state) {
	child := frame{depth: f.depth + 1, via: name + " --", sudo: f.sudo}
	if child.depth > s.n.opt.MaxDepth {
		s.act.Truncated = true
		return
	}
	start := len(s.act.Effects)
	w.emit(child, rest, strings.Join(rest.argv, " "), nil, nil, pipe, idx, false, stdin)
	w.launched(pa, name, rest, start)
}

// composeValueOpts: options of compose run/exec that take a value.
var composeValueOpts = set("-e", "--env", "-u", "--user", "-w", "--workdir", "-v", "--volume", "-p", "--publish", "--name",
	"-l", "--label", "--cap-add", "--cap-drop", "--env-file", "--index", "--pull", "--quiet-pull", "--detach-keys")

// composeCommand: docker compose [OPTS] run|exec [OPTS] SERVICE CMD… runs CMD in the service's
// container (principle 4); --entrypoint PROG runs PROG with CMD as its arguments.
func (w *walker) composeCommand(f frame, name string, args words, pipe bool, idx int) {
	verb := -1
	for i, a := range args.argv {
		if args.dyn[i] {
			return
		}
		if a == "run" || a == "exec" {
			verb = i
			break
		}
	}
	if verb < 0 {
		return
	}
	entry := ""
	service := ""
	i := verb + 1
	for ; i < len(args.argv); i++ {
		a := args.argv[i]
		if a == "--" {
			i++
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			opt, val, hasEq := strings.Cut(a, "=")
			if opt == "--entrypoint" {
				if !hasEq && i+1 < len(args.argv) {
					i++
					val = args.argv[i]
				}
				entry = val
				continue
			}
			if composeValueOpts[opt] && !hasEq {
				i++
			}
			continue
		}
		service = a
		i++
		break
	}
	if service == "" {
		for ; i < len(args.argv) && service == ""; i++ {
			service = args.argv[i]
		}
	}
	rest := args.sub(i)
	if entry != "" {
		rest = words{argv: append(strings.Fields(entry), rest.argv...), dyn: append(make([]bool, len(strings.Fields(entry))), rest.dyn...)}
	}
	if service == "" || len(rest.argv) == 0 {
		return
	}
	remote := "container:" + service
	w.s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: strings.Join(rest.argv, " "), Remote: remote})
	w.remoteArgv(f, remote, rest, name+" compose "+args.argv[verb], pipe, idx)
}
