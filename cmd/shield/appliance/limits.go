package appliance

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/shieldsec/shield/shield/server"
)

// raiseNofile raises the soft RLIMIT_NOFILE to the hard limit (the Go runtime does so too on
// Linux; this makes it explicit) and returns the limit now in force.
func raiseNofile() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit NOFILE: %w", err)
	}
	if rl.Cur < rl.Max {
		want := rl
		want.Cur = want.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err == nil {
			rl = want
		}
	}
	return rl.Cur, nil
}

// HardNofile is the hard RLIMIT_NOFILE: what serve raises its soft limit to (Validate measures
// the configured caps against it).
func HardNofile() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("getrlimit NOFILE: %w", err)
	}
	return rl.Max, nil
}

// fitLimits raises RLIMIT_NOFILE and sizes the connection caps below it, keeping the reserve
// for the audit log, bundle reloads and the rest (server.Limits documents the arithmetic).
func fitLimits(cfg *Config) (server.Limits, uint64, error) {
	nofile, err := raiseNofile()
	if err != nil {
		return server.Limits{}, 0, err
	}
	l, err := cfg.Limits.Fit(nofile, 1+len(cfg.Listen)+len(cfg.HTTP.Listen))
	if err != nil {
		return l, nofile, fmt.Errorf("limits: %w", err)
	}
	return l, nofile, nil
}

func maxRecvMsgSize(cfg *Config) int {
	n := cfg.Pipeline.MaxArgumentBytes
	if n == 0 {
		n = 1 << 20
	}
	return n + 64<<10 // room for the envelope; the pipeline enforces the argument cap itself
}

// listenUnix listens on a unix socket with mode 0660, replacing a stale socket file but refusing
// to take over one a running service still answers on.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create socket dir: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("socket path %s exists and is not a socket", path)
		}
		if SocketAnswers(path) {
			return nil, fmt.Errorf("socket %s is in use: is another shield serving this state dir?", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	old := syscall.Umask(0o117)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return l, nil
}

// SocketAnswers reports whether a running appliance accepts connections on the unix socket path.
func SocketAnswers(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
