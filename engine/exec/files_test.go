package exec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFilesConfined(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "secret.txt")
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(outside, []byte("TOP SECRET"), 0o600)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644)
	os.Symlink(outside, filepath.Join(ws, "link-out"))
	os.Symlink("/etc", filepath.Join(ws, "etc-link"))
	os.Symlink("a.txt", filepath.Join(ws, "link-in"))
	f, err := NewFiles(ws)
	if err != nil {
		t.Fatal(err)
	}

	escapes := []string{"../secret.txt", "sub/../../secret.txt", outside, "link-out", "etc-link/passwd", "/etc/passwd", "sub/../../ws/../secret.txt"}
	for _, p := range escapes {
		t.Run("read "+p, func(t *testing.T) {
			b, _, err := f.Read(p)
			if err == nil {
				t.Fatalf("read %s succeeded: %q", p, b)
			}
			if strings.Contains(string(b), "SECRET") {
				t.Fatal("secret leaked")
			}
		})
		t.Run("write "+p, func(t *testing.T) {
			if err := f.Write(p, []byte("x")); err == nil {
				t.Fatalf("write %s succeeded", p)
			}
		})
	}
	if got, _ := os.ReadFile(outside); string(got) != "TOP SECRET" {
		t.Fatalf("outside file changed: %q", got)
	}
	if err := f.Delete("../secret.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("delete outside: %v", err)
	}
	if err := f.Move("a.txt", "../stolen.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("move outside: %v", err)
	}

	// Inside the workspace everything works.
	if b, trunc, err := f.Read("a.txt"); err != nil || string(b) != "hello" || trunc {
		t.Errorf("read: %q %v %v", b, trunc, err)
	}
	if b, _, err := f.Read(filepath.Join(ws, "a.txt")); err != nil || string(b) != "hello" {
		t.Errorf("absolute read inside: %q %v", b, err)
	}
	if err := f.Write("sub/b.txt", []byte("bee")); err != nil {
		t.Fatal(err)
	}
	names, err := f.List(".")
	if err != nil || !contains(names, "sub/") || !contains(names, "a.txt") {
		t.Errorf("list: %v %v", names, err)
	}
	if err := f.Move("sub/b.txt", "c.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.Move("a.txt", "c.txt"); err == nil {
		t.Error("move replaced an existing file")
	}
	if err := f.Delete("c.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt still there: %v", err)
	}
	f.MaxRead = 3
	if b, trunc, _ := f.Read("a.txt"); string(b) != "hel" || !trunc {
		t.Errorf("cap: %q %v", b, trunc)
	}
	// Writing through a symlink is refused (O_NOFOLLOW on the last component).
	if err := f.Write("link-in", []byte("x")); err == nil {
		t.Error("write through a symlink succeeded")
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestFilesRefuseFIFOs: reading or writing a FIFO (or any non-regular file) in the workspace is
// refused at once with ErrNotRegular instead of blocking the engine.
func TestFilesRefuseFIFOs(t *testing.T) {
	ws := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := NewFiles(ws)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, _, err := f.Read("pipe"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("read FIFO: %v, want ErrNotRegular", err)
		}
		if err := f.Write("pipe", []byte("x")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("write FIFO: %v, want ErrNotRegular", err)
		}
		if _, _, err := f.Read("."); err == nil {
			t.Error("read of a directory succeeded")
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a file tool blocked on a FIFO")
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _, err := f.Read("a.txt"); err != nil || string(b) != "hello" {
		t.Errorf("read regular file: %q %v", b, err)
	}
	if err := f.Write("b.txt", []byte("hi")); err != nil {
		t.Errorf("write regular file: %v", err)
	}
}
