package policy

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// acceptor records the bundles a Watcher hands over and rejects those whose p.rego says "bad".
type acceptor struct {
	mu  sync.Mutex
	got []*Bundle
	ch  chan struct{}
}

func (a *acceptor) accept(b *Bundle) error {
	defer func() { a.ch <- struct{}{} }()
	if strings.Contains(string(b.Files["p.rego"]), "bad") {
		return errors.New("does not compile")
	}
	a.mu.Lock()
	a.got = append(a.got, b)
	a.mu.Unlock()
	return nil
}

func TestWatcherReload(t *testing.T) {
	dir := writeDir(t, map[string]string{".manifest": manifest, "p.rego": "package shield\n"})
	first, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &acceptor{ch: make(chan struct{}, 10)}
	w, err := NewWatcher(dir, first, WatchOptions{Accept: a.accept, Poll: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Reload("sighup"); err != nil {
		t.Fatalf("Reload unchanged: %v", err)
	}
	if s := w.Stats(); s.Unchanged != 1 || s.Reloads != 0 {
		t.Errorf("stats after an unchanged reload = %+v", s)
	}
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nbad\n"), 0o644)
	if err := w.Reload("sighup"); err == nil {
		t.Fatal("Reload of a rejected bundle succeeded")
	}
	s := w.Stats()
	if s.Failures != 1 || s.Digest != first.Digest || !strings.Contains(s.LastError, "does not compile") {
		t.Errorf("stats after a rejected reload = %+v", s)
	}
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nx := 1\n"), 0o644)
	if err := w.Reload("sighup"); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	s = w.Stats()
	if s.Reloads != 1 || s.Digest == first.Digest || s.LastError != "" {
		t.Errorf("stats after a good reload = %+v", s)
	}
	os.WriteFile(filepath.Join(dir, ".manifest"), []byte("{"), 0o644)
	if err := w.Reload("sighup"); err == nil || w.Stats().Failures != 2 {
		t.Errorf("Reload of an unloadable bundle = %v, stats %+v", err, w.Stats())
	}
}

func TestWatcherFileChange(t *testing.T) {
	dir := writeDir(t, map[string]string{".manifest": manifest, "p.rego": "package shield\n"})
	first, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &acceptor{ch: make(chan struct{}, 10)}
	w, err := NewWatcher(dir, first, WatchOptions{Accept: a.accept, Poll: -1, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	// Run sets up notifications asynchronously: keep changing the file until a reload lands.
	deadline := time.After(10 * time.Second)
	for i := 0; ; i++ {
		os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nx := "+string(rune('0'+i%10))+"\n"), 0o644)
		select {
		case <-a.ch:
			// Accept runs before the watcher records the reload: wait for the record, bounded.
			for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				s := w.Stats()
				if s.Reloads >= 1 && s.Digest != first.Digest {
					return
				}
				if time.Now().After(end) {
					t.Fatalf("stats after a file change = %+v", s)
				}
			}
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no reload after file changes")
		}
	}
}

func TestWatcherArchive(t *testing.T) {
	p := writeTarGz(t, []tarEntry{{name: ".manifest", body: manifest}, {name: "p.rego", body: "package shield\n"}})
	first, err := Load(p, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &acceptor{ch: make(chan struct{}, 10)}
	w, err := NewWatcher(p, first, WatchOptions{Accept: a.accept, Poll: -1})
	if err != nil {
		t.Fatal(err)
	}
	next := writeTarGz(t, []tarEntry{{name: ".manifest", body: `{"revision": "r2"}`}, {name: "p.rego", body: "package shield\n"}})
	data, err := os.ReadFile(next)
	if err != nil {
		t.Fatal(err)
	}
	// Replace the archive the way deploy tools do: write aside, rename over.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload("sighup"); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if s := w.Stats(); s.Revision != "r2" || s.Reloads != 1 {
		t.Errorf("stats = %+v", s)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// A broken bundle is logged once per content change, not on every poll; polls back off; a
// forced reload (SIGHUP) still tries.
func TestWatcherBrokenBundleLoggedOncePerChange(t *testing.T) {
	dir := writeDir(t, map[string]string{".manifest": manifest, "p.rego": "package shield\n"})
	first, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	a := &acceptor{ch: make(chan struct{}, 100)}
	w, err := NewWatcher(dir, first, WatchOptions{Accept: a.accept, Poll: time.Minute, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	const rejected = "policy reload rejected"
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nbad\n"), 0o644)
	for range 5 {
		w.reload("poll", false)
	}
	if n := logs.count(rejected); n != 1 {
		t.Fatalf("broken bundle logged %d times over 5 polls, want 1:\n%s", n, logs.b.String())
	}
	if s := w.Stats(); s.Failures != 1 {
		t.Errorf("polls within the back-off recompiled the broken bundle: failures = %d", s.Failures)
	}
	// The back-off expires: the same files are tried again, fail the same way, and are not
	// logged again; the back-off doubles.
	w.reloadMu.Lock()
	w.retryAt = time.Time{}
	w.reloadMu.Unlock()
	w.reload("poll", false)
	if s := w.Stats(); s.Failures != 2 {
		t.Errorf("retry after back-off: failures = %d, want 2", s.Failures)
	}
	if n := logs.count(rejected); n != 1 {
		t.Errorf("retry of unchanged broken bundle logged again (%d)", n)
	}
	if w.backoff != 2*time.Minute {
		t.Errorf("back-off = %v, want doubled to 2m", w.backoff)
	}
	// A content change (still broken) is logged once more.
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nbad bad\n"), 0o644)
	w.reload("poll", false)
	w.reload("poll", false)
	if n := logs.count(rejected); n != 2 {
		t.Errorf("changed broken bundle: %d rejections logged, want 2", n)
	}
	// SIGHUP always tries.
	if err := w.Reload("SIGHUP"); err == nil {
		t.Error("forced reload of a broken bundle succeeded")
	}
	if s := w.Stats(); s.Failures != 4 {
		t.Errorf("forced reload skipped: failures = %d, want 4", s.Failures)
	}
}

// Putting the serving bundle back clears the reload error GetStatus reports (the load finds
// the serving digest, which used to return early and keep the stale error).
func TestWatcherErrorClearedWhenFixed(t *testing.T) {
	dir := writeDir(t, map[string]string{".manifest": manifest, "p.rego": "package shield\n"})
	first, err := Load(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &acceptor{ch: make(chan struct{}, 100)}
	w, err := NewWatcher(dir, first, WatchOptions{Accept: a.accept, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nbad\n"), 0o644)
	w.reload("poll", false)
	if s := w.Stats(); s.LastError == "" {
		t.Fatal("no error recorded for a broken bundle")
	}
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\n"), 0o644)
	w.reload("poll", false)
	s := w.Stats()
	if s.LastError != "" {
		t.Errorf("error kept after the bundle was fixed: %q", s.LastError)
	}
	if s.Digest != first.Digest || s.Unchanged != 1 {
		t.Errorf("stats after the fix = %+v", s)
	}
	// And a broken bundle fixed to a new content clears it too.
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\nbad\n"), 0o644)
	w.reload("poll", false)
	os.WriteFile(filepath.Join(dir, "p.rego"), []byte("package shield\ny := 2\n"), 0o644)
	w.reload("poll", false)
	if s := w.Stats(); s.LastError != "" || s.Reloads != 1 {
		t.Errorf("stats after a fix to new content = %+v", s)
	}
}
