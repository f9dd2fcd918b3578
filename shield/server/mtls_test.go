package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testCA{cert: c, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM certificate and key signed by the CA.
func (ca *testCA) issue(t *testing.T, cn, uri string, server bool) ([]byte, []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if uri != "" {
		u, _ := url.Parse(uri)
		tmpl.URIs = []*url.URL{u}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

type echoShield struct {
	shieldv1.UnimplementedShieldServiceServer
}

func (echoShield) Evaluate(ctx context.Context, _ *shieldv1.EvaluateRequest) (*shieldv1.EvaluateResponse, error) {
	return &shieldv1.EvaluateResponse{Verdict: &shieldv1.Verdict{Reason: Identity(ctx)}}, nil
}

func TestMutualTLS(t *testing.T) {
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
		CertRoles: map[string][]string{"spiffe://test/runtime": {RoleAgent}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !auth.MutualTLS() {
		t.Fatal("client CA configured but MutualTLS is false")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(auth.Credentials()), grpc.UnaryInterceptor(auth.UnaryInterceptor()))
	shieldv1.RegisterShieldServiceServer(gs, echoShield{})
	go gs.Serve(l)
	defer gs.Stop()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	call := func(certPEM, keyPEM []byte) (string, error) {
		conf := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}
		if certPEM != nil {
			c, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			conf.Certificates = []tls.Certificate{c}
		}
		conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(conf)))
		if err != nil {
			return "", err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := shieldv1.NewShieldServiceClient(conn).Evaluate(ctx, &shieldv1.EvaluateRequest{})
		return r.GetVerdict().GetReason(), err
	}

	cc, ck := ca.issue(t, "runtime-a", "spiffe://test/runtime", false)
	if id, err := call(cc, ck); err != nil || id != "cert:spiffe://test/runtime" {
		t.Errorf("right CA: %q %v", id, err)
	}
	nc, nk := ca.issue(t, "nobody", "", false)
	if _, err := call(nc, nk); status.Code(err) != codes.PermissionDenied {
		t.Errorf("right CA, identity without roles: %v", err)
	}
	oc, ok := other.issue(t, "intruder", "spiffe://test/runtime", false)
	if _, err := call(oc, ok); err == nil {
		t.Error("a certificate from another CA was accepted")
	}
	if _, err := call(nil, nil); err == nil {
		t.Error("a client without a certificate was accepted")
	}
}
