package normalize

import (
	"regexp"
	"strings"
)

// Build and toolchain variables that run code: the compilers, linkers, wrappers and runners a
// build invokes (CC, RUSTC_WRAPPER, CARGO_TARGET_<triple>_LINKER), flag variables whose options
// name a program or a plugin (RUSTFLAGS -C linker=, CFLAGS -fplugin=, GOFLAGS -toolexec=), and
// configuration roots whose files can run commands (XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GOROOT).
// A program named by path outside the workspace and the system directories is an exec of that
// file; a value that is a shell command line (CC='sh -c "…"') is walked as shell; a bare program
// name (CC=clang, RUSTC_WRAPPER=sccache) is the program of that name, as when the build runs it.

// buildProgramEnv: variables whose value is a program (with arguments) the build runs.
var buildProgramEnv = set("RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "RUSTC_LINKER", "CARGO_BUILD_RUSTC",
	"CARGO_BUILD_RUSTC_WRAPPER", "CARGO_BUILD_RUSTDOC", "CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY",
	"OBJDUMP", "FC", "F77", "CC_FOR_BUILD", "CXX_FOR_BUILD", "HOSTCC", "HOSTCXX", "CMAKE_C_COMPILER_LAUNCHER",
	"CMAKE_CXX_COMPILER_LAUNCHER", "CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "CCACHE_PREFIX", "DISTCC_HOSTS_CMD", "GO_EXEC",
	"MAKE", "SHELL", "CONFIG_SHELL", "PKG_CONFIG", "PYTHON", "NODE", "JAVA_HOME_BIN", "GIT_EXEC")

// buildProgramEnvFamily: CARGO_TARGET_<triple>_LINKER / _RUNNER, CC_<target>, CXX_<target>.
var buildProgramEnvFamily = [][2]string{{"CARGO_TARGET_", "_LINKER"}, {"CARGO_TARGET_", "_RUNNER"}, {"CC_", ""}, {"CXX_", ""},
	{"AR_", ""}, {"CARGO_HOST_", "_LINKER"}}

// buildFlagEnv: variables holding compiler or build-tool options; buildFlagProgram lists the
// options among them whose value is a program or a code file.
var buildFlagEnv = set("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "RUSTDOCFLAGS", "CARGO_ENCODED_RUSTDOCFLAGS",
	"CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CGO_CFLAGS", "CGO_CXXFLAGS", "CGO_CPPFLAGS", "CGO_LDFLAGS", "CGO_FFLAGS",
	"GOFLAGS", "MAKEFLAGS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS")

// buildFlagProgram matches option=value spellings ("-C linker=X" is joined to "-Clinker=X" first).
var buildFlagProgram = regexp.MustCompile(`^(?:-Clinker=|-Crunner=|-fplugin=|-fuse-ld=|--ld-path=|-specs=|--specs=|-toolexec=|-exec=|--toolexec=|--exec=|-Wl,--plugin=|-Wl,-plugin=|-Wl,--dynamic-linker=|-B|SHELL=)(.+)$`)

// buildFlagSeparate: options whose value is the next word.
var buildFlagSeparate = set("-toolexec", "-exec", "--toolexec", "-fplugin", "-B", "-wrapper", "-load", "-specs")

// buildConfigRoot: directories or files configuration is read from, which can run commands
// (git's core.fsmonitor/aliases in $XDG_CONFIG_HOME/git/config, cargo's config.toml under
// CARGO_HOME, hook templates). Outside the workspace, the home and the system directories they
// are code from outside.
var buildConfigRoot = set("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG", "GIT_TEMPLATE_DIR",
	"GIT_EXEC_PATH", "CARGO_HOME", "RUSTUP_HOME", "GOROOT", "GOENV", "GOTOOLDIR", "DOCKER_CONFIG", "KUBECONFIG_DIR", "HGRCPATH",
	"NPM_CONFIG_GLOBALCONFIG", "BUNDLE_GEMFILE", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "MPLCONFIGDIR")

// buildEnv handles one assignment; it reports whether the variable is one of its tables.
func (w *walker) buildEnv(f frame, name, val string) bool {
	val = unquoteValue(val)
	prog := "env " + name
	switch {
	case buildProgramEnv[name] || buildEnvFamily(name):
		w.envProgram(f, prog, val)
	case buildFlagEnv[name]:
		w.envBuildFlags(f, prog, name, val)
	case buildConfigRoot[name]:
		w.envConfigRoot(prog, val)
	default:
		return false
	}
	return true
}

func buildEnvFamily(name string) bool {
	for _, ps := range buildProgramEnvFamily {
		if strings.HasPrefix(name, ps[0]) && strings.HasSuffix(name, ps[1]) && len(name) > len(ps[0])+len(ps[1]) {
			return true
		}
	}
	return false
}

// envProgram: a program (with arguments) a build runs.
func (w *walker) envProgram(f frame, prog, val string) {
	s := w.s
	v := strings.TrimSpace(val)
	if v == "" {
		return
	}
	if isUnresolvedText(v) {
		s.addUnresolved("program named by " + prog + "=" + v)
		s.addEffect(Effect{Kind: EffectExec, Target: v, Program: prog, Detail: prog, Unresolved: true})
		return
	}
	fields := splitQuoted(v)
	if len(fields) == 0 {
		return
	}
	first := fields[0]
	if strings.ContainsAny(v, ";|&`$()<>\n") || shells[baseName(first)] {
		// A command line: judged as the shell it is.
		w.envScript(f, prog, v)
		return
	}
	// A launcher and its compiler (ccache /tmp/gcc, sccache ./cc): every program word counts.
	for i, a := range fields {
		if i > 0 && strings.HasPrefix(a, "-") {
			break
		}
		if strings.Contains(a, "/") || strings.HasPrefix(a, "~") {
			w.envFileExec(prog, a)
		}
		if i > 0 || !compilerLaunchers[baseName(first)] {
			break
		}
	}
}

// compilerLaunchers run the compiler named after them.
var compilerLaunchers = set("ccache", "sccache", "distcc", "icecc", "buildcache", "env", "time", "nice")

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// envBuildFlags reads the options of a flag variable that name a program or a code file.
func (w *walker) envBuildFlags(f frame, prog, name, val string) {
	var opts []string
	if strings.HasPrefix(name, "CARGO_ENCODED_") {
		opts = strings.Split(val, "\x1f")
	} else {
		opts = splitQuoted(val)
	}
	for i := 0; i < len(opts); i++ {
		o := opts[i]
		if (o == "-C" || o == "--codegen") && i+1 < len(opts) {
			i++
			o = "-C" + opts[i]
		} else if strings.HasPrefix(o, "--codegen=") {
			o = "-C" + strings.TrimPrefix(o, "--codegen=")
		}
		if buildFlagSeparate[o] && i+1 < len(opts) {
			i++
			w.envFlagValue(f, prog, o, opts[i])
			continue
		}
		if m := buildFlagProgram.FindStringSubmatch(o); m != nil {
			if strings.HasPrefix(o, "-fuse-ld=") && !strings.Contains(m[1], "/") {
				continue // -fuse-ld=lld: a linker of the system by name
			}
			w.envFlagValue(f, prog, o, m[1])
		}
	}
}

func (w *walker) envFlagValue(f frame, prog, opt, v string) {
	switch {
	case opt == "-B" || strings.HasPrefix(opt, "-B"):
		w.envFileExec(prog, v) // a directory compilers take their programs from
	case strings.Contains(opt, "toolexec") || strings.Contains(opt, "exec") || strings.HasPrefix(opt, "-Clinker") ||
		strings.HasPrefix(opt, "-Crunner") || opt == "-wrapper" || strings.HasPrefix(opt, "SHELL="):
		w.envProgram(f, prog, v)
	default:
		w.envFileExec(prog, v)
	}
}

// envConfigRoot: a configuration directory or file. /dev/null (no configuration), the workspace,
// the home (the user's own configuration) and the system directories add nothing.
func (w *walker) envConfigRoot(prog, val string) {
	s := w.s
	v := strings.TrimSpace(val)
	if v == "" || v == "/dev/null" {
		return
	}
	if isUnresolvedText(v) {
		s.addUnresolved("configuration named by " + prog + "=" + v)
		s.addEffect(Effect{Kind: EffectExec, Target: v, Program: prog, Detail: prog, Unresolved: true})
		return
	}
	for _, p := range strings.Split(v, ":") {
		clean, ok := resolvePath(p, s.cwd, s.n.opt.Home)
		if !ok || p == "" {
			continue
		}
		if inDir(clean, s.n.opt.Home) && !inDir(clean, s.n.opt.Workspace) && s.n.sens.classify(clean) == "" {
			continue
		}
		if clean == "/etc" || strings.HasPrefix(clean, "/etc/") || strings.HasPrefix(clean, "/usr/") || strings.HasPrefix(clean, "/opt/") {
			continue
		}
		w.envFileExec(prog, p)
	}
}
