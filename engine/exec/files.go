// Package exec holds the executors the engine runs tool calls with, once the Shield pipeline has
// allowed them: file operations confined to the workspace, HTTP fetches behind an egress
// allowlist, and shell commands run inside the sandbox. Executors enforce their own confinement
// whatever the policy said: a policy mistake must not become a workspace escape.
//
// Only the engine imports exec.
package exec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is returned for reads and writes of anything but a regular file: a FIFO, a
// device or a socket could block the engine or act on the host.
var ErrNotRegular = errors.New("not a regular file (FIFO, device or socket): refused")

// ErrOutside is returned for a path that leaves the workspace (by "..", an absolute path
// elsewhere, or a symbolic link).
var ErrOutside = errors.New("path is outside the workspace")

// Files performs file operations beneath one root directory. Every path is resolved by the kernel
// with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS) relative to the root, so "..", absolute
// symlinks and symlinks pointing outside the root fail instead of escaping.
type Files struct {
	root    string
	MaxRead int64 // bytes returned by Read; 0 means 1 MiB
}

// NewFiles returns a file executor for root, which must be an existing directory.
func NewFiles(root string) (*Files, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", root)
	}
	return &Files{root: root}, nil
}

// rel turns a path given by the agent into one relative to the root. Absolute paths must lie
// under the root textually; the kernel then checks every component.
func (f *Files) rel(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w: empty path or NUL byte", ErrOutside)
	}
	if path.IsAbs(p) {
		r := path.Clean(f.root)
		c := path.Clean(p)
		if c != r && !strings.HasPrefix(c, r+"/") {
			return "", fmt.Errorf("%w: %s", ErrOutside, p)
		}
		p = strings.TrimPrefix(strings.TrimPrefix(c, r), "/")
		if p == "" {
			p = "."
		}
	}
	return p, nil
}

func (f *Files) open(p string, flags int, mode uint32) (*os.File, error) {
	rel, err := f.rel(p)
	if err != nil {
		return nil, err
	}
	rootfd, err := unix.Open(f.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	defer unix.Close(rootfd)
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(rootfd, rel, &how)
	if err != nil {
		if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s", ErrOutside, p)
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// openRegular opens p with O_NONBLOCK, so opening a FIFO cannot block, and refuses anything fstat
// does not show to be a regular file (ErrNotRegular); then it clears O_NONBLOCK.
func (f *Files) openRegular(p string, flags int, mode uint32) (*os.File, error) {
	fh, err := f.open(p, flags|unix.O_NONBLOCK, mode)
	if err != nil {
		if errors.Is(err, unix.ENXIO) { // a FIFO opened for writing with no reader
			return nil, fmt.Errorf("%w: %s", ErrNotRegular, p)
		}
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(fh.Fd()), &st); err != nil {
		fh.Close()
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		fh.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, p)
	}
	if err := unix.SetNonblock(int(fh.Fd()), false); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// Read returns up to MaxRead bytes of a file and whether it was truncated.
func (f *Files) Read(p string) ([]byte, bool, error) {
	fh, err := f.openRegular(p, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	max := f.MaxRead
	if max <= 0 {
		max = 1 << 20
	}
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > max {
		return b[:max], true, nil
	}
	return b, false, nil
}

// Write creates or replaces a file (not its parents) with mode 0644 and fsyncs it.
func (f *Files) Write(p string, data []byte) error {
	fh, err := f.openRegular(p, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := fh.Write(data); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// List returns the names in a directory (directories end with "/").
func (f *Files) List(p string) ([]string, error) {
	fh, err := f.open(p, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	ents, err := fh.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out, nil
}

// parent opens the directory holding p and returns it with p's base name.
func (f *Files) parent(p string) (*os.File, string, error) {
	rel, err := f.rel(p)
	if err != nil {
		return nil, "", err
	}
	dir, base := path.Split(path.Clean(rel))
	if base == "" || base == "." || base == ".." {
		return nil, "", fmt.Errorf("%w: %s names no file", ErrOutside, p)
	}
	if dir == "" {
		dir = "."
	}
	d, err := f.open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, "", err
	}
	return d, base, nil
}

// Delete removes a file or an empty directory.
func (f *Files) Delete(p string) error {
	d, base, err := f.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	err = unix.Unlinkat(int(d.Fd()), base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(int(d.Fd()), base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &fs.PathError{Op: "delete", Path: p, Err: err}
	}
	return nil
}

// Move renames src to dst, both beneath the root; it refuses to replace an existing dst.
func (f *Files) Move(src, dst string) error {
	sd, sb, err := f.parent(src)
	if err != nil {
		return err
	}
	defer sd.Close()
	dd, db, err := f.parent(dst)
	if err != nil {
		return err
	}
	defer dd.Close()
	if err := unix.Renameat2(int(sd.Fd()), sb, int(dd.Fd()), db, unix.RENAME_NOREPLACE); err != nil {
		return &fs.PathError{Op: "move", Path: src + " -> " + dst, Err: err}
	}
	return nil
}
