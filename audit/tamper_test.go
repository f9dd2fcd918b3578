package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sealedLog writes a closed log of 30 decisions, appended one at a time, in one segment: each
// is followed by the checkpoint record of its commit (lines 2k and 2k+1). It returns its
// directory, public key and segment lines.
func sealedLog(t *testing.T) (dir, pub string, lines [][]byte) {
	t.Helper()
	cfg := testConfig(t)
	l := mustOpen(t, cfg)
	appendDecisions(t, l, 30, "s")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(cfg.Dir, segmentName(0)))
	if err != nil {
		t.Fatal(err)
	}
	lines = bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last newline
	return cfg.Dir, pubkey(t, cfg), lines
}

func writeLines(t *testing.T, dir string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, segmentName(0)), bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(t *testing.T, dir string, lines [][]byte) [][]byte
		wantSeq uint64
	}{{
		name: "modified record",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			lines[4] = bytes.Replace(lines[4], []byte(`"ALLOW"`), []byte(`"BLOCK"`), 1)
			return lines
		},
		wantSeq: 4,
	}, {
		name: "deleted record",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			return append(lines[:7:7], lines[8:]...)
		},
		wantSeq: 7,
	}, {
		name: "inserted record (a copy)",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			out := append(lines[:4:4], lines[3])
			return append(out, lines[4:]...)
		},
		wantSeq: 4,
	}, {
		name: "reordered records",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			lines[12], lines[13] = lines[13], lines[12]
			return lines
		},
		wantSeq: 12,
	}, {
		name: "truncated after the last checkpoint record",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			return lines[:len(lines)-1] // drop the final checkpoint record
		},
		wantSeq: 59,
	}, {
		name: "truncated well before the end",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			return lines[:20]
		},
		wantSeq: 20,
	}, {
		name: "truncated and the checkpoint file removed",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			if err := os.Remove(filepath.Join(dir, CheckpointFile)); err != nil {
				t.Fatal(err)
			}
			return lines[:25]
		},
		wantSeq: 25,
	}, {
		name: "torn last line",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			n := len(lines) - 1
			lines[n] = lines[n][:len(lines[n])/2]
			return lines
		},
		wantSeq: 59,
	}, {
		name: "record rewritten with a recomputed chain",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			// Re-hash every record from seq 2 on, as an attacker without the key can.
			prev := ""
			for i, ln := range lines {
				r, err := DecodeRecord(bytes.TrimSuffix(ln, []byte("\n")))
				if err != nil {
					t.Fatal(err)
				}
				if i == 2 {
					r.Payload = bytes.Replace(r.Payload, []byte(`"ALLOW"`), []byte(`"BLOCK"`), 1)
				}
				if i >= 2 {
					r.Prev = prev
				}
				body := appendBody(nil, r.Seq, r.Time, r.Type, r.Payload, r.Prev)
				h := LeafHash(body)
				lines[i] = appendLine(nil, body, h)
				prev = HashHex(h[:])
			}
			return lines
		},
		wantSeq: 3, // the first checkpoint over the altered record
	}, {
		name: "record appended after the last checkpoint (without the key)",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			return append(lines, forgeNext(t, lines, `{"decision":"ALLOW","tool":"Bash"}`))
		},
		wantSeq: 60,
	}, {
		name: "record appended with a checkpoint signed by another key",
		mutate: func(t *testing.T, dir string, lines [][]byte) [][]byte {
			lines = append(lines, forgeNext(t, lines, `{"decision":"ALLOW","tool":"Bash"}`))
			return append(lines, forgeCheckpoint(t, lines))
		},
		wantSeq: 61,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, pub, lines := sealedLog(t)
			if len(lines) != 60 {
				t.Fatalf("fixture has %d lines, want 30 decisions and 30 checkpoints", len(lines))
			}
			if _, err := Verify(dir, pub); err != nil {
				t.Fatalf("intact log: %v", err)
			}
			writeLines(t, dir, tc.mutate(t, dir, lines))
			_, err := Verify(dir, pub)
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a VerifyError", err)
			}
			if ve.Seq != tc.wantSeq {
				t.Fatalf("Verify named seq %d (%v), want %d", ve.Seq, ve, tc.wantSeq)
			}
		})
	}
}

// forgeNext returns a well-formed record chained after the last of lines, as anyone who can
// write the log can make without the key.
func forgeNext(t *testing.T, lines [][]byte, payload string) []byte {
	t.Helper()
	last, err := DecodeRecord(bytes.TrimSuffix(lines[len(lines)-1], []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	body := appendBody(nil, last.Seq+1, last.Time, TypeDecision, []byte(payload), last.Hash)
	return appendLine(nil, body, LeafHash(body))
}

// forgeCheckpoint returns a checkpoint record after lines, over their tree, signed by a fresh key.
func forgeCheckpoint(t *testing.T, lines [][]byte) []byte {
	t.Helper()
	var tr tree
	var last *Record
	for _, ln := range lines {
		r, err := DecodeRecord(bytes.TrimSuffix(ln, []byte("\n")))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := hex.DecodeString(r.Hash)
		tr.append(h)
		last = r
	}
	sig, err := loadOrCreateKey(filepath.Join(t.TempDir(), "other.key"), "shield-audit")
	if err != nil {
		t.Fatal(err)
	}
	size := last.Seq + 1
	root, _ := tr.root(size)
	note, err := sig.sign(Checkpoint{Origin: "shield-audit", Size: size, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := canonicalPayload(checkpointPayload{Size: size, Root: base64.StdEncoding.EncodeToString(root), Note: string(note)})
	body := appendBody(nil, size, last.Time, TypeCheckpoint, p, last.Hash)
	return appendLine(nil, body, LeafHash(body))
}
