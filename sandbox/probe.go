package sandbox

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CanaryCommand is the hidden shield subcommand that runs the probes (RunProbes on stdin/stdout).
const CanaryCommand = "internal-sandbox-canary"

// Probe names, in the order they run. execve runs last: when it succeeds the process is gone.
const (
	probeReadFile   = "read-file"
	probeCreateFile = "create-file"
	probeTCP        = "tcp-connect"
	probeUDP        = "udp-send"
	probeMPTCP      = "mptcp-connect"
	probeVMRead     = "process-vm-readv"
	probeIOURing    = "io-uring-setup"
	probeUserNS     = "user-namespace"
	probeMount      = "mount"
	probeExecve     = "execve"
)

// ProbeNames lists the probes a canary run performs, in order.
var ProbeNames = []string{probeReadFile, probeCreateFile, probeTCP, probeUDP, probeMPTCP, probeVMRead,
	probeIOURing, probeUserNS, probeMount, probeExecve}

// ProbeSpec is what the supervisor prepared for the probes: every target lies outside what the
// profile allows. It is sent as one JSON line.
type ProbeSpec struct {
	ReadFile   string `json:"read_file"`   // a file holding a random token
	CreateDir  string `json:"create_dir"`  // a directory to create a file in
	TCPAddr    string `json:"tcp_addr"`    // a TCP listener on a port the profile does not allow
	UDPAddr    string `json:"udp_addr"`    // a UDP socket
	UDPPayload string `json:"udp_payload"` // what to send to it
	MPTCPAddr  string `json:"mptcp_addr"`  // a TCP listener for the MPTCP connect
	PeerPID    int    `json:"peer_pid"`    // the supervisor
	PeerAddr   uint64 `json:"peer_addr"`   // address of a random token in the supervisor's memory
	PeerLen    int    `json:"peer_len"`
	MountDir   string `json:"mount_dir"` // a directory to mount a tmpfs on
	ExecPath   string `json:"exec_path"` // a program that exits 0 (/bin/true)
}

// probeLine is one line the probing process writes.
type probeLine struct {
	Probe    string `json:"probe,omitempty"`
	Outcome         // result of the probe
	Evidence string `json:"evidence,omitempty"` // what the operation returned, for the supervisor
	// Inspect asks the supervisor to inspect the process now and answer with a line.
	Inspect bool `json:"inspect,omitempty"`
	// ExecAttempt announces the execve probe: if it works nothing more is written.
	ExecAttempt bool `json:"exec_attempt,omitempty"`
}

// RunProbes is the probing side of a canary run. It reads a ProbeSpec line from r, tries each
// operation once, writes one JSON line per probe to w, asks to be inspected, waits for a line on
// r, and tries execve last. It runs the same way as control (unconfined) and confined; it never
// judges the results, the supervisor does. If execve succeeds it does not return.
func RunProbes(r io.Reader, w io.Writer) error {
	in := bufio.NewReader(r)
	line, err := in.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading probe spec: %w", err)
	}
	var spec ProbeSpec
	if err := json.Unmarshal(line, &spec); err != nil {
		return fmt.Errorf("decoding probe spec: %w", err)
	}
	enc := json.NewEncoder(w)
	emit := func(l probeLine) error {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("writing probe result: %w", err)
		}
		return nil
	}
	probes := []struct {
		name string
		run  func(ProbeSpec) (string, error)
	}{
		{probeReadFile, probeRead},
		{probeCreateFile, probeCreate},
		{probeTCP, func(s ProbeSpec) (string, error) { return "", connectTCP(s.TCPAddr, 0) }},
		{probeUDP, probeSendUDP},
		{probeMPTCP, func(s ProbeSpec) (string, error) { return "", connectTCP(s.MPTCPAddr, unix.IPPROTO_MPTCP) }},
		{probeVMRead, probeProcessVMRead},
		{probeIOURing, probeIOURingSetup},
		{probeUserNS, func(ProbeSpec) (string, error) { return "", cloneNewUser() }},
		{probeMount, probeMountTmpfs},
	}
	for _, p := range probes {
		ev, err := p.run(spec)
		if err := emit(probeLine{Probe: p.name, Outcome: outcomeOf(err), Evidence: ev}); err != nil {
			return err
		}
	}
	if err := emit(probeLine{Inspect: true}); err != nil {
		return err
	}
	if _, err := in.ReadBytes('\n'); err != nil {
		return fmt.Errorf("waiting for the supervisor: %w", err)
	}
	if err := emit(probeLine{ExecAttempt: true}); err != nil {
		return err
	}
	err = syscall.Exec(spec.ExecPath, []string{spec.ExecPath}, []string{})
	return emit(probeLine{Probe: probeExecve, Outcome: outcomeOf(err)})
}

// outcomeOf classifies an error: only EPERM and EACCES count as denied.
func outcomeOf(err error) Outcome {
	if err == nil {
		return Outcome{Result: "ok"}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		o := Outcome{Result: "error", Errno: unix.ErrnoName(errno), Detail: err.Error()}
		if errno == unix.EPERM || errno == unix.EACCES {
			o.Result = "denied"
		}
		return o
	}
	return Outcome{Result: "error", Detail: err.Error()}
}

func probeRead(s ProbeSpec) (string, error) {
	b, err := os.ReadFile(s.ReadFile)
	return string(b), err
}

func probeCreate(s ProbeSpec) (string, error) {
	fd, err := unix.Open(filepath.Join(s.CreateDir, "created"), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", err
	}
	return "", unix.Close(fd)
}

func sockaddr(addr string) (unix.Sockaddr, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("probe address %q: %w", addr, err)
	}
	if !ap.Addr().Is4() {
		return nil, fmt.Errorf("probe address %q: want IPv4", addr)
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}, nil
}

// connectTCP connects a TCP (or MPTCP) socket with raw syscalls, so the errno is the kernel's.
func connectTCP(addr string, proto int) error {
	sa, err := sockaddr(addr)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fmt.Errorf("setsockopt: %w", err)
	}
	if err := unix.Connect(fd, sa); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	return nil
}

func probeSendUDP(s ProbeSpec) (string, error) {
	sa, err := sockaddr(s.UDPAddr)
	if err != nil {
		return "", err
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, []byte(s.UDPPayload), 0, sa); err != nil {
		return "", fmt.Errorf("sendto: %w", err)
	}
	return "", nil
}

func probeProcessVMRead(s ProbeSpec) (string, error) {
	if s.PeerLen <= 0 || s.PeerLen > 4096 {
		return "", fmt.Errorf("bad peer length %d", s.PeerLen)
	}
	buf := make([]byte, s.PeerLen)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(s.PeerAddr), Len: s.PeerLen}}
	n, err := unix.ProcessVMReadv(s.PeerPID, local, remote, 0)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(buf[:n]), nil
}

// ioURingParams is struct io_uring_params (120 bytes).
type ioURingParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32
	cqOff                                                                  [10]uint32
}

func probeIOURingSetup(ProbeSpec) (string, error) {
	var params ioURingParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if errno != 0 {
		return "", errno
	}
	unix.Close(int(fd))
	return "", nil
}

func probeMountTmpfs(s ProbeSpec) (string, error) {
	if err := unix.Mount("shield-canary", s.MountDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=16k"); err != nil {
		return "", err
	}
	if err := unix.Unmount(s.MountDir, 0); err != nil {
		return "", fmt.Errorf("mount worked but unmount failed: %w", err)
	}
	return "", nil
}
