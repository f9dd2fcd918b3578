package audit

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sinks: JSON lines (file or stdout), syslog (RFC 5424 over TCP or TLS, RFC 6587 octet
// counting) and HTTP POST batches.

// JSONLSink appends one event per line to a file (fsynced before Send returns) or a stream.
type JSONLSink struct {
	w    io.Writer
	f    *os.File // nil for a stream
	sync bool
}

// NewJSONLFile opens path for appending (created with mode 0600). Send returns once the lines
// are fsynced. A torn last line (a crash mid-write: never acknowledged, so it will be sent
// again) is cut off first, so that every line of the file is a whole event.
func NewJSONLFile(path string) (*JSONLSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open export file: %w", err)
	}
	if err := cutTornLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("export file %s: %w", path, err)
	}
	return &JSONLSink{w: f, f: f, sync: true}, nil
}

// cutTornLine truncates f after its last newline.
func cutTornLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	end := fi.Size()
	buf := make([]byte, 64<<10)
	for off := end; off > 0; {
		n := int64(len(buf))
		if off < n {
			n = off
		}
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if cut := off + int64(i) + 1; cut != end {
				return truncateSync(f, cut)
			}
			return nil
		}
	}
	if end > 0 { // no newline at all: one torn line
		return truncateSync(f, 0)
	}
	return nil
}

func truncateSync(f *os.File, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// NewJSONLWriter writes lines to w (stdout): Send returns once w accepted them.
func NewJSONLWriter(w io.Writer) *JSONLSink { return &JSONLSink{w: w} }

// Send implements Sink.
func (s *JSONLSink) Send(_ context.Context, events []ExportEvent) error {
	var buf bytes.Buffer
	for _, e := range events {
		buf.Write(e.JSON)
		buf.WriteByte('\n')
	}
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write export lines: %w", err)
	}
	if s.sync {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("fsync export file: %w", err)
		}
	}
	return nil
}

// Close implements Sink.
func (s *JSONLSink) Close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

// SyslogConfig configures a SyslogSink.
type SyslogConfig struct {
	// Address is the receiver's host:port. Required.
	Address string
	// TLS, when set, speaks TLS (RFC 5425) with this configuration (its RootCAs, ServerName,
	// client certificate). Nil: plain TCP (RFC 6587).
	TLS *tls.Config
	// Hostname is the HOSTNAME field. Default os.Hostname.
	Hostname string
	// AppName is the APP-NAME field. Default "shield".
	AppName string
	// Facility is the syslog facility (0..23). Default 13 (log audit).
	Facility *int
	// Timeout bounds a dial (with the TLS handshake) and a batch write. Default 10s.
	Timeout time.Duration
}

// SyslogSink sends events as RFC 5424 messages over one TCP or TLS connection, each framed by
// octet counting (RFC 6587 §3.4.1: "LEN SP MSG"), so a message may hold any byte.
//
// Syslog has no acknowledgement: Send returns once the whole batch was written to the
// connection. A receiver that dies with bytes it has not read loses them; for end-to-end
// acknowledgement use the HTTP sink (or a relay that acknowledges, such as RELP in front).
type SyslogSink struct {
	cfg  SyslogConfig
	mu   sync.Mutex
	conn net.Conn
}

// NewSyslogSink checks cfg; it connects on the first Send.
func NewSyslogSink(cfg SyslogConfig) (*SyslogSink, error) {
	if _, _, err := net.SplitHostPort(cfg.Address); err != nil {
		return nil, fmt.Errorf("syslog address %q: %w", cfg.Address, err)
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	if cfg.AppName == "" {
		cfg.AppName = "shield"
	}
	if cfg.Facility == nil {
		f := 13
		cfg.Facility = &f
	}
	if *cfg.Facility < 0 || *cfg.Facility > 23 {
		return nil, fmt.Errorf("syslog facility %d: want 0..23", *cfg.Facility)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &SyslogSink{cfg: cfg}, nil
}

func (s *SyslogSink) dial(ctx context.Context) (net.Conn, error) {
	d := &net.Dialer{Timeout: s.cfg.Timeout, KeepAlive: 30 * time.Second}
	if s.cfg.TLS == nil {
		return d.DialContext(ctx, "tcp", s.cfg.Address)
	}
	cfg := s.cfg.TLS.Clone()
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(s.cfg.Address)
		cfg.ServerName = host
	}
	td := &tls.Dialer{NetDialer: d, Config: cfg}
	hctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	return td.DialContext(hctx, "tcp", s.cfg.Address)
}

// Send implements Sink.
func (s *SyslogSink) Send(ctx context.Context, events []ExportEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	for i := range events {
		msg := s.format(&events[i])
		buf.WriteString(strconv.Itoa(len(msg)))
		buf.WriteByte(' ')
		buf.Write(msg)
	}
	if s.conn == nil {
		c, err := s.dial(ctx)
		if err != nil {
			var cv *tls.CertificateVerificationError
			if errors.As(err, &cv) {
				return fmt.Errorf("connect to syslog %s: %w: %w", s.cfg.Address, ErrSinkRefused, err)
			}
			return fmt.Errorf("connect to syslog %s: %w", s.cfg.Address, err)
		}
		s.conn = c
	} else if peerClosed(s.conn) {
		s.conn.Close()
		s.conn = nil
		return fmt.Errorf("syslog %s closed the connection", s.cfg.Address)
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.cfg.Timeout))
	if _, err := s.conn.Write(buf.Bytes()); err != nil {
		s.conn.Close()
		s.conn = nil // the whole batch is sent again on a new connection
		return fmt.Errorf("write to syslog %s: %w", s.cfg.Address, err)
	}
	return nil
}

// peerClosed reports whether the receiver closed the connection (it never sends anything, so
// a readable byte or EOF means it is gone), so a batch is not written into a dead connection.
func peerClosed(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := c.Read(b[:])
	_ = c.SetReadDeadline(time.Time{})
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// syslogSeverity maps an OCSF severity_id to a syslog severity.
func syslogSeverity(ocsf int) int {
	switch ocsf {
	case 1:
		return 6 // informational
	case 2:
		return 5 // notice
	case 3:
		return 4 // warning
	case 4:
		return 3 // error
	default:
		return 2 // critical
	}
}

// syslogName keeps a header field printable US-ASCII (33..126) and at most n bytes ("-" if empty).
func syslogName(s string, n int) string {
	b := make([]byte, 0, min(len(s), n))
	for i := 0; i < len(s) && len(b) < n; i++ {
		if c := s[i]; c >= 33 && c <= 126 {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "-"
	}
	return string(b)
}

// sdEscape escapes an SD-PARAM value (RFC 5424 §6.3.3: '"', '\' and ']').
func sdEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, `]`, `\]`).Replace(s)
}

// syslogEnterprise is the private enterprise number of the structured-data id: 32473 is the
// one RFC 5612 reserves for documentation and examples (Shield has none of its own).
const syslogEnterprise = "32473"

// format renders one RFC 5424 message:
// <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [shield@32473 seq=.. hash=.. decision=..] BOM MSG
func (s *SyslogSink) format(e *ExportEvent) []byte {
	var b bytes.Buffer
	pri := *s.cfg.Facility*8 + syslogSeverity(e.Severity)
	fmt.Fprintf(&b, "<%d>1 %s %s %s - %s [shield@%s seq=\"%d\" hash=\"%s\"", pri,
		e.Time.UTC().Format("2006-01-02T15:04:05.000000Z"), syslogName(s.cfg.Hostname, 255), syslogName(s.cfg.AppName, 48),
		syslogName(string(e.Type), 32), syslogEnterprise, e.Seq, sdEscape(e.Hash))
	if e.Decision != "" {
		fmt.Fprintf(&b, " decision=\"%s\"", sdEscape(e.Decision))
	}
	b.WriteString("] \xef\xbb\xbf") // BOM: the MSG is UTF-8
	b.Write(e.JSON)
	return b.Bytes()
}

// Close implements Sink.
func (s *SyslogSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		err := s.conn.Close()
		s.conn = nil
		return err
	}
	return nil
}

// HTTPConfig configures an HTTPSink.
type HTTPConfig struct {
	// URL receives POSTs of application/x-ndjson batches (one event per line). Required.
	URL string
	// Header is added to every request (e.g. Authorization).
	Header http.Header
	// Client sends the requests (its Transport holds the TLS configuration). Default: a client
	// with Timeout, no redirects followed.
	Client *http.Client
	// Timeout bounds one request. Default 30s.
	Timeout time.Duration
	// MaxAttempts bounds the tries of one Send (then Send returns the error and the shipper
	// backs off and sends the batch again). Default 4.
	MaxAttempts int
	// RetryMin, RetryMax bound the back-off between tries (doubling). Default 500ms, 10s.
	RetryMin, RetryMax time.Duration
}

// HTTPSink POSTs each batch; a 2xx answer acknowledges it. 408, 429 and 5xx answers and
// transport errors are retried with back-off (Retry-After honoured, within RetryMax); other
// answers fail the Send at once (the shipper keeps the batch and retries later).
type HTTPSink struct {
	cfg HTTPConfig
}

// NewHTTPSink checks cfg.
func NewHTTPSink(cfg HTTPConfig) (*HTTPSink, error) {
	if !strings.HasPrefix(cfg.URL, "https://") && !strings.HasPrefix(cfg.URL, "http://") {
		return nil, fmt.Errorf("export http url %q: want http:// or https://", cfg.URL)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.RetryMin == 0 {
		cfg.RetryMin = 500 * time.Millisecond
	}
	if cfg.RetryMax == 0 {
		cfg.RetryMax = 10 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	c := *cfg.Client
	c.Timeout = cfg.Timeout
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.Client = &c
	return &HTTPSink{cfg: cfg}, nil
}

// errHTTPStatus is a non-2xx answer.
type errHTTPStatus struct {
	code       int
	retryAfter time.Duration
}

func (e *errHTTPStatus) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

func (e *errHTTPStatus) retryable() bool {
	return e.code == http.StatusRequestTimeout || e.code == http.StatusTooManyRequests || e.code >= 500
}

// Send implements Sink.
func (s *HTTPSink) Send(ctx context.Context, events []ExportEvent) error {
	var body bytes.Buffer
	for _, e := range events {
		body.Write(e.JSON)
		body.WriteByte('\n')
	}
	delay := s.cfg.RetryMin
	var err error
	for attempt := 1; attempt <= s.cfg.MaxAttempts; attempt++ {
		err = s.post(ctx, body.Bytes(), events[0].Seq, events[len(events)-1].Seq)
		if err == nil {
			return nil
		}
		var se *errHTTPStatus
		if errors.As(err, &se) {
			if !se.retryable() {
				return fmt.Errorf("post %d events to %s: %w: %w", len(events), s.cfg.URL, ErrSinkRefused, err)
			}
			if se.retryAfter > 0 {
				delay = min(max(delay, se.retryAfter), s.cfg.RetryMax)
			}
		}
		if attempt == s.cfg.MaxAttempts {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, s.cfg.RetryMax)
	}
	return fmt.Errorf("post %d events to %s: %w", len(events), s.cfg.URL, err)
}

func (s *HTTPSink) post(ctx context.Context, body []byte, first, last uint64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range s.cfg.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	// The receiver can de-duplicate a re-sent batch by these.
	req.Header.Set("X-Shield-First-Seq", strconv.FormatUint(first, 10))
	req.Header.Set("X-Shield-Last-Seq", strconv.FormatUint(last, 10))
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	se := &errHTTPStatus{code: resp.StatusCode}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && ra > 0 {
		se.retryAfter = time.Duration(ra) * time.Second
	}
	return se
}

// Close implements Sink.
func (s *HTTPSink) Close() error {
	s.cfg.Client.CloseIdleConnections()
	return nil
}

var (
	_ Sink = (*JSONLSink)(nil)
	_ Sink = (*SyslogSink)(nil)
	_ Sink = (*HTTPSink)(nil)
)
