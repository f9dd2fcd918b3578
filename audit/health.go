package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// Failure and recovery.
//
// A failed write, fsync, segment creation or checkpoint file replacement puts the log in the
// failed state: every Append fails (wrapping ErrUnhealthy, so the pipeline answers BLOCK) and
// Healthy reports the cause. The writer then retries with backoff (retryMin doubling to
// retryMax): it waits for the syncer to settle, reopens the active segment, checks that every
// acknowledged byte is still there and that the last acknowledged record on disk is the
// checkpoint record whose hash the chain continues from, cuts off whatever was written after it
// and never acknowledged, and serves again, recording a "recovered" record. Nothing acknowledged
// is lost or rewritten. If acknowledged bytes are missing or differ, the log stays failed (a
// restart then refuses to open it: run shield audit verify).
//
// Descriptors. Appending, fsyncing and writing checkpoint records need no new descriptor: the
// active segment (one O_RDWR|O_APPEND descriptor, also used for reads), the directory (for
// fsyncs of it) and the lock stay open. Only starting a segment, replacing the checkpoint file
// and recovering open a file; for those the log holds one spare descriptor (on /dev/null) that
// it closes just before the open and takes back afterwards, so exhaustion of descriptors
// elsewhere in the process does not fail those steps while the spare is held. If the spare
// cannot be taken back, the log works without it and a later open may fail, which the recovery
// above repairs once descriptors are free again.

const (
	retryMin = 50 * time.Millisecond
	retryMax = 5 * time.Second
	// logEvery bounds how often one kind of failure is logged; the rest are counted and
	// reported with the next line.
	logEvery = 10 * time.Second
)

// Status is the log's state, for Health and operators.
type Status struct {
	// Healthy is true while the log accepts records.
	Healthy bool
	// Reason is the failure that stopped the log (empty while healthy).
	Reason string
	// FailedSince is when the current failure began (zero while healthy).
	FailedSince time.Time
	// Failures counts the times the log failed since it was opened; Recoveries the times it
	// recovered by itself; Rejected the appends refused while it was failed.
	Failures, Recoveries, Rejected uint64
	// LastRecovery describes the last recovery (what was cut off), or nil.
	LastRecovery *Recovery
	// Quarantined describes the tail moved aside when the log was opened, or nil.
	Quarantined *Recovery
}

// health is the failure bookkeeping of a Log.
type health struct {
	mu           sync.Mutex
	failedSince  time.Time
	failures     uint64
	recoveries   uint64
	rejected     uint64
	lastRecovery *Recovery
	backoff      time.Duration
	lim          map[string]*logLimit
}

type logLimit struct {
	last       time.Time
	suppressed int
}

// logLimited logs at most one line per kind every logEvery, with the number suppressed since.
func (l *Log) logLimited(kind string, level slog.Level, msg string, args ...any) {
	h := &l.health
	h.mu.Lock()
	if h.lim == nil {
		h.lim = map[string]*logLimit{}
	}
	ll := h.lim[kind]
	if ll == nil {
		ll = &logLimit{}
		h.lim[kind] = ll
	}
	now := time.Now()
	if !ll.last.IsZero() && now.Sub(ll.last) < logEvery {
		ll.suppressed++
		h.mu.Unlock()
		return
	}
	if ll.suppressed > 0 {
		args = append(args, "suppressed_since_last_line", ll.suppressed)
	}
	ll.last, ll.suppressed = now, 0
	h.mu.Unlock()
	if lg := l.cfg.Logger; lg != nil {
		lg.Log(context.Background(), level, msg, args...)
	}
}

// Status returns the log's state.
func (l *Log) Status() Status {
	h := &l.health
	h.mu.Lock()
	defer h.mu.Unlock()
	st := Status{Healthy: true, Failures: h.failures, Recoveries: h.recoveries, Rejected: h.rejected,
		LastRecovery: h.lastRecovery, Quarantined: l.recovery}
	if err := l.Healthy(); err != nil {
		st.Healthy, st.Reason, st.FailedSince = false, err.Error(), h.failedSince
	}
	return st
}

func (l *Log) fail(err error) {
	e := fmt.Errorf("%w: %w", ErrUnhealthy, err)
	l.stopped.Store(true)
	if old := l.failed.Swap(&e); old != nil {
		return // already failed (or recovering): the newest cause is reported
	}
	h := &l.health
	h.mu.Lock()
	h.failedSince = time.Now()
	h.failures++
	h.mu.Unlock()
	l.logLimited("fail", slog.LevelError, "audit log failed: every decision is BLOCKed until it recovers (retrying)", "dir", l.dir, "error", err.Error())
}

// stopErr is nil while the writer may write, else the failure.
func (l *Log) stopErr() error {
	if !l.stopped.Load() {
		return nil
	}
	if err := l.Healthy(); err != nil {
		return err
	}
	return ErrUnhealthy
}

// rejected counts an Append refused because the log is failed, and logs (rate-limited).
func (l *Log) rejected(err error) {
	h := &l.health
	h.mu.Lock()
	h.rejected++
	n := h.rejected
	h.mu.Unlock()
	l.logLimited("rejected", slog.LevelError, "audit append refused: the log is failed, the action is not recorded (BLOCK)", "rejected_total", n, "error", err.Error())
}

// retryDelay returns the delay before the next recovery attempt and doubles it.
func (l *Log) retryDelay() time.Duration {
	h := &l.health
	h.mu.Lock()
	defer h.mu.Unlock()
	d := max(h.backoff, retryMin)
	h.backoff = min(2*d, retryMax)
	return d
}

// reserve takes the spare descriptor if it is not held.
func (l *Log) reserve() {
	if l.spare == nil {
		l.spare, _ = os.Open(os.DevNull)
	}
}

// withSpare releases the spare descriptor, runs fn (which opens a file) and takes it back.
func (l *Log) withSpare(fn func() error) error {
	if l.spare != nil {
		l.spare.Close()
		l.spare = nil
	}
	err := fn()
	l.reserve()
	return err
}

// recoverLog runs on the writer goroutine while the log is failed: see the comment at the top.
func (l *Log) recoverLog() {
	cause := l.Healthy()
	if cause == nil {
		return
	}
	l.barrier() // the syncer has answered everything written; nothing more is acknowledged
	var r *Recovery
	err := l.withSpare(func() error {
		var err error
		r, err = l.reopenTail()
		return err
	})
	if err != nil {
		l.logLimited("recover", slog.LevelWarn, "audit log still failing; recovery retried with backoff", "dir", l.dir, "cause", cause.Error(), "retry_error", err.Error())
		return
	}
	// Probe: the recovery record must be durable (with its checkpoint) before appends are
	// accepted again; until then Healthy still reports the failure.
	r.Reason = "resumed after: " + cause.Error()
	p, err := canonicalPayload(r)
	if err != nil {
		return
	}
	l.stopped.Store(false)
	done := make(chan appendRes, 1)
	l.commit([]*appendReq{{typ: TypeRecovered, payload: p, done: done}})
	if res := <-done; res.err != nil { // commit or the syncer has failed the log again
		l.logLimited("recover", slog.LevelWarn, "audit log still failing; recovery retried with backoff", "dir", l.dir, "cause", cause.Error(), "retry_error", res.err.Error())
		return
	}
	h := &l.health
	h.mu.Lock()
	since := h.failedSince
	h.recoveries++
	h.lastRecovery = r
	h.backoff = 0
	h.failedSince = time.Time{}
	h.mu.Unlock()
	l.failed.Store(nil)
	l.cfg.Logger.Warn("audit log recovered: the tail re-verified, decisions are recorded again", "dir", l.dir,
		"failed_for", time.Since(since).Round(time.Millisecond).String(), "cause", cause.Error(),
		"unacknowledged_bytes_cut", r.Bytes, "segment", r.Segment)
}

// reopenTail reopens the active segment (or starts the next one when the failure came after
// sealing it), checks the acknowledged tail on disk and cuts off the unacknowledged bytes, and
// resets the writer's state to the last acknowledged record.
func (l *Log) reopenTail() (*Recovery, error) {
	l.mu.RLock()
	size, seg := l.size, l.wseg
	ackEnd := seg.end
	acked := int(size - seg.first) // acknowledged records in seg
	l.mu.RUnlock()
	if acked < 0 || acked > len(seg.offs) {
		return nil, fmt.Errorf("segment %s does not hold the acknowledged records (%d)", seg.name, size)
	}
	var lastHash string
	if size > 0 {
		l.mu.RLock()
		lastHash = hex.EncodeToString(l.tr.node(0, size-1))
		l.mu.RUnlock()
	}
	l.resetWriter(size, seg, acked, ackEnd, lastHash)
	if seg.sealed {
		// The failure came after sealing seg (creating the next one): every record in seg is
		// acknowledged and seg is immutable; start the next segment again.
		if err := l.newSegment(); err != nil {
			return nil, err
		}
		return &Recovery{Segment: seg.name, Offset: ackEnd}, nil
	}
	path := filepath.Join(l.dir, seg.name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("reopen segment %s: %w", seg.name, err)
	}
	r, err := checkTail(f, seg, acked, ackEnd, size, lastHash)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.mu.Lock()
	old := seg.rf
	seg.rf = f
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
	l.setWriter(f, seg)
	return r, nil
}

// checkTail checks that f holds seg's acknowledged bytes up to ackEnd, ending with the
// acknowledged checkpoint record size-1 (hash lastHash), and cuts off what follows.
func checkTail(f *os.File, seg *segment, acked int, ackEnd int64, size uint64, lastHash string) (*Recovery, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < ackEnd {
		return nil, fmt.Errorf("segment %s is %d bytes but %d were acknowledged: acknowledged records are missing (run shield audit verify)", seg.name, fi.Size(), ackEnd)
	}
	if acked > 0 {
		off := seg.offs[acked-1]
		line := make([]byte, ackEnd-off)
		if _, err := f.ReadAt(line, off); err != nil {
			return nil, fmt.Errorf("read record %d: %w", size-1, err)
		}
		rec, err := DecodeRecord(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil || rec.Seq != size-1 || rec.Hash != lastHash || rec.Type != TypeCheckpoint || line[len(line)-1] != '\n' {
			return nil, fmt.Errorf("segment %s: the last acknowledged record %d on disk is not the one written (%v): run shield audit verify", seg.name, size-1, err)
		}
	} else if ackEnd != 0 {
		return nil, fmt.Errorf("segment %s: %d acknowledged bytes but no record", seg.name, ackEnd)
	}
	r := &Recovery{Segment: seg.name, Offset: ackEnd, Bytes: fi.Size() - ackEnd}
	if r.Bytes > 0 {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, ackEnd, r.Bytes)); err != nil {
			return nil, fmt.Errorf("read unacknowledged tail: %w", err)
		}
		r.SHA256 = hex.EncodeToString(h.Sum(nil))
		if err := f.Truncate(ackEnd); err != nil {
			return nil, fmt.Errorf("cut unacknowledged tail of %s: %w", seg.name, err)
		}
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("fsync %s: %w", seg.name, err)
	}
	return r, nil
}

// resetWriter forgets everything written after the acknowledged record size-1.
func (l *Log) resetWriter(size uint64, seg *segment, acked int, ackEnd int64, lastHash string) {
	l.mu.Lock()
	seg.offs = slices.Clone(seg.offs[:acked])
	seg.times = slices.Clone(seg.times[:acked])
	l.tr.truncate(size)
	for s, seqs := range l.sessions {
		k := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= size })
		if k == 0 {
			delete(l.sessions, s)
		} else if k < len(seqs) {
			l.sessions[s] = seqs[:k]
		}
	}
	l.mu.Unlock()
	l.next, l.wend = size, ackEnd
	l.prev = ZeroHash
	if size > 0 {
		l.prev = lastHash
	}
	l.wstart = time.Time{}
	if acked > 0 {
		l.wstart = time.Unix(0, seg.times[0]).UTC()
	}
}
