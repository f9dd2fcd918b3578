package rekor

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/audit"
)

// rekorServer finds the rekor-tiles POSIX server binary: $SHIELD_REKOR_SERVER, or "posix" as
// installed by `go install github.com/sigstore/rekor-tiles/v2/cmd/rekor-server/posix@v2.3.0`.
func rekorServer(t *testing.T) string {
	if p := os.Getenv("SHIELD_REKOR_SERVER"); p != "" {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "posix")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("rekor-server not installed: go install github.com/sigstore/rekor-tiles/v2/cmd/rekor-server/posix@v2.3.0 (or set SHIELD_REKOR_SERVER)")
	return ""
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRekorV2 runs a real Rekor v2 server on 127.0.0.1 and returns its URL and public key PEM.
func startRekorV2(t *testing.T) (string, []byte) {
	bin := rekorServer(t)
	dir := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	keyFile := filepath.Join(dir, "signer.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	storage := filepath.Join(dir, "storage")
	if err := os.Mkdir(storage, 0o700); err != nil {
		t.Fatal(err)
	}
	httpPort := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--hostname=rekor.shield.test",
		"--http-address=127.0.0.1", fmt.Sprintf("--http-port=%d", httpPort),
		"--grpc-address=127.0.0.1", fmt.Sprintf("--grpc-port=%d", freePort(t)),
		fmt.Sprintf("--http-metrics-port=%d", freePort(t)),
		"--storage-dir="+storage, "--signer-filepath="+keyFile, "--checkpoint-interval=1s")
	logFile, _ := os.Create(filepath.Join(dir, "server.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("rekor server log:\n%s", b)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	for i := 0; ; i++ {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 100 {
			t.Fatalf("rekor server did not become ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return url, pubPEM
}

func TestAnchorV2AgainstLocalRekor(t *testing.T) {
	url, rekorPub := startRekorV2(t)
	dir := t.TempDir()
	auditDir := filepath.Join(dir, "audit")
	l, err := audit.Open(audit.Config{Dir: auditDir, CheckpointEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if _, err := l.Append(context.Background(), audit.TypeServiceStart, map[string]string{"v": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	up, err := NewV2(url)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Dir: filepath.Join(auditDir, "anchors"), Timeout: 30 * time.Second}, l, up)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Round(context.Background()); err != nil {
		t.Fatalf("anchor: %v", err)
	}
	pubkey := l.PublicKey()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(auditDir, pubkey)
	if err != nil {
		t.Fatal(err)
	}
	anchors, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, rep.Notes, rekorPub)
	if err != nil {
		t.Fatalf("VerifyAnchors: %v", err)
	}
	if len(anchors) != 1 || anchors[0].API != "v2" {
		t.Fatalf("anchors: %+v", anchors)
	}

	// Another Rekor key does not verify the entry.
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	otherDER, _ := x509.MarshalPKIXPublicKey(otherPub)
	if _, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, rep.Notes,
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: otherDER})); err == nil {
		t.Fatal("anchor verified with another Rekor key")
	}
	// A log that no longer holds the anchored checkpoint (truncated, rebuilt) fails.
	if _, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, map[uint64][]byte{}, rekorPub); err == nil {
		t.Fatal("anchor verified against a log without its checkpoint")
	}
	// A tampered anchor entry fails.
	path := filepath.Join(auditDir, "anchors", fmt.Sprintf("%d.json", anchors[0].Size))
	var an Anchor
	data, _ := os.ReadFile(path)
	json.Unmarshal(data, &an)
	an.LogIndex++
	data, _ = json.Marshal(an)
	os.WriteFile(path, data, 0o644)
	if _, err := VerifyAnchors(filepath.Join(auditDir, "anchors"), []string{pubkey}, rep.Notes, rekorPub); err == nil {
		t.Fatal("tampered anchor verified")
	}
}
