package normalize

import "strings"

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

// persistentEnv adds the persistence effect of a command that stores environment for later.
func (w *walker) persistentEnv(f frame, name string, args words) {
	s := w.s
	kvs, store := persistentAssignments(name, args.argv, s.n.opt.Home)
	if len(kvs) == 0 {
		return
	}
	before := len(s.act.Effects)
	w.envEffects(f, &Command{Name: name, Env: kvs}) // effects_env.go: what each assignment runs
	// What runs is the project's own code when every program it names is in the workspace (a
	// human looks: the store outlives the project); anything else is code from elsewhere.
	runs, inWS := "", true
	for _, e := range s.act.Effects[before:] {
		if e.Kind == EffectExec || e.Kind == EffectPersistence || e.Unresolved || e.Kind == EffectRead && !e.InWorkspace {
			if runs == "" {
				runs = e.Program
			}
			inWS = inWS && e.InWorkspace && !e.Unresolved
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
						runs, inWS = "env GOFLAGS", false
					}
				}
			}
		}
	}
	if runs == "" {
		return
	}
	s.addEffect(Effect{Kind: EffectPersistence, Target: store, Program: name, Detail: "stored_env " + strings.TrimPrefix(runs, "env "), InWorkspace: inWS, Sensitive: true})
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
