package exec

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ReaperCommand is the hidden shield subcommand that runs one tool call's process tree:
// shield internal-tool-reaper -- PROG ARGS. It makes itself a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every process the call starts stays its descendant whatever it
// does (background jobs, setsid, double fork, nohup), runs PROG in its own process group, and when
// PROG exits, or when it receives SIGTERM (the call's timeout or cancellation), kills every
// descendant it finds in /proc and reaps them before it exits with PROG's status.
const ReaperCommand = "internal-tool-reaper"

// Reaper is ReaperCommand's body; it returns the exit status to exit with.
func Reaper(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, ReaperCommand+": no program")
		return 126
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, ReaperCommand+": subreaper:", err)
		return 126
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := osexec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, ReaperCommand+":", err)
		return 126
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	code := 0
	select {
	case err = <-done:
	case <-sigs:
		// Stop the program first (Go's Wait reaps it), then everything else.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		err = <-done
		code = 128 + int(syscall.SIGKILL)
	}
	KillDescendants(os.Getpid(), 10*time.Second)
	if code != 0 {
		return code
	}
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 126
	}
	return 0
}

// KillDescendants sends SIGKILL to every descendant of pid found in /proc, again and again until
// none is left or limit passes, reaping those that are pid's children when pid is this process.
// Use it from a subreaper, whose orphaned descendants become its children instead of escaping.
// /proc is read one process at a time, so a scan can miss a process whose parent exits (and is
// reaped) between the two reads — a double fork racing the sweep; only two empty scans in a row,
// a few milliseconds apart, end the sweep.
func KillDescendants(pid int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	self := pid == os.Getpid()
	empty := 0
	for {
		kids := Descendants(pid)
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		reaped := false
		if self {
			for {
				var ws unix.WaitStatus
				n, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
				if n <= 0 || err != nil {
					break
				}
				reaped = true
			}
		}
		if len(kids) == 0 {
			empty++
		} else {
			empty = 0
		}
		if empty >= 2 || time.Now().After(deadline) {
			return
		}
		if !reaped {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// Descendants returns the pids of pid's living descendants (zombies excluded), from /proc.
func Descendants(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		pp, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}
