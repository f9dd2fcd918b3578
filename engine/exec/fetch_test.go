package exec

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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
