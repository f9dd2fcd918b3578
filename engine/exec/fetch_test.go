package exec

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestFetcherEgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://elsewhere.example/", http.StatusFound)
			return
		}
		w.Write([]byte(strings.Repeat("x", 100)))
	}))
	defer srv.Close()
	ctx := context.Background()

	// Loopback is refused even when the name is allowlisted: the check runs on the dialled address.
	f := &Fetcher{Allow: []string{"127.0.0.1", "localhost"}}
	if _, _, _, err := f.Get(ctx, srv.URL); !errors.Is(err, ErrEgress) {
		t.Errorf("loopback fetch: %v, want ErrEgress", err)
	}
	for _, u := range []string{"http://example.org/", "file:///etc/passwd", "gopher://127.0.0.1/", "http://u:p@127.0.0.1/", "::"} {
		if _, _, _, err := f.Get(ctx, u); !errors.Is(err, ErrEgress) {
			t.Errorf("%s: %v, want ErrEgress", u, err)
		}
	}
	if (&Fetcher{}).allowed("example.org") {
		t.Error("empty allowlist allowed a host")
	}

	// With loopback permitted (test only), the cap and redirect checks apply.
	f.addrOK = func(a netip.Addr) bool { return a.IsLoopback() }
	f.MaxBytes = 10
	code, body, trunc, err := f.Get(ctx, srv.URL)
	if err != nil || code != 200 || len(body) != 10 || !trunc {
		t.Errorf("get: %d %q %v %v", code, body, trunc, err)
	}
	if _, _, _, err := f.Get(ctx, srv.URL+"/redirect"); !errors.Is(err, ErrEgress) {
		t.Errorf("redirect to a host off the list: %v", err)
	}
	f.Allow = []string{"*.example.com"}
	if !f.allowed("api.example.com") || f.allowed("example.com.evil.org") || f.allowed("evilexample.com") {
		t.Error("wildcard matching wrong")
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.1.2.3": false, "192.168.0.1": false, "172.16.0.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "::1": false, "fd00:ec2::254": false, "::ffff:127.0.0.1": false, "0.0.0.0": false, "224.0.0.1": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

// The agent sees which host failed and why in general terms, never an address a name resolved
// to, a resolver's or a peer's address; the operator's log has them.
func TestFetcherErrorsAreAgentSafe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.1.2.3:8080/internal", http.StatusFound)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	closed := httptest.NewServer(http.NotFoundHandler())
	closedPort := closed.URL[strings.LastIndex(closed.URL, ":")+1:]
	closed.Close()

	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		f       *Fetcher
		url     string
		kind    error
		logHas  string
		leakers []string
	}{
		{name: "allowed name resolving to loopback", f: &Fetcher{Allow: []string{"localhost"}, Log: log},
			url: "http://localhost:" + port + "/", kind: ErrEgress, logHas: "127.0.0.1", leakers: []string{"127.0.0.1", "::1"}},
		{name: "redirect to an internal address", f: &Fetcher{Allow: []string{"localhost"}, Log: log, addrOK: loopbackOnly},
			url: "http://localhost:" + port + "/", kind: ErrEgress, logHas: "10.1.2.3", leakers: []string{"10.1.2.3", "127.0.0.1", "::1"}},
		{name: "connection refused", f: &Fetcher{Allow: []string{"localhost"}, Log: log, addrOK: loopbackOnly},
			url: "http://localhost:" + closedPort + "/", kind: ErrFetch, logHas: "refused", leakers: []string{"127.0.0.1", "::1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logBuf.Reset()
			_, _, _, err := tc.f.Get(ctx, tc.url)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("error %v, want %v", err, tc.kind)
			}
			for _, l := range tc.leakers {
				if strings.Contains(err.Error(), l) {
					t.Errorf("the agent's error %q reveals %s", err, l)
				}
			}
			if !strings.Contains(err.Error(), `"localhost"`) {
				t.Errorf("the agent's error %q does not name the host it asked for", err)
			}
			if !strings.Contains(logBuf.String(), tc.logHas) {
				t.Errorf("the operator's log lacks %q:\n%s", tc.logHas, logBuf.String())
			}
		})
	}
}

func loopbackOnly(a netip.Addr) bool { return a.IsLoopback() }

// Errors the tests cannot cause over 127.0.0.1 alone (DNS, timeouts, TLS) are mapped too.
func TestAgentSafe(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://10.9.9.9/", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"dns", urlErr(&net.DNSError{Err: "no such host", Name: "api.example.com", Server: "10.0.0.2:53", IsNotFound: true}), `fetch failed: could not resolve "api.example.com"`},
		{"timeout", urlErr(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 9, 9, 9), Port: 443}, Err: os.ErrDeadlineExceeded}), `fetch failed: request to "api.example.com" timed out`},
		{"deadline", urlErr(context.DeadlineExceeded), `fetch failed: request to "api.example.com" timed out`},
		{"tls", urlErr(&tls.CertificateVerificationError{Err: x509.HostnameError{Host: "10.9.9.9", Certificate: &x509.Certificate{}}}), `fetch failed: TLS certificate of "api.example.com" not accepted`},
		{"other", urlErr(&net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 9, 9, 9), Port: 443}, Err: syscall.ECONNRESET}), `fetch failed: request to "api.example.com" failed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := agentSafe(tc.err, "api.example.com")
			if got.Error() != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if !errors.Is(got, ErrFetch) || strings.Contains(got.Error(), "10.") {
				t.Errorf("%q: wrong kind or leaks an address", got)
			}
		})
	}
}
