package normalize

import (
	"context"
	"strings"
)

// Environment stored for later: commands that write variables every later program (or every
// later build) starts with — go env -w (the go command's own environment file, read by every go
// build, test and run), launchctl setenv (every program launchd starts), systemctl --user
// set-environment and dbus-update-activation-environment (every user service), Windows setx (every
// new process). A variable that makes a program run code (the build and loader tables of
// effects_env.go and effects_env_build.go: GOFLAGS=-toolexec=/tmp/x, CC=/tmp/cc, LD_PRELOAD,
// NODE_OPTIONS=--require …) is then code that runs later, outside the call: a persistence effect
// on the store, besides the effects the same assignment has on one command. Settings that run
// nothing (GOPRIVATE=github.com/acme/*, GOFLAGS=-mod=mod, CGO_ENABLED=0, CC=clang) add none; where
// packages come from is judged by package_sources.go as before.

// goBuildCodeFlags: GOFLAGS options that replace what the build compiles or the module file it
// reads with a file named by path (outside the workspace: code from elsewhere).
var goBuildCodeFlags = []string{"-overlay=", "-modfile=", "-toolexec=", "-exec="}

// maxStoredAssignments bounds the assignments of one command read for what they run.
const maxStoredAssignments = 16

// persistentEnv adds the persistence effect of a command that stores environment for later.
func (w *walker) persistentEnv(f frame, name string, args words) {
	s := w.s
	kvs, store := persistentAssignments(name, args.argv, s.n.opt.Home)
	if len(kvs) == 0 {
		return
	}
	// What runs is the project's own code when every program it names is in the workspace (a
	// human looks: the store outlives the project); anything else is code from elsewhere.
	runs, inWS := "", true
	ctx := s.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	for i, kv := range kvs {
		if i >= maxStoredAssignments {
			s.act.Truncated = true
			break
		}
		// What the assignment runs, read on a command of its own (effects_env.go): the effects
		// happen later, in other processes; this call's effect is the persistence below.
		k, v, _ := strings.Cut(kv, "=")
		if !varName(k) {
			continue
		}
		inner := s.n.NormalizeContext(ctx, "Bash", map[string]any{"command": "export " + k + "=" + shellQuoteArg(unquoteValue(v))}, s.act.Cwd)
		if inner.OverLimit() {
			runs, inWS = k, false
		}
		for _, e := range inner.Effects {
			// Code from a file (a path, not a program found by name), a secret, code that cannot
			// be resolved (a download piped to a shell); a command line of named programs
			// (EDITOR='code --wait', SHELL=bash) runs nothing from elsewhere, and where packages
			// come from (GOPROXY) is judged by package_sources.go.
			if e.Kind == EffectExec && e.Detail == "file" || e.Kind == EffectPersistence || e.Kind == EffectSecret || e.Unresolved ||
				e.Kind == EffectRead && !e.InWorkspace {
				if runs == "" {
					runs = k
				}
				inWS = inWS && e.InWorkspace && !e.Unresolved
			}
		}
	}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		if runs != "" || k != "GOFLAGS" {
			continue
		}
		for _, o := range splitQuoted(unquoteValue(v)) {
			for _, fl := range goBuildCodeFlags {
				if p, ok := strings.CutPrefix(o, fl); ok {
					if clean, ok := resolvePath(p, s.cwd, s.n.opt.Home); ok && !inDir(clean, s.n.opt.Workspace) {
						runs, inWS = "GOFLAGS", false
					}
				}
			}
		}
	}
	if runs == "" || inWS && name != "go" {
		return // the project's own program in its own configuration (yarnPath .yarn/releases/…)
	}
	s.addEffect(Effect{Kind: EffectPersistence, Target: store, Program: name, Detail: "stored_env " + runs, InWorkspace: inWS, Sensitive: true})
}

// packageConfigEnv: package-manager configuration keys that run code, and the variable whose
// reading (effects_env.go, effects_env_build.go) has the same meaning.
var packageConfigEnv = map[string]string{
	"script-shell": "SHELL", "shell": "SHELL", "git": "GIT_EXEC", "editor": "EDITOR", "browser": "BROWSER",
	"node-options": "NODE_OPTIONS", "onload-script": "PYTHONSTARTUP", "init-module": "PYTHONSTARTUP",
	"yarnpath": "PYTHONSTARTUP", "npmpath": "PYTHONSTARTUP",
}

// varName reports whether k is a variable name.
func varName(k string) bool {
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}

// persistentAssignments returns the NAME=value assignments a command stores and where it stores
// them; none for any other command.
func persistentAssignments(name string, argv []string, home string) (kvs []string, store string) {
	if len(argv) > 64 {
		argv = argv[:64]
	}
	ops := nonOptions(argv)
	switch name {
	case "go":
		// go env -w K=V… (options of go env: -w, -u, -json, -changed)
		if len(ops) > 1 && ops[0] == "env" && hasWord(argv, "-w") {
			for _, a := range ops[1:] {
				if strings.Contains(a, "=") {
					kvs = append(kvs, a)
				}
			}
		}
		return kvs, home + "/.config/go/env"
	case "launchctl":
		// launchctl setenv K V [K V …]
		for i, a := range argv {
			if a == "setenv" {
				for j := i + 1; j+1 < len(argv); j += 2 {
					kvs = append(kvs, argv[j]+"="+argv[j+1])
				}
				break
			}
		}
		return kvs, "launchd environment"
	case "systemctl", "dbus-update-activation-environment":
		// systemctl --user set-environment K=V…; dbus-update-activation-environment [--systemd] K=V…
		rest := ops
		if name == "systemctl" {
			if len(ops) == 0 || ops[0] != "set-environment" {
				return nil, ""
			}
			rest = ops[1:]
		}
		for _, a := range rest {
			if strings.Contains(a, "=") {
				kvs = append(kvs, a)
			}
		}
		return kvs, "user service environment"
	case "conda", "mamba", "micromamba":
		// conda env config vars set K=V…: the environment's activation sets them
		if len(ops) > 4 && ops[0] == "env" && ops[1] == "config" && ops[2] == "vars" && ops[3] == "set" {
			for _, a := range ops[4:] {
				if strings.Contains(a, "=") {
					kvs = append(kvs, a)
				}
			}
		}
		return kvs, "conda environment variables"
	case "mise", "rtx":
		// mise set K=V…: the [env] of mise.toml, set in every shell that enters the directory
		if len(ops) > 1 && ops[0] == "set" {
			for _, a := range ops[1:] {
				if strings.Contains(a, "=") {
					kvs = append(kvs, a)
				}
			}
		}
		return kvs, "mise.toml [env]"
	case "npm", "pnpm", "yarn":
		// npm config set KEY VALUE / KEY=VALUE: keys that name a program, options or a script
		// the package manager runs, read as the variable of the same meaning.
		for i, a := range argv {
			if a != "set" || i == 0 || argv[i-1] != "config" || i+1 >= len(argv) {
				continue
			}
			k, v, ok := strings.Cut(argv[i+1], "=")
			if !ok && i+2 < len(argv) {
				v = argv[i+2]
			}
			if env := packageConfigEnv[strings.TrimPrefix(strings.ToLower(k), "--")]; env != "" && v != "" {
				kvs = append(kvs, env+"="+v)
			}
			break
		}
		return kvs, name + " configuration"
	case "setx", "setx.exe":
		// setx K V [/M]
		if len(argv) > 1 && !strings.HasPrefix(argv[0], "/") {
			kvs = append(kvs, argv[0]+"="+argv[1])
		}
		return kvs, "user environment (registry)"
	}
	return nil, ""
}

// nonOptions: the words of argv that are no options (a word starting with "-", or "/" for setx's
// switches, after the first).
func nonOptions(argv []string) []string {
	var out []string
	for _, a := range argv {
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			continue
		}
		out = append(out, a)
	}
	return out
}
