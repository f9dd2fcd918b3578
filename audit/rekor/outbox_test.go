package rekor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shieldsec/shield/audit"
)

// flaky fails the first n uploads, then records what it was given.
type flaky struct {
	n     int
	calls int
	got   [][]byte
}

func (f *flaky) API() string { return "v2" }
func (f *flaky) Upload(ctx context.Context, digest, sig, pub []byte) (json.RawMessage, int64, error) {
	f.calls++
	if f.calls <= f.n {
		return nil, 0, errors.New("connection refused")
	}
	f.got = append(f.got, digest)
	return json.RawMessage(`{}`), int64(len(f.got)), nil
}

func TestOutboxRetriesAndSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	l, err := audit.Open(audit.Config{Dir: filepath.Join(dir, "audit"), CheckpointEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 2 {
		if _, err := l.Append(context.Background(), audit.TypeServiceStart, map[string]string{"v": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	waitCheckpoint(t, l, 2)
	_, ck, err := l.SignedCheckpoint() // the checkpoint record of the last commit
	if err != nil {
		t.Fatal(err)
	}
	note, anchor := fmt.Sprintf("%d.note", ck.Size), fmt.Sprintf("%d.json", ck.Size)
	cfg := Config{Dir: filepath.Join(dir, "anchors")}
	up := &flaky{n: 1}
	a, err := New(cfg, l, up)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Round(context.Background()); err == nil {
		t.Fatal("first round succeeded against a failing log")
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "outbox", note)); err != nil {
		t.Fatalf("checkpoint not kept in the outbox after a failure: %v", err)
	}
	// A new anchorer (a restart) with the same key uploads what is queued.
	a2, err := New(cfg, l, up)
	if err != nil {
		t.Fatal(err)
	}
	if a2.PublicKeyPEM() != a.PublicKeyPEM() {
		t.Fatal("the anchoring key changed across a restart")
	}
	n, err := a2.Flush(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Flush = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, anchor)); err != nil {
		t.Fatalf("anchor not stored: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, "outbox", note)); !os.IsNotExist(err) {
		t.Fatalf("anchored checkpoint still queued: %v", err)
	}
	// The log records the anchor.
	res, err := l.Query(context.Background(), audit.Query{Types: []audit.Type{audit.TypeAnchored}})
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("anchored records: %v %v", res, err)
	}
	// The same checkpoint is not queued again.
	if err := a2.Round(context.Background()); err != nil || len(up.got) != 1 {
		t.Fatalf("second round: %v, %d uploads", err, len(up.got))
	}
	fi, err := os.Stat(filepath.Join(cfg.Dir, "rekor.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rekor key: %v %v", fi, err)
	}
}
