package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/shieldsec/shield/cmd/shield/appliance"
	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
	"github.com/shieldsec/shield/sandbox"
)

// TestStartServesOpenParallax: the real `shield start` serves the OpenParallax ClientService
// (openparallax.v1, seed 000) on the engine's client port, next to agent.v1: a client generated
// from the seed's definitions (with the engine's client token) sends a message to the sandboxed
// agent and a scripted model, and receives seed PipelineEvents with verdict tiers and confidence.
func TestStartServesOpenParallax(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end test builds and runs the real binary")
	}
	if sandbox.LandlockABI() < 1 {
		t.Skip("kernel without Landlock: the engine refuses to start an unsandboxed agent")
	}
	dir := t.TempDir()
	bin := buildShield(t, dir)
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("remember the milk\n"), 0o644)
	state := filepath.Join(dir, "state")
	srv := scriptedModel(t, []toolStep{
		{"read_file", `{"path":"notes.txt"}`},
		{"write_file", `{"path":"/etc/cron.d/x","content":"* * * * * root sh"}`},
	})
	cfg := filepath.Join(dir, "engine.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("llm:\n  provider: openai\n  base_url: %s/v1\n  model: m\n  api_key_env: SHIELD_TEST_LLM_KEY\n", srv.URL)), 0o600)
	start := exec.Command(bin, "start", "--workspace", ws, "--config", cfg, "--state-dir", state)
	start.Env = append(os.Environ(), "SHIELD_TEST_LLM_KEY=k")
	var startErr syncBuffer
	start.Stderr = &startErr
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(start) })
	var reg appliance.RegistryEntry
	if err := json.Unmarshal(waitFile(t, appliance.RegistryPath(state, ws), &startErr), &reg); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", reg.Port), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := opv1.NewClientServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := client.GetStatus(ctx, &opv1.StatusRequest{}); err == nil || !strings.Contains(err.Error(), "client token") {
		t.Errorf("GetStatus without the client token: %v, want it refused", err)
	}
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+reg.ClientToken)

	// Until the sandboxed agent has connected, a message gets AGENT_UNAVAILABLE (recoverable).
	var evs []*opv1.PipelineEvent
	for {
		evs = nil
		st, err := client.SendMessage(actx, &opv1.ClientMessageRequest{Content: "read my notes", Source: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := st.Recv()
			if err != nil {
				break
			}
			evs = append(evs, ev)
		}
		if len(evs) != 1 || evs[0].GetPipelineError().GetCode() != "AGENT_UNAVAILABLE" {
			break
		}
		if !evs[0].GetPipelineError().GetRecoverable() || ctx.Err() != nil {
			t.Fatalf("agent unavailable: %v\n%s", evs[0], startErr.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
	var verdicts []string
	for _, ev := range evs {
		if v := ev.GetShieldVerdict(); v != nil {
			verdicts = append(verdicts, fmt.Sprintf("%s:%s:tier%d:%g", ev.GetToolName(), v.GetDecision(), v.GetTier(), v.GetConfidence()))
		}
	}
	want := "read_file:ALLOW:tier-1:1 write_file:BLOCK:tier0:1"
	if got := strings.Join(verdicts, " "); got != want {
		t.Fatalf("verdicts %s, want %s\nevents %v\nstart stderr:\n%s", got, want, evs, startErr.String())
	}
	if last := evs[len(evs)-1]; last.GetEventType() != opv1.PipelineEventType_RESPONSE_COMPLETE || last.GetTimestampUnixMs() == 0 {
		t.Errorf("last event %v", last)
	}
	s, err := client.GetStatus(actx, &opv1.StatusRequest{})
	if err != nil || !s.GetAgentConnected() || s.GetModel() != "m" || s.GetWorkspace() != ws || s.GetSessionCount() != 1 {
		t.Errorf("status %v %v", s, err)
	}
}

// TestStartDaemonAndStop: `shield start --daemon` (seed 003) returns once the engine serves,
// printing its client port; the engine keeps running detached (its own session) and answers;
// `shield stop` ends it and its files.
func TestStartDaemonAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the end-to-end test builds and runs the real binary")
	}
	if sandbox.LandlockABI() < 1 {
		t.Skip("kernel without Landlock: the engine refuses to start an unsandboxed agent")
	}
	dir := t.TempDir()
	bin := buildShield(t, dir)
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	state := filepath.Join(dir, "state")
	srv := scriptedModel(t, nil)
	cfg := filepath.Join(dir, "engine.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("llm:\n  provider: openai\n  base_url: %s/v1\n  model: m\n  api_key_env: SHIELD_TEST_LLM_KEY\n", srv.URL)), 0o600)
	t.Setenv("SHIELD_TEST_LLM_KEY", "k")
	code, out, errs := runCmdBin(bin, "start", "-d", "--workspace", ws, "--config", cfg, "--state-dir", state)
	pidFile := strings.TrimSuffix(appliance.RegistryPath(state, ws), ".json") + ".pid"
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if code != 0 || !strings.Contains(out, "running in the background") || !strings.Contains(out, "PORT:") {
		t.Fatalf("start -d: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Errorf("the detached process manager %d: session %d (%v), want its own session", pid, sid, err)
	}
	var reg appliance.RegistryEntry
	if b, err := os.ReadFile(appliance.RegistryPath(state, ws)); err != nil || json.Unmarshal(b, &reg) != nil || !strings.Contains(out, fmt.Sprintf("PORT:%d", reg.Port)) {
		t.Fatalf("registry %s: %v; output %q", b, err, out)
	}
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", reg.Port), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+reg.ClientToken)
	if s, err := opv1.NewClientServiceClient(conn).GetStatus(actx, &opv1.StatusRequest{}); err != nil || s.GetWorkspace() != ws {
		t.Errorf("status of the detached engine: %v %v", s, err)
	}
	if code, out, errs := runCmdBin(bin, "stop", "--workspace", ws, "--state-dir", state); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("stop: %d %q %q", code, out, errs)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("process manager %d still runs after stop", pid)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Error("pid file left after stop")
	}
	if code, _, errs := runCmdBin(bin, "stop", "--workspace", ws, "--state-dir", state); code == 0 || !strings.Contains(errs, "no shield start is running") {
		t.Errorf("second stop: %d %q", code, errs)
	}
}
