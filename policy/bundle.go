package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// Well-known file names of a bundle.
const (
	ManifestFile  = ".manifest"
	SignatureFile = ".signature"
	CatalogFile   = "catalog.yaml"
	DefaultsFile  = "defaults.yaml"
	// CommandsDir holds the command specs (*.spec): what each program does with its operands.
	CommandsDir = "commands"
)

// Default bounds of LoadOptions.
const (
	DefaultMaxFiles     = 1000
	DefaultMaxFileSize  = 4 << 20
	DefaultMaxTotalSize = 32 << 20
)

// LoadOptions bounds and checks a load. The zero value applies the Default* bounds and does not
// check signatures.
type LoadOptions struct {
	MaxFiles     int   // 0 means DefaultMaxFiles
	MaxFileSize  int64 // 0 means DefaultMaxFileSize
	MaxTotalSize int64 // 0 means DefaultMaxTotalSize; counts uncompressed bytes

	// PublicKey, when set, makes a valid signature mandatory (see the package doc).
	PublicKey []byte
	// Signature is a detached signature (base64 text, as in a .signature file) used instead of
	// the bundle's own .signature. Only read when PublicKey is set.
	Signature []byte
}

func (o LoadOptions) maxFiles() int {
	if o.MaxFiles <= 0 {
		return DefaultMaxFiles
	}
	return o.MaxFiles
}

func (o LoadOptions) maxFileSize() int64 {
	if o.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return o.MaxFileSize
}

func (o LoadOptions) maxTotalSize() int64 {
	if o.MaxTotalSize <= 0 {
		return DefaultMaxTotalSize
	}
	return o.MaxTotalSize
}

// Manifest is the bundle's .manifest file (a subset of OPA's bundle manifest).
type Manifest struct {
	Revision    string         `json:"revision"`
	Roots       []string       `json:"roots,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	RegoVersion *int           `json:"rego_version,omitempty"`
	// Gate holds the thresholds the bundle's labelled cases (tests/*.jsonl) must meet; see Gate.
	Gate *Gate `json:"gate,omitempty"`
}

// Bundle is a loaded, bounded, digested policy bundle. It is immutable once loaded: engines may
// read it concurrently.
type Bundle struct {
	Source   string // the path or name it was loaded from
	Manifest Manifest
	Revision string // Manifest.Revision
	Digest   string // "sha256:<hex>", see the package doc
	Signed   bool   // a signature was checked against LoadOptions.PublicKey
	Defaults Defaults
	// Files maps slash-separated paths relative to the bundle root to their content.
	Files map[string][]byte
}

// Paths returns the sorted paths of the files for which match returns true (all when nil).
func (b *Bundle) Paths(match func(p string) bool) []string {
	var out []string
	for p := range b.Files {
		if match == nil || match(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Catalog returns the content of catalog.yaml, or nil when the bundle has none.
func (b *Bundle) Catalog() []byte { return b.Files[CatalogFile] }

// Commands returns the command spec files (commands/*.spec) by path; empty when there are none.
func (b *Bundle) Commands() map[string][]byte {
	out := map[string][]byte{}
	for _, p := range b.Paths(IsCommandSpec) {
		out[p] = b.Files[p]
	}
	return out
}

// IsCommandSpec reports whether a bundle path is a command spec file.
func IsCommandSpec(p string) bool {
	return strings.HasPrefix(p, CommandsDir+"/") && strings.HasSuffix(p, ".spec") && !strings.Contains(p[len(CommandsDir)+1:], "/")
}

// collector gathers files under the bounds of a LoadOptions.
type collector struct {
	opt   LoadOptions
	files map[string][]byte
	total int64
}

func newCollector(opt LoadOptions) *collector {
	return &collector{opt: opt, files: map[string][]byte{}}
}

// cleanName checks a path from a directory walk or an archive and returns its canonical form.
func cleanName(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	switch {
	case n == "" || n == ".":
		return "", fmt.Errorf("%w: empty name %q", ErrUnsafePath, name)
	case strings.HasPrefix(n, "/"):
		return "", fmt.Errorf("%w: absolute path %q", ErrUnsafePath, name)
	case strings.ContainsRune(n, '\\'), strings.ContainsRune(n, 0):
		return "", fmt.Errorf("%w: %q has a backslash or NUL", ErrUnsafePath, name)
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w: %q contains ..", ErrUnsafePath, name)
		}
	}
	c := path.Clean(n)
	if c == "." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: %q", ErrUnsafePath, name)
	}
	return c, nil
}

// checkSize is called before reading a file of the given size.
func (c *collector) checkSize(name string, size int64) error {
	if len(c.files) >= c.opt.maxFiles() {
		return fmt.Errorf("%w: more than %d files", ErrTooLarge, c.opt.maxFiles())
	}
	if size > c.opt.maxFileSize() {
		return fmt.Errorf("%w: %s is %d bytes (max %d)", ErrTooLarge, name, size, c.opt.maxFileSize())
	}
	if c.total+size > c.opt.maxTotalSize() {
		return fmt.Errorf("%w: more than %d bytes in total", ErrTooLarge, c.opt.maxTotalSize())
	}
	return nil
}

func (c *collector) add(name string, data []byte) error {
	n, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.checkSize(n, int64(len(data))); err != nil {
		return err
	}
	if _, dup := c.files[n]; dup {
		return fmt.Errorf("%w: %s appears twice", ErrUnsafePath, n)
	}
	c.files[n] = data
	c.total += int64(len(data))
	return nil
}

// Load reads a bundle from a directory or a .tar.gz / .tgz archive, within the bounds of opt,
// and checks its manifest, defaults and (when opt.PublicKey is set) its signature.
//
// In a directory, symbolic links are followed only to regular files inside the directory;
// a link that leaves it, a link to a directory, and any other non-regular file are errors.
// In an archive only regular files and directories are accepted.
func Load(p string, opt LoadOptions) (*Bundle, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("load bundle: %w", err)
	}
	var files map[string][]byte
	if st.IsDir() {
		files, err = readDir(p, opt)
	} else {
		files, err = readTarGz(p, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", p, err)
	}
	b, err := newBundle(p, files, opt)
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", p, err)
	}
	return b, nil
}

// LoadFS reads the bundle rooted at dir in fsys ("." for its root), e.g.
// LoadFS(policies.Default, "default", opt) for the embedded default bundle. File paths in the
// Bundle are relative to dir. Symbolic links are not followed.
func LoadFS(fsys fs.FS, dir string, opt LoadOptions) (*Bundle, error) {
	name := dir
	if dir != "." && dir != "" {
		sub, err := fs.Sub(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("load bundle %s: %w", dir, err)
		}
		fsys = sub
	}
	c := newCollector(opt)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrUnsafePath, p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := c.checkSize(p, info.Size()); err != nil {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return c.add(p, data)
	})
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", name, err)
	}
	b, err := newBundle(name, c.files, opt)
	if err != nil {
		return nil, fmt.Errorf("load bundle %s: %w", name, err)
	}
	return b, nil
}

// readDir walks a directory through an os.Root, so that no symbolic link can lead outside it.
func readDir(dir string, opt LoadOptions) (map[string][]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	c := newCollector(opt)
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			// root.Stat follows the link and fails when it escapes the root.
			st, err := root.Stat(p)
			if err != nil {
				return fmt.Errorf("%w: symbolic link %s: %v", ErrUnsafePath, p, err)
			}
			if !st.Mode().IsRegular() {
				return fmt.Errorf("%w: symbolic link %s does not point to a regular file", ErrUnsafePath, p)
			}
		default:
			return fmt.Errorf("%w: %s is not a regular file", ErrUnsafePath, p)
		}
		f, err := root.Open(p)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsafePath, p, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrUnsafePath, p)
		}
		if err := c.checkSize(p, st.Size()); err != nil {
			return err
		}
		data, err := readBounded(f, opt.maxFileSize(), p)
		if err != nil {
			return err
		}
		return c.add(p, data)
	})
	if err != nil {
		return nil, err
	}
	return c.files, nil
}

// newBundle checks the collected files and builds the Bundle.
func newBundle(source string, files map[string][]byte, opt LoadOptions) (*Bundle, error) {
	b := &Bundle{Source: source, Files: files, Digest: Digest(files)}
	var probs Problems
	raw, ok := files[ManifestFile]
	if !ok {
		probs = append(probs, Problem{File: ManifestFile, Msg: "missing: a bundle needs a .manifest with a revision"})
	} else {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b.Manifest); err != nil {
			probs = append(probs, Problem{File: ManifestFile, Line: jsonErrorLine(raw, err), Msg: fmt.Sprintf("invalid JSON: %v", err)})
		} else if dec.More() {
			probs = append(probs, Problem{File: ManifestFile, Msg: "trailing data after the JSON object"})
		} else if b.Manifest.Revision == "" {
			probs = append(probs, Problem{File: ManifestFile, Msg: "revision is empty"})
		}
		if b.Manifest.Gate != nil {
			probs = append(probs, b.Manifest.Gate.check()...)
		}
		b.Revision = b.Manifest.Revision
	}
	d, dp := ParseDefaults(files[DefaultsFile])
	probs = append(probs, dp...)
	b.Defaults = d
	if err := probs.Err(); err != nil {
		return nil, err
	}
	if len(opt.PublicKey) > 0 {
		sig := opt.Signature
		if sig == nil {
			sig = files[SignatureFile]
		}
		if err := Verify(opt.PublicKey, b.Digest, sig); err != nil {
			return nil, err
		}
		b.Signed = true
	}
	return b, nil
}

// Digest computes the canonical digest of a set of files (see the package doc).
func Digest(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		if p != SignatureFile {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(h, "%s  %s\n", hex.EncodeToString(sum[:]), p)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// jsonErrorLine returns the 1-based line of a JSON syntax or type error, or 0.
func jsonErrorLine(data []byte, err error) int {
	var off int64 = -1
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		off = e.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
