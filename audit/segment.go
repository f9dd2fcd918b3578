package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// segmentFile is what the writer needs of the active segment file.
type segmentFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

const (
	segmentPrefix = "audit-"
	segmentExt    = ".jsonl"
	indexExt      = ".idx"
	// CheckpointFile is the name, in the log directory, of the latest signed checkpoint.
	CheckpointFile = "checkpoint"
	quarantineDir  = "quarantine"
)

func segmentName(first uint64) string {
	return fmt.Sprintf("%s%020d%s", segmentPrefix, first, segmentExt)
}

// segmentInfo is a segment file found in a directory.
type segmentInfo struct {
	first uint64
	name  string
}

// listSegments returns the segment files of dir in sequence order.
func listSegments(dir string) ([]segmentInfo, error) {
	return listSegmentsFS(os.DirFS(dir), ".")
}

func listSegmentsFS(fsys fs.FS, dir string) ([]segmentInfo, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read audit dir: %w", err)
	}
	var out []segmentInfo
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, segmentExt) {
			continue
		}
		digits := strings.TrimSuffix(strings.TrimPrefix(n, segmentPrefix), segmentExt)
		first, err := strconv.ParseUint(digits, 10, 64)
		if !strings.HasPrefix(n, segmentPrefix) || len(digits) != 20 || err != nil {
			return nil, fmt.Errorf("unexpected log file %s in %s (segments are named %s)", n, dir, segmentName(0))
		}
		out = append(out, segmentInfo{first: first, name: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first < out[j].first })
	return out, nil
}

// segment is one segment's in-memory index. offs and times only grow; readers may keep slices
// of them taken under Log.mu.
type segment struct {
	first  uint64
	name   string
	sealed bool
	offs   []int64 // byte offset of each record
	times  []int64 // unix nanoseconds of each record
	end    int64   // committed size in bytes
	rf     *os.File
}

func (s *segment) lastSeq() uint64 { return s.first + uint64(len(s.offs)) - 1 }

// segmentIndex is the on-disk index written when a segment is sealed. It is a cache: it is
// checked against the segment and rebuilt when it does not match; Verify never reads it.
type segmentIndex struct {
	Version  int
	First    uint64
	Size     int64
	Offs     []int64
	Times    []int64
	Hashes   []byte // 32 bytes per record
	Sessions map[string][]uint64
	LastCkpt *ckptState
}

// ckptRec is a checkpoint record found by scanSegment: its index in the segment, the record,
// and its state (nil when its payload does not decode).
type ckptRec struct {
	idx   int
	rec   *Record
	state *ckptState
}

// trim keeps the first n records of a scanned segment (the covered prefix) and drops the rest
// from its index. The slices are copied so views taken earlier stay intact.
func (sc *scanned) trim(n int) {
	first := sc.seg.first
	if n < len(sc.seg.offs) {
		sc.seg.end = sc.seg.offs[n]
	}
	sc.seg.offs = slices.Clone(sc.seg.offs[:n])
	sc.seg.times = slices.Clone(sc.seg.times[:n])
	sc.hashes = sc.hashes[:n]
	for s, seqs := range sc.sessions {
		k := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= first+uint64(n) })
		if k == 0 {
			delete(sc.sessions, s)
		} else {
			sc.sessions[s] = seqs[:k]
		}
	}
	sc.lastCkpt = nil
	for i := len(sc.ckpts) - 1; i >= 0; i-- {
		if sc.ckpts[i].idx < n {
			sc.lastCkpt = sc.ckpts[i].state
			sc.ckpts = sc.ckpts[:i+1]
			break
		}
	}
	if sc.lastCkpt == nil {
		sc.ckpts = nil
	}
}

// ckptState is the last checkpoint record seen.
type ckptState struct {
	Seq  uint64
	Time int64
	Note []byte
}

// scanned is what loading a segment yields.
type scanned struct {
	seg      *segment
	hashes   [][32]byte
	sessions map[string][]uint64
	lastCkpt *ckptState
	// ckpts are the checkpoint records of a scanned segment, in order (empty when loaded from
	// an index).
	ckpts []ckptRec
	// tornAt is the offset of the first byte that is not a complete valid record (-1: none).
	tornAt  int64
	tornErr error
}

// scanSegment reads and decodes every record of a segment file, checking that sequence numbers
// run from first and that each record links to prev. A problem on the last line (or a tail
// without a newline) is reported in tornAt; a problem before it is an error.
func scanSegment(path string, first uint64, prev string) (*scanned, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read segment: %w", err)
	}
	out := &scanned{seg: &segment{first: first, name: filepath.Base(path)}, sessions: map[string][]uint64{}, tornAt: -1}
	off := 0
	seq := first
	for off < len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			out.tornAt, out.tornErr = int64(off), errors.New("last line has no newline (torn write)")
			break
		}
		line := data[off : off+nl]
		last := off+nl+1 == len(data)
		rec, err := DecodeRecord(line)
		if err == nil && rec.Seq != seq {
			err = fmt.Errorf("sequence number %d where %d was expected", rec.Seq, seq)
		}
		if err == nil && rec.Prev != prev {
			err = errors.New("prev hash does not match the previous record")
		}
		if err != nil {
			if last {
				out.tornAt, out.tornErr = int64(off), err
				break
			}
			return nil, fmt.Errorf("%s: record at offset %d (seq %d): %w (run shield audit verify)", filepath.Base(path), off, seq, err)
		}
		out.seg.offs = append(out.seg.offs, int64(off))
		out.seg.times = append(out.seg.times, rec.Time.UnixNano())
		var h [32]byte
		hex.Decode(h[:], []byte(rec.Hash))
		out.hashes = append(out.hashes, h)
		if s := payloadSession(rec.Payload); s != "" {
			out.sessions[s] = append(out.sessions[s], seq)
		}
		if rec.Type == TypeCheckpoint {
			var p checkpointPayload
			if err := json.Unmarshal(rec.Payload, &p); err == nil {
				out.lastCkpt = &ckptState{Seq: seq, Time: rec.Time.UnixNano(), Note: []byte(p.Note)}
			}
			out.ckpts = append(out.ckpts, ckptRec{idx: len(out.hashes) - 1, rec: rec, state: out.lastCkpt})
		}
		prev = rec.Hash
		seq++
		off += nl + 1
	}
	out.seg.end = int64(off)
	return out, nil
}

func payloadSession(p json.RawMessage) string {
	if !bytes.Contains(p, []byte(`"session_id"`)) {
		return ""
	}
	var s struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(p, &s) != nil {
		return ""
	}
	return s.SessionID
}

func indexPath(dir string, first uint64) string {
	return filepath.Join(dir, strings.TrimSuffix(segmentName(first), segmentExt)+indexExt)
}

func writeIndex(dir string, sc *scanned) error {
	ix := segmentIndex{Version: 1, First: sc.seg.first, Size: sc.seg.end, Offs: sc.seg.offs, Times: sc.seg.times,
		Sessions: sc.sessions, LastCkpt: sc.lastCkpt}
	ix.Hashes = make([]byte, 0, 32*len(sc.hashes))
	for _, h := range sc.hashes {
		ix.Hashes = append(ix.Hashes, h[:]...)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&ix); err != nil {
		return fmt.Errorf("encode index: %w", err)
	}
	return writeFileSync(indexPath(dir, sc.seg.first), buf.Bytes(), 0o400, false)
}

// readIndex loads a sealed segment's index and checks it against the segment: size, record
// count and the hash of the last record. Any mismatch returns an error (the caller rescans).
func readIndex(dir string, first uint64, prev string) (*scanned, error) {
	data, err := os.ReadFile(indexPath(dir, first))
	if err != nil {
		return nil, err
	}
	var ix segmentIndex
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&ix); err != nil {
		return nil, fmt.Errorf("decode index: %w", err)
	}
	n := len(ix.Offs)
	if ix.Version != 1 || ix.First != first || n == 0 || len(ix.Times) != n || len(ix.Hashes) != 32*n {
		return nil, errors.New("index does not match its segment")
	}
	segPath := filepath.Join(dir, segmentName(first))
	f, err := os.Open(segPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != ix.Size || ix.Offs[n-1] >= ix.Size {
		return nil, errors.New("index size does not match its segment")
	}
	// The first record must link to prev and the last must be the one indexed.
	for _, i := range []int{0, n - 1} {
		end := ix.Size
		if i+1 < n {
			end = ix.Offs[i+1]
		}
		line := make([]byte, end-ix.Offs[i])
		if _, err := f.ReadAt(line, ix.Offs[i]); err != nil {
			return nil, err
		}
		rec, err := DecodeRecord(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			return nil, err
		}
		if rec.Seq != first+uint64(i) || rec.Hash != hex.EncodeToString(ix.Hashes[32*i:32*i+32]) || (i == 0 && rec.Prev != prev) {
			return nil, errors.New("index does not match its segment's records")
		}
	}
	sc := &scanned{seg: &segment{first: first, name: segmentName(first), offs: ix.Offs, times: ix.Times, end: ix.Size},
		sessions: ix.Sessions, lastCkpt: ix.LastCkpt, tornAt: -1}
	if sc.sessions == nil {
		sc.sessions = map[string][]uint64{}
	}
	sc.hashes = make([][32]byte, n)
	for i := range sc.hashes {
		copy(sc.hashes[i][:], ix.Hashes[32*i:])
	}
	return sc, nil
}

// Recovery describes a torn tail moved aside at open.
type Recovery struct {
	Segment    string `json:"segment"`         // segment file name
	Offset     int64  `json:"offset"`          // where the segment was cut
	Bytes      int64  `json:"bytes"`           // how many bytes were moved
	Quarantine string `json:"quarantine_file"` // file now holding them
	SHA256     string `json:"sha256"`          // hex digest of the moved bytes
	// Records is the number of complete records moved aside: records no signed checkpoint
	// covered (a crash before their checkpoint was durable, or records appended without the
	// key). They were never acknowledged, and they are not adopted. FirstSeq is the first.
	Records  uint64 `json:"uncovered_records,omitempty"`
	FirstSeq uint64 `json:"first_seq,omitempty"`
	Reason   string `json:"reason"`
}

// quarantine moves segment bytes from off to the end into a quarantine file, then truncates
// the segment at off. Both are fsynced.
func quarantine(dir, name string, off int64, reason error) (*Recovery, error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tail := data[off:]
	qdir := filepath.Join(dir, quarantineDir)
	if err := os.MkdirAll(qdir, 0o700); err != nil {
		return nil, err
	}
	qname := filepath.Join(qdir, fmt.Sprintf("%s.%d.%d.bad", name, off, time.Now().UnixNano()))
	if err := writeFileSync(qname, tail, 0o400, true); err != nil {
		return nil, fmt.Errorf("write quarantine file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(off); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(tail)
	return &Recovery{Segment: name, Offset: off, Bytes: int64(len(tail)), Quarantine: qname,
		SHA256: hex.EncodeToString(sum[:]), Reason: reason.Error()}, nil
}
