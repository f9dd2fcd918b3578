package audit

import (
	"crypto"
	_ "crypto/sha256" // the tree hash
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

var hasher = rfc6962.New(crypto.SHA256)

// tree holds every complete node of the RFC 6962 Merkle tree over the leaf hashes appended so
// far: level 0 are the leaves, level k the roots of perfect subtrees of 2^k leaves. It answers
// roots and proofs for any size up to its own. Not safe for concurrent use.
type tree struct {
	levels [][]byte // levels[k] holds 32-byte node hashes, concatenated
}

func (t *tree) size() uint64 {
	if len(t.levels) == 0 {
		return 0
	}
	return uint64(len(t.levels[0]) / 32)
}

func (t *tree) node(level uint, index uint64) []byte {
	return t.levels[level][index*32 : index*32+32]
}

func (t *tree) append(leaf []byte) {
	h := leaf
	for level := 0; ; level++ {
		if level == len(t.levels) {
			t.levels = append(t.levels, nil)
		}
		t.levels[level] = append(t.levels[level], h...)
		n := len(t.levels[level]) / 32
		if n%2 == 1 {
			return
		}
		l := t.levels[level][(n-2)*32 : (n-1)*32]
		r := t.levels[level][(n-1)*32 : n*32]
		h = hasher.HashChildren(l, r)
	}
}

// truncate drops every leaf from index size on (and the nodes above them).
func (t *tree) truncate(size uint64) {
	for k := range t.levels {
		n := size >> uint(k)
		if uint64(len(t.levels[k])/32) > n {
			t.levels[k] = t.levels[k][:n*32]
		}
	}
}

// root returns the root hash of the tree of the first size leaves.
func (t *tree) root(size uint64) ([]byte, error) {
	if size > t.size() {
		return nil, fmt.Errorf("tree size %d beyond the log's %d", size, t.size())
	}
	if size == 0 {
		return hasher.EmptyRoot(), nil
	}
	ids := compact.RangeNodes(0, size, nil)
	hashes := make([][]byte, len(ids))
	for i, id := range ids {
		hashes[i] = t.node(id.Level, id.Index)
	}
	rf := compact.RangeFactory{Hash: hasher.HashChildren}
	r, err := rf.NewRange(0, size, hashes)
	if err != nil {
		return nil, fmt.Errorf("compact range: %w", err)
	}
	return r.GetRootHash(nil)
}

func (t *tree) hashes(n proof.Nodes) ([][]byte, error) {
	hs := make([][]byte, len(n.IDs))
	for i, id := range n.IDs {
		if uint64(len(t.levels)) <= uint64(id.Level) || uint64(len(t.levels[id.Level])/32) <= id.Index {
			return nil, fmt.Errorf("node %d/%d not in tree", id.Level, id.Index)
		}
		hs[i] = append([]byte(nil), t.node(id.Level, id.Index)...)
	}
	return n.Rehash(hs, hasher.HashChildren)
}

// inclusion returns the proof that leaf index is in the tree of size leaves.
func (t *tree) inclusion(index, size uint64) ([][]byte, error) {
	if size > t.size() {
		return nil, fmt.Errorf("tree size %d beyond the log's %d", size, t.size())
	}
	n, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, err
	}
	return t.hashes(n)
}

// consistency returns the proof that the tree of size1 leaves is a prefix of that of size2.
func (t *tree) consistency(size1, size2 uint64) ([][]byte, error) {
	if size2 > t.size() {
		return nil, fmt.Errorf("tree size %d beyond the log's %d", size2, t.size())
	}
	n, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, err
	}
	return t.hashes(n)
}

// VerifyInclusion checks an inclusion proof of a record hash (hex leaf hash) against a root.
func VerifyInclusion(index, size uint64, leafHash []byte, p [][]byte, root []byte) error {
	return proof.VerifyInclusion(hasher, index, size, leafHash, p, root)
}

// VerifyConsistency checks a consistency proof between two roots.
func VerifyConsistency(size1, size2 uint64, p [][]byte, root1, root2 []byte) error {
	return proof.VerifyConsistency(hasher, size1, size2, p, root1, root2)
}
