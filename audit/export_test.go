package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// exportLog writes n decision records (one per Append: each is followed by a checkpoint
// record) and returns the open log.
func exportLog(t testing.TB, n int) *Log {
	t.Helper()
	l := mustOpen(t, testConfig(t))
	t.Cleanup(func() { l.Close() })
	for i := 0; i < n; i++ {
		d := "ALLOW"
		if i%3 == 0 {
			d = "BLOCK"
		}
		if _, err := l.Append(context.Background(), TypeDecision, &Decision{Tool: "Bash", Decision: d, CallID: fmt.Sprintf("c%d", i),
			Arguments: json.RawMessage(fmt.Sprintf(`{"command":"curl -u admin:hunter%d https://x"}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// seqsOf reads a JSON-lines export (record format) and returns the seqs in order.
func seqsOf(t testing.TB, path string) []uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var r struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		out = append(out, r.Seq)
	}
	return out
}

// crashSink is a file sink that "crashes" at its nth Send: it writes the batch (or not) and
// cancels the shipper's context before the shipper can record the acknowledgement.
type crashSink struct {
	*JSONLSink
	n, calls    int
	writeFirst  bool
	cancel      context.CancelFunc
	crashedSeqs []uint64
}

func (s *crashSink) Send(ctx context.Context, events []ExportEvent) error {
	s.calls++
	if s.calls != s.n {
		return s.JSONLSink.Send(ctx, events)
	}
	for _, e := range events {
		s.crashedSeqs = append(s.crashedSeqs, e.Seq)
	}
	if s.writeFirst {
		if err := s.JSONLSink.Send(ctx, events); err != nil {
			return err
		}
	}
	s.cancel()
	return errors.New("crashed")
}

// TestShipperResumesWithoutGap: a shipper that dies mid-batch (before or after the sink wrote
// it) resumes from its cursor: every record reaches the sink, in order, and the only duplicates
// are the batch that was in flight.
func TestShipperResumesWithoutGap(t *testing.T) {
	l := exportLog(t, 60) // 120 records with the checkpoint records
	for _, writeFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("written=%v", writeFirst), func(t *testing.T) {
			dir := t.TempDir()
			out, cursor := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cursor")
			cfg := ExportConfig{Cursor: cursor, Format: FormatRecord, Types: []Type{TypeDecision, TypeCheckpoint}, Batch: 7}
			f, err := NewJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cs := &crashSink{JSONLSink: f, n: 5, writeFirst: writeFirst, cancel: cancel}
			sh, err := NewShipper(cfg, l, cs)
			if err != nil {
				t.Fatal(err)
			}
			if err := sh.Run(ctx, true); err != nil {
				t.Fatalf("run until the crash: %v", err)
			}
			f.Close()
			// Restart: a new shipper, a new sink on the same file, the same cursor.
			f2, err := NewJSONLFile(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f2.Close()
			sh2, err := NewShipper(cfg, l, f2)
			if err != nil {
				t.Fatal(err)
			}
			if err := sh2.Run(context.Background(), false); err != nil {
				t.Fatalf("resume: %v", err)
			}
			got := seqsOf(t, out)
			checkNoGap(t, got, l.Size(), cs.crashedSeqs, writeFirst)
			if st := sh2.Stats(); st.Next != l.Size() {
				t.Errorf("cursor at %d, want %d", st.Next, l.Size())
			}
		})
	}
}

// checkNoGap: got holds every seq below size in order, with duplicates only of the crashed batch.
func checkNoGap(t *testing.T, got []uint64, size uint64, crashed []uint64, dupsAllowed bool) {
	t.Helper()
	seen := map[uint64]int{}
	for _, s := range got {
		seen[s]++
	}
	for s := uint64(0); s < size; s++ {
		if seen[s] == 0 {
			t.Fatalf("record %d was never shipped (a gap); shipped %v", s, got)
		}
	}
	inFlight := map[uint64]bool{}
	for _, s := range crashed {
		inFlight[s] = true
	}
	dups := 0
	for s, n := range seen {
		if n > 1 {
			dups++
			if !dupsAllowed || !inFlight[s] || n > 2 {
				t.Errorf("record %d shipped %d times; only the batch in flight at the crash may repeat, once", s, n)
			}
		}
	}
	if dupsAllowed && dups != len(crashed) {
		t.Errorf("%d duplicates, want the %d records of the batch in flight", dups, len(crashed))
	}
}

// TestShipperRedactsAndFilters: the default types leave checkpoint records out, every payload
// passes the export redaction, and the record format is the stored line when nothing changed.
func TestShipperRedactsAndFilters(t *testing.T) {
	l := exportLog(t, 5)
	if _, err := l.Append(context.Background(), TypeAgentEvent, map[string]any{"event": "crashed", "detail": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI"}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sh, err := NewShipper(ExportConfig{Format: FormatRecord}, l, NewJSONLWriter(&buf))
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Run(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("shipped %d lines, want 5 decisions and 1 agent event (no checkpoints):\n%s", len(lines), buf.String())
	}
	for _, line := range lines[:5] {
		if _, err := DecodeRecord([]byte(line)); err != nil {
			t.Errorf("an unchanged record no longer verifies: %v\n%s", err, line)
		}
	}
	if strings.Contains(buf.String(), "hunter") || strings.Contains(buf.String(), "wJalrXUtnFEMI") {
		t.Errorf("export holds a secret:\n%s", buf.String())
	}
	if !strings.Contains(lines[5], `"export_redacted":["/detail"]`) {
		t.Errorf("redacted agent event not marked: %s", lines[5])
	}
}

// TestShipperCursorChecks: a corrupt cursor, a cursor past the trail's end and a cursor from
// another trail are refused, never silently restarted.
func TestShipperCursorChecks(t *testing.T) {
	l := exportLog(t, 3)
	other := exportLog(t, 3)
	dir := t.TempDir()
	cursor := filepath.Join(dir, "cursor")
	var buf bytes.Buffer
	run := func(src ExportSource) error {
		sh, err := NewShipper(ExportConfig{Cursor: cursor}, src, NewJSONLWriter(&buf))
		if err != nil {
			t.Fatal(err)
		}
		return sh.Run(context.Background(), false)
	}
	if err := run(l); err != nil {
		t.Fatal(err)
	}
	if err := run(other); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("another trail: %v, want ErrCursorMismatch", err)
	}
	if err := writeCursor(cursor, cursorState{Next: 1000, Hash: strings.Repeat("a", 64)}); err != nil {
		t.Fatal(err)
	}
	if err := run(l); !errors.Is(err, ErrCursorMismatch) {
		t.Errorf("cursor past the end: %v, want ErrCursorMismatch", err)
	}
	os.WriteFile(cursor, []byte(`{"next":3`), 0o600)
	if err := run(l); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("corrupt cursor: %v", err)
	}
}

// TestShipperFollowsDirSource: a shipper reading a directory beside its writer sees records
// committed after it started.
func TestShipperFollowsDirSource(t *testing.T) {
	l := exportLog(t, 2)
	src, err := NewDirSource(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sink := &chanSink{ch: make(chan ExportEvent, 100)}
	sh, err := NewShipper(ExportConfig{Poll: 20 * time.Millisecond}, src, sink)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sh.Run(ctx, true) }()
	for i := 0; i < 2; i++ {
		<-sink.ch
	}
	if _, err := l.Append(context.Background(), TypeServiceStop, map[string]any{"version": "x"}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-sink.ch:
		if e.Type != TypeServiceStop {
			t.Errorf("got %s, want the new service_stop record", e.Type)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the record committed after the shipper started never arrived")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type chanSink struct {
	mu sync.Mutex
	ch chan ExportEvent
}

func (s *chanSink) Send(_ context.Context, events []ExportEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		s.ch <- e
	}
	return nil
}
func (s *chanSink) Close() error { return nil }

// TestShipperOneShotGivesUp: a one-shot export stops after MaxAttempts failed sends with the
// error, without moving its cursor.
func TestShipperOneShotGivesUp(t *testing.T) {
	l := exportLog(t, 2)
	cursor := filepath.Join(t.TempDir(), "cursor")
	sh, err := NewShipper(ExportConfig{Cursor: cursor, MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: time.Millisecond}, l, failSink{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Run(context.Background(), false); err == nil || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("Run: %v, want the error after 3 attempts", err)
	}
	if _, err := os.Stat(cursor); !os.IsNotExist(err) {
		t.Errorf("cursor written although nothing was acknowledged: %v", err)
	}
	if st := sh.Stats(); st.Failures != 3 || st.LastError == "" {
		t.Errorf("stats %+v", st)
	}
}

type failSink struct{}

func (failSink) Send(context.Context, []ExportEvent) error { return errors.New("down") }
func (failSink) Close() error                              { return nil }

func TestExportConfigValidate(t *testing.T) {
	err := ExportConfig{Format: "cef", Batch: 20000, Types: []Type{"Bad Type"}, Redact: Redaction{Values: []string{"("}}}.Validate()
	for _, want := range []string{"format", "batch", "invalid record type", "redaction value pattern"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want it to name %q", err, want)
		}
	}
}

// FuzzReadCursor: any cursor file content is either a valid position or an error, never a panic
// nor a silently accepted half-cursor.
func FuzzReadCursor(f *testing.F) {
	f.Add([]byte(`{"next":3,"hash":"` + strings.Repeat("ab", 32) + `"}` + "\n"))
	f.Add([]byte(`{"next":0,"hash":""}`))
	f.Add([]byte(`{"next":3}`))
	f.Add([]byte(`{"next":-1,"hash":"x"}`))
	f.Add([]byte(`{"next":1,"hash":"` + strings.Repeat("A", 64) + `","x":1}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "c")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := readCursor(p, 0)
		if err != nil {
			return
		}
		if (c.Next == 0) != (c.Hash == "") || (c.Hash != "" && !isHex64(c.Hash)) {
			t.Fatalf("accepted an inconsistent cursor %+v from %q", c, b)
		}
	})
}

// BenchmarkShipper is the shipper's throughput from a log to a discarding sink: read, export
// redaction and formatting, per record (decisions with redacted arguments, checkpoints skipped).
func BenchmarkShipper(b *testing.B) {
	l := mustOpen(b, testConfig(b))
	defer l.Close()
	var pend []*Decision
	for i := 0; i < 2000; i++ {
		pend = append(pend, &Decision{Tool: "Bash", Decision: "ALLOW", CallID: fmt.Sprint(i), SessionID: "s",
			Arguments: json.RawMessage(fmt.Sprintf(`{"command":"curl -u admin:pw%d https://x/%d"}`, i, i))})
	}
	var wg sync.WaitGroup
	for _, d := range pend { // concurrent appends: few commits, so few checkpoint records
		wg.Add(1)
		go func(d *Decision) { defer wg.Done(); l.Append(context.Background(), TypeDecision, d) }(d)
	}
	wg.Wait()
	for _, format := range []ExportFormat{FormatOCSF, FormatRecord} {
		b.Run(string(format), func(b *testing.B) {
			n := 0
			for b.Loop() {
				sink := NewJSONLWriter(io.Discard)
				sh, err := NewShipper(ExportConfig{Format: format}, l, sink)
				if err != nil {
					b.Fatal(err)
				}
				if err := sh.Run(context.Background(), false); err != nil {
					b.Fatal(err)
				}
				n += int(sh.Stats().Shipped)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
