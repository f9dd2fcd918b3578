package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Profile says what a confined process may do. The zero value denies everything the sandbox can
// deny: no file may be read, written or executed, no socket other than what the process inherited
// may be created, no TCP connect or bind, no UDP, no new process, and the fixed seccomp table
// (seccomp_table.go) applies.
//
// Paths must be absolute and exist when the profile is applied; a directory grants access to
// everything beneath it. Landlock follows the path to its inode when the rule is made, so a
// symbolic link grants access to its target.
type Profile struct {
	// ReadOnly paths may be read (files read, directories listed), not executed.
	ReadOnly []string `json:"read_only,omitempty"`
	// ReadWrite paths may be read, written, truncated, and beneath a directory, files, directories,
	// symbolic links, sockets and FIFOs may be created and removed. Not executed.
	ReadWrite []string `json:"read_write,omitempty"`
	// Exec paths may be read and executed. The program a trampoline starts must be one, and so must
	// its ELF interpreter (see WithProgram).
	Exec []string `json:"exec,omitempty"`
	// ConnectTCP lists the TCP ports the process may connect to (any address).
	ConnectTCP []uint16 `json:"connect_tcp,omitempty"`
	// BindTCP lists the TCP ports the process may bind; 0 allows an ephemeral port.
	BindTCP []uint16 `json:"bind_tcp,omitempty"`
	// ConnectUDP lists the UDP ports the process may send to. UDP sockets are refused by seccomp
	// when it is empty. Landlock restricts UDP ports only from ABI 10; below that, a non-empty list
	// allows UDP to any port (the report's Landlock ABI says which applies).
	ConnectUDP []uint16 `json:"connect_udp,omitempty"`
	// Unix allows creating AF_UNIX sockets. Below Landlock ABI 9 a confined process can then
	// connect to any pathname socket it can name, so prefer handing it a connected descriptor.
	Unix bool `json:"unix,omitempty"`
	// Spawn allows fork and execve (of Exec paths only).
	Spawn bool `json:"spawn,omitempty"`
	// Metadata allows changing the mode, owner, extended attributes and times of files (chmod,
	// chown, setxattr, utimensat...). Landlock does not restrict these, so this allows them on
	// every file the process's user owns, inside the profile or not.
	Metadata bool `json:"metadata,omitempty"`
	// Seccomp adds to the fixed seccomp table.
	Seccomp SeccompPolicy `json:"seccomp,omitzero"`
}

// SeccompPolicy is the part of the seccomp filter a profile may change: it can only add denials.
type SeccompPolicy struct {
	// Deny lists more syscalls (by name, as libseccomp knows them) refused with EPERM.
	Deny []string `json:"deny,omitempty"`
}

// Validate checks the profile's form: absolute, clean paths; no port 0 to connect to. Whether
// paths exist is checked when the profile is applied.
func (p Profile) Validate() error {
	var errs []error
	for _, set := range []struct {
		name  string
		paths []string
	}{{"read_only", p.ReadOnly}, {"read_write", p.ReadWrite}, {"exec", p.Exec}} {
		for _, path := range set.paths {
			switch {
			case path == "":
				errs = append(errs, fmt.Errorf("%s: empty path", set.name))
			case !filepath.IsAbs(path):
				errs = append(errs, fmt.Errorf("%s: path %q is not absolute", set.name, path))
			case filepath.Clean(path) != path:
				errs = append(errs, fmt.Errorf("%s: path %q is not clean (want %q)", set.name, path, filepath.Clean(path)))
			}
		}
	}
	for _, set := range []struct {
		name  string
		ports []uint16
	}{{"connect_tcp", p.ConnectTCP}, {"connect_udp", p.ConnectUDP}} {
		if slices.Contains(set.ports, 0) {
			errs = append(errs, fmt.Errorf("%s: port 0 cannot be connected to", set.name))
		}
	}
	for _, name := range p.Seccomp.Deny {
		if _, err := syscallNumber(name); err != nil {
			errs = append(errs, fmt.Errorf("seccomp.deny: %w", err))
		}
	}
	return errors.Join(errs...)
}

// inet reports whether the profile needs AF_INET/AF_INET6 sockets.
func (p Profile) inet() bool {
	return len(p.ConnectTCP) > 0 || len(p.BindTCP) > 0 || len(p.ConnectUDP) > 0
}

// DecodeProfile decodes a JSON profile strictly (unknown fields and trailing data are errors) and
// validates it.
func DecodeProfile(data []byte) (Profile, error) {
	var p Profile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("decoding profile: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Profile{}, errors.New("decoding profile: trailing data after the JSON object")
	}
	if err := p.Validate(); err != nil {
		return Profile{}, fmt.Errorf("invalid profile: %w", err)
	}
	return p, nil
}

// AgentOptions are the few things that vary in the default agent profile.
type AgentOptions struct {
	// LLMPort is the TCP port of the LLM endpoint; 0 means the agent gets no network at all.
	LLMPort uint16
	// DNS lets the agent resolve names: UDP to port 53 and read access to the resolver's files.
	// Without it the agent must be given an address.
	DNS bool
}

// DefaultAgentProfile is the profile of an agent process: read its workspace, write nothing,
// connect only to the LLM endpoint's port, spawn nothing. The engine is reached through a connected
// descriptor the agent inherits, which needs no permission, so no unix sockets may be created.
// The profile does not yet allow starting any program: add the agent's executable with
// WithProgram.
func DefaultAgentProfile(workspace string, opts AgentOptions) Profile {
	p := Profile{ReadOnly: []string{filepath.Clean(workspace)}}
	if opts.LLMPort != 0 {
		p.ConnectTCP = []uint16{opts.LLMPort}
		// TLS needs the system's CA bundle.
		p.ReadOnly = append(p.ReadOnly, existing("/etc/ssl/certs", "/usr/share/ca-certificates")...)
	}
	if opts.DNS {
		p.ConnectUDP = []uint16{53}
		p.ReadOnly = append(p.ReadOnly, existing("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf")...)
	}
	return p
}

// existing returns the paths among paths that exist now.
func existing(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
