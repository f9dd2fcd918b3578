package rekor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag"
	rclient "github.com/sigstore/rekor/pkg/client"
	"github.com/sigstore/rekor/pkg/generated/client"
	"github.com/sigstore/rekor/pkg/generated/client/entries"
	"github.com/sigstore/rekor/pkg/generated/models"
	rverify "github.com/sigstore/rekor/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// V1 uploads to a Rekor v1 log (rekor.sigstore.dev, or a self-hosted rekor-server).
type V1 struct {
	c *client.Rekor
}

// NewV1 returns an uploader to the Rekor v1 log at url (e.g. https://rekor.sigstore.dev).
func NewV1(url string) (*V1, error) {
	c, err := rclient.GetRekorClient(url, rclient.WithRetryCount(0))
	if err != nil {
		return nil, fmt.Errorf("rekor v1 client: %w", err)
	}
	return &V1{c: c}, nil
}

// API implements Uploader.
func (*V1) API() string { return "v1" }

// v1Entry is the stored form of a v1 answer.
type v1Entry struct {
	UUID  string              `json:"uuid"`
	Entry models.LogEntryAnon `json:"entry"`
}

// Upload implements Uploader: a hashedrekord v0.0.1 entry. The answer carries the signed entry
// timestamp and an inclusion proof with the log's checkpoint.
func (v *V1) Upload(ctx context.Context, digest, sig, pub []byte) (json.RawMessage, int64, error) {
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	params := entries.NewCreateLogEntryParamsWithContext(ctx)
	params.SetProposedEntry(&models.Hashedrekord{
		APIVersion: swag.String("0.0.1"),
		Spec: models.HashedrekordV001Schema{
			Data: &models.HashedrekordV001SchemaData{Hash: &models.HashedrekordV001SchemaDataHash{
				Algorithm: swag.String(models.HashedrekordV001SchemaDataHashAlgorithmSha256),
				Value:     swag.String(hex.EncodeToString(digest)),
			}},
			Signature: &models.HashedrekordV001SchemaSignature{
				Content:   strfmt.Base64(sig),
				PublicKey: &models.HashedrekordV001SchemaSignaturePublicKey{Content: strfmt.Base64(pubPEM)},
			},
		},
	})
	resp, err := v.c.Entries.CreateLogEntry(params)
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Payload) != 1 {
		return nil, 0, fmt.Errorf("rekor v1 returned %d entries, want 1", len(resp.Payload))
	}
	for uuid, e := range resp.Payload {
		if e.LogIndex == nil || e.Verification == nil || e.Verification.InclusionProof == nil {
			return nil, 0, errors.New("rekor v1 returned an entry without log index or inclusion proof")
		}
		data, err := json.Marshal(v1Entry{UUID: uuid, Entry: e})
		if err != nil {
			return nil, 0, err
		}
		return data, *e.LogIndex, nil
	}
	panic("unreachable")
}

// verifyV1 checks a stored v1 answer: inclusion proof, checkpoint and signed entry timestamp
// against the Rekor key, and that the entry logs our digest, signature and key.
func verifyV1(an *Anchor, digest, pubDER []byte, rv signature.Verifier) error {
	var se v1Entry
	if err := json.Unmarshal(an.Entry, &se); err != nil {
		return fmt.Errorf("decode rekor entry: %w", err)
	}
	e := se.Entry
	if e.LogIndex == nil || *e.LogIndex != an.LogIndex {
		return errors.New("rekor entry log index differs from the anchor's")
	}
	if err := rverify.VerifyLogEntry(context.Background(), &e, rv); err != nil {
		return fmt.Errorf("rekor entry: %w", err)
	}
	b64, ok := e.Body.(string)
	if !ok {
		return errors.New("rekor entry body is not a string")
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("rekor entry body: %w", err)
	}
	var body struct {
		Kind       string                        `json:"kind"`
		APIVersion string                        `json:"apiVersion"`
		Spec       models.HashedrekordV001Schema `json:"spec"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("rekor entry body: %w", err)
	}
	s := body.Spec
	if body.Kind != "hashedrekord" || s.Data == nil || s.Data.Hash == nil || s.Data.Hash.Value == nil || s.Signature == nil || s.Signature.PublicKey == nil {
		return errors.New("rekor entry is not a complete hashedrekord")
	}
	blk, _ := pem.Decode(s.Signature.PublicKey.Content)
	switch {
	case *s.Data.Hash.Value != hex.EncodeToString(digest):
		return errors.New("rekor entry logs another digest than the checkpoint's")
	case !bytes.Equal(s.Signature.Content, an.Signature):
		return errors.New("rekor entry logs another signature")
	case blk == nil || !bytes.Equal(blk.Bytes, pubDER):
		return errors.New("rekor entry logs another key")
	}
	return nil
}
