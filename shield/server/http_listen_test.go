package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
)

func whoamiOver(t *testing.T, c *http.Client, url string) (int, map[string]any) {
	t.Helper()
	resp, err := c.Get(url + "/v1/whoami")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func minimalShield(t *testing.T) *ShieldService {
	p, err := shield.New(shield.Config{}, &shield.Policy{Revision: "r1", Digest: "sha256:d", Normalizer: execNormalizer{},
		Tiers: []shield.Tier{escalatingTier{}}})
	if err != nil {
		t.Fatal(err)
	}
	return NewShieldService(p, nil, "test")
}

// TestHTTPUnixPeerCredentials: on a unix-socket HTTP listener the caller is its uid, with the
// roles of auth.unix_roles, as on the gRPC socket; a bearer token does not override it.
func TestHTTPUnixPeerCredentials(t *testing.T) {
	auth, err := NewAuth(AuthConfig{UnixRoles: map[string][]string{strconv.Itoa(os.Getuid()): {RoleAuditor}}})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "http.sock")
	stop, err := ServeHTTP(HTTPConfig{Listen: []string{"unix:" + sock}}, HTTPOptions{Auth: auth, Shield: minimalShield(t)}, Limits{MaxConnections: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket mode: %v %v, want 0660", fi.Mode().Perm(), err)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}, Timeout: 10 * time.Second}
	code, m := whoamiOver(t, c, "http://shield")
	if code != 200 || m["identity"] != "uid:"+strconv.Itoa(os.Getuid()) {
		t.Fatalf("whoami over the unix socket: %d %v", code, m)
	}
	if roles, _ := m["roles"].([]any); len(roles) != 1 || roles[0] != RoleAuditor {
		t.Errorf("roles %v, want [auditor]", m["roles"])
	}
	// The auditor may not evaluate.
	resp, err := c.Post("http://shield/v1/evaluate", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("auditor evaluates over the socket: %d, want 403", resp.StatusCode)
	}
	// A second listener on the same live socket is refused.
	if _, err := ServeHTTP(HTTPConfig{Listen: []string{"unix:" + sock}}, HTTPOptions{Auth: auth, Shield: minimalShield(t)}, Limits{MaxConnections: 16}, nil); err == nil {
		t.Error("a second HTTP listener took over a live socket")
	}
}

// TestHTTPMutualTLS: the HTTP listener requires and verifies client certificates as gRPC does;
// the certificate's URI SAN is the identity.
func TestHTTPMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca, other := newCA(t, "shield test CA"), newCA(t, "someone else's CA")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	sc, sk := ca.issue(t, "shield", "", true)
	auth, err := NewAuth(AuthConfig{
		TLS:       TLSConfig{CertFile: write("s.crt", sc), KeyFile: write("s.key", sk), ClientCA: write("ca.crt", ca.pem)},
		CertRoles: map[string][]string{"spiffe://test/secops": {RoleApprover}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	stop, err := ServeHTTP(HTTPConfig{Listen: []string{addr}}, HTTPOptions{Auth: auth, Shield: minimalShield(t)}, Limits{MaxConnections: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	client := func(certPEM, keyPEM []byte) *http.Client {
		conf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}
		if certPEM != nil {
			c, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			conf.Certificates = []tls.Certificate{c}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: conf}, Timeout: 10 * time.Second}
	}
	cc, ck := ca.issue(t, "secops", "spiffe://test/secops", false)
	code, m := whoamiOver(t, client(cc, ck), "https://"+addr)
	if code != 200 || m["identity"] != "cert:spiffe://test/secops" {
		t.Fatalf("whoami with a client certificate: %d %v", code, m)
	}
	for name, c := range map[string]*http.Client{"no certificate": client(nil, nil), "another CA": client(other.issue(t, "x", "spiffe://test/secops", false))} {
		if resp, err := c.Get("https://" + addr + "/v1/whoami"); err == nil {
			resp.Body.Close()
			t.Errorf("%s: answered %d, want the handshake refused", name, resp.StatusCode)
		}
	}
	// Plain HTTP on the TLS listener gets nothing.
	if resp, err := http.Get("http://" + addr + "/v1/health"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served on the TLS listener")
		}
	}
}

// TestHTTPSeveralPlainListeners: without auth.tls every TCP listener speaks plain HTTP, however
// many there are. The first Serve of an http.Server fills in a TLS configuration of its own; a
// listener started after it once read that as "TLS configured" and wrapped itself in TLS.
func TestHTTPSeveralPlainListeners(t *testing.T) {
	auth, err := NewAuth(AuthConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		l.Close()
	}
	stop, err := ServeHTTP(HTTPConfig{Listen: addrs}, HTTPOptions{Auth: auth, Shield: minimalShield(t)}, Limits{MaxConnections: 16}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := &http.Client{Timeout: 10 * time.Second}
	for _, a := range addrs {
		var resp *http.Response
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if resp, err = c.Get("http://" + a + "/v1/health"); err == nil || time.Now().After(end) {
				break
			}
		}
		if err != nil {
			t.Fatalf("plain HTTP on %s: %v", a, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("plain HTTP on %s: status %d", a, resp.StatusCode)
		}
	}
}
