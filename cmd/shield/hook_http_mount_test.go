package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield/proxy/hook"
	"github.com/shieldsec/shield/shield/server"
)

// The appliance's HTTP listener serves Claude Code's http PreToolUse hook, decided in process as
// the authenticated caller: a destructive call gets the deny JSON naming the rule, a harmless one
// "{}", and both are audited like any decision.
func TestServeMountsClaudeCodeHTTPHook(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "http.sock")
	cfg := &Config{StateDir: filepath.Join(dir, "state"), HTTP: server.HTTPConfig{Listen: []string{"unix:" + sock}}}
	startServe(t, cfg)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	post := func(command string) string {
		t.Helper()
		body := `{"session_id":"s1","cwd":"/home/user/project","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":` +
			`"` + command + `"}}`
		var resp *http.Response
		var err error
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err = hc.Post("http://shield"+hook.HTTPPath, "application/json", strings.NewReader(body))
			if err == nil || time.Now().After(end) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", command, resp.StatusCode, b)
		}
		return string(b)
	}
	deny := post("rm -rf /home/user/project")
	if !strings.Contains(deny, `"permissionDecision":"deny"`) || !strings.Contains(deny, "Shield") {
		t.Errorf("destructive call: %s, want the deny JSON", deny)
	}
	if got := strings.TrimSpace(post("ls")); got != "{}" {
		t.Errorf("harmless call: %s, want {}", got)
	}
}
