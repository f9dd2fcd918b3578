package normalize

import (
	"regexp"
	"strings"
)

// Code handed to a code-running tool (run_code, a notebook cell, JavaScript evaluated in a browser
// page: puppeteer_evaluate, playwright_evaluate, browser_evaluate, evaluate_script) is judged like
// inline interpreter code in a shell call (effects_shell.go: codeEffect, inlineCode): an exec
// effect with the code, the sensitive paths and URLs it names, the commands it shells out to. Code
// in a page adds the page's own secrets: cookies, web storage, stored credentials and password
// fields are a secret source, and what the code sends off the page (fetch, XHR, sendBeacon, an
// image or script src, a navigation, a WebSocket) is a connection, to the host it names or, when
// the target is built at run time, to an unresolved one. A secret read together with anything
// leaving the host is exfiltration (effects.secret-egress), whatever the tool.

// maxCodePayload bounds the code looked at per call.
const maxCodePayload = 64 << 10

var (
	// pageSecretRE: what code in a page reads that authenticates the user.
	pageSecretRE = regexp.MustCompile(`document\s*\.\s*cookie|\bcookieStore\b|\blocalStorage\b|\bsessionStorage\b|\bindexedDB\b|navigator\s*\.\s*credentials|chrome\s*\.\s*cookies|type\s*=\s*\\?["']?password|\binput\[type=["']?password|\.password\s*\.value`)
	// pageSinkRE: what sends data off the page; group 1 is the text right after the sink.
	pageSinkRE = regexp.MustCompile(`(?:\bfetch\s*\(|\.open\s*\(\s*["'](?:GET|POST|PUT|PATCH|DELETE)["']\s*,|sendBeacon\s*\(|\bWebSocket\s*\(|\bEventSource\s*\(|\.src\s*=|\bhref\s*=|\blocation\s*=|location\s*\.\s*(?:assign|replace)\s*\(|window\s*\.\s*open\s*\(|\.action\s*=|\bimport\s*\()\s*(.{0,80})`)
)

// codePayloadEffects adds the effects of code a code-running tool runs.
func (s *state) codePayloadEffects(prog, code string) {
	if strings.TrimSpace(code) == "" || s.stopped() {
		return
	}
	if len(code) > maxCodePayload {
		code = code[:maxCodePayload]
		s.act.Truncated = true
	}
	s.syncEffects()
	w := s.walker()
	start := len(s.act.Effects)
	w.codeEffect(prog, code, false)
	for _, m := range pageSinkRE.FindAllStringSubmatch(code, 16) {
		if next := strings.TrimLeft(m[1], " \t\n("); next != "" && (next[0] == '"' || next[0] == '\'' || next[0] == '`') {
			lit := next[1:]
			if end := strings.IndexByte(lit, next[0]); end >= 0 {
				lit = lit[:end]
			}
			if sameOrigin(lit) || literalHost(lit) {
				continue // the page's own origin, or a URL the text scan recorded
			}
		}
		// The target is built at run time: a connection to a host nobody can name here.
		s.addUnresolved("connection target built at run time (" + prog + ")")
		s.addEffect(Effect{Kind: EffectConnect, Target: "(run time)", Program: prog, Detail: "code", Unresolved: true})
		break
	}
	// The page's own secrets matter when something leaves the page's origin: used against the
	// page's own server (fetch("/api", {headers: …localStorage…})) they go where they belong.
	offOrigin := false
	for i := start; i < len(s.act.Effects); i++ {
		if s.act.Effects[i].Kind == EffectConnect {
			offOrigin = true
		}
	}
	var secrets []int
	if offOrigin {
		for _, m := range pageSecretRE.FindAllString(code, 8) {
			t := "page:" + strings.Join(strings.Fields(m), "")
			if i := s.addEffect(Effect{Kind: EffectSecret, Target: t, Program: prog, Detail: "browser_storage", Sensitive: true}); i >= 0 {
				secrets = append(secrets, i)
			}
		}
	}
	// Every secret the code reads may reach every connection it makes.
	for _, from := range secrets {
		for to := start; to < len(s.act.Effects); to++ {
			if s.act.Effects[to].Kind == EffectConnect {
				s.addFlow(from, to, "arg")
			}
		}
	}
}

// sameOrigin: a URL literal relative to the page ("/api/x", "./a", "?q", "#x").
func sameOrigin(lit string) bool {
	return strings.HasPrefix(lit, "/") && !strings.HasPrefix(lit, "//") || strings.HasPrefix(lit, "./") ||
		strings.HasPrefix(lit, "../") || strings.HasPrefix(lit, "?") || strings.HasPrefix(lit, "#")
}

// literalHost: a URL literal that names its host ("https://h/…", "//h/…"), which the text scan
// records as a connection. "https://" + a run-time value names none.
func literalHost(lit string) bool {
	rest := lit
	if i := strings.Index(lit, "://"); i >= 0 {
		rest = lit[i+3:]
	} else if strings.HasPrefix(lit, "//") {
		rest = lit[2:]
	} else {
		return false
	}
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Contains(rest, ".") || strings.Contains(rest, ":") || rest == "localhost"
}
