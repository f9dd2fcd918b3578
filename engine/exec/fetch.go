package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrEgress is returned when a fetch is refused by the egress rules.
var ErrEgress = errors.New("egress refused")

// Fetcher performs HTTP(S) GETs for the agent. Hosts must match the allowlist, and whatever a
// name resolves to, connections to loopback, private, link-local, multicast, unspecified and cloud
// metadata addresses are refused at connect time (after DNS, so rebinding does not help).
type Fetcher struct {
	// Allow lists host names: "example.com" matches that host, "*.example.com" its subdomains.
	// Empty refuses every fetch.
	Allow    []string
	Timeout  time.Duration // default 15s
	MaxBytes int64         // response body cap; default 1 MiB

	// addrOK decides which addresses may be dialled; nil means publicAddr. Tests replace it.
	addrOK func(netip.Addr) bool
}

// publicAddr reports whether a may be contacted: a global unicast address that is not private,
// not shared (100.64/10), not a metadata address.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	if a.Is4() && netip.MustParsePrefix("100.64.0.0/10").Contains(a) {
		return false
	}
	if a == netip.MustParseAddr("fd00:ec2::254") {
		return false
	}
	return true
}

func (f *Fetcher) allowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range f.Allow {
		p = strings.ToLower(p)
		if p == host || (strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:])) {
			return true
		}
	}
	return false
}

// Get fetches raw (http or https) and returns the status, up to MaxBytes of the body and whether
// it was truncated. Redirects are followed only to allowed hosts (at most 5).
func (f *Fetcher) Get(ctx context.Context, raw string) (int, []byte, bool, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, nil, false, fmt.Errorf("%w: bad URL: %v", ErrEgress, err)
	}
	if err := f.check(u); err != nil {
		return 0, nil, false, err
	}
	ok := f.addrOK
	if ok == nil {
		ok = publicAddr
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ok(ap.Addr()) {
			return fmt.Errorf("%w: address %s is not public", ErrEgress, address)
		}
		return nil
	}}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{DialContext: dialer.DialContext, Proxy: nil, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: 64 << 10},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("%w: too many redirects", ErrEgress)
			}
			return f.check(req.URL)
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, false, err
	}
	defer resp.Body.Close()
	max := f.MaxBytes
	if max <= 0 {
		max = 1 << 20
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return resp.StatusCode, nil, false, err
	}
	if int64(len(b)) > max {
		return resp.StatusCode, b[:max], true, nil
	}
	return resp.StatusCode, b, false, nil
}

func (f *Fetcher) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q", ErrEgress, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL", ErrEgress)
	}
	if !f.allowed(u.Hostname()) {
		return fmt.Errorf("%w: host %q is not on the egress allowlist", ErrEgress, u.Hostname())
	}
	return nil
}
