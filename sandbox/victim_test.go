package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	victimEnv    = "SHIELD_SANDBOX_VICTIM"
	victimCtxEnv = "SHIELD_SANDBOX_VICTIM_CTX"
)

// victimCtx is what the test prepares for a victim: paths and listeners it may or may not reach.
type victimCtx struct {
	Confined bool   `json:"confined"`
	Outside  string `json:"outside"`  // a directory no profile grants, holding "secret"
	RO       string `json:"ro"`       // a directory with "file", granted read-only where a victim says
	RW       string `json:"rw"`       // a directory granted read-write where a victim says
	TCP      string `json:"tcp"`      // a TCP listener
	UDP      string `json:"udp"`      // a UDP socket
	Abstract string `json:"abstract"` // an abstract unix socket name ("@...")
}

func (c victimCtx) tcpPort() uint16 {
	ap, _ := net.ResolveTCPAddr("tcp", c.TCP)
	return uint16(ap.Port)
}

// victim is one confined operation: the profile it runs under, the operation, and the results
// expected unconfined (the control) and confined.
type victim struct {
	name         string
	profile      func(victimCtx) Profile
	op           func(victimCtx) error
	wantControl  string // "ok" unless the kernel refuses the operation to any Go process
	wantConfined string // an errno name, "ok" (the profile allows it) or "SIGSYS" (killed)
	root         bool   // the control needs root
	landlock     int    // the Landlock ABI the confined result needs (default 4)
}

func zeroProfile(victimCtx) Profile { return Profile{} }

// netProfile allows inet sockets (so that Landlock, not seccomp, decides about the port).
func netProfile(c victimCtx) Profile { return Profile{ConnectTCP: []uint16{1}} }

func rawSocket(domain, typ, proto uintptr) error {
	fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, domain, typ, proto)
	if errno != 0 {
		return errno
	}
	return unix.Close(int(fd))
}

func createIn(dir string) error {
	fd, err := unix.Open(filepath.Join(dir, fmt.Sprintf("new-%d", os.Getpid())), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

var victims = []victim{
	// Files (Landlock).
	{name: "read outside the profile", profile: zeroProfile, wantConfined: "EACCES",
		op: func(c victimCtx) error { _, err := os.ReadFile(filepath.Join(c.Outside, "secret")); return err }},
	{name: "read a read-only path", wantConfined: "ok",
		profile: func(c victimCtx) Profile { return Profile{ReadOnly: []string{c.RO}} },
		op:      func(c victimCtx) error { _, err := os.ReadFile(filepath.Join(c.RO, "file")); return err }},
	{name: "create in a read-only path", wantConfined: "EACCES",
		profile: func(c victimCtx) Profile { return Profile{ReadOnly: []string{c.RO}} },
		op:      func(c victimCtx) error { return createIn(c.RO) }},
	{name: "create in a read-write path", wantConfined: "ok",
		profile: func(c victimCtx) Profile { return Profile{ReadWrite: []string{c.RW}} },
		op:      func(c victimCtx) error { return createIn(c.RW) }},
	{name: "chmod outside the profile", profile: zeroProfile, wantConfined: "EPERM",
		op: func(c victimCtx) error { return os.Chmod(filepath.Join(c.Outside, "secret"), 0o644) }},
	{name: "fchmod of a read-only file", wantConfined: "EPERM",
		profile: func(c victimCtx) Profile { return Profile{ReadOnly: []string{c.RO}} },
		op: func(c victimCtx) error {
			f, err := os.Open(filepath.Join(c.RO, "file"))
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Chmod(0o644)
		}},
	{name: "chmod when metadata changes are allowed", wantConfined: "ok",
		profile: func(victimCtx) Profile { return Profile{Metadata: true} },
		op:      func(c victimCtx) error { return os.Chmod(filepath.Join(c.Outside, "secret"), 0o644) }},
	// Not stopped, as the README says: these pin down the documented limits.
	{name: "stat outside the profile is not stopped", profile: zeroProfile, wantConfined: "ok",
		op: func(c victimCtx) error { _, err := os.Stat(filepath.Join(c.Outside, "secret")); return err }},
	{name: "inotify outside the profile is not stopped", profile: zeroProfile, wantConfined: "ok",
		op: func(c victimCtx) error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			_, err = unix.InotifyAddWatch(fd, c.Outside, unix.IN_MODIFY)
			return err
		}},
	{name: "read own /proc/self/status", profile: zeroProfile, wantConfined: "EACCES",
		op: func(victimCtx) error { _, err := os.ReadFile("/proc/self/status"); return err }},

	// TCP (Landlock ABI 4) and the socket rules (seccomp).
	{name: "tcp connect to a port not allowed", profile: netProfile, wantConfined: "EACCES",
		op: func(c victimCtx) error { return connectTCP(c.TCP, 0) }},
	{name: "tcp connect to an allowed port", wantConfined: "ok",
		profile: func(c victimCtx) Profile { return Profile{ConnectTCP: []uint16{c.tcpPort()}} },
		op:      func(c victimCtx) error { return connectTCP(c.TCP, 0) }},
	{name: "go net.Dial to an allowed port", wantConfined: "ok",
		profile: func(c victimCtx) Profile { return Profile{ConnectTCP: []uint16{c.tcpPort()}} },
		op: func(c victimCtx) error {
			conn, err := net.Dial("tcp", c.TCP)
			if err == nil {
				conn.Close()
			}
			return err
		}},
	// Go's net.Listen tries MPTCP first; refused, it falls back to TCP, which Landlock allows.
	{name: "go net.Listen on an allowed port", wantConfined: "ok",
		profile: func(victimCtx) Profile { return Profile{BindTCP: []uint16{0}} },
		op: func(victimCtx) error {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				ln.Close()
			}
			return err
		}},
	{name: "tcp bind", profile: netProfile, wantConfined: "EACCES",
		op: func(victimCtx) error {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		}},
	{name: "tcp sockets without any port", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { return rawSocket(unix.AF_INET, unix.SOCK_STREAM, 0) }},
	{name: "mptcp connect", profile: netProfile, wantConfined: "EPERM",
		op: func(c victimCtx) error { return connectTCP(c.TCP, unix.IPPROTO_MPTCP) }},
	{name: "sctp socket", profile: netProfile, wantConfined: "EPERM", wantControl: "any",
		op: func(victimCtx) error { return rawSocket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP) }},
	{name: "udp send when not allowed", profile: netProfile, wantConfined: "EPERM",
		op: func(c victimCtx) error {
			_, err := probeSendUDP(ProbeSpec{UDPAddr: c.UDP, UDPPayload: "x"})
			return err
		}},
	{name: "udp send when allowed", wantConfined: "ok",
		profile: func(c victimCtx) Profile {
			ap, _ := net.ResolveUDPAddr("udp", c.UDP)
			return Profile{ConnectUDP: []uint16{uint16(ap.Port)}}
		},
		op: func(c victimCtx) error {
			_, err := probeSendUDP(ProbeSpec{UDPAddr: c.UDP, UDPPayload: "x"})
			return err
		}},
	{name: "raw ip socket", profile: netProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error { return rawSocket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP) }},
	{name: "netlink socket", profile: netProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { return rawSocket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) }},
	{name: "netlink socket with garbage in the high half of the family", profile: netProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			return rawSocket(1<<32|unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		}},
	{name: "unix socket when not allowed", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { return rawSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0) }},
	{name: "unix socketpair when not allowed", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err == nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
			}
			return err
		}},
	{name: "unix socket when allowed", wantConfined: "ok",
		profile: func(victimCtx) Profile { return Profile{Unix: true} },
		op:      func(victimCtx) error { return rawSocket(unix.AF_UNIX, unix.SOCK_STREAM, 0) }},

	// IPC scoping (Landlock ABI 6).
	{name: "signal a process outside the domain", profile: zeroProfile, wantConfined: "EPERM", landlock: 6,
		op: func(victimCtx) error { return unix.Kill(os.Getppid(), 0) }},
	{name: "abstract unix socket outside the domain", profile: func(victimCtx) Profile { return Profile{Unix: true} },
		wantConfined: "EPERM", landlock: 6,
		op: func(c victimCtx) error {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Connect(fd, &unix.SockaddrUnix{Name: c.Abstract})
		}},

	// Sandboxes nest: a confined process can confine itself further (Landlock and seccomp stack).
	{name: "apply again inside the sandbox", profile: zeroProfile, wantConfined: "ok",
		op: func(victimCtx) error { _, err := Apply(Profile{}); return err }},

	// Processes.
	{name: "execve", profile: zeroProfile, wantConfined: "EPERM", wantControl: "replaced",
		op: func(victimCtx) error {
			err := syscall.Exec("/bin/true", []string{"true"}, nil)
			return err
		}},
	{name: "fork and exec", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { return startChild("/bin/true") }},
	{name: "fork and exec when spawning is allowed", wantConfined: "ok",
		profile: func(victimCtx) Profile {
			p, err := Profile{Spawn: true}.WithProgram("/bin/true")
			if err != nil {
				panic(err)
			}
			return p
		},
		op: func(victimCtx) error { return startChild("/bin/true") }},
	{name: "exec outside the exec paths when spawning is allowed", wantConfined: "EACCES",
		profile: func(victimCtx) Profile {
			p, err := Profile{Spawn: true}.WithProgram("/bin/true")
			if err != nil {
				panic(err)
			}
			return p
		},
		op: func(victimCtx) error { return unwrapExit(startChild("/bin/echo")) }},
	// Landlock does not restrict files of internal filesystems, so a memfd could be executed
	// whatever the Exec paths say: seccomp refuses memfd_create.
	{name: "fileless exec through a memfd when spawning is allowed", wantConfined: "EPERM", wantControl: "replaced",
		profile: func(victimCtx) Profile {
			p, err := Profile{Spawn: true}.WithProgram("/bin/true")
			if err != nil {
				panic(err)
			}
			return p
		},
		op: func(victimCtx) error {
			bin, err := os.ReadFile("/bin/true")
			if err != nil {
				return err
			}
			fd, err := unix.MemfdCreate("victim", 0)
			if err != nil {
				return err
			}
			if _, err := unix.Write(fd, bin); err != nil {
				return err
			}
			return execveat(fd, []string{"true"}, []string{})
		}},
	{name: "clone3", profile: zeroProfile, wantConfined: "ENOSYS", wantControl: "EINVAL",
		op: func(victimCtx) error {
			_, _, errno := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
			return errnoOrNil(errno)
		}},
	{name: "user namespace", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { return cloneNewUser() }},
	// The kernel refuses unshare(CLONE_NEWUSER) to multi-threaded processes (every Go process)
	// with EINVAL; confined, seccomp refuses it first.
	{name: "unshare user namespace", profile: zeroProfile, wantConfined: "EPERM", wantControl: "EINVAL",
		op: func(victimCtx) error { return unix.Unshare(unix.CLONE_NEWUSER) }},
	{name: "setns", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error {
			fd, err := unix.Open("/proc/thread-self/ns/uts", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				// Confined, Landlock hides /proc; setns itself is what is tested.
				fd = 0
			}
			return unix.Setns(fd, unix.CLONE_NEWUTS)
		}},
	{name: "process_vm_readv", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			src := []byte("canary")
			_, err := probeProcessVMRead(ProbeSpec{PeerPID: os.Getpid(), PeerAddr: uint64(uintptr(unsafe.Pointer(&src[0]))), PeerLen: len(src)})
			return err
		}},
	{name: "ptrace attach", profile: zeroProfile, wantConfined: "EPERM", op: ptraceVictim},
	{name: "prlimit on another process", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			var old unix.Rlimit
			return unix.Prlimit(os.Getppid(), unix.RLIMIT_CORE, nil, &old)
		}},
	{name: "setpriority of another process", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error {
			prio, err := unix.Getpriority(unix.PRIO_PROCESS, os.Getppid())
			if err != nil {
				return err
			}
			// The raw syscall returns 20-nice; set it back to what it is.
			return unix.Setpriority(unix.PRIO_PROCESS, os.Getppid(), 20-prio)
		}},
	{name: "mount", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(c victimCtx) error { _, err := probeMountTmpfs(ProbeSpec{MountDir: c.RW}); return err }},
	{name: "fsopen (new mount API)", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error {
			fd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}},
	{name: "io_uring_setup", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error { _, err := probeIOURingSetup(ProbeSpec{}); return err }},
	{name: "bpf map create", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error {
			attr := [5]uint32{2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1, 0}
			fd, _, errno := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
			if errno == 0 {
				unix.Close(int(fd))
			}
			return errnoOrNil(errno)
		}},
	{name: "keyctl", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_PROCESS_KEYRING, true)
			return err
		}},
	{name: "userfaultfd", profile: zeroProfile, wantConfined: "EPERM", root: true,
		op: func(victimCtx) error {
			fd, _, errno := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
			if errno == 0 {
				unix.Close(int(fd))
			}
			return errnoOrNil(errno)
		}},
	{name: "personality", profile: zeroProfile, wantConfined: "EPERM",
		op: func(victimCtx) error {
			_, _, errno := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
			return errnoOrNil(errno)
		}},
	{name: "TIOCSTI", profile: zeroProfile, wantConfined: "EPERM", wantControl: "any",
		op: func(victimCtx) error {
			c := byte('x')
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			return errnoOrNil(errno)
		}},
	{name: "x32 syscall (foreign ABI)", profile: zeroProfile, wantConfined: "SIGSYS", wantControl: "any",
		op: func(victimCtx) error {
			const x32Bit = 0x40000000
			_, _, errno := unix.RawSyscall(unix.SYS_GETPID|x32Bit, 0, 0, 0)
			return errnoOrNil(errno)
		}},
}

// startChild runs a program with the victim's own descriptors (os/exec would otherwise open
// /dev/null, which no profile here grants).
func startChild(path string) error {
	cmd := exec.Command(path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	return cmd.Run()
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// unwrapExit turns "the child could not be executed" into its errno.
func unwrapExit(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ptraceVictim starts a target before confinement, then attaches to it (and detaches).
func ptraceVictim(victimCtx) error {
	if ptraceTarget == 0 {
		return errors.New("no ptrace target")
	}
	if err := unix.PtraceAttach(ptraceTarget); err != nil {
		return err
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(ptraceTarget, &ws, 0, nil)
	return unix.PtraceDetach(ptraceTarget)
}

var ptraceTarget int

// runVictim is the child side: apply the victim's profile (unless control), run the operation,
// print the result.
func runVictim(name string) int {
	var c victimCtx
	if err := json.Unmarshal([]byte(os.Getenv(victimCtxEnv)), &c); err != nil {
		printVictim(victimReport{Result: "error: " + err.Error()})
		return 1
	}
	for _, v := range victims {
		if v.name != name {
			continue
		}
		if v.name == "ptrace attach" {
			target := exec.Command("/bin/sleep", "30")
			if err := target.Start(); err != nil {
				printVictim(victimReport{Result: "error: " + err.Error()})
				return 1
			}
			defer target.Process.Kill()
			ptraceTarget = target.Process.Pid
		}
		if c.Confined {
			if _, err := Apply(v.profile(c)); err != nil {
				printVictim(victimReport{Apply: err.Error()})
				return 1
			}
		}
		err := v.op(c)
		r := victimReport{Result: "ok"}
		if err != nil {
			o := outcomeOf(err)
			r.Result = o.Errno
			if r.Result == "" {
				r.Result = "error: " + o.Detail
			}
		}
		printVictim(r)
		return 0
	}
	printVictim(victimReport{Result: "error: unknown victim " + name})
	return 1
}

// runVictimChild runs one victim in a child and returns its result, "SIGSYS" if it was killed by
// SIGSYS.
func runVictimChild(t *testing.T, v victim, c victimCtx) string {
	t.Helper()
	js, _ := json.Marshal(c)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), victimEnv+"="+v.name, victimCtxEnv+"="+string(js))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if ws.Signal() == syscall.SIGSYS {
				return "SIGSYS"
			}
			return ws.Signal().String()
		}
	}
	if err == nil && stdout.Len() == 0 {
		return "replaced" // the victim execve'd /bin/true
	}
	var r victimReport
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
		t.Fatalf("victim %q: %v; stdout %q; stderr %q", v.name, err, stdout.String(), stderr.String())
	}
	if r.Apply != "" {
		t.Fatalf("victim %q: apply: %s", v.name, r.Apply)
	}
	return r.Result
}

func newVictimCtx(t *testing.T) victimCtx {
	t.Helper()
	c := victimCtx{Outside: t.TempDir(), RO: t.TempDir(), RW: t.TempDir()}
	for _, d := range []string{c.Outside, c.RO, c.RW} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(c.Outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.RO, "file"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	c.TCP, c.UDP = ln.Addr().String(), udp.LocalAddr().String()
	c.Abstract = fmt.Sprintf("@shield-sandbox-test-%d", os.Getpid())
	abs, err := net.Listen("unix", c.Abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { abs.Close() })
	return c
}

func requireLandlock(t *testing.T, abi int) {
	t.Helper()
	if got := LandlockABI(); got < abi {
		t.Skipf("the kernel's Landlock ABI is %d; this test needs %d", got, abi)
	}
}

// TestVictims shows each operation succeeding unconfined (the control) and refused confined.
func TestVictims(t *testing.T) {
	requireLandlock(t, 4) // TCP rules
	c := newVictimCtx(t)
	for _, v := range victims {
		t.Run(strings.ReplaceAll(v.name, " ", "_"), func(t *testing.T) {
			if v.landlock > 0 {
				requireLandlock(t, v.landlock)
			}
			if v.root && os.Geteuid() != 0 {
				t.Skip("the control needs root (CAP_SYS_ADMIN, CAP_NET_RAW or CAP_SYS_PTRACE); unprivileged, the host refuses it anyway")
			}
			want := v.wantControl
			if want == "" {
				want = "ok"
			}
			control := c
			control.Confined = false
			if got := runVictimChild(t, v, control); want != "any" && got != want {
				t.Errorf("control: got %s, want %s", got, want)
			}
			confined := c
			confined.Confined = true
			if got := runVictimChild(t, v, confined); got != v.wantConfined {
				t.Errorf("confined: got %s, want %s", got, v.wantConfined)
			}
		})
	}
}
