package exec

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

// ErrFetch is returned when an allowed fetch fails (name not found, connection refused, timeout,
// TLS failure, broken response).
var ErrFetch = errors.New("fetch failed")

// agentError is an error whose message is shown to the agent as is: it names at most the host the
// agent asked for, never an address a name resolved to, a resolver's address or a peer's address.
// The detail goes to the operator's log. Unwrap yields only the sentinel (ErrEgress or ErrFetch),
// so no detail can reach the agent through a wrapping chain either.
type agentError struct {
	msg  string
	kind error
}

func (e *agentError) Error() string { return e.kind.Error() + ": " + e.msg }
func (e *agentError) Unwrap() error { return e.kind }

func refused(format string, args ...any) error {
	return &agentError{msg: fmt.Sprintf(format, args...), kind: ErrEgress}
}

func failed(format string, args ...any) error {
	return &agentError{msg: fmt.Sprintf(format, args...), kind: ErrFetch}
}

// Fetcher performs HTTP(S) GETs for the agent. Hosts must match the allowlist, and whatever a
// name resolves to, connections to loopback, private, link-local, multicast, unspecified and cloud
// metadata addresses are refused at connect time (after DNS, so rebinding does not help).
type Fetcher struct {
	// Allow lists host names: "example.com" matches that host, "*.example.com" its subdomains.
	// Empty refuses every fetch.
	Allow    []string
	Timeout  time.Duration // default 15s
	MaxBytes int64         // response body cap; default 1 MiB

	// Log receives the full detail of every failed fetch (resolved addresses included), which
	// the agent does not see; nil means slog.Default().
	Log *slog.Logger

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

func (f *Fetcher) log() *slog.Logger {
	if f.Log != nil {
		return f.Log
	}
	return slog.Default()
}

// Get fetches raw (http or https) and returns the status, up to MaxBytes of the body and whether
// it was truncated. Redirects are followed only to allowed hosts (at most 5). Its errors are safe
// to show the agent (see agentError); the operator's log has the detail.
func (f *Fetcher) Get(ctx context.Context, raw string) (int, []byte, bool, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, nil, false, refused("bad URL")
	}
	if err := f.check(u); err != nil {
		return 0, nil, false, err
	}
	code, body, trunc, err := f.get(ctx, u)
	if err != nil {
		f.log().Warn("fetch failed", "url", u.Redacted(), "error", err.Error())
		return code, nil, false, agentSafe(err, u.Hostname())
	}
	return code, body, trunc, nil
}

// agentSafe turns an error of the HTTP client into one the agent may see.
func agentSafe(err error, host string) error {
	var ae *agentError
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var unknownAuth x509.UnknownAuthorityError
	var netErr net.Error
	switch {
	case errors.As(err, &ae):
		return &agentError{msg: fmt.Sprintf("request to %q: %s", host, ae.msg), kind: ae.kind}
	case errors.Is(err, context.Canceled):
		return failed("request to %q canceled", host)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return failed("request to %q timed out", host)
	case errors.As(err, &dnsErr):
		return failed("could not resolve %q", host)
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &unknownAuth):
		return failed("TLS certificate of %q not accepted", host)
	case errors.Is(err, errReadBody):
		return failed("reading the response from %q failed", host)
	}
	return failed("request to %q failed", host)
}

// errReadBody marks a failure while reading the response body.
var errReadBody = errors.New("reading the response body")

func (f *Fetcher) get(ctx context.Context, u *url.URL) (int, []byte, bool, error) {
	ok := f.addrOK
	if ok == nil {
		ok = publicAddr
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ok(ap.Addr()) {
			f.log().Warn("fetch refused: address not public", "address", address)
			return refused("the host resolves to an address that is not allowed (loopback, private, link-local or metadata)")
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
				return refused("too many redirects")
			}
			if err := f.check(req.URL); err != nil {
				// The target came from the server, not the agent: logged, not named.
				f.log().Warn("fetch refused: redirect", "from", via[len(via)-1].URL.Redacted(), "to", req.URL.Redacted(), "error", err.Error())
				return refused("redirected to a URL the egress rules refuse")
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, false, refused("bad URL")
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
		return resp.StatusCode, nil, false, fmt.Errorf("%w: %w", errReadBody, err)
	}
	if int64(len(b)) > max {
		return resp.StatusCode, b[:max], true, nil
	}
	return resp.StatusCode, b, false, nil
}

func (f *Fetcher) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refused("scheme %q", u.Scheme)
	}
	if u.User != nil {
		return refused("credentials in the URL")
	}
	if !f.allowed(u.Hostname()) {
		return refused("host %q is not on the egress allowlist", u.Hostname())
	}
	return nil
}
