package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"
)

// Report summarises a verified log.
type Report struct {
	Segments    int
	Records     uint64 // records in the log
	Checkpoints int    // checkpoint records verified
	// LastCheckpoint is the newest verified checkpoint (from the checkpoint file or the log).
	LastCheckpoint Checkpoint
	// Uncovered is the number of records after the newest checkpoint: no signature vouches for
	// them, and Verify then fails with a VerifyError naming the first of them.
	Uncovered uint64
	// Root is the Merkle root over all Records.
	Root []byte
	// Warnings are facts worth reporting that are not tampering.
	Warnings []string
	// Notes are the verified checkpoint notes in the log, by tree size.
	Notes map[uint64][]byte
}

// Verify checks the log in dir offline: every record's canonical form and hash, sequence
// numbers and chain links across segments, every checkpoint's signature (by one of pubkeys,
// note verifier keys "name+hash+key") and Merkle root, and that the log holds everything the
// latest checkpoint file covers. It returns a *VerifyError naming the first bad sequence number
// when the log is not intact.
func Verify(dir string, pubkeys ...string) (*Report, error) {
	return VerifyFS(os.DirFS(dir), pubkeys...)
}

// VerifyFS is Verify over a file system holding the log files at its root.
func VerifyFS(fsys fs.FS, pubkeys ...string) (*Report, error) {
	if len(pubkeys) == 0 {
		return nil, errors.New("verify: no public key given")
	}
	infos, err := listSegmentsFS(fsys, ".")
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, fmt.Errorf("verify: no %s files", segmentExt)
	}
	rep := &Report{Segments: len(infos)}
	var (
		tr       tree
		next     uint64
		prev     = ZeroHash
		ckptSeqs = map[uint64][]byte{} // checkpoint record seq → note
		lastCkpt *Checkpoint
		lastSeq  uint64
	)
	for _, in := range infos {
		bad := func(seq uint64, format string, args ...any) error {
			return &VerifyError{Seq: seq, File: in.name, Reason: fmt.Sprintf(format, args...)}
		}
		if in.first != next {
			if in.first > next {
				return nil, bad(next, "segment starts at seq %d: records %d..%d are missing", in.first, next, in.first-1)
			}
			return nil, bad(in.first, "segment starts at seq %d, which an earlier segment already holds", in.first)
		}
		data, err := fs.ReadFile(fsys, in.name)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		lines, torn := splitLines(data)
		recs, errs := decodeAll(data, lines)
		for i, ln := range lines {
			off := ln[0]
			if errs[i] != nil {
				return nil, bad(next, "record at offset %d is altered or corrupt: %v", off, errs[i])
			}
			rec := recs[i]
			switch {
			case rec.Seq > next:
				return nil, bad(next, "record missing: found seq %d where %d was expected (deleted records)", rec.Seq, next)
			case rec.Seq < next:
				return nil, bad(next, "found seq %d where %d was expected (inserted, duplicated or reordered record)", rec.Seq, next)
			case rec.Prev != prev:
				return nil, bad(next, "prev hash does not match record %d (inserted, replaced or reordered record)", int64(next)-1)
			}
			h, _ := hex.DecodeString(rec.Hash)
			tr.append(h)
			if rec.Type == TypeCheckpoint {
				c, note, err := verifyCheckpointRecord(rec, &tr, pubkeys)
				if err != nil {
					return nil, bad(next, "%v", err)
				}
				ckptSeqs[rec.Seq] = note
				lastCkpt, lastSeq = &c, rec.Seq
				rep.Checkpoints++
			}
			prev = rec.Hash
			next++
		}
		if torn >= 0 {
			return nil, bad(next, "incomplete last line at offset %d (torn write; opening the log quarantines it)", torn)
		}
	}
	rep.Records = next
	rep.Notes = make(map[uint64][]byte, len(ckptSeqs))
	for seq, n := range ckptSeqs {
		rep.Notes[seq] = n
	}
	rep.Root, _ = tr.root(next)

	// The checkpoint file is the newest checkpoint the writer completed; the log must still hold
	// its checkpoint record (the log may not end before it).
	signed, err := fs.ReadFile(fsys, CheckpointFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rep.Checkpoints > 0 {
			return nil, &VerifyError{Seq: next, File: CheckpointFile, Reason: "checkpoint file is missing while the log holds checkpoints; truncation cannot be ruled out"}
		}
		rep.Warnings = append(rep.Warnings, "no checkpoint yet: nothing is signed, truncation cannot be detected")
	case err != nil:
		return nil, fmt.Errorf("verify: %w", err)
	default:
		c, err := OpenCheckpoint(signed, pubkeys...)
		if err != nil {
			return nil, &VerifyError{Seq: next, File: CheckpointFile, Reason: err.Error()}
		}
		if c.Size >= next {
			return nil, &VerifyError{Seq: next, File: CheckpointFile, Reason: fmt.Sprintf(
				"log truncated: the signed checkpoint covers %d records and is recorded at seq %d, but the log ends before seq %d", c.Size, c.Size, next)}
		}
		note, ok := ckptSeqs[c.Size]
		if !ok || !bytes.Equal(note, signed) {
			return nil, &VerifyError{Seq: c.Size, File: CheckpointFile, Reason: "the record at this seq is not the checkpoint in the checkpoint file"}
		}
		if lastCkpt == nil || c.Size > lastCkpt.Size {
			lastCkpt, lastSeq = &c, c.Size
		}
	}
	first := uint64(0)
	if lastCkpt != nil {
		rep.LastCheckpoint = *lastCkpt
		first = lastSeq + 1
	}
	// Every acknowledged record is written with the checkpoint that covers it: records after the
	// last checkpoint were never acknowledged (a crash; opening the log quarantines them) or were
	// appended by someone without the key. Either way nothing vouches for them.
	if rep.Uncovered = next - first; rep.Uncovered > 0 {
		return rep, &VerifyError{Seq: first, File: infos[len(infos)-1].name, Reason: fmt.Sprintf(
			"%d records (seq %d..%d) after the last signed checkpoint: no signature covers them (appended without the key, or an unacknowledged tail left by a crash; opening the log moves them to quarantine)",
			rep.Uncovered, first, next-1)}
	}
	return rep, nil
}

// verifyCheckpointRecord checks a checkpoint record against the tree of the records before it.
// tr already holds the checkpoint record itself.
func verifyCheckpointRecord(rec *Record, tr *tree, pubkeys []string) (Checkpoint, []byte, error) {
	var p checkpointPayload
	dec := json.NewDecoder(bytes.NewReader(rec.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Checkpoint{}, nil, fmt.Errorf("checkpoint payload: %w", err)
	}
	c, err := OpenCheckpoint([]byte(p.Note), pubkeys...)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	if c.Size != rec.Seq || p.Size != c.Size || p.Root != base64.StdEncoding.EncodeToString(c.Root) {
		return Checkpoint{}, nil, fmt.Errorf("checkpoint covers %d records but is record %d (or its payload disagrees with its note)", c.Size, rec.Seq)
	}
	root, err := tr.root(c.Size)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	if !bytes.Equal(root, c.Root) {
		return Checkpoint{}, nil, fmt.Errorf("Merkle root of records 0..%d does not match the signed checkpoint (records before this one were altered)", int64(c.Size)-1)
	}
	return c, []byte(p.Note), nil
}

// splitLines returns the [start, end) offsets of the newline-terminated lines of data (end
// excludes the newline) and the offset of an unterminated last line (-1: none).
func splitLines(data []byte) ([][2]int, int) {
	var out [][2]int
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			return out, off
		}
		out = append(out, [2]int{off, off + nl})
		off += nl + 1
	}
	return out, -1
}

// decodeAll decodes lines on every CPU; the checks that depend on order stay with the caller.
func decodeAll(data []byte, lines [][2]int) ([]*Record, []error) {
	recs := make([]*Record, len(lines))
	errs := make([]error, len(lines))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(lines)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(lines); i += workers {
				recs[i], errs[i] = DecodeRecord(data[lines[i][0]:lines[i][1]])
			}
		}()
	}
	wg.Wait()
	return recs, errs
}
