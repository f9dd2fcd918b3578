package audit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullDisk accepts limit bytes in total, then writes part of a buffer and fails with ENOSPC,
// like a filesystem running out of space mid-write.
type fullDisk struct {
	f     segmentFile
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.limit {
		d.limit -= len(p)
		return d.f.Write(p)
	}
	n, _ := d.f.Write(p[:d.limit])
	d.limit = 0
	return n, &os.PathError{Op: "write", Path: "segment", Err: syscall.ENOSPC}
}
func (d *fullDisk) Sync() error  { return d.f.Sync() }
func (d *fullDisk) Close() error { return d.f.Close() }

func TestDiskFull(t *testing.T) {
	cfg := testConfig(t)
	cfg.wrap = func(f segmentFile) segmentFile { return &fullDisk{f: f, limit: 3000} }
	l := mustOpen(t, cfg)
	var acked []Position
	var failErr error
	for i := 0; i < 100 && failErr == nil; i++ {
		p, err := l.Append(context.Background(), TypeDecision, &Decision{Tool: "Bash", Decision: "ALLOW"})
		if err != nil {
			failErr = err
			break
		}
		acked = append(acked, p)
	}
	if failErr == nil {
		t.Fatal("appends kept succeeding on a full disk")
	}
	if !errors.Is(failErr, ErrUnhealthy) || !errors.Is(failErr, syscall.ENOSPC) {
		t.Fatalf("append error %v: want ErrUnhealthy wrapping ENOSPC", failErr)
	}
	if err := l.Healthy(); !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("Healthy() = %v after a write failure", err)
	}
	if _, err := l.Append(context.Background(), TypeDecision, &Decision{}); !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("append after failure: %v", err)
	}
	l.Close()

	// Space is back: reopening quarantines the torn tail and continues the chain; every
	// acknowledged record is still there and the log verifies.
	cfg.wrap = nil
	l = mustOpen(t, cfg)
	rec := l.Recovery()
	if rec == nil || rec.Bytes == 0 {
		t.Fatalf("Recovery() = %+v, want the torn tail quarantined", rec)
	}
	if _, err := os.Stat(rec.Quarantine); err != nil {
		t.Fatalf("quarantine file: %v", err)
	}
	for _, p := range acked {
		r, err := l.Get(p.Seq)
		if err != nil || r.Hash != p.Hash {
			t.Fatalf("acknowledged record %d: %v %v", p.Seq, r, err)
		}
	}
	appendDecisions(t, l, 3, "")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(cfg.Dir, pubkey(t, cfg)); err != nil {
		t.Fatalf("Verify after recovery: %v", err)
	}
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
