package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Applied describes the confinement Apply put in place.
type Applied struct {
	LandlockABI   int    `json:"landlock_abi"`
	SeccompSHA256 string `json:"seccomp_sha256"`
}

// Apply confines the calling process, all its threads and everything it later starts, by p:
// no_new_privs, then Landlock at the kernel's full ABI, then the seccomp filter. It cannot be undone.
//
// Everything that can fail for a reason other than the kernel (bad profile, missing path, unknown
// syscall) is checked before the first irreversible step. If Landlock is missing it returns
// ErrUnavailable having changed nothing. An error after the first step leaves the process
// partially confined: the caller must exit.
func Apply(p Profile) (Applied, error) {
	if err := p.Validate(); err != nil {
		return Applied{}, fmt.Errorf("invalid profile: %w", err)
	}
	abi := LandlockABI()
	cfg, err := landlockConfig(abi)
	if err != nil {
		return Applied{}, err
	}
	llRules, err := landlockRules(p, cfg)
	if err != nil {
		return Applied{}, fmt.Errorf("landlock: %w", err)
	}
	// Build the filter now so that a table error is caught before anything is irreversible.
	hash, err := FilterHash(p)
	if err != nil {
		return Applied{}, err
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return Applied{}, fmt.Errorf("seccomp: kernel has no seccomp: %w (%w)", ErrUnavailable, err)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	// 1. no_new_privs: set-user-ID binaries and file capabilities stop working, which Landlock
	// and unprivileged seccomp both require. go-landlock and libseccomp extend it to every thread.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Applied{}, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// 2. Landlock, strict: the configuration is exactly the kernel's ABI, never best-effort.
	if err := cfg.Restrict(llRules...); err != nil {
		return Applied{}, fmt.Errorf("landlock (ABI %d): %w", abi, err)
	}
	// 3. seccomp with TSYNC.
	loaded, err := loadSeccomp(p)
	if err != nil {
		return Applied{}, err
	}
	if loaded != hash {
		return Applied{}, fmt.Errorf("seccomp: loaded filter %s differs from the one checked %s", loaded, hash)
	}
	// The process cannot read its own /proc/self/status any more (Landlock), so check the thread
	// with prctl; the supervisor checks /proc/PID/status from outside.
	if nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || nnp != 1 {
		return Applied{}, fmt.Errorf("no_new_privs not set after apply (%d, %v)", nnp, err)
	}
	if mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil || mode != 2 {
		return Applied{}, fmt.Errorf("seccomp filter mode not set after apply (%d, %v)", mode, err)
	}
	return Applied{LandlockABI: abi, SeccompSHA256: hash}, nil
}
