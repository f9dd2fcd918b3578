package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Query selects records. Zero fields do not filter.
type Query struct {
	Since time.Time // records at or after
	Until time.Time // records before
	// FromSeq and ToSeq bound sequence numbers: FromSeq <= seq < ToSeq (ToSeq 0: no bound). They
	// carry paging: continue with Result.Next.
	FromSeq, ToSeq uint64
	Types          []Type
	// Decision-payload fields.
	SessionID, AgentID, Tool, ActionClass, Decision, Rule string
	Tier                                                  *int
	// Match, if set, is a further filter (e.g. a compiled CEL expression); an error ends the query.
	Match func(*Record) (bool, error)
	// Newest returns the newest records first.
	Newest bool
	// Limit bounds the records returned (default 100, at most 10 000).
	Limit int
}

// Result is one page of a query.
type Result struct {
	Records []*Record
	// More is true when records may remain; Next is then the FromSeq (oldest first) or ToSeq
	// (newest first) of the next page.
	More bool
	Next uint64
}

// maxScan bounds the records one Query call reads; a query that scans more returns a page with
// More set.
const maxScan = 250_000

// view is a consistent snapshot of the index taken under l.mu.
type view struct {
	segs []segment
	size uint64
}

func (l *Log) view() view {
	l.mu.RLock()
	defer l.mu.RUnlock()
	v := view{segs: make([]segment, len(l.segs)), size: l.size}
	for i, s := range l.segs {
		v.segs[i] = *s
	}
	return v
}

// locate returns the segment index holding seq.
func (v view) locate(seq uint64) int {
	return sort.Search(len(v.segs), func(i int) bool { return v.segs[i].first+uint64(len(v.segs[i].offs)) > seq })
}

// read reads and decodes record seq (without re-verifying its hash: that is Verify's job).
func (v view) read(seq uint64) (*Record, error) {
	if seq >= v.size {
		return nil, fmt.Errorf("seq %d: %w", seq, ErrNotFound)
	}
	i := v.locate(seq)
	if i == len(v.segs) {
		return nil, fmt.Errorf("seq %d: %w", seq, ErrNotFound)
	}
	s := &v.segs[i]
	k := seq - s.first
	end := s.end
	if int(k)+1 < len(s.offs) {
		end = s.offs[k+1]
	}
	buf := make([]byte, end-s.offs[k])
	if _, err := s.rf.ReadAt(buf, s.offs[k]); err != nil {
		return nil, fmt.Errorf("read record %d from %s: %w", seq, s.name, err)
	}
	r, err := parseRecord(bytes.TrimSuffix(buf, []byte("\n")))
	if err != nil {
		return nil, fmt.Errorf("record %d in %s: %w", seq, s.name, err)
	}
	if r.Seq != seq {
		return nil, fmt.Errorf("record at seq %d in %s says seq %d (run shield audit verify)", seq, s.name, r.Seq)
	}
	return r, nil
}

// parseRecord decodes a record line without checking its canonical form or hash.
func parseRecord(line []byte) (*Record, error) {
	var w wireRecord
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, err
	}
	if w.Hash == nil || w.Payload == nil || w.Prev == nil || w.Seq == nil || w.Time == nil || w.Type == nil {
		return nil, errors.New("record lacks a member")
	}
	t, err := time.Parse(TimeFormat, *w.Time)
	if err != nil {
		return nil, err
	}
	return &Record{Seq: *w.Seq, Time: t, Type: Type(*w.Type), Payload: *w.Payload, Prev: *w.Prev, Hash: *w.Hash}, nil
}

// timeBound returns the first seq whose time is at or after t.
func (v view) timeBound(t time.Time) uint64 {
	ns := t.UnixNano()
	i := sort.Search(len(v.segs), func(i int) bool {
		s := &v.segs[i]
		return len(s.times) > 0 && s.times[len(s.times)-1] >= ns
	})
	if i == len(v.segs) {
		return v.size
	}
	s := &v.segs[i]
	k := sort.Search(len(s.times), func(k int) bool { return s.times[k] >= ns })
	return s.first + uint64(k)
}

// Get returns record seq.
func (l *Log) Get(seq uint64) (*Record, error) {
	return l.view().read(seq)
}

// Query returns the records matching q, one page at a time.
func (l *Log) Query(ctx context.Context, q Query) (*Result, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Limit > 10_000 {
		return nil, fmt.Errorf("query limit %d is over 10000", q.Limit)
	}
	v := l.view()
	lo, hi := q.FromSeq, v.size
	if q.ToSeq != 0 && q.ToSeq < hi {
		hi = q.ToSeq
	}
	if !q.Since.IsZero() {
		lo = max(lo, v.timeBound(q.Since))
	}
	if !q.Until.IsZero() {
		hi = min(hi, v.timeBound(q.Until))
	}
	res := &Result{}
	if lo >= hi {
		return res, nil
	}
	// Candidates: the session index when a session is asked for, else every seq in [lo, hi).
	var cand []uint64
	useIndex := q.SessionID != ""
	if useIndex {
		l.mu.RLock()
		all := l.sessions[q.SessionID]
		l.mu.RUnlock()
		i := sort.Search(len(all), func(i int) bool { return all[i] >= lo })
		j := sort.Search(len(all), func(i int) bool { return all[i] >= hi })
		cand = all[i:j]
	}
	n := hi - lo
	if useIndex {
		n = uint64(len(cand))
	}
	at := func(i uint64) uint64 {
		if q.Newest {
			i = n - 1 - i
		}
		if useIndex {
			return cand[i]
		}
		return lo + i
	}
	payloadFilter := q.AgentID != "" || q.Tool != "" || q.ActionClass != "" || q.Decision != "" || q.Rule != "" || q.Tier != nil || q.SessionID != ""
	for i := uint64(0); i < n; i++ {
		seq := at(i)
		if i >= maxScan || len(res.Records) >= q.Limit {
			res.More = true
			res.Next = seq
			if q.Newest {
				res.Next = seq + 1
			}
			return res, nil
		}
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		r, err := v.read(seq)
		if err != nil {
			return nil, err
		}
		if len(q.Types) > 0 && !slices.Contains(q.Types, r.Type) {
			continue
		}
		if payloadFilter && !matchPayload(r, &q) {
			continue
		}
		if q.Match != nil {
			ok, err := q.Match(r)
			if err != nil {
				return nil, fmt.Errorf("filter record %d: %w", seq, err)
			}
			if !ok {
				continue
			}
		}
		res.Records = append(res.Records, r)
	}
	return res, nil
}

func matchPayload(r *Record, q *Query) bool {
	var d struct {
		SessionID   string   `json:"session_id"`
		AgentID     string   `json:"agent_id"`
		Tool        string   `json:"tool"`
		ActionClass string   `json:"action_class"`
		Decision    string   `json:"decision"`
		Tier        *int     `json:"tier"`
		Rules       []string `json:"rules"`
	}
	if json.Unmarshal(r.Payload, &d) != nil {
		return false
	}
	switch {
	case q.SessionID != "" && d.SessionID != q.SessionID,
		q.AgentID != "" && d.AgentID != q.AgentID,
		q.Tool != "" && d.Tool != q.Tool,
		q.ActionClass != "" && d.ActionClass != q.ActionClass,
		q.Decision != "" && d.Decision != q.Decision,
		q.Tier != nil && (d.Tier == nil || *d.Tier != *q.Tier),
		q.Rule != "" && !slices.Contains(d.Rules, q.Rule):
		return false
	}
	return true
}

// SignedCheckpoint returns the latest published signed checkpoint (the one the checkpoint file
// holds, replaced after CheckpointEvery records or CheckpointInterval) and its body, or an error
// when none has been written yet. Every commit also writes a checkpoint record; those are not
// published here, so anchoring and proofs move at the checkpoint file's pace.
func (l *Log) SignedCheckpoint() ([]byte, Checkpoint, error) {
	l.mu.RLock()
	c := l.fileCkpt
	l.mu.RUnlock()
	if c == nil {
		return nil, Checkpoint{}, errors.New("no checkpoint yet")
	}
	if l.sig == nil { // read-only: the caller verifies with a key it trusts
		cp, err := parseSignedCheckpoint(c.Note)
		return c.Note, cp, err
	}
	cp, err := OpenCheckpoint(c.Note, l.sig.vkey)
	if err != nil {
		return nil, Checkpoint{}, err
	}
	return c.Note, cp, nil
}

// Root returns the Merkle root of the first size records.
func (l *Log) Root(size uint64) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if size > l.size {
		return nil, fmt.Errorf("tree size %d beyond the log's %d", size, l.size)
	}
	return l.tr.root(size)
}

// InclusionProof returns the RFC 6962 proof that record seq is in the tree of size records,
// with the record's leaf hash.
func (l *Log) InclusionProof(seq, size uint64) (leaf []byte, proof [][]byte, err error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if seq >= size {
		return nil, nil, fmt.Errorf("seq %d is not below tree size %d", seq, size)
	}
	if size > l.size {
		return nil, nil, fmt.Errorf("tree size %d beyond the log's %d", size, l.size)
	}
	p, err := l.tr.inclusion(seq, size)
	if err != nil {
		return nil, nil, err
	}
	return append([]byte(nil), l.tr.node(0, seq)...), p, nil
}

// ConsistencyProof returns the RFC 6962 proof that the tree of size1 records is a prefix of the
// tree of size2 records.
func (l *Log) ConsistencyProof(size1, size2 uint64) ([][]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if size1 > size2 {
		return nil, fmt.Errorf("old size %d is above new size %d", size1, size2)
	}
	if size2 > l.size {
		return nil, fmt.Errorf("tree size %d beyond the log's %d", size2, l.size)
	}
	return l.tr.consistency(size1, size2)
}

// HashHex is hex for a hash, for callers printing proofs.
func HashHex(b []byte) string { return hex.EncodeToString(b) }
