package policy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const manifest = `{"revision": "r1", "roots": ["shield"], "metadata": {"name": "t"}}`

func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type tarEntry struct {
	name     string
	body     string
	typeflag byte
	link     string
}

func writeTarGz(t testing.TB, entries []tarEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		tf := e.typeflag
		if tf == 0 {
			tf = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: tf, Mode: 0o644, Size: int64(len(e.body)), Linkname: e.link}
		if tf != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if tf == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDirAndArchiveAgree(t *testing.T) {
	files := map[string]string{
		".manifest":         manifest,
		"defaults.yaml":     "default: escalate\nclasses:\n  exec: allow\n",
		"rules/a.yaml":      "rules: []\n",
		"shield/p.rego":     "package shield\n",
		"shield/data.json":  "{}",
		"catalog.yaml":      "tools: {}\n",
		"deep/er/file.yaml": "x: 1\n",
	}
	dir := writeDir(t, files)
	var entries []tarEntry
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // archive order must not matter
	entries = append(entries, tarEntry{name: "./", typeflag: tar.TypeDir})
	for _, n := range names {
		entries = append(entries, tarEntry{name: "./" + n, body: files[n]})
	}
	archive := writeTarGz(t, entries)

	bd, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatalf("Load(dir): %v", err)
	}
	ba, err := Load(archive, LoadOptions{})
	if err != nil {
		t.Fatalf("Load(archive): %v", err)
	}
	mfs := fstest.MapFS{}
	for n, c := range files {
		mfs["b/"+n] = &fstest.MapFile{Data: []byte(c)}
	}
	bf, err := LoadFS(mfs, "b", LoadOptions{})
	if err != nil {
		t.Fatalf("LoadFS: %v", err)
	}
	for _, b := range []*Bundle{ba, bf} {
		if b.Digest != bd.Digest {
			t.Errorf("digest %s of %s differs from the directory's %s", b.Digest, b.Source, bd.Digest)
		}
		if diff := cmp.Diff(bd.Files, b.Files); diff != "" {
			t.Errorf("files of %s (-dir +got):\n%s", b.Source, diff)
		}
	}
	if bd.Revision != "r1" || bd.Manifest.Roots[0] != "shield" {
		t.Errorf("manifest = %+v", bd.Manifest)
	}
	if got := bd.Defaults.DecisionFor("exec"); got != DecisionAllow {
		t.Errorf("default for exec = %q", got)
	}
	if got := bd.Defaults.DecisionFor("unknown"); got != DecisionEscalate {
		t.Errorf("default for unknown = %q", got)
	}
	if string(bd.Catalog()) != "tools: {}\n" {
		t.Errorf("Catalog() = %q", bd.Catalog())
	}
}

// TestDigestFormula recomputes the documented digest by hand.
func TestDigestFormula(t *testing.T) {
	files := map[string][]byte{"b": []byte("2"), ".manifest": []byte("m"), "a/x": []byte("1"), SignatureFile: []byte("ignored")}
	var listing strings.Builder
	for _, p := range []string{".manifest", "a/x", "b"} {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(&listing, "%x  %s\n", sum, p)
	}
	sum := sha256.Sum256([]byte(listing.String()))
	if got, want := Digest(files), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Digest = %s, want %s", got, want)
	}
	files["b"] = []byte("3")
	if Digest(files) == "sha256:"+hex.EncodeToString(sum[:]) {
		t.Error("digest did not change with the content")
	}
}

func TestLoadRejects(t *testing.T) {
	big := strings.Repeat("x", 2048)
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		opt     LoadOptions
		wantErr error
		wantMsg string
	}{
		{"archive with ..", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: ".manifest", body: manifest}, {name: "rules/../../etc/passwd", body: "x"}})
		}, LoadOptions{}, ErrUnsafePath, "contains .."},
		{"archive with an absolute path", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: "/etc/passwd", body: "x"}})
		}, LoadOptions{}, ErrUnsafePath, "absolute"},
		{"archive with a symlink", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: "x", typeflag: tar.TypeSymlink, link: "/etc/passwd"}})
		}, LoadOptions{}, ErrUnsafePath, "not a regular file"},
		{"archive with a hard link", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: "x", typeflag: tar.TypeLink, link: ".manifest"}})
		}, LoadOptions{}, ErrUnsafePath, "not a regular file"},
		{"archive with a duplicate", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: ".manifest", body: manifest}, {name: "./.manifest", body: manifest}})
		}, LoadOptions{}, ErrUnsafePath, "twice"},
		{"archive file too large", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: ".manifest", body: manifest}, {name: "big", body: big}})
		}, LoadOptions{MaxFileSize: 1024}, ErrTooLarge, "big is 2048 bytes"},
		{"archive too large in total", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: "a", body: big}, {name: "b", body: big}})
		}, LoadOptions{MaxTotalSize: 3000}, ErrTooLarge, "in total"},
		{"archive with too many files", func(t *testing.T) string {
			return writeTarGz(t, []tarEntry{{name: "a"}, {name: "b"}, {name: "c"}})
		}, LoadOptions{MaxFiles: 2}, ErrTooLarge, "more than 2 files"},
		{"not gzip", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "x.tar.gz")
			os.WriteFile(p, []byte("plain"), 0o644)
			return p
		}, LoadOptions{}, nil, "gzip"},
		{"directory with too many files", func(t *testing.T) string {
			return writeDir(t, map[string]string{".manifest": manifest, "a": "", "b": ""})
		}, LoadOptions{MaxFiles: 2}, ErrTooLarge, "more than 2 files"},
		{"directory file too large", func(t *testing.T) string {
			return writeDir(t, map[string]string{".manifest": manifest, "big": big})
		}, LoadOptions{MaxFileSize: 1024}, ErrTooLarge, "big"},
		{"directory symlink escaping", func(t *testing.T) string {
			dir := writeDir(t, map[string]string{".manifest": manifest})
			outside := writeDir(t, map[string]string{"secret": "s"})
			if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "leak")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, LoadOptions{}, ErrUnsafePath, "symbolic link leak"},
		{"directory relative symlink escaping", func(t *testing.T) string {
			dir := writeDir(t, map[string]string{".manifest": manifest})
			if err := os.Symlink("../../../../../../../etc/hostname", filepath.Join(dir, "leak")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, LoadOptions{}, ErrUnsafePath, "symbolic link leak"},
		{"directory symlink to a directory", func(t *testing.T) string {
			dir := writeDir(t, map[string]string{".manifest": manifest, "sub/x": "1"})
			if err := os.Symlink("sub", filepath.Join(dir, "loop")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, LoadOptions{}, ErrUnsafePath, "not point to a regular file"},
		{"missing manifest", func(t *testing.T) string {
			return writeDir(t, map[string]string{"rules/a.yaml": "rules: []"})
		}, LoadOptions{}, nil, ".manifest: missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(tc.path(t), tc.opt)
			if err == nil {
				t.Fatalf("Load = %v, want an error", b.Files)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v is not %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q lacks %q", err, tc.wantMsg)
			}
		})
	}
}

func TestSymlinkInsideIsFollowed(t *testing.T) {
	dir := writeDir(t, map[string]string{".manifest": manifest, "real.rego": "package shield\n"})
	if err := os.Symlink("real.rego", filepath.Join(dir, "link.rego")); err != nil {
		t.Fatal(err)
	}
	b, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if string(b.Files["link.rego"]) != "package shield\n" {
		t.Errorf("link.rego = %q", b.Files["link.rego"])
	}
}

func TestManifestAndDefaultsProblems(t *testing.T) {
	dir := writeDir(t, map[string]string{
		".manifest":     "{\n  \"revision\": \"r\",\n  \"rootz\": []\n}",
		"defaults.yaml": "default: allow\nclasses:\n  exec: maybe\n  file_read: allow\n",
	})
	_, err := Load(dir, LoadOptions{})
	if err == nil {
		t.Fatal("Load succeeded, want problems")
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T is not Problems", err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	want := []string{
		`.manifest: invalid JSON: json: unknown field "rootz"`,
		`defaults.yaml: classes.exec: decision "maybe" is not allow, block or escalate`,
		`defaults.yaml: unknown tools may not default to allow`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestDefaultsStrict(t *testing.T) {
	_, ps := ParseDefaults([]byte("default: block\nclases:\n  exec: allow\n"))
	if len(ps) != 1 || ps[0].Line != 2 || !strings.Contains(ps[0].Msg, "clases") {
		t.Errorf("problems = %v, want one at line 2 naming clases", ps)
	}
	d, ps := ParseDefaults(nil)
	if ps != nil || d.DecisionFor("exec") != DecisionEscalate {
		t.Errorf("zero defaults: %v, %v", d, ps)
	}
}

func TestSignature(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, _ := ed25519.GenerateKey(nil)
	files := map[string]string{".manifest": manifest, "p.rego": "package shield\n"}
	unsigned := writeDir(t, files)
	b, err := Load(unsigned, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Signed {
		t.Error("Signed without a key")
	}
	sig := Sign(priv, b.Digest)
	signedFiles := map[string]string{SignatureFile: string(sig)}
	for k, v := range files {
		signedFiles[k] = v
	}
	signed := writeDir(t, signedFiles)
	tampered := map[string]string{}
	for k, v := range signedFiles {
		tampered[k] = v
	}
	tampered["p.rego"] = "package shield\nx := 1\n"

	tests := []struct {
		name    string
		dir     string
		opt     LoadOptions
		wantErr string
	}{
		{"good", signed, LoadOptions{PublicKey: pub}, ""},
		{"good detached", unsigned, LoadOptions{PublicKey: pub, Signature: sig}, ""},
		{"missing", unsigned, LoadOptions{PublicKey: pub}, "missing"},
		{"wrong key", signed, LoadOptions{PublicKey: otherPub}, "does not verify"},
		{"tampered content", writeDir(t, tampered), LoadOptions{PublicKey: pub}, "does not verify"},
		{"garbage", unsigned, LoadOptions{PublicKey: pub, Signature: []byte("!!!")}, "not base64"},
		{"short", unsigned, LoadOptions{PublicKey: pub, Signature: []byte("AAAA")}, "want 64"},
		{"bad key", signed, LoadOptions{PublicKey: []byte{1, 2}}, "public key is 2 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(tc.dir, tc.opt)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if !b.Signed {
					t.Error("Signed = false")
				}
				return
			}
			if err == nil || !errors.Is(err, ErrSignature) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Load error = %v, want ErrSignature containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestKeyParsing(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	pubText, privText := EncodeKey(pub), EncodeKey(priv.Seed())
	gotPub, err := ParsePublicKey(pubText)
	if err != nil || !gotPub.Equal(pub) {
		t.Fatalf("ParsePublicKey = %v, %v", gotPub, err)
	}
	gotPriv, err := ParsePrivateKey(privText)
	if err != nil || !gotPriv.Equal(priv) {
		t.Fatalf("ParsePrivateKey = %v, %v", gotPriv, err)
	}
	if _, err := ParsePublicKey([]byte("AAAA")); err == nil {
		t.Error("ParsePublicKey accepted a short key")
	}
}

func TestProblemsError(t *testing.T) {
	ps := Problems{{File: "b.yaml", Line: 3, Msg: "y"}, {File: "a.yaml", Line: 9, Col: 2, Msg: "x"}, {Msg: "z"}}
	err := ps.Err()
	want := "3 problems:\n  z\n  a.yaml:9:2: x\n  b.yaml:3: y"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if got := AsProblems(fmt.Errorf("wrap: %w", err)); len(got) != 3 {
		t.Errorf("AsProblems found %d", len(got))
	}
}
