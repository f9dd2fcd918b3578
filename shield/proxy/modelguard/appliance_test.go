package modelguard

// The guard in front of the scripted model server, deciding through a real appliance (`shield
// serve` on a unix socket, the default bundle) with the fail-closed client: a destructive call is
// replaced by text naming the rule, a harmless one passes, and with the appliance down no call
// reaches the runtime. The shield binary is $SHIELD_BIN (or $SHIELD_TEST_BIN), else built once.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/proxy/internal/scripted"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

func shieldBinary(t *testing.T) string {
	t.Helper()
	for _, v := range []string{"SHIELD_BIN", "SHIELD_TEST_BIN"} {
		if b := os.Getenv(v); b != "" {
			return b
		}
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "modelguard-shield-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "shield")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/shieldsec/shield/cmd/shield").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

type realAppliance struct {
	cmd    *exec.Cmd
	socket string
	log    bytes.Buffer
}

func startRealAppliance(t *testing.T, workspace string) *realAppliance {
	bin := shieldBinary(t)
	root := t.TempDir()
	a := &realAppliance{socket: filepath.Join(root, "state", "shield.sock")}
	cfg := filepath.Join(root, "shield.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("state_dir: %q\npolicy:\n  workspace: %q\n  home: %q\nlog:\n  level: warn\n",
		filepath.Join(root, "state"), workspace, filepath.Join(root, "home"))), 0o600); err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(bin, "serve", "--config", cfg)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.stop)
	conn, err := grpc.NewClient("unix://"+a.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := shieldv1.NewShieldServiceClient(conn).Health(ctx, &shieldv1.HealthRequest{})
		cancel()
		if err == nil {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("the appliance did not come up: %v\n%s", err, a.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (a *realAppliance) stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
	a.cmd = nil
}

func TestGuardWithRealAppliance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a real appliance (shield serve)")
	}
	work := t.TempDir()
	app := startRealAppliance(t, work)
	c, err := client.New(client.Options{Socket: app.socket, Runtime: "model-guard", EvalTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run := func(t *testing.T, ac apiCase, stream bool, cmd string) answer {
		t.Helper()
		up, err := scripted.Start([]scripted.Step{ac.step(cmd)}, "done")
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		url := startGuard(t, Options{Decider: c, Upstream: up.URL, Workspace: work, Session: "guard-test", Hold: 5 * time.Second})
		_, body := post(t, url+ac.path, ac.body(stream))
		a, err := readAnswer(ac.api, stream, body)
		if err != nil || a.Err != "" {
			t.Fatalf("the runtime could not read the answer: %v %s\n%s", err, a.Err, body)
		}
		return a
	}
	const destructive, harmless = "rm -rf /home/user", "ls -la"
	for _, ac := range apiCases {
		for _, stream := range []bool{true, false} {
			t.Run(ac.api+"/stream="+sb(stream), func(t *testing.T) {
				a := run(t, ac, stream, destructive)
				if len(a.Calls) != 0 || !strings.Contains(a.Text, "cel:destructive.rm-outside-workspace") || a.Stop != ac.textStop {
					t.Errorf("destructive call: %+v", a)
				}
				a = run(t, ac, stream, harmless)
				if len(a.Calls) != 1 || !strings.Contains(a.Calls[0].Args, harmless) || a.Stop != ac.toolStop {
					t.Errorf("harmless call: %+v", a)
				}
			})
		}
	}
	app.stop()
	for _, ac := range apiCases {
		for _, stream := range []bool{true, false} {
			t.Run("down/"+ac.api+"/stream="+sb(stream), func(t *testing.T) {
				a := run(t, ac, stream, harmless)
				if len(a.Calls) != 0 || !strings.Contains(a.Text, "could not decide") || a.Stop != ac.textStop {
					t.Errorf("appliance down: %+v", a)
				}
			})
		}
	}
}
