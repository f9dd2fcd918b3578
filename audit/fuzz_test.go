package audit

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// FuzzDecodeRecord: the decoder never panics, and whatever it accepts re-encodes to the exact
// input line (one canonical form per record).
func FuzzDecodeRecord(f *testing.F) {
	body := appendBody(nil, 7, mustTime("2026-01-02T03:04:05.000000006Z"), TypeDecision, []byte(`{"a":"b","n":1}`), ZeroHash)
	h := LeafHash(body)
	line := bytes.TrimSuffix(appendLine(nil, body, h), []byte("\n"))
	f.Add(line)
	f.Add([]byte(`{"hash":"` + ZeroHash + `","payload":{}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"hash":"` + ZeroHash + `",` + `"payload":{"x":1e400},"prev":"","seq":0,"time":"","type":"x"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := DecodeRecord(in)
		if err != nil {
			return
		}
		out, _ := r.MarshalJSON()
		if !bytes.Equal(out, in) {
			t.Fatalf("accepted %q but it re-encodes as %q", in, out)
		}
	})
}

// FuzzVerify: Verify never panics on a mutated segment, and never calls a log intact unless
// its bytes are exactly the ones written.
func FuzzVerify(f *testing.F) {
	// A fixed log (testdata/log, written by TestWriteFuzzFixture with -update), so that every
	// fuzz worker sees the same original.
	dir := filepath.Join("testdata", "log")
	orig, err := os.ReadFile(filepath.Join(dir, segmentName(0)))
	if err != nil {
		f.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, "signing.key.pub"))
	if err != nil {
		f.Fatal(err)
	}
	ckpt, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(orig)
	f.Add(orig[:len(orig)/2])
	f.Add(bytes.Replace(orig, []byte("ALLOW"), []byte("BLOCK"), 1))
	f.Add(append(append([]byte(nil), orig...), orig...))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{segmentName(0): {Data: data}, CheckpointFile: {Data: ckpt}}
		_, err := VerifyFS(fsys, string(bytes.TrimSpace(pub)))
		if err == nil && !bytes.Equal(data, orig) {
			t.Fatalf("Verify accepted a modified log:\n%q", data)
		}
		if err != nil && bytes.Equal(data, orig) {
			t.Fatalf("Verify rejected the original log: %v", err)
		}
		var ve *VerifyError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("Verify returned %v, want a VerifyError", err)
		}
	})
}

var update = flag.Bool("update", false, "rewrite testdata/log")

// TestWriteFuzzFixture rewrites testdata/log when run with -update, and otherwise checks that
// the committed fixture verifies.
func TestWriteFuzzFixture(t *testing.T) {
	dir := filepath.Join("testdata", "log")
	if *update {
		os.RemoveAll(dir)
		l, err := Open(Config{Dir: dir, CheckpointEvery: 4})
		if err != nil {
			t.Fatal(err)
		}
		appendDecisions(t, l, 9, "s")
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "signing.key")) // only the public key is kept
	}
	pub, err := os.ReadFile(filepath.Join(dir, "signing.key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(dir, string(bytes.TrimSpace(pub))); err != nil {
		t.Fatal(err)
	}
}
