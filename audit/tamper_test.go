package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sealedLog writes a closed log of 30 decisions (checkpoints every 10) in one segment and
// returns its directory, public key and segment lines.
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
			lines[5] = bytes.Replace(lines[5], []byte(`"ALLOW"`), []byte(`"BLOCK"`), 1)
			return lines
		},
		wantSeq: 5,
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
		wantSeq: 32,
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
		wantSeq: 32,
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
		wantSeq: 10, // the first checkpoint over the altered record
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, pub, lines := sealedLog(t)
			if len(lines) != 33 {
				t.Fatalf("fixture has %d lines, want 30 decisions and 3 checkpoints", len(lines))
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
