package audit

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

func seqs(rs []*Record) []uint64 {
	var out []uint64
	for _, r := range rs {
		out = append(out, r.Seq)
	}
	return out
}

func TestQuery(t *testing.T) {
	cfg := testConfig(t)
	cfg.CheckpointEvery = 1000
	l := mustOpen(t, cfg)
	defer l.Close()
	// Each decision is followed by its commit's checkpoint record.
	appendDecisions(t, l, 5, "a") // 0, 2, … 8
	mid := time.Now()
	appendDecisions(t, l, 5, "b") // 10, 12, … 18
	ctx := context.Background()
	tier := 0
	tests := []struct {
		name string
		q    Query
		want []uint64
	}{
		{"all", Query{}, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
		{"session", Query{SessionID: "b"}, []uint64{10, 12, 14, 16, 18}},
		{"session newest first", Query{SessionID: "a", Newest: true, Limit: 2}, []uint64{8, 6}},
		{"since", Query{Since: mid}, []uint64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
		{"until", Query{Until: mid}, []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"seq range", Query{FromSeq: 2, ToSeq: 4}, []uint64{2, 3}},
		{"tool and tier", Query{Tool: "Bash", Tier: &tier, Limit: 3}, []uint64{0, 2, 4}},
		{"rule", Query{Rule: "cel:nope"}, nil},
		{"match", Query{Match: func(r *Record) (bool, error) { return r.Seq%3 == 0, nil }}, []uint64{0, 3, 6, 9, 12, 15, 18}},
		{"type", Query{Types: []Type{TypeServiceStart}}, nil},
		{"checkpoints", Query{Types: []Type{TypeCheckpoint}, Limit: 2}, []uint64{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := l.Query(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, seqs(res.Records)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	// Paging newest first walks every record once.
	var got []uint64
	q := Query{Newest: true, Limit: 3}
	for {
		res, err := l.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, seqs(res.Records)...)
		if !res.More {
			break
		}
		q.ToSeq = res.Next
	}
	if diff := cmp.Diff([]uint64{19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, got); diff != "" {
		t.Fatalf("paging (-want +got):\n%s", diff)
	}
}

func TestProofs(t *testing.T) {
	l := mustOpen(t, testConfig(t))
	defer l.Close()
	appendDecisions(t, l, 37, "")
	size := l.Size()
	root, err := l.Root(size)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{0, 1, 16, size - 1} {
		leaf, p, err := l.InclusionProof(seq, size)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := l.Get(seq)
		if hex.EncodeToString(leaf) != r.Hash {
			t.Fatalf("leaf hash %x is not record %d's hash %s", leaf, seq, r.Hash)
		}
		if err := VerifyInclusion(seq, size, leaf, p, root); err != nil {
			t.Fatalf("inclusion of %d: %v", seq, err)
		}
	}
	for _, old := range []uint64{1, 10, 32, size} {
		p, err := l.ConsistencyProof(old, size)
		if err != nil {
			t.Fatal(err)
		}
		oldRoot, _ := l.Root(old)
		if err := VerifyConsistency(old, size, p, oldRoot, root); err != nil {
			t.Fatalf("consistency %d→%d: %v", old, size, err)
		}
	}
	signed, c, err := l.SignedCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCheckpoint(signed, l.PublicKey()); err != nil {
		t.Fatal(err)
	}
	cr, _ := l.Root(c.Size)
	if !cmp.Equal(cr, c.Root) {
		t.Fatal("checkpoint root is not the tree root at its size")
	}
}

func TestWait(t *testing.T) {
	l := mustOpen(t, testConfig(t))
	defer l.Close()
	done := make(chan error, 1)
	go func() { done <- l.Wait(context.Background(), 0) }()
	appendDecisions(t, l, 1, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
