package rekor

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	pbs "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	pb "github.com/sigstore/rekor-tiles/v2/pkg/generated/protobuf"
	rnote "github.com/sigstore/rekor-tiles/v2/pkg/note"
	rverify "github.com/sigstore/rekor-tiles/v2/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/shieldsec/shield/audit"
)

// VerifyAnchors checks, offline, every anchor stored in dir: our checkpoint's signature (by one
// of auditKeys), that the audit log holds that very checkpoint (logNotes: checkpoint notes by
// size, from audit.Report.Notes), the ECDSA signature over it, and the Rekor entry: its body
// names our digest, signature and key, its inclusion proof leads to the Rekor checkpoint, and
// that checkpoint is signed by rekorPub (PEM public key of the Rekor log). It returns the
// verified anchors.
func VerifyAnchors(dir string, auditKeys []string, logNotes map[uint64][]byte, rekorPub []byte) ([]Anchor, error) {
	anchors, err := readAnchors(dir)
	if err != nil {
		return nil, err
	}
	rv, err := loadVerifier(rekorPub)
	if err != nil {
		return nil, err
	}
	for _, an := range anchors {
		if err := verifyAnchor(&an, auditKeys, logNotes, rv); err != nil {
			return nil, fmt.Errorf("anchor of checkpoint %d: %w", an.Size, err)
		}
	}
	return anchors, nil
}

func loadVerifier(pemKey []byte) (signature.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemKey)
	if err != nil {
		return nil, fmt.Errorf("rekor public key: %w", err)
	}
	v, err := signature.LoadDefaultVerifier(pub)
	if err != nil {
		return nil, fmt.Errorf("rekor public key: %w", err)
	}
	return v, nil
}

func verifyAnchor(an *Anchor, auditKeys []string, logNotes map[uint64][]byte, rv signature.Verifier) error {
	cp, err := audit.OpenCheckpoint([]byte(an.Checkpoint), auditKeys...)
	if err != nil {
		return err
	}
	if cp.Size != an.Size {
		return fmt.Errorf("anchored checkpoint covers %d records, stored as %d", cp.Size, an.Size)
	}
	if logNotes != nil {
		if n, ok := logNotes[cp.Size]; !ok || !bytes.Equal(n, []byte(an.Checkpoint)) {
			return fmt.Errorf("the audit log does not hold the anchored checkpoint of %d records (truncated or rewritten)", cp.Size)
		}
	}
	b, _ := pem.Decode([]byte(an.PublicKey))
	if b == nil {
		return errors.New("anchor public key is not PEM")
	}
	pk, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return err
	}
	ek, ok := pk.(*ecdsa.PublicKey)
	if !ok {
		return errors.New("anchor key is not ECDSA")
	}
	digest := sha256.Sum256([]byte(an.Checkpoint))
	if !ecdsa.VerifyASN1(ek, digest[:], an.Signature) {
		return errors.New("anchor signature does not verify")
	}
	der, _ := x509.MarshalPKIXPublicKey(ek)
	switch an.API {
	case "v1":
		return verifyV1(an, digest[:], der, rv)
	case "v2":
	default:
		return fmt.Errorf("rekor API %q is not supported", an.API)
	}
	var tle pbs.TransparencyLogEntry
	if err := protojson.Unmarshal(an.Entry, &tle); err != nil {
		return fmt.Errorf("decode rekor entry: %w", err)
	}
	if tle.GetLogIndex() != an.LogIndex {
		return errors.New("rekor entry log index differs from the anchor's")
	}
	env := tle.GetInclusionProof().GetCheckpoint().GetEnvelope()
	origin, _, _ := strings.Cut(env, "\n")
	nv, err := rnote.NewNoteVerifier(origin, rv)
	if err != nil {
		return fmt.Errorf("rekor checkpoint verifier: %w", err)
	}
	if err := rverify.VerifyLogEntry(&tle, nv); err != nil {
		return fmt.Errorf("rekor inclusion: %w", err)
	}
	var body pb.Entry
	if err := protojson.Unmarshal(tle.GetCanonicalizedBody(), &body); err != nil {
		return fmt.Errorf("decode rekor entry body: %w", err)
	}
	hr := body.GetSpec().GetHashedRekordV002()
	switch {
	case body.GetKind() != "hashedrekord" || hr == nil:
		return errors.New("rekor entry is not a hashedrekord")
	case !bytes.Equal(hr.GetData().GetDigest(), digest[:]):
		return errors.New("rekor entry logs another digest than the checkpoint's")
	case !bytes.Equal(hr.GetSignature().GetContent(), an.Signature):
		return errors.New("rekor entry logs another signature")
	case !bytes.Equal(hr.GetSignature().GetVerifier().GetPublicKey().GetRawBytes(), der):
		return errors.New("rekor entry logs another key")
	}
	return nil
}
