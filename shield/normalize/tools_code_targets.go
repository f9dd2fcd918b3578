package normalize

import "strings"

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

// codeURLTargets marks the URLs the code of a code_exec call names as requests.
func (s *state) codeURLTargets(code string) {
	if code == "" {
		return
	}
	for i := range s.act.URLs {
		u := &s.act.URLs[i]
		if u.Role == URLText && u.Raw != "" && strings.Contains(code, u.Raw) {
			u.Role = URLRequest
		}
	}
}
