package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testCA returns a CA pool and a server certificate for 127.0.0.1 signed by it.
func testCA(t *testing.T) (*x509.CertPool, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shield test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "syslog receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// syslogReceiver accepts connections on 127.0.0.1 and parses octet-counted frames. After
// dropAfter messages on a connection (0: never) it closes that connection.
type syslogReceiver struct {
	ln        net.Listener
	dropAfter int
	mu        sync.Mutex
	msgs      []string
	conns     int
}

func newSyslogReceiver(t *testing.T, tlsCfg *tls.Config, dropAfter int) *syslogReceiver {
	t.Helper()
	var ln net.Listener
	var err error
	if tlsCfg != nil {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", tlsCfg)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	r := &syslogReceiver{ln: ln, dropAfter: dropAfter}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns++
			r.mu.Unlock()
			go r.serve(c)
		}
	}()
	return r
}

func (r *syslogReceiver) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	n := 0
	for {
		lenStr, err := br.ReadString(' ')
		if err != nil {
			return
		}
		size, err := strconv.Atoi(strings.TrimSuffix(lenStr, " "))
		if err != nil || size <= 0 || size > 1<<20 {
			return
		}
		msg := make([]byte, size)
		if _, err := io.ReadFull(br, msg); err != nil {
			return
		}
		r.mu.Lock()
		r.msgs = append(r.msgs, string(msg))
		r.mu.Unlock()
		n++
		if r.dropAfter > 0 && n == r.dropAfter {
			return
		}
	}
}

func (r *syslogReceiver) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// waitMessages waits until the receiver holds n messages (bounded).
func (r *syslogReceiver) waitMessages(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := r.messages()
		if len(m) >= n || time.Now().After(deadline) {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var rfc5424 = regexp.MustCompile(`^<(\d{1,3})>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z) (\S{1,255}) (\S{1,48}) - (\S{1,32}) \[shield@32473 seq="(\d+)" hash="([0-9a-f]{64})"(?: decision="([A-Z]+)")?\] \x{FEFF}(.*)$`)

// TestSyslogTLS ships a trail to a TLS syslog receiver on 127.0.0.1 holding a certificate from
// a test CA: every record arrives as one RFC 5424 message with its seq, hash, decision and
// severity; an untrusted receiver is refused.
func TestSyslogTLS(t *testing.T) {
	pool, cert := testCA(t)
	recv := newSyslogReceiver(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, 0)
	l := exportLog(t, 6)
	sink, err := NewSyslogSink(SyslogConfig{Address: recv.ln.Addr().String(), TLS: &tls.Config{RootCAs: pool}, Hostname: "appliance-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	sh, err := NewShipper(ExportConfig{Batch: 4}, l, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Run(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	msgs := recv.waitMessages(t, 6)
	if len(msgs) != 6 {
		t.Fatalf("receiver got %d messages, want 6", len(msgs))
	}
	for i, m := range msgs {
		g := rfc5424.FindStringSubmatch(m)
		if g == nil {
			t.Fatalf("message %d is not RFC 5424 as framed: %q", i, m)
		}
		pri, _ := strconv.Atoi(g[1])
		wantSev := 6 // ALLOW: informational
		if g[8] == "BLOCK" {
			wantSev = 4 // warning
		}
		if pri != 13*8+wantSev || g[3] != "appliance-1" || g[4] != "shield" || g[5] != "decision" {
			t.Errorf("message %d header: pri %d host %s app %s msgid %s", i, pri, g[3], g[4], g[5])
		}
		if seq, _ := strconv.Atoi(g[6]); seq != 2*i { // decisions are the even seqs
			t.Errorf("message %d has seq %d, want %d", i, seq, 2*i)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(g[9]), &ev); err != nil || ev["class_uid"] != float64(6003) {
			t.Errorf("message %d body is not an OCSF API Activity event: %v %s", i, err, g[9])
		}
		if strings.Contains(m, "hunter") {
			t.Errorf("message %d holds a secret: %s", i, m)
		}
	}
	// A receiver whose certificate the configured CA did not sign is refused.
	otherPool, _ := testCA(t)
	bad, _ := NewSyslogSink(SyslogConfig{Address: recv.ln.Addr().String(), TLS: &tls.Config{RootCAs: otherPool}, Timeout: 5 * time.Second})
	defer bad.Close()
	if err := bad.Send(context.Background(), []ExportEvent{{Seq: 1, JSON: []byte(`{}`)}}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted receiver accepted: %v", err)
	}
}

// TestSyslogReconnects: a receiver that closed the connection is noticed before the next
// batch is written into it: that Send fails (the shipper sends the batch again) and the next
// one reconnects. (A receiver that dies with bytes unread loses them: syslog has no
// acknowledgement, see SyslogSink.)
func TestSyslogReconnects(t *testing.T) {
	recv := newSyslogReceiver(t, nil, 2) // closes each connection after 2 messages
	sink, err := NewSyslogSink(SyslogConfig{Address: recv.ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	batch := func(first uint64) []ExportEvent {
		return []ExportEvent{{Seq: first, Type: TypeDecision, Hash: strings.Repeat("0", 64), JSON: []byte(`{}`)},
			{Seq: first + 1, Type: TypeDecision, Hash: strings.Repeat("0", 64), JSON: []byte(`{}`)}}
	}
	ctx := context.Background()
	if err := sink.Send(ctx, batch(0)); err != nil {
		t.Fatal(err)
	}
	recv.waitMessages(t, 2)
	// The receiver closes after its second message; wait until the sink's end sees it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := sink.Send(ctx, batch(2))
		if err != nil {
			if !strings.Contains(err.Error(), "closed the connection") {
				t.Fatalf("Send into a closed connection: %v", err)
			}
			break
		}
		// Written before the close reached us: the receiver read nothing more, so this batch
		// went nowhere; the test retries until the close is seen.
		if time.Now().After(deadline) {
			t.Fatal("the sink never noticed the closed connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := sink.Send(ctx, batch(2)); err != nil {
		t.Fatalf("Send after reconnecting: %v", err)
	}
	msgs := recv.waitMessages(t, 4)
	if len(msgs) != 4 || !strings.Contains(msgs[2], `seq="2"`) || !strings.Contains(msgs[3], `seq="3"`) {
		t.Fatalf("receiver got %d messages, want seqs 0..3: %q", len(msgs), msgs)
	}
	recv.mu.Lock()
	conns := recv.conns
	recv.mu.Unlock()
	if conns != 2 {
		t.Errorf("receiver saw %d connections, want 2", conns)
	}
}

// TestHTTPSinkRecovers: an HTTP receiver that fails (503, then a dropped connection) and then
// recovers receives every record; a 4xx fails the send at once, and a following shipper keeps
// the batch until the receiver accepts it.
func TestHTTPSinkRecovers(t *testing.T) {
	var calls, failFirst atomic.Int32
	failFirst.Store(3)
	var mu sync.Mutex
	var got []string
	var firstSeqs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n <= failFirst.Load() {
			if n == 2 { // a dropped connection
				hj, _ := w.(http.Hijacker)
				c, _, _ := hj.Hijack()
				c.Close()
				return
			}
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Authorization") != "Bearer t0k" || r.Header.Get("Content-Type") != "application/x-ndjson" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, strings.Split(strings.TrimSpace(string(body)), "\n")...)
		firstSeqs = append(firstSeqs, r.Header.Get("X-Shield-First-Seq"))
		mu.Unlock()
	}))
	defer srv.Close()
	l := exportLog(t, 10)
	sink, err := NewHTTPSink(HTTPConfig{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t0k"}},
		MaxAttempts: 5, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	sh, err := NewShipper(ExportConfig{Batch: 8, Format: FormatRecord}, l, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Run(context.Background(), false); err != nil {
		t.Fatalf("the receiver recovered within the sink's attempts: %v", err)
	}
	if len(got) != 10 {
		t.Fatalf("receiver got %d events, want 10", len(got))
	}
	for i, line := range got {
		// Redacted by the log at append, unchanged by the export redaction: the stored line.
		if _, err := DecodeRecord([]byte(line)); err != nil {
			t.Errorf("event %d does not verify as a stored record: %v", i, err)
		}
		var rec struct {
			Seq uint64 `json:"seq"`
		}
		json.Unmarshal([]byte(line), &rec)
		if rec.Seq != uint64(2*i) {
			t.Errorf("event %d is seq %d, want %d", i, rec.Seq, 2*i)
		}
	}
	if firstSeqs[0] != "0" {
		t.Errorf("X-Shield-First-Seq %q, want 0", firstSeqs[0])
	}

	// 4xx: not retried by the sink; a following shipper retries the batch until it is accepted.
	var rejecting atomic.Bool
	rejecting.Store(true)
	var accepted atomic.Int32
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rejecting.Load() {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		accepted.Add(int32(bytes.Count(body, []byte("\n"))))
	}))
	defer srv2.Close()
	sink2, _ := NewHTTPSink(HTTPConfig{URL: srv2.URL, MaxAttempts: 3, RetryMin: time.Millisecond})
	if err := sink2.Send(context.Background(), []ExportEvent{{Seq: 0, JSON: []byte(`{}`)}}); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Fatalf("400 answer: %v", err)
	}
	sh2, _ := NewShipper(ExportConfig{RetryMin: 5 * time.Millisecond, RetryMax: 10 * time.Millisecond}, l, sink2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- sh2.Run(ctx, true) }()
	for sh2.Stats().Failures < 2 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if sh2.Stats().Next != 0 {
		t.Fatalf("cursor moved to %d while the receiver refused", sh2.Stats().Next)
	}
	rejecting.Store(false)
	for sh2.Stats().Next < l.Size() && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if accepted.Load() != 10 {
		t.Errorf("receiver accepted %d events after recovering, want 10", accepted.Load())
	}
}

// TestJSONLFileCutsTornLine: a line torn by a crash mid-write is cut when the file is opened
// again, so the re-sent batch starts on a line of its own.
func TestJSONLFileCutsTornLine(t *testing.T) {
	for _, tc := range []struct{ before, after string }{
		{"{\"seq\":1}\n{\"seq\":2", "{\"seq\":1}\n"},
		{"{\"se", ""},
		{"{\"seq\":1}\n", "{\"seq\":1}\n"},
		{"", ""},
	} {
		p := t.TempDir() + "/out.jsonl"
		if err := os.WriteFile(p, []byte(tc.before), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := NewJSONLFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(context.Background(), []ExportEvent{{JSON: []byte(`{"seq":2}`)}}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		got, _ := os.ReadFile(p)
		if want := tc.after + "{\"seq\":2}\n"; string(got) != want {
			t.Errorf("file %q after reopen and send: %q, want %q", tc.before, got, want)
		}
	}
}

// TestOneShotStopsOnRefusal: a refusal retrying cannot fix (HTTP 4xx) ends a one-shot run at
// once, without moving the cursor.
func TestOneShotStopsOnRefusal(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	l := exportLog(t, 2)
	sink, _ := NewHTTPSink(HTTPConfig{URL: srv.URL})
	sh, _ := NewShipper(ExportConfig{MaxAttempts: 5}, l, sink)
	err := sh.Run(context.Background(), false)
	if !errors.Is(err, ErrSinkRefused) || calls.Load() != 1 || sh.Stats().Next != 0 {
		t.Fatalf("Run: %v after %d requests, cursor %d; want ErrSinkRefused after 1, cursor 0", err, calls.Load(), sh.Stats().Next)
	}
}
