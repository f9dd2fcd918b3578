package policy

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
)

// signingContext separates bundle signatures from any other use of the same key.
const signingContext = "shield policy bundle v1\n"

// SigningMessage is the message an ed25519 bundle signature signs: a context line followed by
// the digest ("sha256:<hex>").
func SigningMessage(digest string) []byte {
	return []byte(signingContext + digest)
}

// Sign returns the .signature content (standard base64, newline-terminated) for a digest.
func Sign(priv ed25519.PrivateKey, digest string) []byte {
	sig := ed25519.Sign(priv, SigningMessage(digest))
	return []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
}

// Verify checks a .signature content against a public key and a digest. A missing, malformed or
// wrong signature is an error wrapping ErrSignature.
func Verify(pub []byte, digest string, sig []byte) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%w: public key is %d bytes, want %d", ErrSignature, len(pub), ed25519.PublicKeySize)
	}
	if len(bytes.TrimSpace(sig)) == 0 {
		return fmt.Errorf("%w: missing (a public key is configured, the bundle has no %s)", ErrSignature, SignatureFile)
	}
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(sig)))
	if err != nil {
		return fmt.Errorf("%w: not base64: %v", ErrSignature, err)
	}
	if len(raw) != ed25519.SignatureSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrSignature, len(raw), ed25519.SignatureSize)
	}
	if !ed25519.Verify(ed25519.PublicKey(pub), SigningMessage(digest), raw) {
		return fmt.Errorf("%w: does not verify for digest %s", ErrSignature, digest)
	}
	return nil
}

// ParsePublicKey reads an ed25519 public key given as standard base64 of its 32 bytes (the
// format `shield policy keygen` writes).
func ParsePublicKey(text []byte) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(text)))
	if err != nil {
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("parse public key: %d bytes, want %d", len(raw), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}

// ParsePrivateKey reads an ed25519 private key given as standard base64 of its 32-byte seed.
func ParsePrivateKey(text []byte) (ed25519.PrivateKey, error) {
	raw, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(text)))
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	if len(raw) != ed25519.SeedSize {
		return nil, fmt.Errorf("parse private key: %d bytes, want a %d-byte seed", len(raw), ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// EncodeKey writes a public key or a private key seed as the base64 text ParsePublicKey and
// ParsePrivateKey read, newline-terminated.
func EncodeKey(key []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(key) + "\n")
}
