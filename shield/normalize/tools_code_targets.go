package normalize

import (
	"regexp"
	"strings"
)

// Code a tool runs is code, wherever it runs: the JavaScript a browser tool evaluates in a page
// (puppeteer_evaluate, playwright_evaluate, browser_evaluate, Chrome DevTools evaluate_script and
// Runtime.evaluate, Selenium execute_script) and the code an interpreter tool runs. The shell
// engine's code reading (effects_shell.go codeEffect) already makes every URL literal of such code
// a connect effect; the URLs themselves were recorded as text found in a string (URLText), which
// the URL rules (services.rego loopback admin APIs, metadata, internal services) do not judge as
// targets. A URL in the code a call runs is where that code connects: its role is a request,
// judged like a curl of the same URL (fetch('http://127.0.0.1:2375/containers/create') is the
// Docker API whatever tool sends it). URLs in other arguments (a description, a page URL the
// code runs in) keep their role.

//
// Two spellings the text scan does not read as URLs are read here: a protocol-relative literal
// ('//127.0.0.1:2375/…' takes the page's scheme: read as http), and a loopback literal whose port
// or path is joined at run time ('http://127.0.0.1:' + p + '/…'): on loopback the port says which
// service is reached, so the target is unresolved (never ALLOWed without a higher tier).

// DetailLoopbackRuntime: a loopback connection of code whose port or path is joined at run time.
// It is API.
const DetailLoopbackRuntime = "loopback port at run time"

// codeSlashURLRE: a string literal that starts "//host".
var codeSlashURLRE = regexp.MustCompile("[\x60'\"](//[A-Za-z0-9\\[][^\\s'\"\x60]{0,1000})")

// codeLoopbackPrefixRE: a string literal that is a loopback origin cut before its port or path,
// followed by a concatenation or a template substitution.
var codeLoopbackPrefixRE = regexp.MustCompile("(?i)[\x60'\"](?:https?|wss?)://(?:localhost|127(?:\\.\\d{1,3}){3}|\\[::1\\]|0\\.0\\.0\\.0|0x7f[0-9a-f]*)(?::?[\x60'\"]\\s*\\+|:?\\$\\{)")

// codeURLTargets marks the URLs the code of a code_exec call names as requests.
func (s *state) codeURLTargets(code string) {
	if code == "" {
		return
	}
	for _, m := range codeSlashURLRE.FindAllStringSubmatch(code, 16) {
		s.addURL("http:"+m[1], URLRequest, false)
	}
	if codeLoopbackPrefixRE.MatchString(code) {
		s.addUnresolved("loopback port or path built at run time (" + s.act.Tool + ")")
		s.addEffect(Effect{Kind: EffectConnect, Target: "loopback:(run time)", Program: s.act.Tool, Detail: DetailLoopbackRuntime, Unresolved: true})
	}
	for i := range s.act.URLs {
		u := &s.act.URLs[i]
		if u.Role == URLText && u.Raw != "" && strings.Contains(code, u.Raw) {
			u.Role = URLRequest
		}
	}
}
