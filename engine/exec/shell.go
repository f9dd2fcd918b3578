package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shieldsec/shield/sandbox"
)

// Shell runs shell commands confined by the sandbox: the workspace and a private temporary
// directory are writable, system program directories are executable, nothing else is readable
// beyond what programs need to start, and no network is reachable unless ports are allowed.
type Shell struct {
	// ShieldBin is the shield binary whose trampoline applies the sandbox (os.Executable()).
	ShieldBin string
	Workspace string
	Timeout   time.Duration // default 60s
	MaxOutput int           // bytes of combined output kept; default 64 KiB
	// ConnectTCP are the TCP ports commands may connect to (none by default).
	ConnectTCP []uint16
	// ReadOnly adds readable paths.
	ReadOnly []string
	// Protected are paths no command may reach (the appliance's state directory, audit trail and
	// keys): Run refuses when the profile would grant one of them (CheckProtected).
	Protected []string
}

// Result is what a command produced.
type Result struct {
	Output    string
	ExitCode  int
	Truncated bool
	TimedOut  bool
}

// systemExec are the directories shell commands may execute from (those that exist).
var systemExec = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/lib", "/lib", "/lib64", "/usr/lib64", "/usr/libexec", "/usr/local/go"}

// systemRead are read-only paths programs commonly need to start and run.
var systemRead = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/localtime", "/usr/share", "/etc/ssl/certs", "/etc/alternatives", "/dev/zero", "/dev/urandom", "/dev/random", "/proc/self"}

func existingPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Profile returns the sandbox profile commands run under, with tmp as their private /tmp.
func (s *Shell) Profile(tmp string) sandbox.Profile {
	return sandbox.Profile{
		ReadOnly:   append(existingPaths(systemRead), s.ReadOnly...),
		ReadWrite:  []string{filepath.Clean(s.Workspace), tmp, "/dev/null"},
		Exec:       existingPaths(systemExec),
		ConnectTCP: s.ConnectTCP,
		Spawn:      true,
	}
}

// Run runs command with /bin/sh -c in the workspace. A non-zero exit is a Result, not an error;
// errors are failures to start or confine the command.
func (s *Shell) Run(ctx context.Context, command string) (Result, error) {
	if s.ShieldBin == "" || s.Workspace == "" {
		return Result{}, errors.New("shell executor: ShieldBin and Workspace are required")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	max := s.MaxOutput
	if max <= 0 {
		max = 64 << 10
	}
	tmp, err := os.MkdirTemp("", "shield-shell-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	prof := s.Profile(tmp)
	if err := CheckProtected(prof, s.Protected); err != nil {
		return Result{}, fmt.Errorf("shell executor: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	targs, err := sandbox.TrampolineArgs(prof, "/bin/sh", []string{"-c", command})
	if err != nil {
		return Result{}, fmt.Errorf("shell executor: %w", err)
	}
	// The call runs under a reaper (a child subreaper outside the sandbox), which kills every
	// process the call started, detached or not, when the shell exits or the call is cancelled.
	cmd := osexec.CommandContext(ctx, s.ShieldBin, append([]string{ReaperCommand, "--", s.ShieldBin}, targs...)...)
	cmd.Dir = s.Workspace
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + s.Workspace, "TMPDIR=" + tmp, "LANG=C.UTF-8"}
	out := &capped{max: max}
	cmd.Stdout, cmd.Stderr = out, out
	// SIGTERM lets the reaper kill the tree (also when the engine dies); SIGKILL of the whole
	// group follows after WaitDelay should it not exit.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	res := Result{Output: out.buf.String(), Truncated: out.over, TimedOut: ctx.Err() == context.DeadlineExceeded}
	var ee *osexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case res.TimedOut:
		res.ExitCode = -1
	default:
		return res, fmt.Errorf("shell executor: %w", err)
	}
	return res, nil
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.over = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.over = true
	}
	return len(p), nil
}
