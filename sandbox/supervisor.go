package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Canary holds what the supervisor prepares for a canary run and later checks: a file with a
// random token, an empty directory, TCP and UDP listeners on 127.0.0.1, a token in its own memory
// and a directory to mount on. None of it is reachable under the profile it was made for.
type Canary struct {
	dir        string
	readFile   string
	token      string
	createDir  string
	mountDir   string
	tcp, mptcp *net.TCPListener
	udp        *net.UDPConn
	udpPayload string
	memToken   []byte
}

// NewCanary prepares the probes' targets in a new directory under parent (os.TempDir() if empty),
// which must not be reachable under p. Close removes everything.
func NewCanary(parent string, p Profile) (*Canary, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "shield-canary-")
	if err != nil {
		return nil, fmt.Errorf("canary directory: %w", err)
	}
	c := &Canary{dir: dir}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		for _, allowed := range slices.Concat(p.ReadOnly, p.ReadWrite, p.Exec) {
			if beneathAny(real, []string{allowed}) {
				return nil, fmt.Errorf("canary directory %s lies beneath the allowed path %s; choose another", real, allowed)
			}
		}
	}
	c.token = randomHex()
	c.readFile = filepath.Join(dir, "secret")
	if err := os.WriteFile(c.readFile, []byte(c.token), 0o644); err != nil {
		return nil, fmt.Errorf("canary file: %w", err)
	}
	c.createDir = filepath.Join(dir, "create")
	c.mountDir = filepath.Join(dir, "mnt")
	for _, d := range []string{c.createDir, c.mountDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			return nil, fmt.Errorf("canary directory: %w", err)
		}
		// Writable by anyone so that a control running as another user is not refused.
		if err := os.Chmod(d, 0o777); err != nil {
			return nil, fmt.Errorf("canary directory: %w", err)
		}
	}
	for _, l := range []**net.TCPListener{&c.tcp, &c.mptcp} {
		ln, err := listenTCPAvoiding(p.ConnectTCP)
		if err != nil {
			return nil, err
		}
		*l = ln
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("canary UDP listener: %w", err)
	}
	c.udp = udp
	c.udpPayload = randomHex()
	c.memToken = []byte(randomHex())
	ok = true
	return c, nil
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// listenTCPAvoiding listens on an ephemeral 127.0.0.1 port that is not in allowed. The listener
// is plain TCP (not MPTCP), so an MPTCP client falls back to TCP and is counted.
func listenTCPAvoiding(allowed []uint16) (*net.TCPListener, error) {
	for range 16 {
		ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, fmt.Errorf("canary TCP listener: %w", err)
		}
		if !slices.Contains(allowed, uint16(ln.Addr().(*net.TCPAddr).Port)) {
			return ln, nil
		}
		ln.Close()
	}
	return nil, errors.New("canary TCP listener: every port tried is allowed by the profile")
}

// Spec returns the targets for RunProbes.
func (c *Canary) Spec() ProbeSpec {
	return ProbeSpec{
		ReadFile:   c.readFile,
		CreateDir:  c.createDir,
		TCPAddr:    c.tcp.Addr().String(),
		UDPAddr:    c.udp.LocalAddr().String(),
		UDPPayload: c.udpPayload,
		MPTCPAddr:  c.mptcp.Addr().String(),
		PeerPID:    os.Getpid(),
		PeerAddr:   uint64(uintptr(unsafe.Pointer(&c.memToken[0]))),
		PeerLen:    len(c.memToken),
		MountDir:   c.mountDir,
		ExecPath:   "/bin/true",
	}
}

// Close removes the canary's files and closes its listeners.
func (c *Canary) Close() error {
	var errs []error
	for _, cl := range []io.Closer{c.tcp, c.mptcp, c.udp} {
		if cl != nil && !isNilCloser(cl) {
			errs = append(errs, cl.Close())
		}
	}
	_ = unix.Unmount(c.mountDir, unix.MNT_DETACH) // only if a probe left a mount behind
	errs = append(errs, os.RemoveAll(c.dir))
	runtime.KeepAlive(c.memToken)
	return errors.Join(errs...)
}

func isNilCloser(c io.Closer) bool {
	switch v := c.(type) {
	case *net.TCPListener:
		return v == nil
	case *net.UDPConn:
		return v == nil
	}
	return false
}

// collectControl collects the control run's traces. Loopback delivery runs in softirq context and
// may lag behind the client's return from connect or sendto on a loaded machine, so for the probes
// the control reported as successful it waits, boundedly, for their traces to arrive.
func (c *Canary) collectControl(r *run) evidence {
	ev := c.collect(r.output)
	deadline := time.Now().Add(2 * time.Second)
	for _, name := range []string{probeTCP, probeUDP, probeMPTCP} {
		for ev[name] == "" && r.outcomes[name].Result == "ok" && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			for k, v := range c.collect(nil) {
				if ev[k] == "" {
					ev[k] = v
				}
			}
		}
	}
	return ev
}

// evidence is what the supervisor found of one run's operations.
type evidence map[string]string // probe name → trace found ("" = none)

// collect looks for the traces the last run left, and clears them for the next run.
func (c *Canary) collect(output []byte) evidence {
	ev := evidence{}
	if bytes.Contains(output, []byte(c.token)) {
		ev[probeReadFile] = "the file's token came back"
	}
	if ents, _ := os.ReadDir(c.createDir); len(ents) > 0 {
		ev[probeCreateFile] = fmt.Sprintf("%d file(s) created", len(ents))
		for _, e := range ents {
			os.Remove(filepath.Join(c.createDir, e.Name()))
		}
	}
	if n := drainTCP(c.tcp); n > 0 {
		ev[probeTCP] = fmt.Sprintf("listener accepted %d connection(s)", n)
	}
	if n := drainTCP(c.mptcp); n > 0 {
		ev[probeMPTCP] = fmt.Sprintf("listener accepted %d connection(s)", n)
	}
	if n := drainUDP(c.udp, c.udpPayload); n > 0 {
		ev[probeUDP] = fmt.Sprintf("listener received %d datagram(s)", n)
	}
	if bytes.Contains(output, []byte(hex.EncodeToString(c.memToken))) {
		ev[probeVMRead] = "the supervisor's memory token came back"
	}
	if mounted(c.mountDir) {
		ev[probeMount] = "something is mounted on the canary directory"
		_ = unix.Unmount(c.mountDir, unix.MNT_DETACH)
	}
	return ev
}

// drainTCP accepts and closes every connection waiting on ln, without waiting for more.
func drainTCP(ln *net.TCPListener) int {
	n := 0
	rc, err := ln.SyscallConn()
	if err != nil {
		return 0
	}
	_ = rc.Control(func(fd uintptr) {
		for {
			cfd, _, err := unix.Accept4(int(fd), unix.SOCK_CLOEXEC)
			if err != nil {
				return
			}
			unix.Close(cfd)
			n++
		}
	})
	return n
}

// drainUDP reads every datagram waiting on c, without waiting for more, and counts those that
// carry payload.
func drainUDP(c *net.UDPConn, payload string) int {
	n := 0
	rc, err := c.SyscallConn()
	if err != nil {
		return 0
	}
	buf := make([]byte, 512)
	_ = rc.Control(func(fd uintptr) {
		for {
			m, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
			if err != nil {
				return
			}
			if string(buf[:m]) == payload {
				n++
			}
		}
	})
	return n
}

func mounted(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// ProbeOptions configures Probe.
type ProbeOptions struct {
	// Shield is the shield binary: the trampoline and the canary entry point.
	Shield string
	// Profile confines the probes. It must allow executing Shield (see WithProgram).
	Profile Profile
	// Dir is where the canary's files go (os.TempDir() if empty); it must lie outside the profile.
	Dir string
	// Timeout bounds each of the two runs (default 30s).
	Timeout time.Duration
}

// Probe runs the canary: the probes once unconfined as controls, then once confined by the
// profile through the trampoline, and checks from outside what the confined process cannot fake.
// It returns a report with status unavailable, and no error, when the kernel has no Landlock. An
// error means the canary could not be run at all; a run that shows holes is a report, not an error.
func Probe(ctx context.Context, opts ProbeOptions) (*Report, error) {
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	r := &Report{Kernel: kernelRelease(), LandlockABI: LandlockABI(), Profile: opts.Profile}
	if r.LandlockABI == 0 {
		r.Status = StatusUnavailable
		r.Problems = []string{"the kernel has no Landlock"}
		return r, nil
	}
	if err := opts.Profile.Validate(); err != nil {
		return nil, fmt.Errorf("invalid profile: %w", err)
	}
	hash, err := FilterHash(opts.Profile)
	if err != nil {
		return nil, err
	}
	r.SeccompSHA256 = hash
	canary, err := NewCanary(opts.Dir, opts.Profile)
	if err != nil {
		return nil, err
	}
	defer canary.Close()
	spec := canary.Spec()

	control, _, err := runCanary(ctx, opts.Timeout, exec.Command(opts.Shield, CanaryCommand), spec, nil)
	if err != nil {
		return nil, fmt.Errorf("control run: %w", err)
	}
	controlEv := canary.collectControl(control)

	targs, err := TrampolineArgs(opts.Profile, opts.Shield, []string{CanaryCommand})
	if err != nil {
		return nil, err
	}
	baseFilters := seccompFilters(os.Getpid())
	confined, check, err := runCanary(ctx, opts.Timeout, exec.Command(opts.Shield, targs...), spec, func(pid int) *ProcessCheck {
		return inspect(pid, baseFilters+1)
	})
	if err != nil {
		return nil, fmt.Errorf("confined run: %w", err)
	}
	confinedEv := canary.collect(confined.output)
	r.Process = check

	for _, name := range ProbeNames {
		r.Probes = append(r.Probes, judge(name, control, controlEv, confined, confinedEv))
	}
	r.summarize()
	return r, nil
}

// run is what one canary run reported.
type run struct {
	outcomes map[string]probeLine
	inspect  bool // the process asked to be inspected
	execTry  bool // it announced the execve attempt
	exited   bool // it exited with status 0
	output   []byte
	stderr   string
}

// runCanary starts cmd, sends it spec, reads its lines and, when it asks, inspects it.
func runCanary(ctx context.Context, timeout time.Duration, cmd *exec.Cmd, spec ProbeSpec, inspectFn func(pid int) *ProcessCheck) (*run, *ProcessCheck, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	pid := cmd.Process.Pid
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	// Under Yama ptrace_scope 1 only a designated process may read the supervisor's memory: let
	// this child, so that only the sandbox can be what refuses it. Fails harmlessly without Yama.
	_ = unix.Prctl(unix.PR_SET_PTRACER, uintptr(pid), 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_PTRACER, 0, 0, 0, 0)

	res := &run{outcomes: map[string]probeLine{}}
	var check *ProcessCheck
	js, _ := json.Marshal(spec)
	if _, err := stdin.Write(append(js, '\n')); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, fmt.Errorf("sending spec: %w (stderr: %s)", err, stderr.String())
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(stdout, &out))
	for sc.Scan() {
		var l probeLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue // not a probe line; it stays in the output searched for tokens
		}
		switch {
		case l.Inspect:
			res.inspect = true
			if inspectFn != nil {
				check = inspectFn(pid)
			}
			_, _ = stdin.Write([]byte("go\n"))
		case l.ExecAttempt:
			res.execTry = true
		case l.Probe != "":
			res.outcomes[l.Probe] = l
		}
	}
	stdin.Close()
	werr := cmd.Wait()
	res.exited = werr == nil
	res.output = append(out.Bytes(), stderr.Bytes()...)
	res.stderr = strings.TrimSpace(stderr.String())
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("canary timed out after %v (stderr: %s)", timeout, res.stderr)
	}
	if !res.inspect {
		return nil, nil, fmt.Errorf("canary did not run its probes (%v; stderr: %s)", werr, res.stderr)
	}
	return res, check, nil
}

// judge decides one probe's verdict.
func judge(name string, control *run, controlEv evidence, confined *run, confinedEv evidence) ProbeResult {
	pr := ProbeResult{Name: name}
	pr.Control, pr.Confined = outcomeIn(name, control), outcomeIn(name, confined)
	// A control succeeds only if the supervisor saw its effect where it can see one.
	controlOK := pr.Control.Result == "ok"
	if trace, needed := controlEv[name], hasTrace(name); controlOK && needed && trace == "" {
		controlOK = false
		pr.Control.Result, pr.Control.Detail = "error", "reported success but the supervisor saw no effect"
	}
	if name == probeExecve && pr.Control.Result == "ok" {
		controlOK = true
	}
	switch {
	case pr.Confined.Result == "ok" || confinedEv[name] != "":
		pr.Verdict = VerdictAllowed
		pr.Finding = firstNonEmpty(confinedEv[name], "the confined attempt succeeded")
	case !controlOK && hostRefusal(name, pr.Control):
		pr.Verdict = VerdictHostDenied
		pr.Finding = "the host refuses this even unconfined (" + pr.Control.Errno + ")"
	case !controlOK:
		pr.Verdict = VerdictError
		pr.Finding = "the control did not succeed, so a refusal would prove nothing"
	case pr.Confined.Result == "denied":
		pr.Verdict = VerdictBlocked
		if hasTrace(name) {
			pr.Finding = "refused, and the supervisor saw no trace"
		} else {
			pr.Finding = "refused"
		}
	default:
		pr.Verdict = VerdictError
		pr.Finding = "the confined attempt failed with an error other than EPERM/EACCES"
	}
	return pr
}

// hostRefusal reports whether a failed control shows that the host itself refuses or lacks the
// operation: EPERM or EACCES for any probe, and the ways a kernel reports a feature it lacks or
// disabled (MPTCP off, io_uring compiled out, user namespaces limited to 0).
func hostRefusal(name string, o Outcome) bool {
	if o.Result == "denied" {
		return true
	}
	switch name {
	case probeMPTCP:
		return o.Errno == "EPROTONOSUPPORT" || o.Errno == "ENOPROTOOPT"
	case probeIOURing:
		return o.Errno == "ENOSYS"
	case probeUserNS:
		return o.Errno == "ENOSPC" || o.Errno == "EUSERS"
	}
	return false
}

// hasTrace reports whether the supervisor can see a successful attempt of the probe by itself.
func hasTrace(name string) bool {
	switch name {
	case probeReadFile, probeCreateFile, probeTCP, probeUDP, probeMPTCP, probeVMRead:
		return true
	}
	return false
}

// outcomeIn is a probe's outcome in a run. execve is special: success means the process was
// replaced, so it wrote nothing after announcing the attempt and exited 0 (/bin/true).
func outcomeIn(name string, r *run) Outcome {
	if l, ok := r.outcomes[name]; ok {
		return l.Outcome
	}
	if name == probeExecve && r.execTry && r.exited {
		return Outcome{Result: "ok", Detail: "the process was replaced by the program"}
	}
	return Outcome{Result: "missing", Detail: "no report (stderr: " + truncate(r.stderr, 200) + ")"}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// inspect reads /proc/PID/task/*/status of the confined process: every thread must have
// no_new_privs, seccomp filter mode and the expected number of filters. The report shows the
// main thread's values, or those of the first thread that differs.
func inspect(pid, wantFilters int) *ProcessCheck {
	c := &ProcessCheck{PID: pid, NoNewPrivs: -1, SeccompMode: -1, SeccompFilters: -1, ExpectedSeccompFilters: wantFilters}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil || len(tasks) == 0 {
		return c
	}
	c.OK = true
	for i, task := range tasks {
		fields := procStatus("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/status")
		nnp, mode, filters := atoi(fields["NoNewPrivs"]), atoi(fields["Seccomp"]), atoi(fields["Seccomp_filters"])
		good := nnp == 1 && mode == 2 && filters == wantFilters
		if i == 0 || (c.OK && !good) {
			c.NoNewPrivs, c.SeccompMode, c.SeccompFilters = nnp, mode, filters
		}
		c.OK = c.OK && good
	}
	return c
}

func seccompFilters(pid int) int {
	n := atoi(procStatus("/proc/" + strconv.Itoa(pid) + "/status")["Seccomp_filters"])
	if n < 0 {
		return 0
	}
	return n
}

// procStatus parses a /proc status file.
func procStatus(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}
