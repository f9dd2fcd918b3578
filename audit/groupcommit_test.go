package audit

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestGroupCommitNeverWaitsAlone: appends one after another (one in flight) never make the
// writer wait for others, whatever the configured bound.
func TestGroupCommitNeverWaitsAlone(t *testing.T) {
	cfg := testConfig(t)
	cfg.GroupCommitWait = 100 * time.Millisecond
	l := mustOpen(t, cfg)
	defer l.Close()
	appendDecisions(t, l, 20, "s")
	if n := l.gatherWaits.Load(); n != 0 {
		t.Fatalf("the writer waited %d times with one append in flight", n)
	}
}

// TestGroupCommitWaitIsBounded: an appender that never finishes preparing (simulated) delays
// the others' commits only up to the bound: every append is still acknowledged and chained.
func TestGroupCommitWaitIsBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.GroupCommitWait = 2 * time.Millisecond
	l := mustOpen(t, cfg)
	defer l.Close()
	l.preparing.Add(1) // a preparer that never queues
	defer l.preparing.Add(-1)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := l.Append(ctx, TypeDecision, &Decision{Tool: "t", Decision: "ALLOW"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if l.gatherWaits.Load() == 0 {
		t.Error("the writer never waited although an append was being prepared")
	}
	if l.Size() < 8 {
		t.Errorf("size %d, want every record", l.Size())
	}
}

// TestGroupCommitOff: a negative bound never waits, even with appends being prepared.
func TestGroupCommitOff(t *testing.T) {
	cfg := testConfig(t)
	cfg.GroupCommitWait = -1
	l := mustOpen(t, cfg)
	defer l.Close()
	l.preparing.Add(1)
	defer l.preparing.Add(-1)
	appendDecisions(t, l, 3, "s")
	if n := l.gatherWaits.Load(); n != 0 {
		t.Fatalf("the writer waited %d times with group commit off", n)
	}
}
