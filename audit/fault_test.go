package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// disk is the shared state of injected faults: free bytes (a write beyond them writes what
// fits and fails with ENOSPC, like a full filesystem) and an fsync error. It survives the
// log reopening its segment.
type disk struct {
	mu      sync.Mutex
	free    int
	syncErr error
}

func (d *disk) set(free int, syncErr error) {
	d.mu.Lock()
	d.free, d.syncErr = free, syncErr
	d.mu.Unlock()
}

type faultyFile struct {
	f segmentFile
	d *disk
}

func (w *faultyFile) Write(p []byte) (int, error) {
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	if len(p) <= w.d.free {
		w.d.free -= len(p)
		return w.f.Write(p)
	}
	n, _ := w.f.Write(p[:w.d.free])
	w.d.free = 0
	return n, &os.PathError{Op: "write", Path: "segment", Err: syscall.ENOSPC}
}

func (w *faultyFile) Sync() error {
	w.d.mu.Lock()
	err := w.d.syncErr
	w.d.mu.Unlock()
	if err != nil {
		return &os.PathError{Op: "fsync", Path: "segment", Err: err}
	}
	return w.f.Sync()
}

func (w *faultyFile) Close() error { return w.f.Close() }

// logBuffer collects what the log logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitHealthy waits until the log has recovered by itself (or fails the test after a minute:
// a bound against hanging, not a timing assertion).
func waitHealthy(t *testing.T, l *Log) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); l.Healthy() != nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the log did not recover: %+v", l.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkAcked closes l, verifies the log end to end and checks every acknowledged record.
func checkAcked(t *testing.T, l *Log, cfg Config, acked []Position) *Report {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	rep, err := Verify(cfg.Dir, pubkey(t, cfg))
	if err != nil {
		t.Fatalf("Verify after recovery: %v", err)
	}
	r, err := OpenReadOnly(cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range acked {
		rec, err := r.Get(p.Seq)
		if err != nil || rec.Hash != p.Hash {
			t.Fatalf("acknowledged record %d lost or changed: %+v %v", p.Seq, rec, err)
		}
	}
	return rep
}

// appendUntilFail appends until an append fails (at most n), returning the acknowledged
// positions and the error.
func appendUntilFail(t *testing.T, l *Log, n int) ([]Position, error) {
	t.Helper()
	var acked []Position
	for i := range n {
		p, err := l.Append(context.Background(), TypeDecision, &Decision{CallID: fmt.Sprint(i), Tool: "Bash", Decision: "ALLOW"})
		if err != nil {
			return acked, err
		}
		acked = append(acked, p)
	}
	return acked, nil
}

// TestFaultsFailClosedAndRecover: a full disk (ENOSPC, part of a batch written) and a failed
// fsync (EIO) make every append fail while they last; once the cause is gone the log re-verifies
// its tail and serves again without a restart, logging both; nothing acknowledged is lost and
// the chain verifies end to end.
func TestFaultsFailClosedAndRecover(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(d *disk)
		errno syscall.Errno
	}{
		{"disk full", func(d *disk) { d.set(700, nil) }, syscall.ENOSPC},
		{"fsync fails", func(d *disk) { d.set(1<<30, syscall.EIO) }, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &disk{free: 1 << 30}
			var logs logBuffer
			cfg := testConfig(t)
			cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			cfg.wrap = func(f segmentFile) segmentFile { return &faultyFile{f: f, d: d} }
			l := mustOpen(t, cfg)
			acked := appendDecisions(t, l, 5, "s")

			tc.fault(d)
			more, err := appendUntilFail(t, l, 100)
			acked = append(acked, more...)
			if !errors.Is(err, ErrUnhealthy) || !errors.Is(err, tc.errno) {
				t.Fatalf("append under %s: %v; want ErrUnhealthy wrapping %v", tc.name, err, tc.errno)
			}
			// Fail closed while the fault lasts: every append fails, recovery attempts included.
			for i := range 200 {
				if p, err := l.Append(context.Background(), TypeDecision, &Decision{CallID: fmt.Sprint("x", i)}); err == nil {
					t.Fatalf("append %d succeeded while the fault lasts (seq %d)", i, p.Seq)
				}
				if i%50 == 0 {
					time.Sleep(60 * time.Millisecond) // let recovery attempts run against the fault
				}
			}
			st := l.Status()
			if st.Healthy || !strings.Contains(st.Reason, tc.errno.Error()) || st.Rejected == 0 {
				t.Fatalf("Status() = %+v while failing", st)
			}

			d.set(1<<30, nil) // the cause is gone
			waitHealthy(t, l)
			acked = append(acked, appendDecisions(t, l, 5, "s")...)
			st = l.Status()
			if !st.Healthy || st.Recoveries == 0 || st.LastRecovery == nil {
				t.Fatalf("Status() = %+v after recovery", st)
			}
			checkAcked(t, l, cfg, acked)

			out := logs.String()
			for _, want := range []string{"audit log failed", tc.errno.Error(), "audit append refused", "audit log recovered"} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			if n := strings.Count(out, "audit append refused"); n > 3 {
				t.Errorf("%d lines for refused appends: not rate-limited", n)
			}
		})
	}
}

// TestFDExhaustionRecovers exhausts the process's file descriptors for real (RLIMIT_NOFILE
// lowered, the rest filled): the spare descriptor lets the log take one step that needs a new
// file (here a segment rotation), later ones fail closed (EMFILE), and once descriptors are
// free again the log recovers by itself.
func TestFDExhaustionRecovers(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	cfg := testConfig(t)
	cfg.SegmentMaxBytes = 4096
	cfg.CheckpointEvery = 1 << 20 // only rotations need new descriptors here
	var logs logBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	l := mustOpen(t, cfg)
	acked := appendDecisions(t, l, 2, "")
	nsegs := func() int { l.mu.RLock(); defer l.mu.RUnlock(); return len(l.segs) }
	segsBefore := nsegs()

	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	low := lim
	low.Cur = uint64(len(ents)) + 64
	if low.Cur > lim.Max {
		t.Skipf("hard RLIMIT_NOFILE %d too low to test", lim.Max)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	var filler []*os.File
	release := func() {
		for _, f := range filler {
			f.Close()
		}
		filler = nil
	}
	t.Cleanup(func() {
		release()
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	})
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				t.Fatalf("filling descriptors: %v", err)
			}
			break
		}
		filler = append(filler, f)
	}

	more, err := appendUntilFail(t, l, 500)
	acked = append(acked, more...)
	if !errors.Is(err, ErrUnhealthy) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("append with no descriptors left: %v; want ErrUnhealthy wrapping EMFILE", err)
	}
	if segsDuring := nsegs(); segsDuring <= segsBefore {
		t.Errorf("no segment rotation succeeded with descriptors exhausted (%d segments): the spare was not used", segsDuring)
	}
	if _, err := l.Append(context.Background(), TypeDecision, &Decision{}); err == nil {
		t.Fatal("append succeeded with descriptors exhausted after the failure")
	}

	release()
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	waitHealthy(t, l)
	acked = append(acked, appendDecisions(t, l, 20, "")...) // rotates again
	checkAcked(t, l, cfg, acked)
	if out := logs.String(); !strings.Contains(out, "too many open files") || !strings.Contains(out, "audit log recovered") {
		t.Errorf("log:\n%s", out)
	}
}

// TestRealDiskFullRecovers fills a small tmpfs for real, then frees it.
func TestRealDiskFullRecovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Skipf("mount tmpfs (needs CAP_SYS_ADMIN in this mount namespace): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	cfg := Config{Dir: filepath.Join(mnt, "audit"), CheckpointEvery: 10, CheckpointInterval: time.Hour}
	l := mustOpen(t, cfg)
	acked := appendDecisions(t, l, 5, "")

	// Fill the filesystem.
	fill := filepath.Join(mnt, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
			break
		}
	}
	f.Close()
	more, err := appendUntilFail(t, l, 1000)
	acked = append(acked, more...)
	if !errors.Is(err, ErrUnhealthy) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full tmpfs: %v; want ErrUnhealthy wrapping ENOSPC", err)
	}
	for i := range 20 {
		if _, err := l.Append(context.Background(), TypeDecision, &Decision{}); err == nil {
			t.Fatalf("append %d succeeded on a full disk", i)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, l)
	acked = append(acked, appendDecisions(t, l, 5, "")...)
	checkAcked(t, l, cfg, acked)
}

func TestTornTailQuarantined(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	pos := appendDecisions(t, l, 5, "")
	l.Close()
	seg := filepath.Join(cfg.Dir, segmentName(0))
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"hash":"00`)
	f.Close()
	l = mustOpen(t, cfg)
	if l.Recovery() == nil || l.Recovery().Bytes != int64(len(`{"hash":"00`)) {
		t.Fatalf("Recovery() = %+v", l.Recovery())
	}
	// The recovery itself is recorded, chained to the last good record.
	last, err := l.Get(l.Size() - 2) // then its commit's checkpoint
	if err != nil || last.Type != TypeRecovered {
		t.Fatalf("last record %+v %v: want a recovered record", last, err)
	}
	if _, err := l.Get(pos[4].Seq); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Verify(cfg.Dir, pubkey(t, cfg)); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesCorruptionBeforeTheTail(t *testing.T) {
	dir, _, lines := sealedLog(t)
	lines[3][20] ^= 1
	writeLines(t, dir, lines)
	if _, err := Open(Config{Dir: dir}); err == nil {
		t.Fatal("Open accepted a log with a corrupt record in the middle")
	}
}

func TestKeyFileModeChecked(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	l.Close()
	key := filepath.Join(cfg.Dir, "signing.key")
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		if err := os.Chmod(key, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Open(cfg)
		if !errors.Is(err, ErrInsecureMode) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "chmod 0600 "+key) {
			t.Fatalf("Open with a key of mode %04o: %v; want ErrInsecureMode naming the file and chmod 0600", mode, err)
		}
	}
	if err := os.Chmod(key, 0o400); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, cfg) // read-only for the owner is fine
	l.Close()
}

func TestDirModeChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(cfg *Config) string
	}{
		{"log dir", func(cfg *Config) string { return cfg.Dir }},
		{"key dir", func(cfg *Config) string {
			cfg.KeyFile = filepath.Join(filepath.Dir(cfg.Dir), "keys", "audit.key")
			return filepath.Dir(cfg.KeyFile)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Dir: filepath.Join(t.TempDir(), "audit"), CheckpointEvery: 10, CheckpointInterval: time.Hour}
			dir := tc.dir(&cfg)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []os.FileMode{0o770, 0o702, 0o777} {
				if err := os.Chmod(dir, mode); err != nil {
					t.Fatal(err)
				}
				if _, err := Open(cfg); !errors.Is(err, ErrInsecureMode) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("Open with %s of mode %04o: %v; want ErrInsecureMode naming it", tc.name, mode, err)
				}
			}
			if err := os.Chmod(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			l := mustOpen(t, cfg)
			l.Close()
		})
	}
}

func TestAppendAfterClose(t *testing.T) {
	l := mustOpen(t, testConfig(t))
	l.Close()
	if _, err := l.Append(context.Background(), TypeDecision, &Decision{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
}

// TestUncoveredTailQuarantined: records appended after the last checkpoint by someone without
// the key fail verification, and opening the log moves them to quarantine instead of signing
// them into the next checkpoint.
func TestUncoveredTailQuarantined(t *testing.T) {
	for _, tc := range []struct {
		name   string
		badAt  uint64 // first bad seq Verify names, after the 10 lines of the log
		why    string
		forged func(t *testing.T, lines [][]byte) [][]byte
	}{
		{"record", 10, "after the last signed checkpoint", func(t *testing.T, lines [][]byte) [][]byte {
			return [][]byte{forgeNext(t, lines, `{"decision":"ALLOW","tool":"Bash"}`)}
		}},
		{"record and a checkpoint by another key", 11, "signature", func(t *testing.T, lines [][]byte) [][]byte {
			rec := forgeNext(t, lines, `{"decision":"ALLOW","tool":"Bash"}`)
			return [][]byte{rec, forgeCheckpoint(t, append(lines, rec))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			l := mustOpen(t, cfg)
			pos := appendDecisions(t, l, 5, "")
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			seg := filepath.Join(cfg.Dir, segmentName(0))
			data, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			lines = lines[:len(lines)-1]
			size := uint64(len(lines))
			forged := tc.forged(t, lines)
			if err := os.WriteFile(seg, append(data, bytes.Join(forged, nil)...), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = Verify(cfg.Dir, pubkey(t, cfg))
			var ve *VerifyError
			if !errors.As(err, &ve) || ve.Seq != tc.badAt || !strings.Contains(ve.Reason, tc.why) {
				t.Fatalf("Verify with a record appended without the key: %v; want a VerifyError at seq %d", err, tc.badAt)
			}

			l = mustOpen(t, cfg)
			r := l.Recovery()
			if r == nil || r.Records != uint64(len(forged)) || r.FirstSeq != size || r.Offset != int64(len(data)) {
				t.Fatalf("Recovery() = %+v; want the %d forged records from seq %d quarantined", r, len(forged), size)
			}
			q, err := os.ReadFile(r.Quarantine)
			if err != nil || !bytes.Equal(q, bytes.Join(forged, nil)) {
				t.Fatalf("quarantine file holds %q (%v), want the forged lines", q, err)
			}
			// Seq size is now the recovery record, not the forged one, and the log carries on.
			got, err := l.Get(size)
			if err != nil || got.Type != TypeRecovered {
				t.Fatalf("record %d after open: %+v %v; want the recovery record", size, got, err)
			}
			for _, p := range pos {
				if r, err := l.Get(p.Seq); err != nil || r.Hash != p.Hash {
					t.Fatalf("acknowledged record %d lost: %v", p.Seq, err)
				}
			}
			appendDecisions(t, l, 2, "")
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(cfg.Dir, pubkey(t, cfg))
			if err != nil {
				t.Fatalf("Verify after quarantine: %v", err)
			}
			if rep.Uncovered != 0 {
				t.Fatalf("report %+v", rep)
			}
			// No checkpoint signed the forged record: it is in no record of the log.
			all, _ := os.ReadFile(seg)
			if bytes.Contains(all, bytes.TrimSuffix(forged[0], []byte("\n"))) {
				t.Fatal("the forged record is still in the log")
			}
		})
	}
}

// TestUncoveredTailOnlyHiddenFromReaders: a reader does not show records no checkpoint covers.
func TestUncoveredTailHiddenFromReaders(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	appendDecisions(t, l, 3, "")
	l.Close()
	seg := filepath.Join(cfg.Dir, segmentName(0))
	data, _ := os.ReadFile(seg)
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1]
	if err := os.WriteFile(seg, append(data, forgeNext(t, lines, `{"tool":"x"}`)...), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != uint64(len(lines)) {
		t.Fatalf("reader sees %d records, want the %d covered ones", r.Size(), len(lines))
	}
}
