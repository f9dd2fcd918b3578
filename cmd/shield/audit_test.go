package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/cmd/shield/appliance"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/server"
)

func runShield(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// auditFixture writes a closed log of decisions through the recorder, as the pipeline does.
func auditFixture(t *testing.T) (dir, pubFile string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "audit")
	l, err := audit.Open(audit.Config{Dir: dir, CheckpointEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	rec := newAuditRecorder(l)
	for i, tool := range []string{"Bash", "Read", "Bash", "WebFetch", "Bash"} {
		d := shield.Allow
		rules := []string(nil)
		if i == 2 {
			d, rules = shield.Block, []string{"cel:destructive.rm-root"}
		}
		pos, err := rec.RecordDecision(context.Background(), &shield.DecisionRecord{
			Call: &shield.Call{ID: "c", Tool: tool, Arguments: json.RawMessage(`{"command":"ls","token":"s3cr3t"}`),
				Context: shield.CallContext{SessionID: "sess-1", AgentID: "agent-1", Caller: "uid:1000"}},
			Verdict: &shield.Verdict{Decision: d, Tier: shield.TierCEL, Rules: rules, Reason: "r", ActionClass: "exec"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if pos.Hash == "" {
			t.Fatal("recorder returned no hash")
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "signing.key.pub")
}

func TestAuditRecorderRejectsMissingVerdict(t *testing.T) {
	l, err := audit.Open(audit.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := newAuditRecorder(l).RecordDecision(context.Background(), &shield.DecisionRecord{}); err == nil {
		t.Fatal("recorded a decision without a verdict")
	}
}

func TestAuditVerifyCommand(t *testing.T) {
	dir, pub := auditFixture(t)
	code, out, errs := runShield(t, "audit", "verify", "--dir", dir, "--pubkey", pub)
	if code != 0 || !strings.Contains(out, "intact: ") {
		t.Fatalf("verify intact log: code %d\n%s%s", code, out, errs)
	}
	// Alter the BLOCK decision into an ALLOW.
	seg := filepath.Join(dir, "audit-00000000000000000000.jsonl")
	data, _ := os.ReadFile(seg)
	data = bytes.Replace(data, []byte(`"BLOCK"`), []byte(`"ALLOW"`), 1)
	if err := os.WriteFile(seg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runShield(t, "audit", "verify", "--dir", dir, "--pubkey", pub)
	if code != 1 || !strings.Contains(out, "first bad seq 4") { // decision 2 (each is followed by a checkpoint)
		t.Fatalf("verify altered log: code %d, output %q", code, out)
	}
}

func TestAuditQueryCommands(t *testing.T) {
	dir, _ := auditFixture(t)
	code, out, errs := runShield(t, "audit", "query", "--dir", dir, "--decision", "block", "--json")
	if code != 0 {
		t.Fatalf("query: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"seq":4`) || strings.Contains(out, "s3cr3t") {
		t.Fatalf("query --decision block --json:\n%s", out)
	}
	code, out, _ = runShield(t, "audit", "query", "--dir", dir, "--tool", "Bash")
	if code != 0 || strings.Count(out, "Bash") != 3 || !strings.HasPrefix(out, "SEQ") {
		t.Fatalf("query --tool Bash table:\n%s", out)
	}
	code, out, errs = runShield(t, "audit", "get", "--dir", dir, "--proof", "1")
	if code != 0 || !strings.Contains(out, `"verified":true`) {
		t.Fatalf("get --proof: %d\n%s%s", code, out, errs)
	}
	code, out, _ = runShield(t, "audit", "tail", "--dir", dir, "-n", "2", "--json")
	if code != 0 || strings.Count(out, "\n") != 2 {
		t.Fatalf("tail -n 2:\n%s", out)
	}
	exp := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errs := runShield(t, "audit", "export", "--dir", dir, "--out", exp); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	got, _ := os.ReadFile(exp)
	want, _ := os.ReadFile(filepath.Join(dir, "audit-00000000000000000000.jsonl"))
	if !bytes.Equal(got, want) {
		t.Fatal("export is not the stored lines verbatim")
	}
	if code, _, _ := runShield(t, "audit", "query", "--dir", dir, "--filter", "true"); code != 2 {
		t.Fatalf("--filter without --addr: code %d, want a usage error", code)
	}
}

func TestAuditQueryThroughService(t *testing.T) {
	dir, _ := auditFixture(t)
	l, err := audit.Open(audit.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	shieldv1.RegisterAuditServiceServer(srv, server.NewAuditService(l))
	go srv.Serve(lis)
	defer srv.Stop()
	code, out, errs := runShield(t, "audit", "query", "--addr", lis.Addr().String(), "--filter", `record.payload.tool == "WebFetch"`, "--json")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "WebFetch") {
		t.Fatalf("query --addr --filter: %d\n%s%s", code, out, errs)
	}
	code, out, errs = runShield(t, "audit", "get", "--addr", lis.Addr().String(), "--proof", "3")
	if code != 0 || !strings.Contains(out, `"verified":true`) {
		t.Fatalf("get --addr --proof: %d\n%s%s", code, out, errs)
	}
}

func TestOpenAuditLogRefusesSharedStateDir(t *testing.T) {
	cfg := &Config{StateDir: filepath.Join(t.TempDir(), "state")}
	cfg.WithDefaults()
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cfg.StateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := openAuditLog(cfg, log); !errors.Is(err, audit.ErrInsecureMode) || !strings.Contains(err.Error(), cfg.StateDir) {
		t.Fatalf("openAuditLog with a world-writable state dir: %v", err)
	}
	if err := os.Chmod(cfg.StateDir, 0o710); err != nil {
		t.Fatal(err)
	}
	al, err := openAuditLog(cfg, log)
	if err != nil {
		t.Fatalf("openAuditLog with a 0710 state dir: %v", err)
	}
	al.Close()
	// A signing key that others may read is refused, naming the file and the fix.
	if err := os.Chmod(cfg.Audit.KeyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openAuditLog(cfg, log); !errors.Is(err, audit.ErrInsecureMode) || !strings.Contains(err.Error(), "chmod 0600 "+cfg.Audit.KeyFile) {
		t.Fatalf("openAuditLog with a 0644 key: %v", err)
	}
}

// TestAuditVerifyRejectsUnsignedTail: a record appended after the last checkpoint by someone
// without the key makes verify fail with a clear message.
func TestAuditVerifyRejectsUnsignedTail(t *testing.T) {
	dir, pub := auditFixture(t)
	seg := filepath.Join(dir, "audit-00000000000000000000.jsonl")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	last, err := audit.DecodeRecord(bytes.TrimSuffix(lines[len(lines)-2], []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	// A well-chained record, as anyone who can write the file can make it.
	forged := fmt.Sprintf(`{"payload":{"decision":"ALLOW","tool":"Bash"},"prev":%q,"seq":%d,"time":%q,"type":"decision"}`,
		last.Hash, last.Seq+1, last.Time.Format(audit.TimeFormat))
	h := audit.LeafHash([]byte(forged))
	line := `{"hash":"` + audit.HashHex(h[:]) + `",` + forged[1:] + "\n"
	if _, err := audit.DecodeRecord([]byte(strings.TrimSuffix(line, "\n"))); err != nil {
		t.Fatalf("forged line: %v", err)
	}
	if err := os.WriteFile(seg, append(data, line...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runShield(t, "audit", "verify", "--dir", dir, "--pubkey", pub)
	want := fmt.Sprintf("NOT INTACT: first bad seq %d", last.Seq+1)
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "after the last signed checkpoint") {
		t.Fatalf("verify with an unsigned record: code %d, output %q %q", code, out, errs)
	}
}

// TestOpenAuditLogQuarantineIsLoud: a tail no checkpoint covers is moved aside at open with an
// error-level log line and in the metrics, never adopted.
func TestOpenAuditLogQuarantineIsLoud(t *testing.T) {
	cfg := &Config{StateDir: filepath.Join(t.TempDir(), "state")}
	cfg.WithDefaults()
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	al, err := openAuditLog(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	al.Close()
	seg := filepath.Join(cfg.Audit.Dir, "audit-00000000000000000000.jsonl")
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"hash":"00`) // a torn (or forged) tail
	f.Close()
	var out bytes.Buffer
	al, err = openAuditLog(cfg, slog.New(slog.NewTextHandler(&out, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	if !strings.Contains(out.String(), "level=ERROR") || !strings.Contains(out.String(), "AUDIT LOG TAIL QUARANTINED") {
		t.Fatalf("log: %s", out.String())
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(auditCollectors(al)...)
	if got := testutil.ToFloat64(mustCollector(t, reg, "shield_audit_log_quarantined_bytes")); got != float64(len(`{"hash":"00`)) {
		t.Fatalf("shield_audit_log_quarantined_bytes = %v", got)
	}
	if n, err := testutil.GatherAndCount(reg, "shield_audit_log_healthy"); err != nil || n != 1 {
		t.Fatalf("shield_audit_log_healthy: %d %v", n, err)
	}
}

func mustCollector(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			v := mf.GetMetric()[0].GetGauge().GetValue()
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: "copy"}, func() float64 { return v })
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// TestAuditRecorderLogsFailures: a decision that cannot be recorded is logged (rate-limited).
func TestAuditRecorderLogsFailures(t *testing.T) {
	l, err := audit.Open(audit.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out bytes.Buffer
	r := appliance.NewAuditRecorder(l, slog.New(slog.NewTextHandler(&out, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the append cannot wait for its fsync
	for range 50 {
		if _, err := r.RecordDecision(ctx, &shield.DecisionRecord{Verdict: &shield.Verdict{Decision: shield.Allow, DecisionID: "d1"}}); err == nil {
			t.Fatal("recorded with a cancelled context")
		}
	}
	if n := strings.Count(out.String(), "audit record failed"); n != 1 {
		t.Fatalf("%d log lines for 50 failures, want 1 (rate-limited):\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "decision_id=d1") || !strings.Contains(out.String(), "canceled") {
		t.Fatalf("log: %s", out.String())
	}
}
