package approval

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// hostileInput is a call whose arguments try to ping everyone, forge a link and close the code
// fence in a chat notice.
func hostileInput() *shield.Input {
	return &shield.Input{
		Call: &shield.Call{Tool: "Bash", Arguments: json.RawMessage(`{"command":"echo '<!channel> <https://evil.example|click> @here` +
			"```" + ` ![x](https://evil.example/t.png) [y](https://evil.example)'"}`),
			Context: shield.CallContext{SessionID: "s1", Caller: "uid:1000", Runtime: "claude-code"}},
		Action:     &normalize.Action{Class: "exec"},
		ActionHash: "hostile",
		Prior:      &shield.Verdict{Decision: shield.Escalate, Rules: []string{"cel:exec.unknown"}, Reason: "runs <!here> [a](b)"},
	}
}

// receive starts a webhook receiver on 127.0.0.1 and returns its URL and a channel of the
// (body, signature) pairs it gets.
func receive(t *testing.T) (string, <-chan [2]string) {
	t.Helper()
	got := make(chan [2]string, 4)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		got <- [2]string{string(b), r.Header.Get("X-Shield-Signature")}
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, got
}

func TestWebhookFormats(t *testing.T) {
	secret := []byte("0123456789abcdef-webhook")
	for _, tc := range []struct {
		format string
		check  func(t *testing.T, body map[string]any)
	}{
		{"", func(t *testing.T, body map[string]any) {
			if body["event"] != "approval_requested" {
				t.Errorf("event %v", body["event"])
			}
			a, _ := body["approval"].(map[string]any)
			if a == nil || !strings.HasPrefix(a["id"].(string), "apr_") || a["tool"] != "Bash" {
				t.Errorf("approval %v", a)
			}
		}},
		{WebhookSlack, func(t *testing.T, body map[string]any) {
			text, _ := body["text"].(string)
			if !strings.Contains(text, "approval needed for Bash (exec)") {
				t.Errorf("text %q", text)
			}
			blocks, _ := body["blocks"].([]any)
			if len(blocks) != 4 {
				t.Fatalf("blocks: %d, want header, fields, call, console link", len(blocks))
			}
			var all string
			for _, b := range blocks {
				all += b.(map[string]any)["text"].(map[string]any)["text"].(string) + "\n"
			}
			for _, bad := range []string{"<!channel>", "<!here>", "<https://evil.example|"} {
				if strings.Contains(all, bad) {
					t.Errorf("slack blocks carry %q unescaped: %s", bad, all)
				}
			}
			if !strings.Contains(all, "&lt;!channel&gt;") || !strings.Contains(all, "https://console.example/shield/#approval/apr_") {
				t.Errorf("slack blocks: want the escaped mention and the console link: %s", all)
			}
			// The fence the call tried to close stays closed: exactly two fences in the call block.
			call := blocks[2].(map[string]any)["text"].(map[string]any)["text"].(string)
			if strings.Count(call, "```") != 2 {
				t.Errorf("call block has %d fences: %q", strings.Count(call, "```"), call)
			}
			if body["unfurl_links"] != false || body["unfurl_media"] != false {
				t.Error("slack notice unfurls links")
			}
		}},
		{WebhookChat, func(t *testing.T, body map[string]any) {
			text, _ := body["text"].(string)
			if !strings.HasPrefix(text, "**Shield: approval needed** for `Bash` (exec)") {
				t.Errorf("text %q", text)
			}
			if n := strings.Count(text, "```"); n != 2 {
				t.Errorf("chat text has %d fences, want 2: %q", n, text)
			}
			// Outside the fence, the reason's markup is escaped.
			if !strings.Contains(text, `runs \<\!here\> \[a\]\(b\)`) {
				t.Errorf("reason not escaped: %q", text)
			}
			if body["approval_id"] == nil || !strings.HasPrefix(body["approval_id"].(string), "apr_") {
				t.Errorf("approval_id %v", body["approval_id"])
			}
		}},
	} {
		t.Run("format="+tc.format, func(t *testing.T) {
			url, got := receive(t)
			s := open(t, Config{WebhookURL: url, WebhookSecret: secret, WebhookFormat: tc.format,
				ConsoleURL: "https://console.example/shield/"})
			if _, err := s.Tier().Evaluate(context.Background(), hostileInput()); err != nil {
				t.Fatal(err)
			}
			var r [2]string
			select {
			case r = <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("webhook never called")
			}
			mac := hmac.New(sha256.New, secret)
			mac.Write([]byte(r[0]))
			if r[1] != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
				t.Errorf("signature %q does not match the body", r[1])
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(r[0]), &body); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, r[0])
			}
			tc.check(t, body)
		})
	}
}

func TestWebhookFormatConfig(t *testing.T) {
	for _, tc := range []struct {
		format, console string
		ok              bool
	}{
		{"slack", "", true},
		{"chat", "https://shield.example:8443/", true},
		{"teams", "", false},
		{"slack", "javascript:alert(1)", false},
		{"chat", "https://shield.example/?x=1", false},
	} {
		err := checkWebhookFormat(tc.format, tc.console)
		if (err == nil) != tc.ok {
			t.Errorf("format %q console %q: %v, want ok=%v", tc.format, tc.console, err, tc.ok)
		}
	}
}
