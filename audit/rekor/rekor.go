// Package rekor anchors the audit log's signed checkpoints in a Rekor transparency log, off the
// decision path: an Anchorer copies the latest checkpoint into an on-disk outbox every interval
// (and at shutdown) and uploads the outbox, retrying with backoff across restarts. Each
// checkpoint is uploaded as a hashedrekord entry (SHA-256 of the signed checkpoint note, signed
// with an ECDSA P-256 key), and the returned entry, with its inclusion proof and the Rekor
// checkpoint, is stored beside our checkpoints so that VerifyAnchors can check it offline.
//
// Both Rekor APIs are supported: v2 (rekor-tiles, NewV2) and v1 (rekor, NewV1).
//
// rekor imports audit; cmd/shield imports rekor.
package rekor

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shieldsec/shield/audit"
)

// Source is what the anchorer reads of the audit log (*audit.Log).
type Source interface {
	SignedCheckpoint() ([]byte, audit.Checkpoint, error)
}

// Uploader submits one hashedrekord entry and returns the stored form of the log's answer.
type Uploader interface {
	// API names the Rekor API, "v1" or "v2".
	API() string
	// Upload logs the SHA-256 digest of an artifact with an ECDSA signature over it, made by
	// the key whose DER (PKIX) public key is pub, and returns the log's entry as stored JSON.
	Upload(ctx context.Context, digest, sig, pub []byte) (entry json.RawMessage, logIndex int64, err error)
}

// Config configures an Anchorer. Zero values select the documented defaults.
type Config struct {
	// Dir holds the outbox ("outbox/<size>.note") and the anchors ("<size>.json"). Required;
	// usually <audit dir>/anchors.
	Dir string
	// KeyFile is the ECDSA P-256 signing key (PKCS#8 PEM, mode 0600), generated if missing.
	// Default Dir/rekor.key.
	KeyFile string
	// Interval between anchoring rounds. Default 15m.
	Interval time.Duration
	// Timeout bounds one upload (a Rekor v2 write waits for the log's next checkpoint). Default 30s.
	Timeout time.Duration
}

// Anchor is an anchored checkpoint, stored as Dir/<size>.json.
type Anchor struct {
	API        string          `json:"api"`        // "v1" or "v2"
	Checkpoint string          `json:"checkpoint"` // our signed checkpoint note (the artifact)
	Size       uint64          `json:"size"`       // its tree size
	PublicKey  string          `json:"public_key"` // PEM of the ECDSA key that signed the entry
	Signature  []byte          `json:"signature"`  // ECDSA ASN.1 signature over SHA-256(checkpoint)
	LogIndex   int64           `json:"log_index"`
	Entry      json.RawMessage `json:"entry"` // the transparency log entry as Rekor returned it
	AnchoredAt time.Time       `json:"anchored_at"`
}

// Anchorer runs the outbox.
type Anchorer struct {
	cfg Config
	src Source
	up  Uploader
	key *ecdsa.PrivateKey
	pub []byte // DER
}

// New returns an anchorer of src's checkpoints through up.
func New(cfg Config, src Source, up Uploader) (*Anchorer, error) {
	if cfg.Dir == "" {
		return nil, errors.New("rekor: dir is required")
	}
	if cfg.KeyFile == "" {
		cfg.KeyFile = filepath.Join(cfg.Dir, "rekor.key")
	}
	if cfg.Interval == 0 {
		cfg.Interval = 15 * time.Minute
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Interval < 0 || cfg.Timeout < 0 {
		return nil, errors.New("rekor: interval and timeout must not be negative")
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "outbox"), 0o700); err != nil {
		return nil, fmt.Errorf("rekor: create outbox: %w", err)
	}
	key, err := loadOrCreateKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Anchorer{cfg: cfg, src: src, up: up, key: key, pub: pub}, nil
}

func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writeFileSync(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			return nil, fmt.Errorf("rekor: write key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rekor: read key: %w", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("rekor: key %s must exist with mode 0600", path)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("rekor: key %s is not PEM", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("rekor: key %s: %w", path, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("rekor: key %s is not ECDSA P-256", path)
	}
	return ek, nil
}

// PublicKeyPEM returns the anchoring key's public half.
func (a *Anchorer) PublicKeyPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: a.pub}))
}

// Run anchors every Interval until ctx ends, then makes a last attempt bounded by Timeout (the
// outbox keeps what could not be uploaded for the next start). Errors of single rounds are
// reported through report (may be nil) and retried.
func (a *Anchorer) Run(ctx context.Context, report func(error)) {
	backoff := time.Second
	next := time.Now()
	for {
		wait := time.Until(next)
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), a.cfg.Timeout)
			if err := a.Round(fctx); err != nil && report != nil {
				report(err)
			}
			cancel()
			return
		case <-time.After(wait):
		}
		if err := a.Round(ctx); err != nil {
			if report != nil {
				report(err)
			}
			next = time.Now().Add(min(backoff, a.cfg.Interval))
			backoff = min(backoff*2, a.cfg.Interval)
			continue
		}
		backoff = time.Second
		next = time.Now().Add(a.cfg.Interval)
	}
}

// Round queues the latest checkpoint and uploads the outbox.
func (a *Anchorer) Round(ctx context.Context) error {
	if err := a.Enqueue(); err != nil {
		return err
	}
	_, err := a.Flush(ctx)
	return err
}

// Enqueue copies the latest checkpoint into the outbox unless it is already queued or anchored.
func (a *Anchorer) Enqueue() error {
	note, c, err := a.src.SignedCheckpoint()
	if err != nil {
		return nil // nothing to anchor yet
	}
	name := strconv.FormatUint(c.Size, 10)
	if _, err := os.Stat(filepath.Join(a.cfg.Dir, name+".json")); err == nil {
		return nil
	}
	path := filepath.Join(a.cfg.Dir, "outbox", name+".note")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := writeFileSync(path, note, 0o600); err != nil {
		return fmt.Errorf("rekor: queue checkpoint %d: %w", c.Size, err)
	}
	return nil
}

// Flush uploads every queued checkpoint, oldest first, and returns how many it anchored. It
// stops at the first failure (the rest stay queued).
func (a *Anchorer) Flush(ctx context.Context) (int, error) {
	ents, err := os.ReadDir(filepath.Join(a.cfg.Dir, "outbox"))
	if err != nil {
		return 0, fmt.Errorf("rekor: read outbox: %w", err)
	}
	var sizes []uint64
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".note")
		if !ok {
			continue
		}
		if s, err := strconv.ParseUint(n, 10, 64); err == nil {
			sizes = append(sizes, s)
		}
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	done := 0
	for _, s := range sizes {
		if err := a.anchor(ctx, s); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

func (a *Anchorer) anchor(ctx context.Context, size uint64) error {
	name := strconv.FormatUint(size, 10)
	qpath := filepath.Join(a.cfg.Dir, "outbox", name+".note")
	note, err := os.ReadFile(qpath)
	if err != nil {
		return err
	}
	digest := sha256.Sum256(note)
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, digest[:])
	if err != nil {
		return fmt.Errorf("rekor: sign checkpoint %d: %w", size, err)
	}
	uctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	entry, idx, err := a.up.Upload(uctx, digest[:], sig, a.pub)
	if err != nil {
		return fmt.Errorf("rekor: anchor checkpoint %d: %w", size, err)
	}
	an := Anchor{API: a.up.API(), Checkpoint: string(note), Size: size, PublicKey: a.PublicKeyPEM(), Signature: sig,
		LogIndex: idx, Entry: entry, AnchoredAt: time.Now().UTC()}
	data, err := json.MarshalIndent(an, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(a.cfg.Dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("rekor: store anchor %d: %w", size, err)
	}
	if err := os.Remove(qpath); err != nil {
		return fmt.Errorf("rekor: dequeue %d: %w", size, err)
	}
	// The log records its own anchoring when it can (an *audit.Log can).
	if ap, ok := a.src.(appender); ok {
		if _, err := ap.Append(ctx, audit.TypeAnchored, audit.Anchored{API: an.API, Size: size, LogIndex: idx}); err != nil {
			return fmt.Errorf("rekor: record anchor of %d in the audit log: %w", size, err)
		}
	}
	return nil
}

// appender is the part of *audit.Log that records anchors.
type appender interface {
	Append(ctx context.Context, typ audit.Type, payload any) (audit.Position, error)
}

func writeFileSync(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readAnchors loads every anchor in dir.
func readAnchors(dir string) ([]Anchor, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Anchor
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var an Anchor
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&an); err != nil {
			return nil, fmt.Errorf("anchor %s: %w", e.Name(), err)
		}
		out = append(out, an)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Size < out[j].Size })
	return out, nil
}
