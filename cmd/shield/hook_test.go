package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

func hookInput(command string) string {
	b, _ := json.Marshal(map[string]any{"session_id": "hook-s1", "cwd": "/home/user/project", "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": command}, "tool_use_id": "toolu_1"})
	return string(b)
}

// The hook against a real appliance over its socket: a destructive call is denied in the form
// both runtimes honour, a harmless one says nothing, an escalation approved by another identity
// (the hook is a token-authenticated agent on TCP; the approver is on the unix socket) is
// allowed, and with the appliance gone every call is denied.
func TestHookAgainstAppliance(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	const agentToken = "hook-agent-token-0123456789"
	os.WriteFile(tokens, []byte(agentToken+" agent claude-hook\n"), 0o600)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	cfg := &Config{Listen: []string{addr}, Auth: AuthConfigForTest(tokens)}
	startServe(t, cfg)

	code, out, errs := runCmd(t, hookInput("rm -rf ../precious"), "hook", "claude-code", "--socket", cfg.Socket, "--timeout", "20s")
	var deny struct {
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if code != 2 || json.Unmarshal([]byte(out), &deny) != nil || deny.HookSpecificOutput.PermissionDecision != "deny" ||
		!strings.Contains(errs, "BLOCK (cel:") {
		t.Fatalf("destructive call: exit %d stdout %q stderr %q", code, out, errs)
	}
	if code, out, errs := runCmd(t, hookInput("ls -la"), "hook", "codex", "--socket", cfg.Socket); code != 0 || out != "" || errs != "" {
		t.Fatalf("harmless call: exit %d stdout %q stderr %q, want 0 and silence", code, out, errs)
	}

	// Escalation held by the hook, approved on the unix socket by an approver.
	t.Setenv("HOOK_TEST_TOKEN", agentToken)
	type res struct {
		code     int
		out, err string
	}
	done := make(chan res, 1)
	go func() {
		c, o, e := runCmd(t, hookInput("printenv > approved.txt"), "hook", "claude-code", "--addr", addr, "--token-env", "HOOK_TEST_TOKEN", "--timeout", "30s")
		done <- res{c, o, e}
	}()
	conn, err := grpc.NewClient("unix://"+cfg.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ap := shieldv1.NewApprovalServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var id string
	for id == "" {
		pend, err := ap.ListPending(ctx, &shieldv1.ListPendingApprovalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range pend.GetApprovals() {
			if a.GetCaller() == "token:claude-hook" {
				id = a.GetId()
			}
		}
		select {
		case r := <-done:
			t.Fatalf("the hook answered before any approval: %+v", r)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if _, err := ap.Resolve(ctx, &shieldv1.ResolveApprovalRequest{Id: id, Approve: true, Comment: "checked"}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.code != 0 || r.out != "" || r.err != "" {
		t.Fatalf("approved escalation: %+v, want exit 0 and silence", r)
	}

	// The appliance is not there.
	gone := filepath.Join(dir, "absent.sock")
	for _, rt := range []string{"claude-code", "codex"} {
		if code, out, errs := runCmd(t, hookInput("ls -la"), "hook", rt, "--socket", gone, "--timeout", "5s"); code != 2 ||
			!strings.Contains(out, `"deny"`) || !strings.Contains(errs, gone) {
			t.Errorf("%s, appliance down: exit %d stdout %q stderr %q", rt, code, out, errs)
		}
	}
}

// Mistakes in the hook's own command line still block (exit 2): the runtimes run the tool on
// any other status.
func TestHookUsageErrorsBlock(t *testing.T) {
	for _, args := range [][]string{{"hook"}, {"hook", "cursor"}, {"hook", "claude-code", "--no-such-flag"}, {"hook", "codex", "extra"}} {
		if code, _, _ := runCmd(t, hookInput("ls"), args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestHookInstall(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	settings := filepath.Join(proj, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte(`{"permissions":{"allow":["Bash(ls:*)"]}}`), 0o644)
	args := []string{"hook", "install", "claude-code", "--project", proj, "--socket", "/run/shield/shield.sock", "--shield", "/opt/shield bin/shield"}
	for i := 0; i < 2; i++ {
		if code, out, errs := runCmd(t, "", args...); code != 0 || !strings.Contains(out, settings) {
			t.Fatalf("install %d: exit %d %q %q", i, code, out, errs)
		}
	}
	b, _ := os.ReadFile(settings)
	var s struct {
		Permissions map[string][]string
		Hooks       map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	pre := s.Hooks["PreToolUse"]
	if len(s.Permissions["allow"]) != 1 || len(pre) != 1 || pre[0].Matcher != ".*" ||
		pre[0].Hooks[0].Command != "GOGC=off '/opt/shield bin/shield' hook claude-code --timeout 4m50s --socket /run/shield/shield.sock" ||
		pre[0].Hooks[0].Timeout != 300 {
		t.Fatalf("settings after two installs:\n%s", b)
	}
	if st, _ := os.Stat(settings); st.Mode().Perm() != 0o644 {
		t.Errorf("mode changed to %v", st.Mode().Perm())
	}

	// A settings file that is a symlink stays one; its target gets the hook.
	real := filepath.Join(dir, "dotfiles-settings.json")
	os.WriteFile(real, []byte(`{"model":"opus"}`), 0o600)
	link := filepath.Join(dir, "linked", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o755)
	os.Symlink(real, link)
	if code, out, errs := runCmd(t, "", "hook", "install", "claude-code", "--settings", link, "--shield", "/usr/bin/shield"); code != 0 {
		t.Fatalf("install through a symlink: %d %q %q", code, out, errs)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "hook claude-code") || !strings.Contains(string(b), "opus") {
		t.Errorf("target after install:\n%s", b)
	}

	codexHome := filepath.Join(dir, "codex-home")
	for i := 0; i < 2; i++ {
		if code, out, errs := runCmd(t, "", "hook", "install", "codex", "--codex-home", codexHome, "--shield", "/usr/bin/shield", "--timeout", "120", "--codex-bin", "/nonexistent/codex"); code != 0 || !strings.Contains(errs, "WARNING") {
			t.Fatalf("codex install %d: exit %d %q %q", i, code, out, errs)
		}
	}
	hooksJSON, _ := os.ReadFile(filepath.Join(codexHome, "hooks.json"))
	config, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if strings.Count(string(hooksJSON), "hook codex --timeout 1m50s") != 1 {
		t.Errorf("hooks.json:\n%s", hooksJSON)
	}
	key := `[hooks.state."` + filepath.Join(codexHome, "hooks.json") + `:pre_tool_use:0:0"]`
	if strings.Count(string(config), key) != 1 || strings.Count(string(config), "trusted_hash = \"sha256:") != 1 {
		t.Errorf("config.toml:\n%s", config)
	}
	// The install asks Codex how it lists the hook; a Codex that does not trust it fails the install.
	fake := filepath.Join(dir, "fake-codex")
	answer := `{"id":2,"result":{"data":[{"cwd":"/","hooks":[{"key":"` + filepath.Join(codexHome, "hooks.json") + `:pre_tool_use:0:0","trustStatus":"%s","enabled":true}]}]}}`
	for status, wantCode := range map[string]int{"modified": 1, "trusted": 0} {
		script := "#!/bin/sh\nread a; read b; read c\necho '{\"id\":1,\"result\":{}}'\necho '" + fmt.Sprintf(answer, status) + "'\n"
		os.WriteFile(fake, []byte(script), 0o755)
		code, out, errs := runCmd(t, "", "hook", "install", "codex", "--codex-home", codexHome, "--shield", "/usr/bin/shield", "--timeout", "120", "--codex-bin", fake)
		if code != wantCode || (status == "modified" && !strings.Contains(errs, "modified")) || (status == "trusted" && !strings.Contains(out, "checked:")) {
			t.Errorf("Codex says %s: exit %d %q %q", status, code, out, errs)
		}
	}
	if code, _, _ := runCmd(t, "", "hook", "install", "codex", "--codex-home", codexHome, "--timeout", "5"); code != 2 {
		t.Errorf("a timeout below 15 s was accepted")
	}
}
