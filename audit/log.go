package audit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Position locates a durable record.
type Position struct {
	Seq  uint64
	Hash string // hex leaf hash
}

// checkpointPayload is the payload of a TypeCheckpoint record: the signed checkpoint of the
// tree of all records before it (Size == the record's seq).
type checkpointPayload struct {
	Size uint64 `json:"size"`
	Root string `json:"root"` // base64, as in the note
	Note string `json:"note"` // the signed checkpoint note
}

// Log is an append-only audit log. Appends from any number of goroutines are serialised by
// one writer goroutine that group-commits them: each batch is written with one write and made
// durable with one fsync, and every Append in it returns only after that fsync.
type Log struct {
	cfg Config
	dir string
	red *redactor
	sig *signer

	lock     *os.File // flock on Dir/LOCK: one writer per directory (nil: read-only)
	dirf     *os.File // Dir, kept open to fsync it without a new descriptor
	spare    *os.File // the spare descriptor (see health.go)
	readOnly bool
	health   health

	sendMu sync.RWMutex // held for reading while sending on reqs; Close holds it to close reqs
	closed bool
	reqs   chan *appendReq
	done   chan struct{}
	failed atomic.Pointer[error] // what Healthy reports
	// stopped gates the writer and syncer: set with failed, cleared by recovery before its probe
	// record, which must be durable before failed is cleared.
	stopped atomic.Bool
	// preparing counts appenders between entering Append and queueing their record (redacting
	// and canonicalising it): the writer waits for them, bounded by Config.GroupCommitWait, so
	// that one commit (one write, one signed checkpoint, one fsync) covers them too.
	preparing   atomic.Int64
	gatherWaits atomic.Int64 // commits that waited for preparing appenders (tests)

	mu       sync.RWMutex // guards the index below (readers: Get, Query, proofs)
	segs     []*segment
	tr       tree
	sessions map[string][]uint64
	size     uint64
	notify   chan struct{} // closed and replaced after each commit
	ckpt     *ckptState    // latest durable checkpoint record (one per commit)
	fileCkpt *ckptState    // the checkpoint of the checkpoint file: what SignedCheckpoint returns
	recovery *Recovery

	// Writer-owned state.
	gatherTimer *time.Timer
	next        uint64 // seq of the next record written (size counts only durable ones)
	wend        int64  // bytes written to the active segment
	syncCh      chan *pending
	syncDone    chan struct{}
	w           segmentFile
	wseg        *segment
	wstart      time.Time // time of the active segment's first record (zero: empty)
	prev        string
	lastTime    time.Time
	buf, body   []byte
	// The checkpoint file (the truncation anchor verify and operators read) trails the
	// checkpoint records: it is replaced after CheckpointEvery records or CheckpointInterval.
	fileSeq    uint64    // tree size of the checkpoint file
	sinceFile  int       // records written since the checkpoint file was replaced
	fileOldest time.Time // when the oldest of those was written
}

// pending is a written batch waiting for its fsync: its records and the checkpoint record
// that covers them.
type pending struct {
	f       segmentFile
	seg     *segment
	reqs    []*appendReq
	first   uint64 // seq of reqs[0]
	hashes  []string
	ckpt    *ckptState    // the batch's checkpoint record (seq first+len(reqs))
	end     int64         // segment size once this batch is durable
	barrier chan struct{} // closed once processed (nil: none)
}

type appendReq struct {
	typ     Type
	payload []byte
	session string
	done    chan appendRes
}

type appendRes struct {
	pos Position
	err error
}

// Open opens (or creates) the log in cfg.Dir, recovering a torn tail, and starts its writer.
func Open(cfg Config) (*Log, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	red, _ := cfg.Redact.compile()
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create audit dir: %w", err)
	}
	if err := CheckPrivateDir("audit log directory", cfg.Dir); err != nil {
		return nil, err
	}
	if kd := filepath.Dir(cfg.KeyFile); kd != filepath.Clean(cfg.Dir) {
		if err := CheckPrivateDir("signing key directory", kd); err != nil {
			return nil, err
		}
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	sig, err := loadOrCreateKey(cfg.KeyFile, cfg.Origin)
	if err != nil {
		lock.Close()
		return nil, err
	}
	l := &Log{cfg: cfg, lock: lock, dir: cfg.Dir, red: red, sig: sig, reqs: make(chan *appendReq, 4096),
		done: make(chan struct{}), syncCh: make(chan *pending, 64), syncDone: make(chan struct{}), sessions: map[string][]uint64{}, notify: make(chan struct{}), prev: ZeroHash}
	if l.dirf, err = os.Open(cfg.Dir); err != nil {
		lock.Close()
		return nil, fmt.Errorf("open audit dir: %w", err)
	}
	l.reserve()
	if err := l.load(); err != nil {
		l.closeReaders()
		l.closeFiles()
		return nil, err
	}
	go l.run()
	go l.syncer()
	if r := l.recovery; r != nil {
		if _, err := l.Append(context.Background(), TypeRecovered, r); err != nil {
			l.Close()
			return nil, fmt.Errorf("record recovery: %w", err)
		}
	}
	return l, nil
}

// OpenReadOnly opens the log in dir for reading (Get, Query, proofs) without taking the writer's
// lock: it sees the records durable when it was opened. A torn tail is skipped, not
// quarantined. Append fails; Close releases the files.
func OpenReadOnly(dir string) (*Log, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	l := &Log{dir: dir, readOnly: true, sessions: map[string][]uint64{}, notify: make(chan struct{}),
		done: make(chan struct{}), prev: ZeroHash}
	if err := l.load(); err != nil {
		l.closeReaders()
		return nil, err
	}
	return l, nil
}

// lockDir takes an exclusive, non-blocking flock on dir/LOCK.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %s is in use by another process: %w", dir, err)
	}
	return f, nil
}

// load indexes the existing segments and opens the active one for appending.
func (l *Log) load() error {
	infos, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	var next uint64
	for i, in := range infos {
		if in.first != next {
			return fmt.Errorf("segment %s starts at seq %d, want %d (run shield audit verify)", in.name, in.first, next)
		}
		path := filepath.Join(l.dir, in.name)
		isLast := i == len(infos)-1
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		sealed := fi.Mode().Perm()&0o222 == 0
		var sc *scanned
		if sealed {
			sc, err = readIndex(l.dir, in.first, l.prev)
		}
		if sc == nil {
			if sc, err = scanSegment(path, in.first, l.prev); err != nil {
				return err
			}
			if sc.tornAt >= 0 && (!isLast || sealed) && !(l.readOnly && isLast) {
				return fmt.Errorf("segment %s: %v at offset %d (run shield audit verify)", in.name, sc.tornErr, sc.tornAt)
			}
			if sealed && !l.readOnly && len(sc.offs()) > 0 {
				_ = writeIndex(l.dir, sc) // a cache: failing to write it only costs a rescan
			}
		}
		for _, h := range sc.hashes {
			l.tr.append(h[:])
		}
		if isLast && !sealed {
			if err := l.coverTail(sc, path); err != nil {
				return err
			}
		}
		sc.seg.sealed = sealed
		if sc.seg.rf, err = os.Open(path); err != nil {
			return err
		}
		l.segs = append(l.segs, sc.seg)
		for s, seqs := range sc.sessions {
			l.sessions[s] = append(l.sessions[s], seqs...)
		}
		if sc.lastCkpt != nil {
			l.ckpt = sc.lastCkpt
		}
		next = in.first + uint64(len(sc.hashes))
		if n := len(sc.hashes); n > 0 {
			l.prev = hex.EncodeToString(sc.hashes[n-1][:])
			l.lastTime = time.Unix(0, sc.seg.times[n-1]).UTC()
			l.wstart = time.Unix(0, sc.seg.times[0]).UTC()
		}
	}
	l.size, l.next = next, next
	l.fileCkpt = l.ckpt
	if l.ckpt != nil {
		l.fileSeq = l.readCheckpointFileSeq()
		if l.fileSeq != l.ckpt.Seq {
			l.sinceFile, l.fileOldest = 1, time.Time{} // bring the checkpoint file up to date soon
		}
	}
	if l.readOnly {
		return nil
	}
	if len(l.segs) == 0 || l.segs[len(l.segs)-1].sealed {
		return l.newSegment()
	}
	last := l.segs[len(l.segs)-1]
	f, err := os.OpenFile(filepath.Join(l.dir, last.name), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("open active segment: %w", err)
	}
	last.rf.Close()
	last.rf = f // one descriptor for appending and reading
	l.setWriter(f, last)
	l.wend = last.end
	if len(last.offs) == 0 {
		l.wstart = time.Time{}
	}
	return nil
}

// coverTail finds the prefix of the active segment that a signed checkpoint covers and, for the
// writer, moves everything after it (records no checkpoint covers, a torn line) into a
// quarantine file: such records were never acknowledged, or were appended by someone without
// the key, and are never adopted or signed. The tree must already hold sc's leaves; it is cut
// back to the covered prefix. A reader only hides the uncovered records.
func (l *Log) coverTail(sc *scanned, path string) error {
	first := sc.seg.first
	keep := -1
	if l.readOnly {
		switch {
		case len(sc.ckpts) > 0:
			keep = sc.ckpts[len(sc.ckpts)-1].idx + 1
		case l.ckpt != nil:
			keep = 0
		default:
			keep = len(sc.hashes) // a log that was never checkpointed (written before checkpoints per commit)
		}
	} else {
		var bad error
		for i := len(sc.ckpts) - 1; i >= 0 && keep < 0; i-- {
			c := sc.ckpts[i]
			if _, _, err := verifyCheckpointRecord(c.rec, &l.tr, []string{l.sig.vkey}); err != nil {
				bad = fmt.Errorf("checkpoint record %d: %w", c.rec.Seq, err)
				continue
			}
			keep = c.idx + 1
		}
		if keep < 0 {
			switch {
			case l.ckpt != nil && l.ckpt.Seq+1 == first:
				// The previous segment ends with a checkpoint: check it covers the log so far.
				if c, err := OpenCheckpoint(l.ckpt.Note, l.sig.vkey); err != nil || c.Size != l.ckpt.Seq {
					return fmt.Errorf("the last checkpoint before %s (seq %d) does not verify with the signing key %s: wrong key for this log, or the log was altered (run shield audit verify)", sc.seg.name, l.ckpt.Seq, l.sig.vkey)
				} else if root, err := l.tr.root(c.Size); err != nil || !bytes.Equal(root, c.Root) {
					return fmt.Errorf("the last checkpoint before %s (seq %d) does not match the records it covers (run shield audit verify)", sc.seg.name, l.ckpt.Seq)
				}
				keep = 0
			case l.ckpt == nil && first == 0 && bad == nil:
				keep = 0 // nothing was ever signed: nothing was ever acknowledged
			default:
				if bad == nil {
					bad = errors.New("no checkpoint record")
				}
				return fmt.Errorf("segment %s: no checkpoint at the end of the log verifies with the signing key %s (%v): wrong key for this log, or the log was altered (run shield audit verify)", sc.seg.name, l.sig.vkey, bad)
			}
		}
	}
	uncovered := len(sc.hashes) - keep
	cut := sc.seg.end
	if keep < len(sc.seg.offs) {
		cut = sc.seg.offs[keep]
	}
	l.tr.truncate(first + uint64(keep))
	sc.trim(keep)
	if l.readOnly || (uncovered == 0 && sc.tornAt < 0) {
		return nil
	}
	var why []string
	if uncovered > 0 {
		why = append(why, fmt.Sprintf("%d records (seq %d..%d) after the last signed checkpoint: no signature covers them, so they were never acknowledged or were appended without the key", uncovered, first+uint64(keep), first+uint64(keep)+uint64(uncovered)-1))
	}
	if sc.tornAt >= 0 {
		why = append(why, fmt.Sprintf("torn write at offset %d: %v", sc.tornAt, sc.tornErr))
	}
	r, err := quarantine(l.dir, sc.seg.name, cut, errors.New(strings.Join(why, "; ")))
	if err != nil {
		return fmt.Errorf("quarantine the unsigned tail of %s: %w", sc.seg.name, err)
	}
	if uncovered > 0 {
		r.Records, r.FirstSeq = uint64(uncovered), first+uint64(keep)
	}
	sc.seg.end = cut
	l.recovery = r
	return nil
}

// readCheckpointFileSeq returns the tree size of the checkpoint file (0 when missing or bad).
func (l *Log) readCheckpointFileSeq() uint64 {
	b, err := os.ReadFile(filepath.Join(l.dir, CheckpointFile))
	if err != nil {
		return 0
	}
	c, err := parseSignedCheckpoint(b)
	if err != nil {
		return 0
	}
	return c.Size
}

func (sc *scanned) offs() []int64 { return sc.seg.offs }

func (l *Log) setWriter(f *os.File, seg *segment) {
	l.w = f
	if l.cfg.wrap != nil {
		l.w = l.cfg.wrap(f)
	}
	l.wseg = seg
}

// newSegment creates the segment for the next record and makes it the active one. Its one
// descriptor (O_RDWR|O_APPEND) serves the writer and readers, and stays open once sealed.
func (l *Log) newSegment() error {
	name := segmentName(l.next)
	path := filepath.Join(l.dir, name)
	var f *os.File
	err := l.withSpare(func() error {
		var err error
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	if err != nil {
		return fmt.Errorf("create segment %s: %w", name, err)
	}
	if err := l.syncDir(); err != nil {
		f.Close()
		os.Remove(path) // not acknowledged as existing: the retry creates it again
		return fmt.Errorf("sync audit dir: %w", err)
	}
	seg := &segment{first: l.next, name: name, rf: f}
	l.mu.Lock()
	l.segs = append(l.segs, seg)
	l.mu.Unlock()
	l.setWriter(f, seg)
	l.wend = 0
	l.wstart = time.Time{}
	return nil
}

func (l *Log) syncDir() error {
	if l.dirf != nil {
		return l.dirf.Sync()
	}
	return syncDir(l.dir)
}

// Append writes one record and returns once it is durable. payload is marshalled with
// encoding/json and must be a JSON object; a *Decision or Decision payload is redacted as
// configured, with its args_hash computed over the original arguments. An error means the
// record may not be durable: the caller must treat the action it describes as not recorded.
func (l *Log) Append(ctx context.Context, typ Type, payload any) (Position, error) {
	if !validType(typ) {
		return Position{}, fmt.Errorf("append: invalid record type %q", typ)
	}
	if typ == TypeCheckpoint {
		return Position{}, errors.New("append: checkpoint records are written by the log itself")
	}
	if l.readOnly {
		return Position{}, errors.New("append: log opened read-only")
	}
	l.preparing.Add(1)
	prepared := false
	done := func() {
		if !prepared {
			prepared = true
			l.preparing.Add(-1)
		}
	}
	defer done()
	session := ""
	switch d := payload.(type) {
	case Decision:
		payload = &d
	}
	if d, ok := payload.(*Decision); ok {
		if d == nil {
			return Position{}, errors.New("append: nil decision")
		}
		p, err := l.red.prepare(d)
		if err != nil {
			return Position{}, fmt.Errorf("append decision: %w", err)
		}
		payload, session = p, d.SessionID
	}
	var p []byte
	var err error
	if d, ok := payload.(*Decision); ok {
		p, err = canonicalDecision(d)
	} else {
		p, err = canonicalPayload(payload)
	}
	if err != nil {
		return Position{}, fmt.Errorf("append: %w", err)
	}
	if len(p) > maxLine-512 {
		return Position{}, fmt.Errorf("append: payload is %d bytes, over the limit", len(p))
	}
	if session == "" && typ != TypeDecision {
		session = payloadSession(p)
	}
	req := &appendReq{typ: typ, payload: p, session: session, done: make(chan appendRes, 1)}
	// No longer preparing before the record is queued: a writer that sees this request alone
	// commits it at once (it never waits at one append in flight).
	done()
	if err := l.Healthy(); err != nil {
		l.rejected(err)
		return Position{}, err
	}
	l.sendMu.RLock()
	if l.closed {
		l.sendMu.RUnlock()
		return Position{}, ErrClosed
	}
	select {
	case l.reqs <- req:
		l.sendMu.RUnlock()
	case <-ctx.Done():
		l.sendMu.RUnlock()
		return Position{}, fmt.Errorf("append: %w", ctx.Err())
	}
	select {
	case res := <-req.done:
		return res.pos, res.err
	case <-ctx.Done():
		return Position{}, fmt.Errorf("append: waiting for durable write: %w", ctx.Err())
	}
}

// Healthy returns nil while the log accepts records, or the failure that stopped it (wrapping
// ErrUnhealthy) until the log has recovered by itself.
func (l *Log) Healthy() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Recovery reports the torn tail quarantined when the log was opened, or nil.
func (l *Log) Recovery() *Recovery { return l.recovery }

// PublicKey returns the note verifier key of the checkpoint signer ("name+hash+key").
// It is empty for a log opened read-only.
func (l *Log) PublicKey() string {
	if l.sig == nil {
		return ""
	}
	return l.sig.vkey
}

// Dir returns the log directory.
func (l *Log) Dir() string { return l.dir }

// Close writes a final checkpoint, stops the writer and closes the files. Appends after Close
// fail with ErrClosed.
func (l *Log) Close() error {
	if l.readOnly {
		l.closeReaders()
		return nil
	}
	l.sendMu.Lock()
	if l.closed {
		l.sendMu.Unlock()
		<-l.done
		return nil
	}
	l.closed = true
	close(l.reqs)
	l.sendMu.Unlock()
	<-l.done
	l.closeReaders()
	l.closeFiles()
	err := l.Healthy()
	if errors.Is(err, ErrUnhealthy) {
		return err
	}
	return nil
}

func (l *Log) closeReaders() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		if s.rf != nil {
			s.rf.Close() // the active segment's is also the writer's
		}
	}
}

func (l *Log) closeFiles() {
	for _, f := range []*os.File{l.spare, l.dirf, l.lock} {
		if f != nil {
			f.Close()
		}
	}
}

const maxBatch = 8192

// run is the writer goroutine.
func (l *Log) run() {
	defer close(l.done)
	defer func() {
		close(l.syncCh)
		<-l.syncDone
	}()
	tick := min(l.cfg.CheckpointInterval, l.cfg.SegmentMaxAge, time.Second)
	if tick <= 0 {
		tick = time.Second
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	batch := make([]*appendReq, 0, 256)
	var retry *time.Timer
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()
	for {
		var retryC <-chan time.Time
		if l.stopped.Load() {
			if retry == nil {
				retry = time.NewTimer(l.retryDelay())
			}
			retryC = retry.C
		}
		select {
		case <-retryC:
			retry = nil
			l.recoverLog()
			if !l.stopped.Load() {
				l.housekeeping(false)
			}
		case r, ok := <-l.reqs:
			if !ok {
				l.shutdown()
				return
			}
			batch = append(batch[:0], r)
			closing := false
		drain:
			for len(batch) < maxBatch {
				select {
				case r, ok := <-l.reqs:
					if !ok {
						closing = true
						break drain
					}
					batch = append(batch, r)
				default:
					break drain
				}
			}
			if !closing {
				batch, closing = l.gather(batch)
			}
			l.commit(batch)
			clear(batch)
			l.housekeeping(false)
			if closing {
				l.shutdown()
				return
			}
		case <-ticker.C:
			l.housekeeping(true)
		}
	}
}

// gather waits, at most Config.GroupCommitWait, for the appenders preparing their record when
// it starts, adding what they queue to the batch. It returns at once when none is preparing (a single
// append in flight is never delayed) and stops as soon as none is left, the batch is full or the
// log is closing.
func (l *Log) gather(batch []*appendReq) ([]*appendReq, bool) {
	if l.cfg.GroupCommitWait < 0 || l.preparing.Load() <= 0 || len(batch) >= maxBatch {
		return batch, false
	}
	l.gatherWaits.Add(1)
	if l.gatherTimer == nil {
		l.gatherTimer = time.NewTimer(l.cfg.GroupCommitWait)
	} else {
		l.gatherTimer.Reset(l.cfg.GroupCommitWait)
	}
	defer l.gatherTimer.Stop()
	// Wait for those preparing now, not for every newcomer: under a steady stream some append
	// is always being prepared, and the writer would wait out the bound on every commit.
	want := min(len(batch)+int(l.preparing.Load()), maxBatch)
	for l.preparing.Load() > 0 && len(batch) < want {
		select {
		case r, ok := <-l.reqs:
			if !ok {
				return batch, true
			}
			batch = append(batch, r)
		case <-l.gatherTimer.C:
			return batch, false
		}
	}
	return batch, false
}

func (l *Log) shutdown() {
	if !l.stopped.Load() {
		l.barrier()
		l.writeCheckpointFile()
	}
}

// housekeeping replaces the checkpoint file and rotates the segment when due.
func (l *Log) housekeeping(timer bool) {
	if l.stopped.Load() {
		return
	}
	now := time.Now()
	if l.fileSeq == 0 && l.sinceFile > 0 && l.sinceFile < l.cfg.CheckpointEvery {
		// A new log has no checkpoint file yet: write one with the first commit rather than after
		// CheckpointInterval, so a verifier reading the live log finds the checkpoints the log
		// holds. The count towards the next replacement goes on as if it had not been written.
		since, oldest := l.sinceFile, l.fileOldest
		l.barrier()
		l.writeCheckpointFile()
		l.sinceFile, l.fileOldest = since, oldest
	}
	if l.sinceFile >= l.cfg.CheckpointEvery || (l.sinceFile > 0 && now.Sub(l.fileOldest) >= l.cfg.CheckpointInterval) {
		l.barrier()
		l.writeCheckpointFile()
	}
	if l.wend >= l.cfg.SegmentMaxBytes || (!l.wstart.IsZero() && now.Sub(l.wstart) >= l.cfg.SegmentMaxAge) {
		l.rotate()
	}
}

// commit writes a batch and the signed checkpoint record covering it (and everything before)
// with one write, and hands it to the syncer, which fsyncs, publishes it to readers and answers
// its appenders. So a record is acknowledged only once it and its checkpoint are durable: no
// acknowledged record is ever left outside a signed checkpoint. While one fsync runs, the
// writer keeps writing the batches that arrive, and the next fsync covers them all.
func (l *Log) commit(batch []*appendReq) {
	answer := func(err error) {
		for _, r := range batch {
			if r.done != nil {
				r.done <- appendRes{err: err}
			}
		}
	}
	if err := l.stopErr(); err != nil {
		answer(err)
		return
	}
	type ent struct {
		off  int64
		t    int64
		hash [32]byte
	}
	n := len(batch)
	ents := make([]ent, n+1)
	hashes := make([]string, n)
	l.buf = l.buf[:0]
	seq := l.next
	prev := l.prev
	stamp := func() time.Time {
		t := time.Now().UTC().Round(0)
		if t.Before(l.lastTime) {
			t = l.lastTime
		}
		l.lastTime = t
		return t
	}
	line := func(i int, typ Type, payload []byte) {
		t := stamp()
		l.body = appendBody(l.body[:0], seq+uint64(i), t, typ, payload, prev)
		h := LeafHash(l.body)
		ents[i] = ent{off: l.wend + int64(len(l.buf)), t: t.UnixNano(), hash: h}
		l.buf = appendLine(l.buf, l.body, h)
		prev = hex.EncodeToString(h[:])
	}
	for i, r := range batch {
		line(i, r.typ, r.payload)
		hashes[i] = prev
	}
	// The checkpoint signs the tree of every record before it. The tree takes the batch's
	// leaves now; readers only see what size covers, and a failed write is cut back on recovery.
	size := seq + uint64(n)
	l.mu.Lock()
	for i := range n {
		l.tr.append(ents[i].hash[:])
	}
	root, err := l.tr.root(size)
	l.mu.Unlock()
	var signed, p []byte
	if err == nil {
		signed, err = l.sig.sign(Checkpoint{Origin: l.sig.s.Name(), Size: size, Root: root})
	}
	if err == nil {
		p, err = checkpointPayload{Size: size, Root: base64.StdEncoding.EncodeToString(root), Note: string(signed)}.canonical()
	}
	if err != nil {
		l.fail(fmt.Errorf("checkpoint records %d..%d: %w", seq, size-1, err))
		answer(l.stopErr())
		return
	}
	line(n, TypeCheckpoint, p)
	l.mu.Lock()
	l.tr.append(ents[n].hash[:])
	l.mu.Unlock()
	if _, err := l.w.Write(l.buf); err != nil {
		l.fail(fmt.Errorf("write records %d..%d to %s: %w", seq, size, l.wseg.name, err))
		answer(l.stopErr())
		return
	}
	// Index the records now (readers only see them once size covers them).
	l.mu.Lock()
	for i, e := range ents {
		l.wseg.offs = append(l.wseg.offs, e.off)
		l.wseg.times = append(l.wseg.times, e.t)
		if i < n {
			if s := batch[i].session; s != "" {
				l.sessions[s] = append(l.sessions[s], seq+uint64(i))
			}
		}
	}
	l.mu.Unlock()
	l.wend += int64(len(l.buf))
	l.next += uint64(n) + 1
	if l.wstart.IsZero() {
		l.wstart = time.Unix(0, ents[0].t)
	}
	l.prev = prev
	if l.sinceFile == 0 {
		l.fileOldest = time.Now()
	}
	l.sinceFile += n
	l.syncCh <- &pending{f: l.w, seg: l.wseg, reqs: append([]*appendReq(nil), batch...), first: seq, hashes: hashes,
		ckpt: &ckptState{Seq: size, Time: ents[n].t, Note: signed}, end: l.wend}
	if len(l.buf) > 1<<20 {
		l.buf = nil
	}
}

// barrier waits until everything written so far is durable (or has failed).
func (l *Log) barrier() {
	ch := make(chan struct{})
	l.syncCh <- &pending{barrier: ch}
	<-ch
}

// syncer fsyncs written batches, publishes them and answers their appenders, in order.
func (l *Log) syncer() {
	defer close(l.syncDone)
	group := make([]*pending, 0, 64)
	for p := range l.syncCh {
		group = append(group[:0], p)
	drain:
		for {
			select {
			case p, ok := <-l.syncCh:
				if !ok {
					break drain
				}
				group = append(group, p)
			default:
				break drain
			}
		}
		// One fsync per file in the group (a rotation may put two files in one group).
		// Once the log has failed nothing more is acknowledged: recovery cuts back to the last
		// acknowledged record, so a batch written after a failed one must not be acknowledged.
		err := l.stopErr()
		var synced segmentFile
		for _, p := range group {
			if p.f != nil && p.f != synced && err == nil {
				if err = p.f.Sync(); err != nil {
					l.fail(fmt.Errorf("fsync %s: %w", p.seg.name, err))
				}
				synced = p.f
			}
		}
		if err != nil {
			herr := l.stopErr()
			for _, p := range group {
				for _, r := range p.reqs {
					if r.done != nil {
						r.done <- appendRes{err: herr}
					}
				}
			}
		} else {
			l.mu.Lock()
			for _, p := range group {
				if p.seg != nil {
					p.seg.end = p.end
					l.size = p.first + uint64(len(p.reqs)) + 1
					l.ckpt = p.ckpt
				}
			}
			close(l.notify)
			l.notify = make(chan struct{})
			l.mu.Unlock()
			for _, p := range group {
				for i, r := range p.reqs {
					if r.done != nil {
						r.done <- appendRes{pos: Position{Seq: p.first + uint64(i), Hash: p.hashes[i]}}
					}
				}
			}
		}
		for _, p := range group {
			if p.barrier != nil {
				close(p.barrier)
			}
		}
	}
}

// writeCheckpointFile replaces the checkpoint file with the newest durable checkpoint, if it
// is newer.
func (l *Log) writeCheckpointFile() {
	l.mu.RLock()
	c := l.ckpt
	l.mu.RUnlock()
	if c == nil || c.Seq == l.fileSeq {
		l.sinceFile = 0
		return
	}
	err := l.withSpare(func() error {
		return writeFileSyncDir(l.dirf, filepath.Join(l.dir, CheckpointFile), c.Note, 0o644, false)
	})
	if err != nil {
		l.fail(fmt.Errorf("write checkpoint file: %w", err))
		return
	}
	l.fileSeq, l.sinceFile = c.Seq, 0
	l.mu.Lock()
	l.fileCkpt = c
	l.mu.Unlock()
}

// rotate seals the active segment (its last record is a checkpoint) and starts a new one.
func (l *Log) rotate() {
	seg := l.wseg
	l.barrier()
	if l.stopped.Load() {
		return
	}
	// Its descriptor stays open for readers; only the writer moves on.
	path := filepath.Join(l.dir, seg.name)
	if err := os.Chmod(path, 0o400); err != nil {
		l.fail(fmt.Errorf("seal segment %s: %w", seg.name, err))
		return
	}
	l.mu.Lock()
	seg.sealed = true
	l.mu.Unlock()
	if err := l.newSegment(); err != nil {
		l.fail(err)
		return
	}
	l.writeIndexFromMemory(seg)
}

// writeIndexFromMemory writes a sealed segment's index from the in-memory state. The index is
// a cache: failing to write it only costs a rescan at the next open.
func (l *Log) writeIndexFromMemory(seg *segment) {
	l.mu.RLock()
	n := len(seg.offs)
	sc := &scanned{seg: &segment{first: seg.first, offs: seg.offs, times: seg.times, end: seg.end},
		hashes: make([][32]byte, n), sessions: map[string][]uint64{}, lastCkpt: l.ckpt}
	for i := range sc.hashes {
		copy(sc.hashes[i][:], l.tr.node(0, seg.first+uint64(i)))
	}
	last := seg.first + uint64(n)
	for s, seqs := range l.sessions {
		i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seg.first })
		j := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= last })
		if i < j {
			sc.sessions[s] = append([]uint64(nil), seqs[i:j]...)
		}
	}
	l.mu.RUnlock()
	if n > 0 {
		_ = writeIndex(l.dir, sc)
	}
}

// Size returns the number of durable records.
func (l *Log) Size() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.size
}

// Wait blocks until the log holds more than size records, ctx ends or the log closes.
func (l *Log) Wait(ctx context.Context, size uint64) error {
	for {
		l.mu.RLock()
		n, ch := l.size, l.notify
		l.mu.RUnlock()
		if n > size {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return ErrClosed
		}
	}
}
