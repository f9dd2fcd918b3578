package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions configure a Watcher. The zero value (with Accept set) watches with fsnotify,
// polls the digest every DefaultPoll as a backstop, and debounces bursts of changes.
type WatchOptions struct {
	// Load bounds and checks every load (public key included).
	Load LoadOptions
	// Accept is handed every loaded bundle whose digest differs from the current one. It
	// compiles the bundle, runs its tests and swaps it in; an error keeps the old bundle, is
	// logged and counted. Required.
	Accept func(*Bundle) error
	// Poll is the interval of the digest poll that backs up file notifications (which miss
	// changes on some file systems and bind mounts); 0 means DefaultPoll, negative disables it.
	Poll time.Duration
	// Debounce is how long a burst of file events is let settle before a reload; 0 means
	// DefaultDebounce.
	Debounce time.Duration
	// Logger receives reload outcomes; nil means slog.Default().
	Logger *slog.Logger
}

// Watcher defaults.
const (
	DefaultPoll     = 10 * time.Second
	DefaultDebounce = 250 * time.Millisecond
	// MaxFailBackoff bounds the back-off between retries of a broken bundle whose files
	// have not changed.
	MaxFailBackoff = 5 * time.Minute
)

// WatchStats count reloads. Failures are loads that failed or bundles Accept rejected.
type WatchStats struct {
	Reloads   uint64 // bundles accepted
	Failures  uint64 // loads or Accepts that failed
	Unchanged uint64 // reloads that found the same digest
	LastError string
	LastAt    time.Time
	Revision  string // of the current bundle
	Digest    string
}

// Watcher reloads a bundle from a path (directory or archive) when Reload is called (on
// SIGHUP) and when its files change. It hands a new bundle to Accept only when its digest
// differs from the current one; the current bundle is the last one Accept took.
//
// Lifecycle: NewWatcher, then Run in a goroutine until its context ends; Reload and Stats may
// be called at any time from any goroutine.
type Watcher struct {
	path string
	opt  WatchOptions
	log  *slog.Logger

	reloadMu sync.Mutex // serialises reloads
	mu       sync.Mutex // guards stats
	stats    WatchStats

	// Broken-bundle back-off (guarded by reloadMu): the fingerprint of the files that last
	// failed, the error logged for them, when an unforced reload may try them again, and the
	// current back-off. A poll or file event that finds the same files before retryAt does
	// not reload; a retry that fails with the same error logs at debug level only.
	failPrint string
	failErr   string
	retryAt   time.Time
	backoff   time.Duration
}

// NewWatcher watches path; current is the bundle already serving (nil when none).
func NewWatcher(path string, current *Bundle, opt WatchOptions) (*Watcher, error) {
	if opt.Accept == nil {
		return nil, errors.New("new policy watcher: Accept is required")
	}
	if opt.Poll == 0 {
		opt.Poll = DefaultPoll
	}
	if opt.Debounce <= 0 {
		opt.Debounce = DefaultDebounce
	}
	w := &Watcher{path: path, opt: opt, log: opt.Logger}
	if w.log == nil {
		w.log = slog.Default()
	}
	if current != nil {
		w.stats.Revision, w.stats.Digest = current.Revision, current.Digest
	}
	return w, nil
}

// Stats returns a snapshot of the counters.
func (w *Watcher) Stats() WatchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Reload loads the bundle now and hands it to Accept if it changed. It returns the load or
// Accept error (also counted and logged), or nil when the bundle was accepted or unchanged.
// It always tries (it is what SIGHUP calls); polls and file events go through reload, which
// backs off from a broken bundle whose files have not changed.
func (w *Watcher) Reload(reason string) error {
	return w.reload(reason, true)
}

// reload is Reload; unforced, it skips a bundle whose files are those that last failed until
// the back-off expires.
func (w *Watcher) reload(reason string, force bool) error {
	w.reloadMu.Lock()
	defer w.reloadMu.Unlock()
	print := fingerprint(w.path)
	if !force && w.failPrint != "" && print == w.failPrint && time.Now().Before(w.retryAt) {
		return nil
	}
	b, err := Load(w.path, w.opt.Load)
	if err == nil {
		w.mu.Lock()
		same := b.Digest == w.stats.Digest
		if same {
			w.stats.Unchanged++
		}
		w.mu.Unlock()
		if same {
			w.fixed(reason, b)
			return nil
		}
		err = w.opt.Accept(b)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.LastAt = time.Now()
	if err != nil {
		w.stats.Failures++
		w.stats.LastError = err.Error()
		if print == w.failPrint && err.Error() == w.failErr {
			// Same files, same error: logged already.
			w.backoff = min(2*w.backoff, MaxFailBackoff)
			w.log.Debug("policy bundle still rejected", "path", w.path, "reason", reason, "error", err, "retry_in", w.backoff.String())
		} else {
			w.backoff = w.opt.Poll
			if w.backoff <= 0 {
				w.backoff = DefaultPoll
			}
			w.log.Error("policy reload rejected; the previous bundle keeps serving", "path", w.path, "reason", reason, "error", err)
		}
		w.failPrint, w.failErr = print, err.Error()
		w.retryAt = time.Now().Add(w.backoff)
		return fmt.Errorf("reload policy %s: %w", w.path, err)
	}
	w.failPrint, w.failErr, w.backoff = "", "", 0
	w.stats.Reloads++
	w.stats.LastError = ""
	w.stats.Revision, w.stats.Digest = b.Revision, b.Digest
	w.log.Info("policy reloaded", "path", w.path, "reason", reason, "revision", b.Revision, "digest", b.Digest)
	return nil
}

// fixed handles a load that found the serving bundle: a bundle that was broken has been put
// back, so the last error no longer describes anything and is cleared.
func (w *Watcher) fixed(reason string, b *Bundle) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stats.LastError == "" && w.failPrint == "" {
		return
	}
	w.stats.LastError = ""
	w.stats.LastAt = time.Now()
	w.failPrint, w.failErr, w.backoff = "", "", 0
	w.log.Info("policy bundle on disk is the serving one again; reload error cleared", "path", w.path, "reason", reason, "revision", b.Revision, "digest", b.Digest)
}

// fingerprint summarises the names, sizes, modes and modification times of the files at path
// (a directory tree or one archive) without reading them: cheap enough for every poll, and it
// changes whenever an editor or a deploy tool writes. It is a back-off key, not a digest;
// SIGHUP always reloads. At most maxPrintEntries entries are walked.
func fingerprint(path string) string {
	const maxPrintEntries = 10000
	h := sha256.New()
	n := 0
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(h, "err %s %v\n", p, err)
			return nil
		}
		if d.IsDir() && d.Name() == ".git" && p != path {
			return filepath.SkipDir
		}
		if n++; n > maxPrintEntries {
			return filepath.SkipAll
		}
		st, err := os.Lstat(p)
		if err != nil {
			fmt.Fprintf(h, "err %s %v\n", p, err)
			return nil
		}
		fmt.Fprintf(h, "%q %d %o %d\n", p, st.Size(), st.Mode(), st.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		fmt.Fprintf(h, "walk %v\n", err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Run watches until ctx ends. If file notifications cannot be set up it logs why and relies
// on polling alone (and returns an error if polling is disabled too).
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := w.notifier()
	if err != nil {
		if w.opt.Poll < 0 {
			return fmt.Errorf("watch policy %s: %w", w.path, err)
		}
		w.log.Warn("policy file notifications unavailable; polling only", "path", w.path, "error", err)
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		defer fw.Close()
		events, errs = fw.Events, fw.Errors
	}
	var poll <-chan time.Time
	if w.opt.Poll > 0 {
		t := time.NewTicker(w.opt.Poll)
		defer t.Stop()
		poll = t.C
	}
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Has(fsnotify.Create) {
				// Watch directories created inside a watched bundle directory.
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					_ = addTree(fw, ev.Name)
				}
			}
			debounce.Reset(w.opt.Debounce)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.log.Warn("policy file notifications", "path", w.path, "error", err)
		case <-debounce.C:
			_ = w.reload("file change", false)
		case <-poll:
			_ = w.reload("poll", false)
		}
	}
}

// notifier sets up fsnotify on the bundle: every directory of a bundle directory, or the
// directory holding an archive (editors and deploy tools replace files by renaming).
func (w *Watcher) notifier() (*fsnotify.Watcher, error) {
	st, err := os.Stat(w.path)
	if err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		err = addTree(fw, w.path)
	} else {
		err = fw.Add(filepath.Dir(w.path))
	}
	if err != nil {
		fw.Close()
		return nil, err
	}
	return fw, nil
}

func addTree(fw *fsnotify.Watcher, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return fw.Add(p)
		}
		return nil
	})
}
