package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The shipper: follows the trail and hands its records to a Sink, at least once.
//
// It only reads the trail (Query), so it is never on the decision path: a slow or dead sink
// delays shipping, never a decision. Its position is a cursor file: the next seq to ship and the
// hash of the last record shipped, replaced atomically (written, fsynced, renamed, directory
// fsynced) only after the sink acknowledged the batch. A crash between the sink's
// acknowledgement and the cursor's rename re-sends that one batch after a restart: duplicates
// are possible for the batch in flight, never a gap. The hash makes a resumed shipper refuse a
// trail that is not the one it shipped from (replaced or rewritten) instead of skipping or
// repeating silently.

// ExportFormat selects how a record is shipped.
type ExportFormat string

const (
	// FormatOCSF ships an OCSF event (ocsf.go); the default.
	FormatOCSF ExportFormat = "ocsf"
	// FormatRecord ships the stored record line; byte for byte the stored one (so it verifies)
	// unless export redaction replaced something, which adds "export_redacted" and breaks its hash.
	FormatRecord ExportFormat = "record"
)

// ExportEvent is one record ready for a sink.
type ExportEvent struct {
	Seq  uint64
	Time time.Time
	Type Type
	Hash string
	// Decision is the decision of a decision record (ALLOW, BLOCK, ESCALATE), else empty; sinks
	// derive a severity from it.
	Decision string
	// Severity is the OCSF severity_id (1 informational … 4 high); syslog maps it.
	Severity int
	// JSON is the formatted event (one line, no newline).
	JSON []byte
}

// Sink delivers events. Send returns nil only once the destination holds the whole batch (for
// a file: written and fsynced; for HTTP: a 2xx answer); the shipper then moves its cursor.
// Send may be called again with the same events after an error. Close releases the sink.
type Sink interface {
	Send(ctx context.Context, events []ExportEvent) error
	Close() error
}

// ExportSource is what the shipper reads: *Log (in process, notified of new records) or a
// DirSource (a log directory read beside its writer).
type ExportSource interface {
	Query(ctx context.Context, q Query) (*Result, error)
	Get(seq uint64) (*Record, error)
}

// waiter is a source that can block until records arrive (*Log).
type waiter interface {
	Wait(ctx context.Context, size uint64) error
}

// refresher is a source that must re-read its directory to see new records (DirSource).
type refresher interface {
	Refresh() error
}

// ExportConfig configures a Shipper. The zero value of every field but Cursor is its default.
type ExportConfig struct {
	// Cursor is the position file. Empty: no position is kept (a one-shot export from From).
	Cursor string
	// From is the first seq to ship when there is no cursor file yet.
	From uint64
	// To stops a one-shot export before this seq (0: the end of the trail at the time).
	To uint64
	// Format of the events. Default FormatOCSF.
	Format ExportFormat
	// Types ships only records of these types. Default: every type but checkpoint (one per
	// commit, noise to a SIEM; name it to ship it).
	Types []Type
	// Batch is the most records per Send. Default 500, at most 10 000.
	Batch int
	// Poll is how often a source that cannot notify (DirSource) is re-read. Default 1s.
	Poll time.Duration
	// RetryMin and RetryMax bound the back-off between failed sends (doubling). Default 1s, 1m.
	RetryMin, RetryMax time.Duration
	// MaxAttempts bounds failed sends of one batch in a one-shot run (Run with follow false)
	// before Run returns the error. Default 5. A following shipper retries forever and never
	// skips a batch.
	MaxAttempts int
	// Redact is applied to every payload before it is formatted (the log already redacts
	// decisions and approvals; this covers every record type, and records written before a
	// pattern existed). The zero value redacts with the built-in patterns.
	Redact Redaction
	// Host names the appliance in events (OCSF metadata, syslog HOSTNAME). Default os.Hostname.
	Host string
	// Version is the product version in OCSF metadata.
	Version string
	// Logger receives send failures (at most one line per 10 s). Default slog.Default().
	Logger *slog.Logger
}

func (c *ExportConfig) setDefaults() {
	if c.Format == "" {
		c.Format = FormatOCSF
	}
	if c.Batch == 0 {
		c.Batch = 500
	}
	if c.Poll == 0 {
		c.Poll = time.Second
	}
	if c.RetryMin == 0 {
		c.RetryMin = time.Second
	}
	if c.RetryMax == 0 {
		c.RetryMax = time.Minute
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 5
	}
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports every problem with the configuration.
func (c ExportConfig) Validate() error {
	c.setDefaults()
	var errs []error
	if c.Format != FormatOCSF && c.Format != FormatRecord {
		errs = append(errs, fmt.Errorf("export: format %q: want ocsf or record", c.Format))
	}
	if c.Batch < 1 || c.Batch > 10_000 {
		errs = append(errs, fmt.Errorf("export: batch %d: want 1..10000", c.Batch))
	}
	if c.Poll < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("export: poll %v is below 10ms", c.Poll))
	}
	if c.RetryMin <= 0 || c.RetryMax < c.RetryMin {
		errs = append(errs, fmt.Errorf("export: retry back-off %v..%v: want 0 < min <= max", c.RetryMin, c.RetryMax))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("export: max_attempts %d is below 1", c.MaxAttempts))
	}
	for _, t := range c.Types {
		if !validType(t) {
			errs = append(errs, fmt.Errorf("export: invalid record type %q", t))
		}
	}
	if _, err := c.Redact.compile(); err != nil {
		errs = append(errs, fmt.Errorf("export: %w", err))
	}
	return errors.Join(errs...)
}

// ExportStats is what a shipper reports (metrics).
type ExportStats struct {
	// Next is the next seq to ship: every record before it was acknowledged by the sink.
	Next uint64
	// Shipped counts records acknowledged by the sink in this process (filtered-out records
	// move the cursor but are not counted).
	Shipped uint64
	// Failures counts failed sends.
	Failures uint64
	// LastSuccess is when the sink last acknowledged a batch.
	LastSuccess time.Time
	// LastError is the last send failure ("" after a success).
	LastError string
}

// Shipper follows a trail into a sink.
type Shipper struct {
	cfg  ExportConfig
	src  ExportSource
	sink Sink
	red  *Redactor

	mu    sync.Mutex
	stats ExportStats
	// lastLog rate-limits failure lines.
	lastLog    time.Time
	suppressed int
}

// NewShipper checks cfg and returns a shipper of src into sink. It does not read the cursor
// yet: Run does.
func NewShipper(cfg ExportConfig, src ExportSource, sink Sink) (*Shipper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if cfg.Types == nil {
		for _, t := range []Type{TypeDecision, TypeBundleActivated, TypeSandboxCanaryResult, TypeApprovalRequested,
			TypeApprovalResolved, TypeServiceStart, TypeServiceStop, TypeRecovered, TypeAnchored, TypeAgentEvent} {
			cfg.Types = append(cfg.Types, t)
		}
		cfg.Types = append(cfg.Types, "") // marker: every type but checkpoint, including new ones
	}
	red, err := NewRedactor(cfg.Redact)
	if err != nil {
		return nil, err
	}
	return &Shipper{cfg: cfg, src: src, sink: sink, red: red}, nil
}

// Stats returns the shipper's counters.
func (s *Shipper) Stats() ExportStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// wanted reports whether records of type t are shipped.
func (s *Shipper) wanted(t Type) bool {
	if slices.Contains(s.cfg.Types, "") { // the default set
		return t != TypeCheckpoint
	}
	return slices.Contains(s.cfg.Types, t)
}

// ErrSinkRefused is wrapped by sink errors that retrying will not fix by itself (a receiver
// certificate the configured CA did not sign, an HTTP 4xx answer): a one-shot run stops at once;
// a following shipper keeps retrying with back-off (the receiver may be fixed), never skipping.
var ErrSinkRefused = errors.New("the sink refused the batch")

// ErrCursorMismatch is wrapped when the trail does not hold, at the cursor, the record the
// cursor says was shipped last.
var ErrCursorMismatch = errors.New("the audit trail does not match the export cursor")

// cursorState is the cursor file's content.
type cursorState struct {
	// Next is the next seq to ship.
	Next uint64 `json:"next"`
	// Hash is the hash of record Next-1 ("" when Next is 0).
	Hash string `json:"hash"`
}

// readCursor reads the cursor file; a missing file is the start (From).
func readCursor(path string, from uint64) (cursorState, error) {
	if path == "" {
		return cursorState{Next: from}, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cursorState{Next: from}, nil
	}
	if err != nil {
		return cursorState{}, fmt.Errorf("read export cursor: %w", err)
	}
	if len(b) > 4096 {
		return cursorState{}, fmt.Errorf("export cursor %s is %d bytes: not a cursor", path, len(b))
	}
	var c cursorState
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		// Never guess: restarting at 0 would re-send everything, at the end would lose records.
		return cursorState{}, fmt.Errorf("export cursor %s is corrupt (fix or remove it, choosing where to resume): %w", path, err)
	}
	if (c.Next == 0) != (c.Hash == "") || (c.Hash != "" && !isHex64(c.Hash)) {
		return cursorState{}, fmt.Errorf("export cursor %s is corrupt: next %d with hash %q", path, c.Next, c.Hash)
	}
	return c, nil
}

// writeCursor replaces the cursor file durably: temporary file, fsync, rename, directory fsync.
func writeCursor(path string, c cursorState) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".cursor-*")
	if err != nil {
		return fmt.Errorf("write export cursor: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing to remove
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write export cursor: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("fsync export cursor: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write export cursor: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace export cursor: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync export cursor dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync export cursor dir: %w", err)
	}
	return nil
}

// Run ships records from the cursor on. With follow false it ships what the trail holds (up to
// To) and returns; with follow true it waits for new records until ctx ends (then it returns
// nil). A batch the sink refuses is retried with back-off; it is never skipped.
func (s *Shipper) Run(ctx context.Context, follow bool) error {
	cur, err := readCursor(s.cfg.Cursor, s.cfg.From)
	if err != nil {
		return err
	}
	if cur.Hash != "" {
		if err := s.checkCursor(ctx, cur, follow); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.stats.Next = cur.Next
	s.mu.Unlock()
	for {
		if s.cfg.To != 0 && cur.Next >= s.cfg.To {
			return nil
		}
		limit := s.cfg.Batch
		if s.cfg.To != 0 && s.cfg.To-cur.Next < uint64(limit) {
			limit = int(s.cfg.To - cur.Next)
		}
		res, err := s.src.Query(ctx, Query{FromSeq: cur.Next, Limit: limit})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read the trail at seq %d: %w", cur.Next, err)
		}
		if len(res.Records) == 0 {
			if !follow {
				return nil
			}
			if err := s.wait(ctx, cur.Next); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		if res.Records[0].Seq != cur.Next || (cur.Hash != "" && res.Records[0].Prev != cur.Hash) {
			return fmt.Errorf("%w: record %d does not continue from the last one shipped", ErrCursorMismatch, cur.Next)
		}
		events, err := s.events(res.Records)
		if err != nil {
			return err
		}
		if len(events) > 0 {
			if err := s.send(ctx, events, follow); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		last := res.Records[len(res.Records)-1]
		next := cursorState{Next: last.Seq + 1, Hash: last.Hash}
		if s.cfg.Cursor != "" {
			if err := writeCursor(s.cfg.Cursor, next); err != nil {
				// The batch was delivered; without a durable position it will be delivered again
				// after a restart (a duplicate, not a loss). Stop: a cursor that cannot be
				// written would repeat this on every batch.
				return err
			}
		}
		cur = next
		s.mu.Lock()
		s.stats.Next = cur.Next
		s.stats.Shipped += uint64(len(events))
		s.mu.Unlock()
	}
}

// checkCursor verifies that the trail holds, at cur.Next-1, the record the cursor names.
func (s *Shipper) checkCursor(ctx context.Context, cur cursorState, follow bool) error {
	for {
		r, err := s.src.Get(cur.Next - 1)
		if err == nil {
			if r.Hash != cur.Hash {
				return fmt.Errorf("%w: record %d has hash %s, the cursor %s", ErrCursorMismatch, cur.Next-1, r.Hash, cur.Hash)
			}
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("check export cursor: %w", err)
		}
		// A reader opened before the writer's last records: refresh once, then refuse.
		if rf, ok := s.src.(refresher); ok && follow {
			if err := s.sleep(ctx, s.cfg.Poll); err != nil {
				return err
			}
			if err := rf.Refresh(); err != nil {
				return err
			}
			if _, err := s.src.Get(cur.Next - 1); err == nil {
				continue
			}
		}
		return fmt.Errorf("%w: the cursor is at seq %d but the trail ends before it (truncated or replaced)", ErrCursorMismatch, cur.Next)
	}
}

// events filters, redacts and formats records.
func (s *Shipper) events(recs []*Record) ([]ExportEvent, error) {
	out := make([]ExportEvent, 0, len(recs))
	for _, r := range recs {
		if !s.wanted(r.Type) {
			continue
		}
		p, paths, err := s.red.Payload(r.Payload)
		if err != nil {
			// A stored payload is valid JSON; one that is not is shipped as a marker, not dropped.
			p, paths = json.RawMessage(`{"export_error":"payload is not valid JSON"}`), []string{""}
		}
		rr := *r
		rr.Payload = p
		ev := ExportEvent{Seq: r.Seq, Time: r.Time, Type: r.Type, Hash: r.Hash}
		var d struct {
			Decision string `json:"decision"`
		}
		if r.Type == TypeDecision && json.Unmarshal(p, &d) == nil {
			ev.Decision = d.Decision
		}
		ev.Severity = severity(r.Type, ev.Decision)
		switch s.cfg.Format {
		case FormatRecord:
			line, _ := rr.MarshalJSON()
			if len(paths) > 0 {
				// The line no longer verifies; say so, and which values were replaced.
				extra, _ := json.Marshal(paths)
				line = append(append(append(line[:len(line)-1], `,"export_redacted":`...), extra...), '}')
			}
			ev.JSON = line
		default:
			o, err := OCSF(&rr, OCSFOptions{Host: s.cfg.Host, Version: s.cfg.Version, Redacted: paths})
			if err != nil {
				// Never stop the trail for one record: ship it as a Base Event saying so.
				rr.Payload = json.RawMessage(`{}`)
				o, _ = OCSF(&rr, OCSFOptions{Host: s.cfg.Host, Version: s.cfg.Version, Redacted: []string{""}})
				msg, _ := json.Marshal("export: payload not mapped: " + err.Error())
				o = append(append(append(o[:len(o)-1], `,"status_detail":`...), msg...), '}')
			}
			ev.JSON = o
		}
		out = append(out, ev)
	}
	return out, nil
}

// send delivers one batch, retrying with back-off: forever when following, else up to
// MaxAttempts.
func (s *Shipper) send(ctx context.Context, events []ExportEvent, follow bool) error {
	delay := s.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := s.sink.Send(ctx, events)
		if err == nil {
			s.mu.Lock()
			s.stats.LastSuccess, s.stats.LastError = time.Now(), ""
			s.mu.Unlock()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.failed(events[0].Seq, attempt, err)
		if !follow && (attempt >= s.cfg.MaxAttempts || errors.Is(err, ErrSinkRefused)) {
			return fmt.Errorf("ship records from seq %d: %d attempts failed, the last: %w", events[0].Seq, attempt, err)
		}
		if err := s.sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, s.cfg.RetryMax)
	}
}

func (s *Shipper) failed(seq uint64, attempt int, err error) {
	s.mu.Lock()
	s.stats.Failures++
	s.stats.LastError = err.Error()
	now := time.Now()
	if !s.lastLog.IsZero() && now.Sub(s.lastLog) < 10*time.Second {
		s.suppressed++
		s.mu.Unlock()
		return
	}
	n := s.suppressed
	s.lastLog, s.suppressed = now, 0
	s.mu.Unlock()
	s.cfg.Logger.Warn("audit export: send failed; the batch will be sent again", "first_seq", seq, "attempt", attempt,
		"error", err.Error(), "suppressed_since_last_line", n)
}

// wait blocks until the source may hold a record at seq next (or ctx ends).
func (s *Shipper) wait(ctx context.Context, next uint64) error {
	if w, ok := s.src.(waiter); ok {
		return w.Wait(ctx, next)
	}
	if err := s.sleep(ctx, s.cfg.Poll); err != nil {
		return err
	}
	if rf, ok := s.src.(refresher); ok {
		return rf.Refresh()
	}
	return nil
}

func (s *Shipper) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DirSource reads a log directory beside its writer (OpenReadOnly), re-opening it on Refresh
// to see the records committed since.
type DirSource struct {
	dir string
	mu  sync.Mutex
	log *Log
	fp  string
}

// NewDirSource opens dir read-only.
func NewDirSource(dir string) (*DirSource, error) {
	d := &DirSource{dir: dir}
	d.fp = d.fingerprint() // taken before opening: a commit in between is seen at the next Refresh
	l, err := OpenReadOnly(dir)
	if err != nil {
		return nil, err
	}
	d.log = l
	return d, nil
}

func (d *DirSource) current() *Log {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log
}

// Query implements ExportSource.
func (d *DirSource) Query(ctx context.Context, q Query) (*Result, error) {
	return d.current().Query(ctx, q)
}

// Get implements ExportSource.
func (d *DirSource) Get(seq uint64) (*Record, error) { return d.current().Get(seq) }

// fingerprint names the segments and the active one's size: what changes when records are
// committed or a segment starts.
func (d *DirSource) fingerprint() string {
	infos, err := listSegments(d.dir)
	if err != nil || len(infos) == 0 {
		return ""
	}
	fp := fmt.Sprint(len(infos), infos[len(infos)-1].name)
	if fi, err := os.Stat(filepath.Join(d.dir, infos[len(infos)-1].name)); err == nil {
		fp += fmt.Sprint(" ", fi.Size())
	}
	return fp
}

// Refresh re-opens the directory when its segments changed; the old view stays in use if that
// fails.
func (d *DirSource) Refresh() error {
	fp := d.fingerprint()
	d.mu.Lock()
	same := fp != "" && fp == d.fp
	d.mu.Unlock()
	if same {
		return nil
	}
	l, err := OpenReadOnly(d.dir)
	if err != nil {
		return fmt.Errorf("re-read audit log: %w", err)
	}
	d.mu.Lock()
	old := d.log
	d.log, d.fp = l, fp
	d.mu.Unlock()
	return old.Close()
}

// Close releases the files.
func (d *DirSource) Close() error { return d.current().Close() }

var (
	_ ExportSource = (*Log)(nil)
	_ ExportSource = (*DirSource)(nil)
	_ waiter       = (*Log)(nil)
	_ refresher    = (*DirSource)(nil)
)
