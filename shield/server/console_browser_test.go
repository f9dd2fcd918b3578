//go:build browser

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium (apt-get install chromium) or $CHROMIUM.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("no chromium found: apt-get install chromium, or set CHROMIUM (make test-browser needs it)")
	return ""
}

// TestConsoleApprovesHeldCall drives the console in headless Chromium: an agent's call escalates
// and is held (AwaitDecision over HTTP); the request appears in the live queue with its call
// shown as text; a click approves it; the held call goes through (re-evaluated: ALLOW); the
// audit browser shows both decision records.
func TestConsoleApprovesHeldCall(t *testing.T) {
	f := newHTTPFixture(t, nil)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("no-proxy-server", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 120*time.Second)
	defer cancel()

	// Any script exception or CSP refusal in the page fails the test.
	problems := make(chan string, 16)
	report := func(s string) {
		select { // the listener must never block
		case problems <- s:
		default:
		}
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			report("exception: " + e.ExceptionDetails.Text + " " + fmt.Sprint(e.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			for _, a := range e.Args {
				if strings.Contains(string(a.Value), "Content Security Policy") {
					report("CSP: " + string(a.Value))
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	// Sign in with a token holding approver and auditor (not admin).
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), tokHTTPSec),
		chromedp.Click(chromedp.CSS("#login-token")),
		chromedp.WaitVisible(chromedp.CSS("#app")),
		chromedp.WaitVisible(chromedp.CSS(`#stream-state`)),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#who")))
	if err != nil || !strings.Contains(who, "token:secops") {
		t.Fatalf("signed in as %q (%v)", who, err)
	}

	// The agent's call: markup in its arguments must be shown, never run.
	hostile := `<img src=x id=pwned onerror=alert(1)>`
	body, _ := json.Marshal(map[string]any{"call": map[string]any{"call_id": "c-browser", "tool": "Bash",
		"arguments": map[string]any{"command": "reboot " + hostile}}, "context": map[string]any{"session_id": "s-browser"}})
	code, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, string(body))
	if code != 200 {
		t.Fatalf("evaluate: %d %s", code, b)
	}
	v := decodeJSON(t, b)["verdict"].(map[string]any)
	if v["decision"] != "DECISION_ESCALATE" {
		t.Fatalf("first verdict %v, want ESCALATE", v)
	}
	id := v["escalation_id"].(string)
	// The held call: the agent waits for the decision, then re-submits the call.
	held := make(chan string, 1)
	go func() {
		c, b := f.do(t, "POST", "/v1/approvals/"+id+"/await?timeout=60s", tokHTTPAgent, "")
		if c != 200 {
			held <- "await: " + string(b)
			return
		}
		_, b = f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, string(body))
		var r struct {
			Verdict struct {
				Decision string `json:"decision"`
			} `json:"verdict"`
		}
		_ = json.Unmarshal(b, &r)
		held <- r.Verdict.Decision
	}()

	item := `#queue li[data-id="` + id + `"]`
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(item)),
		chromedp.Click(chromedp.CSS(item)),
		chromedp.WaitVisible(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("#effects table")),
		chromedp.WaitVisible(chromedp.CSS("#judge dl")), // the page is drawn: nothing moves under the click
	); err != nil {
		t.Fatalf("queue: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#call-args")))
	if err != nil {
		t.Fatal(err)
	}
	injected, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('pwned') !== null || document.querySelectorAll('img').length > 0`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, hostile) {
		t.Errorf("call shown as %q, want the markup as text", shown)
	}
	if injected {
		t.Error("the call's markup became an element in the console")
	}
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	if err := chromedp.Do(sctx,
		chromedp.Click(chromedp.CSS("#approve")),
		// approved, or already used by the held call's re-evaluation
		chromedp.WaitVisible(chromedp.CSS(`#approval-detail h2 .state-approved, #approval-detail h2 .state-used`)),
	); err != nil {
		txt, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('approval-detail').textContent`))
		t.Fatalf("approve: %v; detail: %s", err, txt)
	}
	select {
	case d := <-held:
		if d != "DECISION_ALLOW" {
			t.Fatalf("held call after approval: %s, want DECISION_ALLOW", d)
		}
	case <-ctx.Done():
		t.Fatal("the held call never went through")
	}

	// The audit browser shows both decisions of the call, and verifies the trail.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#tab-audit")),
		chromedp.SetValue(chromedp.CSS("#f-session"), "s-browser"),
		chromedp.SetValue(chromedp.CSS("#f-type"), "decision"),
		chromedp.Click(chromedp.CSS("#audit-search")),
	); err != nil {
		t.Fatalf("audit browser: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => { const r = [...document.querySelectorAll('#audit-rows tr')].map(tr => tr.textContent);
			return r.length === 2 && r.every(t => t.includes('decision')) ? r : null; })()`))
	if err != nil {
		t.Fatalf("audit rows: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#verify"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('verify-result').textContent.startsWith('OK') || null`)); err != nil {
		t.Fatalf("verify in the console: %v", err)
	}
	if len(rows) != 2 || !strings.Contains(rows[0], "ALLOW") || !strings.Contains(rows[1], "ESCALATE") {
		t.Errorf("audit rows %q, want the ALLOW then (older) the ESCALATE", rows)
	}
	// Approve for a duration, then revoke: the grant allows the call, the revocation ends it.
	body2 := `{"call": {"tool": "Bash", "arguments": {"command": "reboot now"}}, "context": {"session_id": "s-grant"}}`
	_, b = f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, body2)
	id2 := decodeJSON(t, b)["verdict"].(map[string]any)["escalation_id"].(string)
	item2 := `#queue li[data-id="` + id2 + `"]`
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#tab-approvals")),
		chromedp.WaitVisible(chromedp.CSS(item2)),
		chromedp.Click(chromedp.CSS(item2)),
		chromedp.WaitVisible(chromedp.CSS("#judge dl")),
		chromedp.SetValue(chromedp.CSS("#grant"), "3600"),
		chromedp.Click(chromedp.CSS("#approve-grant")),
		chromedp.WaitVisible(chromedp.CSS("#revoke")),
	); err != nil {
		t.Fatalf("approve for a duration: %v", err)
	}
	for range 2 {
		if _, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, body2); decodeJSON(t, b)["verdict"].(map[string]any)["decision"] != "DECISION_ALLOW" {
			t.Fatalf("under the grant: %s", b)
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS("#judge dl")),
		chromedp.Click(chromedp.CSS("#revoke")),
		chromedp.WaitVisible(chromedp.CSS(`#approval-detail h2 .state-revoked`)),
	); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if _, b := f.do(t, "POST", "/v1/evaluate", tokHTTPAgent, body2); decodeJSON(t, b)["verdict"].(map[string]any)["decision"] != "DECISION_ESCALATE" {
		t.Fatalf("after revoke: %s, want ESCALATE", b)
	}

	select {
	case p := <-problems:
		t.Errorf("page problem: %s", p)
	default:
	}
}
