// Package chaos_test replays the attack classes of the hardening review against the real shield
// binary: deep and wide inputs, cache-poisoning sequences, descriptor exhaustion, a full disk,
// SIGKILL under load, and thousands of calls in flight while Health is measured.
//
// `go test ./deploy/chaos` (part of `make test`) runs a short seeded version; `make chaos` runs the
// full sizes (CHAOS_FULL=1). Each scenario logs what it tried and what held; TestMain prints the
// summary table at the end.
package chaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

var (
	shieldBin string
	full      = os.Getenv("CHAOS_FULL") == "1"
	seed      = uint64(1)

	summaryMu sync.Mutex
	summary   []string
)

// size picks the short (CI) or full (make chaos) value.
func size(short, long int) int {
	if full {
		return long
	}
	return short
}

func report(format string, args ...any) {
	summaryMu.Lock()
	defer summaryMu.Unlock()
	summary = append(summary, fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "CHAOS_SEED:", err)
			os.Exit(2)
		}
		seed = v
	}
	dir, err := os.MkdirTemp("", "shield-chaos-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	shieldBin = filepath.Join(dir, "shield")
	build := exec.Command("go", "build", "-o", shieldBin, "github.com/shieldsec/shield/cmd/shield")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build shield:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	mode := "short (CI)"
	if full {
		mode = "full"
	}
	fmt.Printf("\n== chaos summary (%s, seed %d) ==\n", mode, seed)
	for _, s := range summary {
		fmt.Println(s)
	}
	os.Exit(code)
}

// service is one running `shield serve` process.
type service struct {
	t       *testing.T
	dir     string
	sock    string
	cfgPath string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited
	exitErr error
	stderr  *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<20 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// agentOnly configures the unix socket so that the test's own uid has only the agent role, as
// the attacker of the review had.
func agentOnly() string {
	return fmt.Sprintf("auth:\n  unix_roles:\n    %q: [agent]\n", strconv.Itoa(os.Getuid()))
}

// startService writes the config (extra YAML appended) and starts serve; prefix, if set, is a
// command the binary runs under (e.g. prlimit).
func startService(t *testing.T, dir, extra string, prefix ...string) *service {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &service{t: t, dir: dir, sock: filepath.Join(dir, "shield.sock"), cfgPath: filepath.Join(dir, "shield.yaml")}
	cfg := fmt.Sprintf("state_dir: %s\npolicy:\n  workspace: /home/user/project\n  watch: false\n%s", dir, extra)
	if err := os.WriteFile(s.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start(prefix...)
	t.Cleanup(s.stop)
	return s
}

func (s *service) start(prefix ...string) {
	t := s.t
	t.Helper()
	args := append(append([]string{}, prefix...), shieldBin, "serve", "--config", s.cfgPath)
	s.cmd = exec.Command(args[0], args[1:]...)
	s.stderr = &lockedBuf{}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func(c *exec.Cmd, ch chan struct{}) { s.exitErr = c.Wait(); close(ch) }(s.cmd, s.exited)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := s.health(2 * time.Second); err == nil {
			return
		}
		select {
		case <-s.exited:
			t.Fatalf("shield serve exited at start: %v\n%s", s.exitErr, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("shield serve did not come up\n%s", s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether the process is still running.
func (s *service) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *service) stop() {
	if s.cmd == nil || !s.alive() {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *service) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

func (s *service) dial() *grpc.ClientConn {
	s.t.Helper()
	c, err := grpc.NewClient("unix://"+s.sock, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// health asks Health on a fresh connection and returns an error unless it answers SERVING.
func (s *service) health(timeout time.Duration) error {
	c, err := grpc.NewClient("unix://"+s.sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := shieldv1.NewShieldServiceClient(c).Health(ctx, &shieldv1.HealthRequest{})
	if err != nil {
		return err
	}
	if st := resp.GetStatus().String(); !strings.HasSuffix(st, "SERVING") || strings.HasSuffix(st, "NOT_SERVING") {
		return fmt.Errorf("health %s", st)
	}
	return nil
}

func evaluate(ctx context.Context, c shieldv1.ShieldServiceClient, tool, args string) (*shieldv1.Verdict, error) {
	resp, err := c.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: tool, ArgumentsJson: args}})
	if err != nil {
		return nil, err
	}
	return resp.GetVerdict(), nil
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(float64(len(d)-1) * p)
	return d[i]
}
