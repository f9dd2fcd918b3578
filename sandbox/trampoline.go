package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TrampolineCommand is the hidden shield subcommand that applies a profile and then executes a
// program: shield internal-sandbox-init --profile JSON -- PROG ARGS.
const TrampolineCommand = "internal-sandbox-init"

// TrampolineArgs returns the arguments, after the shield binary's name, that start prog (with
// argv[1:] = args) confined by p.
func TrampolineArgs(p Profile, prog string, args []string) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("invalid profile: %w", err)
	}
	if prog == "" {
		return nil, errors.New("no program to run")
	}
	js, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding profile: %w", err)
	}
	return append([]string{TrampolineCommand, "--profile", string(js), "--", prog}, args...), nil
}

// Command returns a command that runs prog confined by p, through the trampoline of the shield
// binary at shield. The program starts already confined: nothing of it runs before Apply.
func Command(ctx context.Context, shield string, p Profile, prog string, args ...string) (*exec.Cmd, error) {
	targs, err := TrampolineArgs(p, prog, args)
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, shield, targs...), nil
}

// Exec applies p to the calling process and replaces it with prog (argv[0] = argv0, then args),
// with environment env. It returns only on failure; after a failure past Apply's first step the
// process is partially confined and must exit. prog is looked up in PATH when it has no slash and
// must lie beneath one of p's Exec paths.
func Exec(p Profile, prog string, argv []string, env []string) error {
	path, err := resolveProgram(prog)
	if err != nil {
		return err
	}
	if !beneathAny(path, p.Exec) {
		return fmt.Errorf("landlock would refuse to execute %s: it is not beneath any exec path %q", path, p.Exec)
	}
	script := bytes.HasPrefix(readHead(path), []byte("#!"))

	// The program is opened before Landlock, with O_PATH (no access right needed), and moved to
	// execFD, the only descriptor seccomp lets execveat use when spawning is denied. Landlock
	// still checks the execute right when execveat opens it. A script keeps the descriptor
	// across exec because its interpreter reads it through /dev/fd.
	if _, err := unix.FcntlInt(execFD, unix.F_GETFD, 0); err == nil {
		return fmt.Errorf("descriptor %d, reserved for the trampoline, is already open", execFD)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	dupFlags := unix.O_CLOEXEC
	if script {
		dupFlags = 0
	}
	if err := unix.Dup3(fd, execFD, dupFlags); err != nil {
		unix.Close(fd)
		return fmt.Errorf("moving the program descriptor to %d: %w", execFD, err)
	}
	unix.Close(fd)

	if _, err := Apply(p); err != nil {
		return err
	}
	err = execveat(execFD, argv, env)
	switch {
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("landlock refused to execute %s (or its interpreter %v): %w", path, p.Exec, err)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("seccomp refused to execute %s: %w", path, err)
	}
	return fmt.Errorf("executing %s: %w", path, err)
}

// beneathAny reports whether path is one of dirs or beneath one, comparing symlink-free forms.
func beneathAny(path string, dirs []string) bool {
	for _, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if path == real || strings.HasPrefix(path, strings.TrimSuffix(real, "/")+"/") {
			return true
		}
	}
	return false
}

// execveat is execveat(fd, "", argv, env, AT_EMPTY_PATH); it returns only on failure.
func execveat(fd int, argv, env []string) error {
	empty, err := unix.BytePtrFromString("")
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return fmt.Errorf("argv: %w", err)
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return errno
}

// ParseTrampolineArgs parses the arguments of the trampoline command (after its name).
func ParseTrampolineArgs(args []string) (p Profile, prog string, argv []string, err error) {
	var profileJSON string
	have := false
	i := 0
flags:
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			i++
			break flags
		case a == "--profile" || a == "-profile":
			if i+1 >= len(args) {
				return Profile{}, "", nil, errors.New("--profile needs a value")
			}
			profileJSON, have = args[i+1], true
			i++
		case strings.HasPrefix(a, "--profile="):
			profileJSON, have = strings.TrimPrefix(a, "--profile="), true
		default:
			return Profile{}, "", nil, fmt.Errorf("unexpected argument %q (want --profile JSON -- PROG ARGS)", a)
		}
	}
	if !have {
		return Profile{}, "", nil, errors.New("missing --profile")
	}
	if i >= len(args) {
		return Profile{}, "", nil, errors.New("missing program after --")
	}
	p, err = DecodeProfile([]byte(profileJSON))
	if err != nil {
		return Profile{}, "", nil, err
	}
	return p, args[i], args[i:], nil
}

// Trampoline is the body of the trampoline command: parse args, apply, execute. It returns only on
// failure.
func Trampoline(args []string) error {
	p, prog, argv, err := ParseTrampolineArgs(args)
	if err != nil {
		return err
	}
	return Exec(p, prog, argv, os.Environ())
}
