package approval

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Webhook formats (Config.WebhookFormat).
const (
	WebhookShield = "shield"
	WebhookSlack  = "slack"
	WebhookChat   = "chat"
)

// webhookPreview bounds the arguments a chat notice quotes; the console and the API show them all.
const webhookPreview = 1500

func checkWebhookFormat(format, console string) error {
	switch format {
	case "", WebhookShield, WebhookSlack, WebhookChat:
	default:
		return fmt.Errorf("approval: webhook format %q: use shield, slack or chat", format)
	}
	if console != "" {
		u, err := url.Parse(console)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("approval: console URL %q: want http(s)://host[/path] without query or fragment", console)
		}
	}
	return nil
}

// webhookBody is the notice of a new request in format. Chat formats carry text a person reads:
// everything taken from the call (tool, arguments, reason, identities) is escaped for the
// receiver's markup, so a call cannot mention @channel, forge a link, or load an image there.
func webhookBody(format, console string, a *Approval) ([]byte, error) {
	switch format {
	case "", WebhookShield:
		return json.Marshal(map[string]any{"event": EventRequested.String(), "approval": a})
	case WebhookSlack:
		head := fmt.Sprintf("Shield: approval needed for %s (%s) — %s", slackEscape(a.Tool), slackEscape(a.ActionClass), a.ID)
		fields := fmt.Sprintf("*Reason:* %s\n*Rules:* %s\n*Caller:* %s  *Session:* %s  *Runtime:* %s\n*Expires:* %s",
			slackEscape(a.Reason), slackEscape(strings.Join(a.Rules, ", ")), slackEscape(a.Caller),
			slackEscape(a.SessionID), slackEscape(a.Runtime), a.Expires.UTC().Format("2006-01-02 15:04:05Z"))
		blocks := []map[string]any{
			{"type": "header", "text": map[string]any{"type": "plain_text", "text": cut(head, 150), "emoji": false}},
			{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": fields}},
			{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "```" + slackEscape(codeSafe(preview(a))) + "```"}},
		}
		if console != "" {
			blocks = append(blocks, map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn",
				"text": "<" + consoleLink(console, a.ID) + "|Open in the Shield console>"}})
		}
		return json.Marshal(map[string]any{"text": head, "blocks": blocks,
			"unfurl_links": false, "unfurl_media": false})
	case WebhookChat:
		var b strings.Builder
		fmt.Fprintf(&b, "**Shield: approval needed** for `%s` (%s), request `%s`\n", codeSafe(a.Tool), chatEscape(a.ActionClass), a.ID)
		fmt.Fprintf(&b, "Reason: %s\nRules: %s\nCaller: %s · session %s · runtime %s\nExpires: %s\n",
			chatEscape(a.Reason), chatEscape(strings.Join(a.Rules, ", ")), chatEscape(a.Caller), chatEscape(a.SessionID),
			chatEscape(a.Runtime), a.Expires.UTC().Format("2006-01-02 15:04:05Z"))
		b.WriteString("```\n" + codeSafe(preview(a)) + "\n```\n")
		if console != "" {
			b.WriteString("Open: " + consoleLink(console, a.ID) + "\n")
		}
		return json.Marshal(map[string]any{"text": b.String(), "event": EventRequested.String(), "approval_id": a.ID})
	}
	return nil, fmt.Errorf("webhook format %q", format)
}

func consoleLink(console, id string) string {
	return strings.TrimRight(console, "/") + "/#approval/" + url.PathEscape(id)
}

// preview is the (redacted) call as quoted in a chat notice, bounded.
func preview(a *Approval) string {
	s := string(a.Arguments)
	if len(s) <= webhookPreview {
		return s
	}
	return cut(s, webhookPreview) + fmt.Sprintf("… [%d bytes; the console shows them all]", len(s))
}

// cut shortens s to at most n bytes at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// slackEscape escapes Slack mrkdwn control characters (&, <, >): no <!channel>, <@user> or
// <url|label> can come from the call.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// codeSafe keeps text inside a code span or fence: backticks become U+02CB (ˋ), so a call
// cannot close the fence and have the rest rendered as markup.
func codeSafe(s string) string { return strings.ReplaceAll(s, "`", "ˋ") }

// chatEscape neutralises Markdown outside code: the characters that start links, images,
// emphasis, mentions, headings and HTML are backslash-escaped, and newlines become spaces.
func chatEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '(', ')', '!', '<', '>', '#', '@', '|', '~', '&':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
