package sandbox

import "errors"

// ErrUnavailable reports that the kernel lacks Landlock (or seccomp), so nothing can be confined.
// A caller may start an unconfined program only when an operator asked for it explicitly.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrNotSandboxed is returned by Gate when a report does not prove confinement.
var ErrNotSandboxed = errors.New("not sandboxed")
