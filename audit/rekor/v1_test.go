package rekor

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/sigstore/rekor/pkg/util"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/shieldsec/shield/audit"
)

// fakeRekorV1 is a local implementation of the one Rekor v1 endpoint the uploader uses,
// POST /api/v1/log/entries for hashedrekord v0.0.1 (a real v1 server needs Trillian and MySQL).
// It checks the entry's signature, appends it to an RFC 6962 tree and answers as Rekor does: the
// canonicalized body, an inclusion proof with a signed checkpoint, and a signed entry timestamp.
type fakeRekorV1 struct {
	mu     sync.Mutex
	signer signature.Signer
	logID  string
	leaves [][]byte
}

func newFakeRekorV1(t *testing.T) (*fakeRekorV1, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signature.LoadECDSASignerVerifier(key, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	id := sha256.Sum256(der)
	return &fakeRekorV1{signer: s, logID: hex.EncodeToString(id[:])}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func mth(l [][]byte) []byte {
	if len(l) == 1 {
		return l[0]
	}
	k := 1
	for k*2 < len(l) {
		k *= 2
	}
	return rfc6962.DefaultHasher.HashChildren(mth(l[:k]), mth(l[k:]))
}

func auditPath(m int, l [][]byte) [][]byte {
	if len(l) == 1 {
		return nil
	}
	k := 1
	for k*2 < len(l) {
		k *= 2
	}
	if m < k {
		return append(auditPath(m, l[:k]), mth(l[k:]))
	}
	return append(auditPath(m-k, l[k:]), mth(l[:k]))
}

func (f *fakeRekorV1) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/log/entries" {
		http.NotFound(w, r)
		return
	}
	var in struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Data struct {
				Hash struct{ Algorithm, Value string } `json:"hash"`
			} `json:"data"`
			Signature struct {
				Content   []byte `json:"content"`
				PublicKey struct {
					Content []byte `json:"content"`
				} `json:"publicKey"`
			} `json:"signature"`
		} `json:"spec"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Kind != "hashedrekord" || in.APIVersion != "0.0.1" {
		http.Error(w, `{"code":400,"message":"bad entry"}`, http.StatusBadRequest)
		return
	}
	digest, err := hex.DecodeString(in.Spec.Data.Hash.Value)
	blk, _ := pem.Decode(in.Spec.Signature.PublicKey.Content)
	if err != nil || blk == nil {
		http.Error(w, `{"code":400,"message":"bad entry"}`, http.StatusBadRequest)
		return
	}
	pk, err := x509.ParsePKIXPublicKey(blk.Bytes)
	ek, ok := pk.(*ecdsa.PublicKey)
	if err != nil || !ok || !ecdsa.VerifyASN1(ek, digest, in.Spec.Signature.Content) {
		http.Error(w, `{"code":400,"message":"signature does not verify"}`, http.StatusBadRequest)
		return
	}
	raw, _ := json.Marshal(in)
	body, _ := jcs.Transform(raw)

	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaves = append(f.leaves, rfc6962.DefaultHasher.HashLeaf(body))
	idx, size := int64(len(f.leaves)-1), uint64(len(f.leaves))
	root := mth(f.leaves)
	var hashes []string
	for _, h := range auditPath(int(idx), f.leaves) {
		hashes = append(hashes, hex.EncodeToString(h))
	}
	cp, err := util.CreateAndSignCheckpoint(r.Context(), "rekor.shield.test", 1, size, root, f.signer)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b64 := base64.StdEncoding.EncodeToString(body)
	now := time.Now().Unix()
	setPayload, _ := json.Marshal(map[string]any{"body": b64, "integratedTime": now, "logIndex": idx, "logID": f.logID})
	setCanon, _ := jcs.Transform(setPayload)
	set, err := f.signer.SignMessage(bytes.NewReader(setCanon))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	uuid := hex.EncodeToString(f.leaves[idx])
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", uuid)
	w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(map[string]any{uuid: map[string]any{
		"body": b64, "integratedTime": now, "logID": f.logID, "logIndex": idx,
		"verification": map[string]any{
			"inclusionProof": map[string]any{"checkpoint": string(cp), "hashes": hashes, "logIndex": idx,
				"rootHash": hex.EncodeToString(root), "treeSize": size},
			"signedEntryTimestamp": set,
		},
	}})
}

func TestAnchorV1AgainstLocalEndpoints(t *testing.T) {
	fake, rekorPub := newFakeRekorV1(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(fake)
	srv.Listener = lis
	srv.Start()
	defer srv.Close()

	dir := t.TempDir()
	auditDir := filepath.Join(dir, "audit")
	l, err := audit.Open(audit.Config{Dir: auditDir, CheckpointEvery: 2})
	if err != nil {
		t.Fatal(err)
	}
	up, err := NewV1(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Dir: filepath.Join(auditDir, "anchors")}, l, up)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 { // three checkpoints, three entries: proofs in a tree of several leaves
		for range 2 {
			if _, err := l.Append(context.Background(), audit.TypeServiceStart, map[string]int{"round": round}); err != nil {
				t.Fatal(err)
			}
		}
		waitCheckpoint(t, l, uint64(3*round+2))
		if err := a.Round(context.Background()); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	pubkey := l.PublicKey()
	l.Close()
	rep, err := audit.Verify(auditDir, pubkey)
	if err != nil {
		t.Fatal(err)
	}
	anchors, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, rep.Notes, rekorPub)
	if err != nil {
		t.Fatalf("VerifyAnchors: %v", err)
	}
	if len(anchors) != 3 || anchors[2].API != "v1" || anchors[2].LogIndex != 2 {
		t.Fatalf("%d anchors, the last at log index %d", len(anchors), anchors[len(anchors)-1].LogIndex)
	}
	// Alter the signed entry timestamp's integrated time: the SET no longer verifies.
	path := filepath.Join(auditDir, "anchors", fmt.Sprintf("%d.json", anchors[0].Size))
	data, _ := os.ReadFile(path)
	var an Anchor
	json.Unmarshal(data, &an)
	var se v1Entry
	json.Unmarshal(an.Entry, &se)
	*se.Entry.IntegratedTime += 3600
	an.Entry, _ = json.Marshal(se)
	data, _ = json.Marshal(an)
	os.WriteFile(path, data, 0o644)
	if _, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, rep.Notes, rekorPub); err == nil {
		t.Fatal("an anchor with a back-dated entry verified")
	}
}

// waitCheckpoint waits for the log's checkpoint of want records: the writer checkpoints after
// the batch that triggers it is acknowledged.
func waitCheckpoint(t *testing.T, l *audit.Log, want uint64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, c, err := l.SignedCheckpoint(); err == nil && c.Size >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint of %d records", want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
