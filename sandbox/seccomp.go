package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// syscallNumber resolves a syscall name for the native architecture.
func syscallNumber(name string) (seccomp.ScmpSyscall, error) {
	nr, err := seccomp.GetSyscallFromName(name)
	if err == nil {
		return nr, nil
	}
	if n, ok := recentSyscalls[name]; ok && unifiedSyscallNumbers {
		return seccomp.ScmpSyscall(n), nil
	}
	return 0, fmt.Errorf("unknown syscall %q", name)
}

// unifiedSyscallNumbers is true where recentSyscalls' numbers hold.
const unifiedSyscallNumbers = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" || runtime.GOARCH == "riscv64" ||
	runtime.GOARCH == "loong64" || runtime.GOARCH == "ppc64le" || runtime.GOARCH == "s390x"

// applies reports whether a rule with gate g is in force for p.
func (g gate) applies(p Profile) bool {
	switch g {
	case always:
		return true
	case exceptSpawn:
		return !p.Spawn
	case exceptUDP:
		return len(p.ConnectUDP) == 0
	case exceptUnix:
		return !p.Unix
	case exceptInet:
		return !p.inet()
	case exceptMetadata:
		return !p.Metadata
	}
	panic(fmt.Sprintf("sandbox: unknown seccomp gate %d", g))
}

func (c argCmp) condition() (seccomp.ScmpCondition, error) {
	switch c.op {
	case maskedEq:
		return seccomp.MakeCondition(c.arg, seccomp.CompareMaskedEqual, c.mask, c.value)
	case notEq:
		return seccomp.MakeCondition(c.arg, seccomp.CompareNotEqual, c.value)
	case greater:
		return seccomp.MakeCondition(c.arg, seccomp.CompareGreater, c.value)
	}
	return seccomp.ScmpCondition{}, fmt.Errorf("unknown comparison %d", c.op)
}

// rules returns the table rows in force for p, with the profile's own denials last.
func rules(p Profile) []syscallRule {
	var out []syscallRule
	for _, r := range seccompTable {
		if r.gate.applies(p) {
			out = append(out, r)
		}
	}
	if len(p.Seccomp.Deny) > 0 {
		out = append(out, syscallRule{names: p.Seccomp.Deny, why: "denied by the profile"})
	}
	return out
}

// buildFilter compiles the seccomp filter for p. The caller releases it.
func buildFilter(p Profile) (*seccomp.ScmpFilter, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Release()
		}
	}()
	// NewFilter asks for TSYNC but ignores a libseccomp that cannot do it; the trampoline's
	// execveat leaves one thread anyway, and Apply checks every thread after loading.
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("seccomp: bad-arch action: %w", err)
	}
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return nil, fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	for _, r := range rules(p) {
		errno := r.errno
		if errno == 0 {
			errno = unix.EPERM
		}
		action := seccomp.ActErrno.SetReturnCode(int16(errno))
		conds := make([]seccomp.ScmpCondition, 0, len(r.all))
		for _, c := range r.all {
			cond, err := c.condition()
			if err != nil {
				return nil, fmt.Errorf("seccomp: rule %q: %w", r.why, err)
			}
			conds = append(conds, cond)
		}
		for _, name := range r.names {
			nr, err := syscallNumber(name)
			if err != nil {
				return nil, fmt.Errorf("seccomp: rule %q: %w", r.why, err)
			}
			if len(conds) == 0 {
				err = f.AddRule(nr, action)
			} else {
				err = f.AddRuleConditional(nr, action, conds)
			}
			if err != nil {
				return nil, fmt.Errorf("seccomp: adding %s (%s): %w", name, r.why, err)
			}
		}
	}
	ok = true
	return f, nil
}

// FilterHash returns the SHA-256 (hex) of the BPF program Apply loads for p. The report carries it
// so an auditor can tell which filter confined an agent.
func FilterHash(p Profile) (string, error) {
	f, err := buildFilter(p)
	if err != nil {
		return "", err
	}
	defer f.Release()
	return filterHash(f)
}

func filterHash(f *seccomp.ScmpFilter) (string, error) {
	bpf, err := exportBPF(f)
	if err != nil {
		return "", fmt.Errorf("seccomp: exporting BPF: %w", err)
	}
	sum := sha256.Sum256(bpf)
	return hex.EncodeToString(sum[:]), nil
}

// loadSeccomp installs the filter for p on every thread of the process.
func loadSeccomp(p Profile) (hash string, err error) {
	f, err := buildFilter(p)
	if err != nil {
		return "", err
	}
	defer f.Release()
	hash, err = filterHash(f)
	if err != nil {
		return "", err
	}
	if err := f.Load(); err != nil {
		return "", fmt.Errorf("seccomp: loading filter: %w", err)
	}
	return hash, nil
}

// exportBPF returns the filter's BPF program. libseccomp before 2.6 can only write it to a
// descriptor, so it goes through a pipe (not a memfd, which the filter itself refuses: a nested
// sandbox must still be able to build one).
func exportBPF(f *seccomp.ScmpFilter) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		r.Close()
		done <- result{b, err}
	}()
	err = f.ExportBPF(w)
	w.Close()
	res := <-done
	if err != nil {
		return nil, err
	}
	return res.b, res.err
}
