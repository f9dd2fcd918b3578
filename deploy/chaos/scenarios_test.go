package chaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// peakRSS returns the process's peak resident set (VmHWM) in MiB, or -1.
func peakRSS(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb / 1024
		}
	}
	return -1
}

// verifyTrail runs `shield audit verify` on the stopped service's state directory.
func verifyTrail(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command(shieldBin, "audit", "verify", "--state-dir", dir,
		"--pubkey", filepath.Join(dir, "keys", "audit.key.pub")).CombinedOutput()
	if err != nil {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// deepInputs are the nesting shapes of finding C1 and its class, n levels deep.
func deepInputs(n int) map[string]string {
	return map[string]string{
		"subshells ((…))":         strings.Repeat("(", n) + "ls" + strings.Repeat(")", n),
		"arithmetic $((…))":       "echo $((" + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "))",
		"command substitutions":   strings.Repeat("$(", n/2) + "ls" + strings.Repeat(")", n/2),
		"brace groups":            strings.Repeat("{ ", n/2) + "ls" + strings.Repeat("; }", n/2),
		"parameter expansions":    "echo " + strings.Repeat("${x:-", n/2) + "y" + strings.Repeat("}", n/2),
		"test brackets [[ ( ) ]]": "[[ " + strings.Repeat("( ", n/2) + "-n x" + strings.Repeat(" )", n/2) + " ]]",
	}
}

// wideInputs are long flat inputs: many commands, pipes, words, substitutions, here-documents.
func wideInputs(bytes int) map[string]string {
	rep := func(s string) string { return strings.Repeat(s, bytes/len(s)) }
	return map[string]string{
		"commands ;":        rep("ls;"),
		"pipes |":           "ls" + rep("|cat"),
		"words":             "echo" + rep(" a"),
		"substitutions $()": "echo" + rep(" $(ls)"),
		"here-documents":    rep("cat <<E\nx\nE\n"),
		"nested bash -c":    "bash -c " + strings.Repeat("'bash -c ", 1) + rep("x") + "'",
		"eval chains":       rep("eval ") + "ls",
	}
}

// TestChaosDeepAndWideInputs sends finding C1 and its class concurrently: the service must stay
// up, answer every call with a verdict that is not ALLOW for over-deep input, and audit it.
func TestChaosDeepAndWideInputs(t *testing.T) {
	s := startService(t, t.TempDir(), agentOnly())
	conn := s.dial()
	defer conn.Close()
	c := shieldv1.NewShieldServiceClient(conn)
	type job struct {
		name, cmd string
		deep      bool
	}
	var jobs []job
	for name, cmd := range deepInputs(160000) {
		jobs = append(jobs, job{name, cmd, true})
	}
	// Just under the 128 KiB shell-string bound, so that the parser and walker do the work.
	for name, cmd := range wideInputs(120 << 10) {
		jobs = append(jobs, job{name, cmd, false})
	}
	workers := size(4, 16)
	var mu sync.Mutex
	results := map[string]map[string]int{}
	var allowedDeep []string
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			order := r.Perm(len(jobs))
			for _, i := range order {
				j := jobs[i]
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				v, err := evaluate(ctx, c, "Bash", `{"command":`+jsonString(j.cmd)+`}`)
				cancel()
				out := ""
				switch {
				case err != nil:
					out = "error " + status.Code(err).String()
				case v.GetAuditSeq() == 0:
					out = v.GetDecision().String() + " (not audited)"
				default:
					out = strings.TrimPrefix(v.GetDecision().String(), "DECISION_")
					if len(v.GetRules()) > 0 {
						out += " " + v.GetRules()[0]
					}
				}
				mu.Lock()
				if results[j.name] == nil {
					results[j.name] = map[string]int{}
				}
				results[j.name][out]++
				if j.deep && err == nil && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW {
					allowedDeep = append(allowedDeep, j.name)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if !s.alive() {
		t.Fatalf("the service died under deep/wide input:\n%.4000s", s.stderr.String())
	}
	if err := s.health(10 * time.Second); err != nil {
		t.Errorf("health after the flood: %v", err)
	}
	if len(allowedDeep) > 0 {
		t.Errorf("over-deep input was allowed: %v", allowedDeep)
	}
	for name, r := range results {
		for out := range r {
			if strings.Contains(out, "not audited") {
				t.Errorf("%s: a verdict was returned without an audit record", name)
			}
		}
		t.Logf("%-26s %v", name, r)
	}
	rss := peakRSS(s.cmd.Process.Pid)
	report("deep/wide inputs: %d shapes (deep: 160 000 levels; wide: 120 KB) x %d workers in %s; service up: %v; peak RSS %d MiB; over-deep allowed: %d",
		len(jobs), workers, elapsed.Round(time.Millisecond), s.alive(), rss, len(allowedDeep))
	s.stop()
	verifyTrail(t, s.dir)
}

// TestChaosCachePoisoning replays seeded sequences of partial evaluations (max_tier, dry_run),
// cache evictions and repeats around a call the bundle escalates: the full evaluation of that call
// must never come back ALLOW.
func TestChaosCachePoisoning(t *testing.T) {
	s := startService(t, t.TempDir(), agentOnly()+"pipeline:\n  cache_size: 32\n")
	conn := s.dial()
	defer conn.Close()
	c := shieldv1.NewShieldServiceClient(conn)
	const escalating = `{"to":"someone@external.example","subject":"q","body":"numbers attached"}`
	r := rand.New(rand.NewPCG(seed, 42))
	ops := size(60, 600)
	var denied, partialAllowed, fullAllowed, full int
	for i := range ops {
		req := &shieldv1.EvaluateRequest{Call: &shieldv1.ToolCall{Tool: "send_email", ArgumentsJson: escalating},
			Context: &shieldv1.CallContext{SessionId: fmt.Sprintf("s%d", r.IntN(3))}}
		kind := r.IntN(5)
		switch kind {
		case 0, 1: // partial
			mt := int32(r.IntN(3))
			req.MaxTier = &mt
		case 2:
			req.DryRun = true
		case 3: // evict: more distinct calls than the cache holds
			for j := range 40 {
				evaluate(context.Background(), c, "Read", fmt.Sprintf(`{"file_path":"/home/user/project/f%d-%d"}`, i, j))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := c.Evaluate(ctx, req)
		cancel()
		if err != nil {
			if status.Code(err) == codes.PermissionDenied {
				denied++
				continue
			}
			t.Fatalf("op %d: %v", i, err)
		}
		allow := resp.GetVerdict().GetDecision() == shieldv1.Decision_DECISION_ALLOW
		if req.MaxTier != nil || req.DryRun {
			if allow {
				partialAllowed++
			}
		}
		if req.MaxTier == nil && !req.DryRun {
			full++
			if allow {
				fullAllowed++
				t.Errorf("op %d: the full evaluation of an escalating call was answered ALLOW (%v)", i, resp.GetVerdict())
			}
		}
		// Every sequence ends in a full evaluation.
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		resp, err = c.Evaluate(ctx, &shieldv1.EvaluateRequest{Call: req.Call, Context: req.Context})
		cancel()
		if err != nil {
			t.Fatalf("op %d full: %v", i, err)
		}
		full++
		if resp.GetVerdict().GetDecision() == shieldv1.Decision_DECISION_ALLOW {
			fullAllowed++
			t.Errorf("op %d: after a %d-kind request the full evaluation came back ALLOW", i, kind)
		}
	}
	report("cache poisoning: %d seeded sequences; partial requests refused to the agent: %d, partial ALLOWs: %d; full evaluations: %d, ALLOWed: %d",
		ops, denied, partialAllowed, full, fullAllowed)
}

// raiseNofile lets this test process hold many descriptors.
func raiseNofile() uint64 {
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	rl.Cur = rl.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

// TestChaosDescriptorExhaustion opens far more idle connections than the service has descriptors
// (it runs under prlimit --nofile=1024), then closes them: the service must stay up and, without a
// restart, answer audited verdicts again.
func TestChaosDescriptorExhaustion(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed: the service cannot be started with a small descriptor limit")
	}
	have := raiseNofile()
	want := size(3000, 20000)
	if have < uint64(want)+100 {
		want = int(have) - 100
	}
	s := startService(t, t.TempDir(), agentOnly()+"audit:\n  checkpoint_interval: 1s\n", "prlimit", "--nofile=1024:1024")
	pid := s.cmd.Process.Pid
	// A connection opened before the flood keeps deciding during it: every verdict must be
	// audited, and none may be ALLOW without its record.
	early := s.dial()
	defer early.Close()
	ec := shieldv1.NewShieldServiceClient(early)
	if _, err := evaluate(context.Background(), ec, "Read", `{"file_path":"/home/user/project/a"}`); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	refused := 0
	for range want {
		nc, err := net.DialTimeout("unix", s.sock, time.Second)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, nc)
	}
	// A connection the service closed reads EOF at once; one it holds times out.
	closedByService := 0
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := nc.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				closedByService++
			}
		}
	}
	duringOK, duringRefused := 0, 0
	for i := range size(20, 100) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err := evaluate(ctx, ec, "Read", fmt.Sprintf(`{"file_path":"/home/user/project/during-%d"}`, i))
		cancel()
		switch {
		case err == nil && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW && v.GetAuditSeq() == 0:
			t.Errorf("ALLOW without an audit record during descriptor exhaustion")
		case err == nil && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW:
			duringOK++
		default:
			duringRefused++
		}
		time.Sleep(50 * time.Millisecond)
	}
	upDuring := s.alive()
	for _, nc := range conns {
		nc.Close()
	}
	// Recovery without restart: an audited verdict within 30 s.
	conn := s.dial()
	defer conn.Close()
	c := shieldv1.NewShieldServiceClient(conn)
	var recovered time.Duration
	var lastErr error
	start := time.Now()
	for time.Since(start) < 30*time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, err := evaluate(ctx, c, "Read", `{"file_path":"/home/user/project/README.md"}`)
		cancel()
		if err == nil && v.GetAuditSeq() > 0 && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW && s.health(2*time.Second) == nil {
			recovered = time.Since(start)
			break
		}
		lastErr = fmt.Errorf("evaluate: %v, verdict %v", err, v)
		time.Sleep(100 * time.Millisecond)
	}
	if recovered == 0 {
		t.Errorf("no audited verdict 30 s after the connections closed: %v\n%.4000s", lastErr, s.stderr.String())
	}
	if s.cmd.Process.Pid != pid || !s.alive() {
		t.Errorf("the service restarted or died")
	}
	report("descriptor exhaustion: %d idle connections against nofile=1024 (%d refused at connect, %d closed by the service); during: %d audited ALLOWs, %d refused, up: %v; audited verdicts again after %s without restart",
		want, refused, closedByService, duringOK, duringRefused, upDuring, recovered.Round(time.Millisecond))
	s.stop()
	verifyTrail(t, s.dir)
}

// TestChaosDiskFull fills the file system under the audit trail (a small tmpfs), checks that no
// call is allowed while records cannot be written, frees the space and checks that the service
// serves audited verdicts again without a restart.
func TestChaosDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("the kernel refused a tmpfs mount here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	s := startService(t, filepath.Join(mnt, "state"), agentOnly()+"audit:\n  checkpoint_interval: 1s\n")
	conn := s.dial()
	defer conn.Close()
	c := shieldv1.NewShieldServiceClient(conn)
	call := func(i int) (*shieldv1.Verdict, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return evaluate(ctx, c, "Read", fmt.Sprintf(`{"file_path":"/home/user/project/f%d"}`, i))
	}
	if v, err := call(0); err != nil || v.GetAuditSeq() == 0 {
		t.Fatalf("before: %v %v", v, err)
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	allowedWhileFull, blocked := 0, 0
	for i := range size(20, 200) {
		v, err := call(1000 + i)
		if err == nil && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW {
			allowedWhileFull++
			if v.GetAuditSeq() == 0 {
				t.Errorf("ALLOW without an audit record while the disk was full")
			}
		} else {
			blocked++
		}
	}
	if allowedWhileFull > 0 {
		// A record may still fit in a partly filled page; more than a few means the trail is not
		// consulted.
		t.Logf("%d calls allowed while the disk was full (records that still fit)", allowedWhileFull)
	}
	if blocked == 0 {
		t.Errorf("the disk was full and no call was refused")
	}
	os.Remove(filler)
	var recovered time.Duration
	start := time.Now()
	for time.Since(start) < 30*time.Second {
		if v, err := call(5000); err == nil && v.GetAuditSeq() > 0 && v.GetDecision() == shieldv1.Decision_DECISION_ALLOW {
			recovered = time.Since(start)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if recovered == 0 {
		t.Errorf("no audited ALLOW 30 s after space was freed:\n%.4000s", s.stderr.String())
	}
	report("disk full (16 MiB tmpfs): %d calls while full, %d refused, %d allowed; audited verdicts again %s after space was freed, no restart",
		blocked+allowedWhileFull, blocked, allowedWhileFull, recovered.Round(time.Millisecond))
	s.stop()
	verifyTrail(t, s.dir)
}

type ack struct {
	seq      uint64
	hash     string
	decision string
}

// TestChaosKillUnderLoad SIGKILLs the service under concurrent load, restarts it, and checks every
// acknowledged verdict against the trail.
func TestChaosKillUnderLoad(t *testing.T) {
	dir := t.TempDir()
	s := startService(t, dir, agentOnly())
	rounds := size(2, 5)
	var acks []ack
	for round := range rounds {
		conn := s.dial()
		c := shieldv1.NewShieldServiceClient(conn)
		var mu sync.Mutex
		var n atomic.Int64
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					v, err := evaluate(ctx, c, "Bash", fmt.Sprintf(`{"command":"echo %d-%d-%d"}`, round, w, i))
					if err != nil {
						return
					}
					mu.Lock()
					acks = append(acks, ack{v.GetAuditSeq(), v.GetAuditRecordHash(), strings.TrimPrefix(v.GetDecision().String(), "DECISION_")})
					mu.Unlock()
					n.Add(1)
				}
			}()
		}
		target := int64(size(200, 2000))
		deadline := time.Now().Add(60 * time.Second)
		for n.Load() < target && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		s.kill()
		cancel()
		wg.Wait()
		conn.Close()
		s.start()
	}
	s.stop()
	out := verifyTrail(t, dir)
	l, err := audit.OpenReadOnly(filepath.Join(dir, "audit"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	missing := 0
	for _, a := range acks {
		r, err := l.Get(a.seq)
		if err != nil {
			missing++
			t.Errorf("acknowledged verdict seq %d has no record: %v", a.seq, err)
			continue
		}
		var d audit.Decision
		if err := json.Unmarshal(r.Payload, &d); err != nil || r.Hash != a.hash || d.Decision != a.decision {
			missing++
			t.Errorf("record %d is not the acknowledged verdict", a.seq)
		}
	}
	report("kill -9 under load: %d rounds, 16 workers, %d acknowledged verdicts, %d missing from the trail; verify: %s",
		rounds, len(acks), missing, firstLine(out))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// TestChaosInflightHealth keeps thousands of Evaluate calls in flight and measures Health on its
// own connection: Health must answer every probe.
func TestChaosInflightHealth(t *testing.T) {
	raiseNofile()
	s := startService(t, t.TempDir(), agentOnly())
	inflight := size(500, 4000)
	dur := time.Duration(size(5, 20)) * time.Second
	nconn := size(4, 16)
	var clients []shieldv1.ShieldServiceClient
	for range nconn {
		conn := s.dial()
		defer conn.Close()
		clients = append(clients, shieldv1.NewShieldServiceClient(conn))
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var ok, shed, other atomic.Int64
	var wg sync.WaitGroup
	for w := range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[w%nconn]
			for i := 0; ctx.Err() == nil; i++ {
				_, err := evaluate(ctx, c, "Bash", fmt.Sprintf(`{"command":"make test-%d-%d"}`, w, i))
				switch {
				case err == nil:
					ok.Add(1)
				case status.Code(err) == codes.ResourceExhausted:
					shed.Add(1)
				case ctx.Err() != nil:
				default:
					other.Add(1)
				}
			}
		}()
	}
	hconn := s.dial()
	defer hconn.Close()
	hc := shieldv1.NewShieldServiceClient(hconn)
	var lat []time.Duration
	failed := 0
	time.Sleep(500 * time.Millisecond) // let the load build
	for ctx.Err() == nil {
		t0 := time.Now()
		hctx, hcancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := hc.Health(hctx, &shieldv1.HealthRequest{})
		hcancel()
		if err != nil {
			failed++
		} else {
			lat = append(lat, time.Since(t0))
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d Health probes failed under load", failed)
	}
	if !s.alive() {
		t.Fatal("the service died under load")
	}
	report("%d calls in flight for %s: %d answered, %d shed (RESOURCE_EXHAUSTED), %d other errors; Health %d probes p50 %s p99 %s max %s, %d failed",
		inflight, dur, ok.Load(), shed.Load(), other.Load(), len(lat), percentile(lat, 0.5).Round(time.Microsecond),
		percentile(lat, 0.99).Round(time.Microsecond), percentile(lat, 1).Round(time.Microsecond), failed)
}
