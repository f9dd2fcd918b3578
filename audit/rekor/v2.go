package rekor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	pbcommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/rekor-tiles/v2/pkg/client/write"
	pb "github.com/sigstore/rekor-tiles/v2/pkg/generated/protobuf"
	"google.golang.org/protobuf/encoding/protojson"
)

// V2 uploads to a Rekor v2 (rekor-tiles) log.
type V2 struct {
	w write.Client
}

// NewV2 returns an uploader to the Rekor v2 log whose write API is at url
// (e.g. https://log2025-1.rekor.sigstore.dev).
func NewV2(url string) (*V2, error) {
	w, err := write.NewWriter(url)
	if err != nil {
		return nil, fmt.Errorf("rekor v2 client: %w", err)
	}
	return &V2{w: w}, nil
}

// API implements Uploader.
func (*V2) API() string { return "v2" }

// Upload implements Uploader. A v2 write returns once the entry is in the log's next checkpoint,
// with its inclusion proof.
func (v *V2) Upload(ctx context.Context, digest, sig, pub []byte) (json.RawMessage, int64, error) {
	tle, err := v.w.Add(ctx, &pb.HashedRekordRequestV002{
		Digest: digest,
		Signature: &pb.Signature{
			Content: sig,
			Verifier: &pb.Verifier{
				Verifier:   &pb.Verifier_PublicKey{PublicKey: &pb.PublicKey{RawBytes: pub}},
				KeyDetails: pbcommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256,
			},
		},
	})
	if err != nil {
		return nil, 0, err
	}
	if tle.GetInclusionProof().GetCheckpoint().GetEnvelope() == "" {
		return nil, 0, errors.New("rekor v2 returned an entry without an inclusion proof checkpoint")
	}
	data, err := protojson.Marshal(tle)
	if err != nil {
		return nil, 0, err
	}
	return data, tle.GetLogIndex(), nil
}
