package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var benchArgs = json.RawMessage(`{"command":"git status --porcelain","cwd":"/work/repo","timeout":30}`)

func benchDecision(i int) *Decision {
	return &Decision{CallID: fmt.Sprintf("call-%d", i), Tool: "Bash", ActionClass: "exec",
		ActionHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Arguments: benchArgs,
		Decision: "ALLOW", Tier: 0, Rules: []string{"cel:vcs.read-only"}, Reason: "read-only git command",
		BundleDigest: "sha256:4f2a", SessionID: fmt.Sprintf("sess-%d", i%1000), AgentID: "agent-1", Caller: "spiffe://shield/runtime"}
}

// BenchmarkAppendDurable measures durable (fsynced) appends/s with 1024 concurrent appenders,
// as the pipeline produces them. Each op is one record. records/commit is how many records one
// commit (write, signed checkpoint, fsync hand-off) carried.
func BenchmarkAppendDurable(b *testing.B) {
	for _, par := range []int{8, 512} {
		for _, tc := range []struct {
			name string
			wait time.Duration
		}{{"group-wait", 0}, {"no-wait", -1}} {
			b.Run(fmt.Sprintf("appenders=%d/%s", par*runtime.GOMAXPROCS(0), tc.name), func(b *testing.B) { benchAppendDurable(b, par, tc.wait) })
		}
	}
}

func benchAppendDurable(b *testing.B, par int, wait time.Duration) {
	l, err := Open(Config{Dir: b.TempDir(), GroupCommitWait: wait})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetParallelism(par) // × GOMAXPROCS goroutines
	b.ReportAllocs()
	b.ResetTimer()
	var i int64
	var mu sync.Mutex
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			i++
			n := i
			mu.Unlock()
			if _, err := l.Append(context.Background(), TypeDecision, benchDecision(int(n))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if c := l.Size() - uint64(b.N); c > 0 { // one checkpoint record per commit
		b.ReportMetric(float64(b.N)/float64(c), "records/commit")
	}
}

// BenchmarkAppendDurableRaw is BenchmarkAppendDurable with a small pre-canonical payload: the
// cost of the log itself (chain, tree, write, group-committed fsync) without redaction and
// canonicalization of decision arguments.
func BenchmarkAppendDurableRaw(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetParallelism(512)
	payload := json.RawMessage(`{"bundle":"sha256:4f2a","revision":"r1"}`)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(context.Background(), TypeBundleActivated, payload); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppendDurableSingle is one appender: every record waits for its own fsync.
func BenchmarkAppendDurableSingle(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for i := 0; b.Loop(); i++ {
		if _, err := l.Append(context.Background(), TypeDecision, benchDecision(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkFsync is the floor of a durable append on this file system: write one record-sized
// line (about what a decision record and its checkpoint record take) to an append-only file and
// fsync it, as the syncer does once per group commit. A single durable decision cannot cost
// less than this plus a round trip (Health).
func BenchmarkFsync(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "segment"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := make([]byte, 900)
	for i := range line {
		line[i] = 'x'
	}
	line[len(line)-1] = '\n'
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueryTimeRange queries a one-minute window in the middle of a log of 1 000 000
// decision records (first page of 100, oldest first, and a session within the window). Building
// the log takes a while; it is built once.
func BenchmarkQueryTimeRange(b *testing.B) {
	l, from, to := millionLog(b)
	ctx := context.Background()
	b.Run("window", func(b *testing.B) {
		for b.Loop() {
			res, err := l.Query(ctx, Query{Since: from, Until: to, Limit: 100})
			if err != nil || len(res.Records) != 100 {
				b.Fatalf("%v %d", err, len(res.Records))
			}
		}
	})
	b.Run("window-newest-tool-filter", func(b *testing.B) {
		for b.Loop() {
			res, err := l.Query(ctx, Query{Since: from, Until: to, Tool: "Bash", Decision: "ALLOW", Newest: true, Limit: 100})
			if err != nil || len(res.Records) != 100 {
				b.Fatalf("%v %d", err, len(res.Records))
			}
		}
	})
	b.Run("session-in-window", func(b *testing.B) {
		for b.Loop() {
			if _, err := l.Query(ctx, Query{Since: from, Until: to, SessionID: "sess-7", Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var (
	millionOnce sync.Once
	million     *Log
)

func millionLog(b *testing.B) (*Log, time.Time, time.Time) {
	millionOnce.Do(func() {
		dir := b.TempDir()
		l, err := Open(Config{Dir: dir, CheckpointEvery: 10000})
		if err != nil {
			b.Fatal(err)
		}
		const n, workers = 1_000_000, 256
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += workers {
					if _, err := l.Append(context.Background(), TypeDecision, benchDecision(i)); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		million = l
	})
	mid, err := million.Get(million.Size() / 2)
	if err != nil {
		b.Fatal(err)
	}
	return million, mid.Time, mid.Time.Add(time.Minute)
}

// BenchmarkVerify verifies a closed log of 100 000 decision records (checkpoints every 1000).
// Each op is one record verified.
func BenchmarkVerify(b *testing.B) {
	dir := b.TempDir()
	l, err := Open(Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	const n, workers = 100_000, 256
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if _, err := l.Append(context.Background(), TypeDecision, benchDecision(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	pub := l.PublicKey()
	l.Close()
	b.ResetTimer()
	var records uint64
	for b.Loop() {
		rep, err := Verify(dir, pub)
		if err != nil {
			b.Fatal(err)
		}
		records += rep.Records
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}
