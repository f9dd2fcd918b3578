package sandbox

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock access rights the profile's path lists grant, for directories and for files. Devices
// (make char/block, ioctl) and reparenting (refer) are never granted.
const (
	accessReadFile  = ll.AccessFSReadFile
	accessReadDir   = ll.AccessFSReadFile | ll.AccessFSReadDir
	accessWriteFile = accessReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	accessWriteDir  = accessReadDir | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRemoveDir |
		ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeSym
	accessExecFile = accessReadFile | ll.AccessFSExecute
	accessExecDir  = accessReadDir | ll.AccessFSExecute
)

// landlockPresets are go-landlock's configurations by ABI version, each handling everything that
// version can restrict.
var landlockPresets = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// LandlockABI returns the Landlock ABI version of the running kernel, 0 when Landlock is missing
// or disabled. Like go-landlock, it treats ABI 6 and later without the signal-scoping fix
// (erratum 2) as ABI 5.
func LandlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= 6 {
		errata, err := ll.LandlockGetErrata()
		if err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v
}

// landlockConfig returns the configuration that handles every right the kernel's ABI knows (the
// newest go-landlock knows if the kernel is newer). Never best-effort: if the kernel cannot
// enforce it, Restrict fails.
func landlockConfig(abi int) (landlock.Config, error) {
	if abi < 1 {
		return landlock.Config{}, fmt.Errorf("landlock: kernel has no Landlock: %w", ErrUnavailable)
	}
	if abi > len(landlockPresets) {
		abi = len(landlockPresets)
	}
	return landlockPresets[abi-1], nil
}

// landlockRules turns the profile into Landlock rules for cfg.
func landlockRules(p Profile, cfg landlock.Config) ([]landlock.Rule, error) {
	var out []landlock.Rule
	var errs []error
	for _, set := range []struct {
		name            string
		paths           []string
		fileAcc, dirAcc landlock.AccessFSSet
	}{
		{"read-only", p.ReadOnly, accessReadFile, accessReadDir},
		{"read-write", p.ReadWrite, accessWriteFile, accessWriteDir},
		{"exec", p.Exec, accessExecFile, accessExecDir},
	} {
		for _, path := range set.paths {
			st, err := os.Stat(path)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s path: %w", set.name, err))
				continue
			}
			acc := set.fileAcc
			if st.IsDir() {
				acc = set.dirAcc
			}
			out = append(out, landlock.PathAccess(acc&cfg.HandledAccessFS, path))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, port := range p.ConnectTCP {
		out = append(out, landlock.ConnectTCP(port))
	}
	for _, port := range p.BindTCP {
		out = append(out, landlock.BindTCP(port))
	}
	if cfg.HandledAccessNet&ll.AccessNetConnectSendUDP != 0 {
		for _, port := range p.ConnectUDP {
			out = append(out, landlock.ConnectSendUDP(port))
		}
		if len(p.ConnectUDP) > 0 {
			// Sending from an unbound socket binds it to an ephemeral port first.
			out = append(out, landlock.BindUDP(0))
		}
	}
	return out, nil
}
