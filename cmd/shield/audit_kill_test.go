package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

const auditKillEnv = "SHIELD_AUDIT_KILL_STATE"

// TestAuditKillHelper is the service process of TestAuditSurvivesSIGKILL: it runs only when that
// test starts this binary with auditKillEnv set, and returns at once otherwise.
func TestAuditKillHelper(t *testing.T) {
	dir := os.Getenv(auditKillEnv)
	if dir == "" {
		return
	}
	cfg := &Config{StateDir: dir}
	cfg.Policy.Workspace = "/home/user/project"
	cfg.WithDefaults()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func startKillHelper(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditKillHelper$")
	cmd.Env = append(os.Environ(), auditKillEnv+"="+dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "shield.sock")
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = shieldv1.NewShieldServiceClient(c).Health(ctx, &shieldv1.HealthRequest{})
			cancel()
			c.Close()
			if err == nil {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("service did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type auditAck struct {
	seq      uint64
	hash     string
	decision string
}

// TestAuditSurvivesSIGKILL runs the real service in a child process under concurrent Evaluate
// load, SIGKILLs it, restarts it, and checks that the log verifies and holds the record of every
// verdict a client received.
func TestAuditSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	cmd := startKillHelper(t, dir)
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "shield.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := shieldv1.NewShieldServiceClient(conn)

	var mu sync.Mutex
	var acks []auditAck
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				resp, err := client.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{
					CallId: fmt.Sprintf("w%d-%d", w, i), Tool: "Bash",
					ArgumentsJson: fmt.Sprintf(`{"command":"echo %d-%d"}`, w, i)}})
				if err != nil {
					return // the service is gone
				}
				v := resp.GetVerdict()
				mu.Lock()
				acks = append(acks, auditAck{v.GetAuditSeq(), v.GetAuditRecordHash(), strings.TrimPrefix(v.GetDecision().String(), "DECISION_")})
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acks)
		mu.Unlock()
		if n >= 300 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d verdicts before the deadline", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	wg.Wait()

	// Restart (recovering a torn tail, if any), then stop cleanly.
	cmd = startKillHelper(t, dir)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("service stopped with %v", err)
	}

	cfg := &Config{StateDir: dir}
	cfg.WithDefaults()
	pub, err := os.ReadFile(cfg.Audit.KeyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(cfg.Audit.Dir, strings.TrimSpace(string(pub)))
	if err != nil {
		t.Fatalf("log after SIGKILL and restart: %v", err)
	}
	l, err := audit.OpenReadOnly(cfg.Audit.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, a := range acks {
		r, err := l.Get(a.seq)
		if err != nil {
			t.Fatalf("verdict with audit seq %d has no record: %v", a.seq, err)
		}
		var d audit.Decision
		if err := json.Unmarshal(r.Payload, &d); err != nil || r.Hash != a.hash || d.Decision != a.decision {
			t.Fatalf("record %d (%s, %s) is not the acknowledged one (%s, %s)", a.seq, r.Hash, d.Decision, a.hash, a.decision)
		}
	}
	t.Logf("%d verdicts acknowledged before SIGKILL, all recorded; log has %d records", len(acks), rep.Records)
}
