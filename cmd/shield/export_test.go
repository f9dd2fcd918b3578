package main

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
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shieldsec/shield/audit"
)

const exportHelperEnv = "SHIELD_EXPORT_HELPER_ARGS"

// TestAuditExportHelper is the exporter process of TestAuditExportSurvivesSIGKILL: it runs only
// when that test starts this binary with exportHelperEnv set, and returns at once otherwise.
func TestAuditExportHelper(t *testing.T) {
	args := os.Getenv(exportHelperEnv)
	if args == "" {
		return
	}
	os.Exit(runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: os.Stdout, stderr: os.Stderr}, strings.Split(args, "\x1f")))
}

// exportedSeqs reads the export file (record format) and returns its seqs in order.
func exportedSeqs(t *testing.T, path string) []uint64 {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var r struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("export line %q is not a whole event: %v", sc.Text(), err)
		}
		out = append(out, r.Seq)
	}
	return out
}

// TestAuditExportSurvivesSIGKILL: shield audit export --sink jsonl --follow, killed with
// SIGKILL twice while a writer keeps appending, resumes from its cursor each time: the file
// ends up with every decision, whole lines only, and repeats nothing but the batch in flight
// at each kill.
func TestAuditExportSurvivesSIGKILL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := audit.Open(audit.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	work := t.TempDir()
	out, cursor := filepath.Join(work, "decisions.jsonl"), filepath.Join(work, "export.cursor")
	const batch = 5
	args := strings.Join([]string{"audit", "export", "--dir", dir, "--sink", "jsonl", "--out", out, "--cursor", cursor,
		"--follow", "--format", "record", "--type", "decision", "--batch", fmt.Sprint(batch)}, "\x1f")
	start := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAuditExportHelper$")
		cmd.Env = append(os.Environ(), exportHelperEnv+"="+args)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	// The writer appends decisions (each followed by its checkpoint record) throughout.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var decisions []uint64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300 && ctx.Err() == nil; i++ {
			p, err := l.Append(ctx, audit.TypeDecision, &audit.Decision{Tool: "Bash", Decision: "ALLOW", CallID: fmt.Sprint(i)})
			if err != nil {
				return
			}
			mu.Lock()
			decisions = append(decisions, p.Seq)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	distinct := func() int {
		seen := map[uint64]bool{}
		for _, s := range exportedSeqs(t, out) {
			seen[s] = true
		}
		return len(seen)
	}
	// waitLines waits until the export holds n distinct records (duplicates do not count).
	waitLines := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for distinct() < n {
			if time.Now().After(deadline) {
				t.Fatalf("export reached %d records, want %d", distinct(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cmd := start()
	for _, at := range []int{40, 120} {
		waitLines(at)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		cmd = start()
	}
	wg.Wait()
	cancel()
	mu.Lock()
	want := append([]uint64(nil), decisions...)
	mu.Unlock()
	waitLines(len(want))
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	got := exportedSeqs(t, out)
	count := map[uint64]int{}
	for _, s := range got {
		count[s]++
	}
	for _, s := range want {
		if count[s] == 0 {
			t.Fatalf("decision at seq %d was never exported (a gap)", s)
		}
	}
	dups := 0
	for _, n := range count {
		dups += n - 1
	}
	if dups > 2*batch {
		t.Errorf("%d duplicate lines after 2 kills; at most the batch in flight (%d) may repeat per kill", dups, batch)
	}
	if len(count) != len(want) {
		t.Errorf("exported %d distinct records, want the %d decisions (no checkpoint records)", len(count), len(want))
	}
	t.Logf("%d decisions exported across 2 SIGKILLs, %d duplicate lines", len(want), dups)
}

// TestAuditExportHTTPOneShot: shield audit export --sink http posts OCSF batches with the
// bearer token from --token-env, and a second run ships only what the cursor has not.
func TestAuditExportHTTPOneShot(t *testing.T) {
	dir, _ := auditFixture(t)
	var mu sync.Mutex
	var lines []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer siem-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
		mu.Unlock()
	}))
	defer srv.Close()
	t.Setenv("SHIELD_TEST_SIEM_TOKEN", "siem-token")
	cursor := filepath.Join(t.TempDir(), "c")
	code, _, errs := runShield(t, "audit", "export", "--dir", dir, "--sink", "http", "--url", srv.URL, "--token-env", "SHIELD_TEST_SIEM_TOKEN", "--cursor", cursor)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if len(lines) != 5 {
		t.Fatalf("receiver got %d events, want the 5 decisions", len(lines))
	}
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev["class_uid"] != 6003.0 {
			t.Errorf("not an OCSF API Activity event: %s", l)
		}
		if strings.Contains(l, "s3cr3t") {
			t.Errorf("event holds a secret: %s", l)
		}
	}
	code, _, errs = runShield(t, "audit", "export", "--dir", dir, "--sink", "http", "--url", srv.URL, "--token-env", "SHIELD_TEST_SIEM_TOKEN", "--cursor", cursor)
	if code != 0 || len(lines) != 5 || !strings.Contains(errs, "shipped 0 records") {
		t.Fatalf("second run: exit %d, %d events, %s", code, len(lines), errs)
	}
}

// TestExportConfigChecks: the export: section and the flags refuse what cannot work.
func TestExportConfigChecks(t *testing.T) {
	tests := []struct {
		name string
		c    ExportConfig
		want string
	}{
		{"unknown sink", ExportConfig{Sink: "kafka"}, "use jsonl, syslog or http"},
		{"syslog without address", ExportConfig{Sink: "syslog"}, "address is required"},
		{"clear-text http off the host", ExportConfig{Sink: "http", HTTP: HTTPExportConfig{URL: "http://siem.example/in"}}, "use https"},
		{"empty token", ExportConfig{Sink: "http", HTTP: HTTPExportConfig{URL: "https://siem.example/in", TokenEnv: "SHIELD_TEST_UNSET_TOKEN"}}, "is empty"},
		{"bad format", ExportConfig{Sink: "jsonl", Format: "cef"}, "format"},
		{"ca without tls", ExportConfig{Sink: "syslog", Syslog: SyslogExportConfig{Address: "h:514", CAFile: "ca.pem"}}, "need tls: true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
	ok := ExportConfig{Sink: "http", HTTP: HTTPExportConfig{URL: "http://127.0.0.1:8080/in"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("loopback http: %v", err)
	}
	// Strict YAML: the section decodes, and an unknown key is an error.
	p := filepath.Join(t.TempDir(), "shield.yaml")
	os.WriteFile(p, []byte("export:\n  sink: syslog\n  syslog:\n    address: 127.0.0.1:6514\n    tls: true\n"), 0o600)
	cfg, err := loadConfig(p)
	if err != nil || cfg.Export == nil || !cfg.Export.Syslog.TLS {
		t.Fatalf("loadConfig: %v %+v", err, cfg)
	}
	os.WriteFile(p, []byte("export:\n  sink: syslog\n  sislog: {}\n"), 0o600)
	if _, err := loadConfig(p); err == nil {
		t.Error("unknown key in export: accepted")
	}
	var buf bytes.Buffer
	code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &buf, stderr: &buf}, []string{"audit", "export", "--follow"})
	if code != 2 || !strings.Contains(buf.String(), "--follow needs --sink") {
		t.Errorf("--follow without --sink: exit %d: %s", code, buf.String())
	}
}

// TestAuditExportSyslogTLS: shield audit export --sink syslog --tls --ca FILE reaches a TLS
// receiver on 127.0.0.1 whose certificate that CA signed, with octet-counted RFC 5424 frames;
// without --ca (system roots) the same receiver is refused.
func TestAuditExportSyslogTLS(t *testing.T) {
	dir, _ := auditFixture(t)
	work := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, _ := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	caFile := filepath.Join(work, "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	frames := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					n, err := br.ReadString(' ')
					if err != nil {
						return
					}
					size, err := strconv.Atoi(strings.TrimSpace(n))
					if err != nil || size > 1<<20 {
						return
					}
					msg := make([]byte, size)
					if _, err := io.ReadFull(br, msg); err != nil {
						return
					}
					frames <- string(msg)
				}
			}(c)
		}
	}()
	code, _, errs := runShield(t, "audit", "export", "--dir", dir, "--sink", "syslog", "--address", ln.Addr().String(), "--tls", "--ca", caFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for i := 0; i < 5; i++ {
		select {
		case m := <-frames:
			if !strings.HasPrefix(m, "<") || !strings.Contains(m, " shield - decision [shield@32473 seq=") || strings.Contains(m, "s3cr3t") {
				t.Errorf("frame %d: %q", i, m)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("receiver got %d of 5 messages", i)
		}
	}
	code, _, errs = runShield(t, "audit", "export", "--dir", dir, "--sink", "syslog", "--address", ln.Addr().String(), "--tls")
	if code == 0 || !strings.Contains(errs, "certificate") {
		t.Errorf("receiver with an unknown CA accepted: exit %d: %s", code, errs)
	}
}

// TestExampleExportBlock: the commented export: section of deploy/shield.yaml, uncommented,
// decodes strictly and validates.
func TestExampleExportBlock(t *testing.T) {
	data, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "\n# export:\n")
	if !ok {
		t.Fatal("no commented-out export section in the example")
	}
	block, _, _ = strings.Cut(block, "\n\n")
	var b strings.Builder
	b.WriteString("export:\n")
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "#   ") && !strings.HasPrefix(strings.TrimLeft(strings.TrimPrefix(l, "#"), " "), "#") {
			b.WriteString(strings.TrimPrefix(l, "#") + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "export.yaml")
	os.WriteFile(path, []byte(b.String()), 0o600)
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatalf("uncommented export section:\n%s\n%v", b.String(), err)
	}
	if cfg.Export == nil || cfg.Export.Sink != "syslog" || !cfg.Export.Syslog.TLS || cfg.Export.HTTP.MaxAttempts != 4 {
		t.Fatalf("export section decoded to %+v", cfg.Export)
	}
	if err := cfg.Export.Validate(); err != nil {
		t.Errorf("example export section: %v", err)
	}
}
