package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Checkpoint is the body of a C2SP tlog-checkpoint: the log's origin, the number of records it
// covers and the RFC 6962 root hash of those records.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   []byte
}

// Marshal returns the checkpoint body (three lines, each ending in a newline).
func (c Checkpoint) Marshal() []byte {
	return fmt.Appendf(nil, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root))
}

// ParseCheckpoint reads a checkpoint body (a note's text). Extension lines are ignored.
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, errors.New("checkpoint: want origin, size and root lines")
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || strconv.FormatUint(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint: bad size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != 32 {
		return Checkpoint{}, fmt.Errorf("checkpoint: bad root hash %q", lines[2])
	}
	return Checkpoint{Origin: lines[0], Size: size, Root: root}, nil
}

// OpenCheckpoint verifies a signed checkpoint note with the given verifier keys (note verifier
// key strings, "name+hash+key") and returns its body. The note must carry a signature by one of
// the keys, and its origin must be the name of that key.
func OpenCheckpoint(signed []byte, vkeys ...string) (Checkpoint, error) {
	if len(vkeys) == 0 {
		return Checkpoint{}, errors.New("verify checkpoint: no public key given")
	}
	vs := make([]note.Verifier, 0, len(vkeys))
	for _, k := range vkeys {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return Checkpoint{}, fmt.Errorf("parse public key: %w", err)
		}
		vs = append(vs, v)
	}
	n, err := note.Open(signed, note.VerifierList(vs...))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("verify checkpoint signature: %w", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	for _, s := range n.Sigs {
		if s.Name == c.Origin {
			return c, nil
		}
	}
	return Checkpoint{}, fmt.Errorf("checkpoint origin %q is not the name of a key that signed it", c.Origin)
}

// signer signs checkpoints.
type signer struct {
	s    note.Signer
	vkey string
}

func (s *signer) sign(c Checkpoint) ([]byte, error) {
	return note.Sign(&note.Note{Text: string(c.Marshal())}, s.s)
}

// loadOrCreateKey reads the note signer key at path, or creates an Ed25519 key named name there
// (mode 0600) with its verifier key beside it at path+".pub" (mode 0644). A key file that group
// or others may read or write is refused (ErrInsecureMode).
func loadOrCreateKey(path, name string) (*signer, error) {
	f, err := os.Open(path)
	switch {
	case err == nil:
		defer f.Close()
		// The mode is checked on the opened file, so a swap after the check cannot slip by.
		fi, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("signing key %s is not a regular file", path)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			return nil, fmt.Errorf("%w: signing key %s has mode %04o, readable or writable by group or others: run chmod 0600 %s (and rotate the key if others may have read it)",
				ErrInsecureMode, path, perm, path)
		}
		data, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return nil, fmt.Errorf("read signing key %s: %w", path, err)
		}
		ns, err := note.NewSigner(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("parse signing key %s: %w", path, err)
		}
		vkey, err := vkeyFor(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", path, err)
		}
		return &signer{s: ns, vkey: vkey}, nil
	case errors.Is(err, os.ErrNotExist):
		skey, vkey, err := note.GenerateKey(rand.Reader, name)
		if err != nil {
			return nil, fmt.Errorf("generate signing key: %w", err)
		}
		if err := writeFileSync(path, []byte(skey+"\n"), 0o600, true); err != nil {
			return nil, fmt.Errorf("write signing key: %w", err)
		}
		if err := writeFileSync(path+".pub", []byte(vkey+"\n"), 0o644, false); err != nil {
			return nil, fmt.Errorf("write public key: %w", err)
		}
		ns, err := note.NewSigner(skey)
		if err != nil {
			return nil, err
		}
		return &signer{s: ns, vkey: vkey}, nil
	default:
		return nil, fmt.Errorf("read signing key: %w", err)
	}
}

// CheckPrivateDir returns an error wrapping ErrInsecureMode when dir is writable by group or
// others (whoever can write it can replace the files in it), or is not a directory.
func CheckPrivateDir(what, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a directory", what, dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: %s %s has mode %04o, writable by group or others: run chmod go-w %s",
			ErrInsecureMode, what, dir, perm, dir)
	}
	return nil
}

// vkeyFor derives the verifier key from a note signer key "PRIVATE+KEY+name+hash+key".
func vkeyFor(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" {
		return "", errors.New("not a note signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 33 || raw[0] != 1 {
		return "", errors.New("not an Ed25519 note signer key")
	}
	priv := ed25519Key(raw[1:])
	return note.NewEd25519VerifierKey(parts[2], priv)
}

// writeFileSync writes data to path atomically (temp file, fsync, rename, fsync of the
// directory). exclusive refuses to replace an existing file.
func writeFileSync(path string, data []byte, mode os.FileMode, exclusive bool) error {
	return writeFileSyncDir(nil, path, data, mode, exclusive)
}

// writeFileSyncDir is writeFileSync with the directory fsynced through dirf, an open handle
// on path's directory (nil: open it), so that it needs one new descriptor, not two.
func writeFileSyncDir(dirf *os.File, path string, data []byte, mode os.FileMode, exclusive bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
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
	if exclusive {
		if err := os.Link(tmp.Name(), path); err != nil {
			return err
		}
	} else if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if dirf != nil {
		return dirf.Sync()
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// bytesTrimNote normalises a note read from a file: exactly one trailing newline.
func bytesTrimNote(b []byte) []byte {
	return append(bytes.TrimRight(b, "\n"), '\n')
}

func ed25519Key(seed []byte) ed25519.PublicKey {
	return ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
}

// parseSignedCheckpoint returns the body of a signed checkpoint note without checking its
// signatures.
func parseSignedCheckpoint(signed []byte) (Checkpoint, error) {
	text, _, ok := bytes.Cut(signed, []byte("\n\n"))
	if !ok {
		return Checkpoint{}, errors.New("checkpoint note has no signature block")
	}
	return ParseCheckpoint(string(text) + "\n")
}
