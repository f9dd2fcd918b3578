package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func testConfig(t testing.TB) Config {
	t.Helper()
	return Config{Dir: t.TempDir(), CheckpointEvery: 10, CheckpointInterval: time.Hour}
}

func mustOpen(t testing.TB, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func appendDecisions(t testing.TB, l *Log, n int, session string) []Position {
	t.Helper()
	var out []Position
	for i := range n {
		p, err := l.Append(context.Background(), TypeDecision, &Decision{
			CallID: fmt.Sprintf("call-%d", i), Tool: "Bash", ActionClass: "exec", Decision: "ALLOW",
			Arguments: json.RawMessage(fmt.Sprintf(`{"command":"echo %d"}`, i)), SessionID: session, Rules: []string{"cel:r1"},
		})
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		out = append(out, p)
	}
	return out
}

func pubkey(t testing.TB, cfg Config) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "signing.key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestAppendReopenVerify(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	pos := appendDecisions(t, l, 25, "s1")
	for i, p := range pos {
		// Every tenth record triggers a checkpoint record after it.
		if p.Seq < uint64(i) {
			t.Fatalf("position %d has seq %d", i, p.Seq)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(cfg.Dir, "signing.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	l = mustOpen(t, cfg)
	more := appendDecisions(t, l, 3, "s2")
	if more[0].Seq <= pos[len(pos)-1].Seq {
		t.Fatalf("seq after reopen %d not after %d", more[0].Seq, pos[len(pos)-1].Seq)
	}
	r, err := l.Get(pos[3].Seq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Hash != pos[3].Hash || r.Type != TypeDecision {
		t.Fatalf("Get: %+v, want hash %s", r, pos[3].Hash)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(cfg.Dir, pubkey(t, cfg))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// 28 decisions + checkpoints after 10, 20 (counting checkpoints themselves not) + at close twice.
	if rep.Records != l.Size() || rep.Uncovered != 0 || rep.Checkpoints < 3 {
		t.Fatalf("report %+v, log size %d", rep, l.Size())
	}
}

func TestVerifyRejectsWrongKey(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	appendDecisions(t, l, 3, "")
	l.Close()
	other := testConfig(t)
	l2 := mustOpen(t, other)
	l2.Close()
	_, err := Verify(cfg.Dir, pubkey(t, other))
	var ve *VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("Verify with another key: %v, want a VerifyError", err)
	}
}

func TestRedaction(t *testing.T) {
	cfg := testConfig(t)
	cfg.Redact.Keys = []string{`^x-internal$`}
	l := mustOpen(t, cfg)
	defer l.Close()
	args := `{"command":"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz' https://u:pw@example.com","env":{"API_KEY":"k1","HOME":"/root"},"x-internal":"v","n":12345678901234567890}`
	p, err := l.Append(context.Background(), TypeDecision, Decision{Tool: "Bash", Decision: "BLOCK", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Get(p.Seq)
	if err != nil {
		t.Fatal(err)
	}
	var d Decision
	if err := json.Unmarshal(r.Payload, &d); err != nil {
		t.Fatal(err)
	}
	want, _ := ArgsHash(json.RawMessage(args))
	if d.ArgsHash != want {
		t.Errorf("args_hash %s, want hash of the original %s", d.ArgsHash, want)
	}
	if diff := cmp.Diff([]string{"/command", "/env/API_KEY", "/x-internal"}, d.Redacted); diff != "" {
		t.Errorf("redacted paths (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"abcdefghijklmnop", "k1", `"v"`, "u:pw@"} {
		if bytes.Contains(d.Arguments, []byte(secret)) {
			t.Errorf("stored arguments still hold %q: %s", secret, d.Arguments)
		}
	}
	if !bytes.Contains(d.Arguments, []byte(`/root`)) {
		t.Errorf("non-secret value lost: %s", d.Arguments)
	}
}

func TestInvalidArgumentsStillRecorded(t *testing.T) {
	l := mustOpen(t, testConfig(t))
	defer l.Close()
	p, err := l.Append(context.Background(), TypeDecision, &Decision{Tool: "Bash", Decision: "BLOCK", Arguments: json.RawMessage(`{"a":`)})
	if err != nil {
		t.Fatalf("Append with unparseable arguments: %v", err)
	}
	r, _ := l.Get(p.Seq)
	var d Decision
	json.Unmarshal(r.Payload, &d)
	if !d.ArgsInvalid || d.ArgsHash == "" || d.Arguments != nil {
		t.Fatalf("decision %+v", d)
	}
}

func TestConcurrentAppendsAreChained(t *testing.T) {
	cfg := testConfig(t)
	cfg.CheckpointEvery = 100
	l := mustOpen(t, cfg)
	var wg sync.WaitGroup
	seen := make(chan uint64, 2000)
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				p, err := l.Append(context.Background(), TypeDecision, &Decision{CallID: fmt.Sprint(g, i), Decision: "ALLOW"})
				if err != nil {
					t.Error(err)
					return
				}
				seen <- p.Seq
			}
		}()
	}
	wg.Wait()
	close(seen)
	uniq := map[uint64]bool{}
	for s := range seen {
		if uniq[s] {
			t.Fatalf("seq %d returned twice", s)
		}
		uniq[s] = true
	}
	l.Close()
	if _, err := Verify(cfg.Dir, pubkey(t, cfg)); err != nil {
		t.Fatal(err)
	}
}

func TestRotation(t *testing.T) {
	cfg := testConfig(t)
	cfg.SegmentMaxBytes = 4096
	l := mustOpen(t, cfg)
	appendDecisions(t, l, 60, "s")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs, err := listSegments(cfg.Dir)
	if err != nil || len(segs) < 3 {
		t.Fatalf("segments %v %v: want several", segs, err)
	}
	for _, s := range segs[:len(segs)-1] {
		fi, _ := os.Stat(filepath.Join(cfg.Dir, s.name))
		if fi.Mode().Perm() != 0o400 {
			t.Errorf("sealed segment %s has mode %v", s.name, fi.Mode().Perm())
		}
		if _, err := os.Stat(indexPath(cfg.Dir, s.first)); err != nil {
			t.Errorf("sealed segment %s has no index: %v", s.name, err)
		}
	}
	if _, err := Verify(cfg.Dir, pubkey(t, cfg)); err != nil {
		t.Fatal(err)
	}
	// Reopen from indexes; the session index spans segments.
	l = mustOpen(t, cfg)
	defer l.Close()
	res, err := l.Query(context.Background(), Query{SessionID: "s", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 60 {
		t.Fatalf("session query found %d records, want 60", len(res.Records))
	}
}

func TestOneWriterPerDir(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	defer l.Close()
	if _, err := Open(cfg); err == nil {
		t.Fatal("a second writer opened the same directory")
	}
	appendDecisions(t, l, 3, "s")
	r, err := OpenReadOnly(cfg.Dir)
	if err != nil {
		t.Fatalf("OpenReadOnly beside the writer: %v", err)
	}
	defer r.Close()
	if r.Size() != 6 {
		t.Fatalf("reader sees %d records, want 3 and their checkpoints", r.Size())
	}
	if _, err := r.Append(context.Background(), TypeDecision, &Decision{}); err == nil {
		t.Fatal("Append on a read-only log succeeded")
	}
}

// TestLiveLogVerifiesAfterFirstRecord: a new log writes its checkpoint file with its first
// commit, not CheckpointInterval (an hour here) later, so verifying the live log while the
// service runs finds the checkpoints the log holds and reports it intact.
func TestLiveLogVerifiesAfterFirstRecord(t *testing.T) {
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	defer l.Close()
	appendDecisions(t, l, 1, "s")
	path := filepath.Join(cfg.Dir, CheckpointFile)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint file 10 s after the first record of a new log")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := Verify(cfg.Dir, l.PublicKey()); err != nil {
		t.Fatalf("the live log does not verify: %v", err)
	}
}
