package sandbox

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WithProgram returns a copy of p that may start the program at path: the program and its ELF
// interpreter (or, for a "#!" script, the script's interpreter) become Exec paths, and the shared
// libraries they need become ReadOnly files. Libraries are mapped, not executed, so they need no
// execute right. Only what the program needs to start is added; files it opens later must be in
// the profile already.
func (p Profile) WithProgram(path string) (Profile, error) {
	resolved, err := resolveProgram(path)
	if err != nil {
		return Profile{}, err
	}
	execs, libs, err := programRuntime(resolved)
	if err != nil {
		return Profile{}, err
	}
	out := p
	out.Exec = appendNew(slices.Clone(p.Exec), execs...)
	out.ReadOnly = appendNew(slices.Clone(p.ReadOnly), libs...)
	return out, nil
}

// resolveProgram finds path like a shell would (PATH lookup when it has no slash) and returns its
// absolute, symlink-free form.
func resolveProgram(path string) (string, error) {
	if !strings.Contains(path, "/") {
		found, err := lookPath(path)
		if err != nil {
			return "", err
		}
		path = found
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving program %q: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolving program %q: %w", path, err)
	}
	return real, nil
}

func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		cand := filepath.Join(dir, name)
		if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", fmt.Errorf("program %q not found in PATH", name)
}

// programRuntime returns what starting the program at path needs: files to execute and files to
// read.
func programRuntime(path string) (execs, reads []string, err error) {
	head := make([]byte, 256)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading program: %w", err)
	}
	n, _ := f.Read(head)
	f.Close()
	head = head[:n]
	if interp, ok := bytes.CutPrefix(head, []byte("#!")); ok {
		line, _, _ := bytes.Cut(interp, []byte("\n"))
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			return nil, nil, fmt.Errorf("program %s: empty #! line", path)
		}
		ipath, err := resolveProgram(fields[0])
		if err != nil {
			return nil, nil, fmt.Errorf("program %s: interpreter: %w", path, err)
		}
		if bytes.HasPrefix(readHead(ipath), []byte("#!")) {
			return nil, nil, fmt.Errorf("program %s: interpreter %s is itself a script", path, ipath)
		}
		ie, ir, err := programRuntime(ipath)
		if err != nil {
			return nil, nil, err
		}
		return appendNew([]string{path}, ie...), ir, nil
	}
	return elfRuntime(path)
}

func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 2)
	n, _ := f.Read(b)
	return b[:n]
}

// elfRuntime walks the DT_NEEDED graph of an ELF executable.
func elfRuntime(path string) (execs, reads []string, err error) {
	execs = []string{path}
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("program %s: %w", path, err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err != nil {
			return nil, nil, fmt.Errorf("program %s: reading PT_INTERP: %w", path, err)
		}
		interp, err := filepath.EvalSymlinks(string(bytes.TrimRight(b, "\x00")))
		if err != nil {
			return nil, nil, fmt.Errorf("program %s: interpreter: %w", path, err)
		}
		execs = append(execs, interp)
	}
	if len(execs) == 1 {
		return execs, nil, nil // static
	}
	if _, err := os.Stat("/etc/ld.so.cache"); err == nil {
		reads = append(reads, "/etc/ld.so.cache")
	}
	dirs := librarySearchDirs()
	seen := map[string]bool{}
	queue := []string{path}
	for len(queue) > 0 && len(seen) < 256 {
		obj := queue[0]
		queue = queue[1:]
		needed, runpath, err := elfNeeded(obj)
		if err != nil {
			return nil, nil, err
		}
		for _, lib := range needed {
			found, err := findLibrary(lib, append(expandOrigin(runpath, obj), dirs...))
			if err != nil {
				return nil, nil, fmt.Errorf("program %s: library %s needed by %s: %w", path, lib, obj, err)
			}
			if !seen[found] {
				seen[found] = true
				reads = append(reads, found)
				queue = append(queue, found)
			}
		}
	}
	return execs, reads, nil
}

func elfNeeded(path string) (needed, runpath []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	needed, err = f.DynString(elf.DT_NEEDED)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		v, _ := f.DynString(tag)
		for _, s := range v {
			runpath = append(runpath, filepath.SplitList(s)...)
		}
	}
	return needed, runpath, nil
}

func expandOrigin(dirs []string, obj string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", filepath.Dir(obj))
		if filepath.IsAbs(d) {
			out = append(out, d)
		}
	}
	return out
}

func findLibrary(name string, dirs []string) (string, error) {
	if strings.Contains(name, "/") {
		return filepath.EvalSymlinks(name)
	}
	for _, d := range dirs {
		cand := filepath.Join(d, name)
		if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
			return filepath.EvalSymlinks(cand)
		}
	}
	return "", errors.New("not found in the library search path (add it as a read-only path)")
}

// librarySearchDirs is the dynamic linker's search path as far as a profile needs it: the
// directories of /etc/ld.so.conf.d and the default ones.
func librarySearchDirs() []string {
	var dirs []string
	confs, _ := filepath.Glob("/etc/ld.so.conf.d/*.conf")
	for _, c := range confs {
		f, err := os.Open(c)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if filepath.IsAbs(line) {
				dirs = append(dirs, line)
			}
		}
		f.Close()
	}
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
}

// appendNew appends the elements of add not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}
