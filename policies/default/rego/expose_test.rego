# Tests of expose.rego: listeners bound beyond loopback, forwarders relaying the user's access,
# request routing overrides.
package shield.expose_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "program": program, "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": "", "port": 0}

test_server_bound_to_all_interfaces_escalates if {
	"net.listen-exposed" in rules(shield.escalate) with input as act([eff("listen", "0.0.0.0", "uvicorn", "bind")])
	"net.listen-exposed" in rules(shield.escalate) with input as act([eff("listen", "::", "jupyter", "bind")])
	"net.listen-exposed" in rules(shield.escalate) with input as act([eff("listen", "192.0.2.4", "flask", "bind")])
}

test_server_on_loopback_not_a_finding if {
	inp := act([eff("listen", "127.0.0.1", "uvicorn", "bind"), eff("listen", "localhost", "vite", "bind"), eff("listen", "::1", "php", "bind")])
	not "net.listen-exposed" in rules(shield.escalate) with input as inp
	count(shield.deny) == 0 with input as inp
}

test_forwarder_beyond_loopback_blocked if {
	"net.relay-exposed" in rules(shield.deny) with input as act([eff("listen", "0.0.0.0", "kubectl", "relay")])
	"net.relay-exposed" in rules(shield.deny) with input as act([eff("listen", "10.1.2.3", "ssh", "relay")])
}

test_forwarder_on_loopback_not_blocked if {
	inp := act([eff("listen", "localhost", "kubectl", "relay"), eff("listen", "127.0.0.1", "socat", "relay")])
	not "net.relay-exposed" in rules(shield.deny) with input as inp
	not "net.relay-exposed" in rules(shield.escalate) with input as inp
}

test_forwarder_unresolved_bind_escalates if {
	e := object.union(eff("listen", "$ADDR", "kubectl", "relay"), {"unresolved": true})
	"net.relay-exposed" in rules(shield.escalate) with input as act([e])
	not "net.relay-exposed" in rules(shield.deny) with input as act([e])
}

test_listen_without_bind_detail_not_judged_here if {
	inp := act([eff("listen", "8000", "python3", "module http.server")])
	not "net.listen-exposed" in rules(shield.escalate) with input as inp
	not "net.relay-exposed" in rules(shield.deny) with input as inp
}

test_foreign_route_override_escalates if {
	"net.route-override" in rules(shield.escalate) with input as act([eff("connect", "198.51.100.4", "curl", "resolve")])
	"net.route-override" in rules(shield.escalate) with input as act([eff("connect", "203.0.113.7", "git", "proxy")])
	"net.route-override" in rules(shield.escalate) with input as act([eff("connect", "203.0.113.53", "curl", "dns-server")])
}

test_loopback_route_override_allowed if {
	inp := act([eff("connect", "127.0.0.1", "curl", "resolve"), eff("connect", "localhost", "curl", "proxy")])
	not "net.route-override" in rules(shield.escalate) with input as inp
}

test_plain_dns_lookup_not_an_override if {
	not "net.route-override" in rules(shield.escalate) with input as act([eff("connect", "203.0.113.53", "dig", "dns")])
}

test_token_routed_to_foreign_address_blocked if {
	sec := eff("secret", "env:GITHUB_TOKEN", "curl", "request")
	inp := act([eff("connect", "198.51.100.4", "curl", "resolve"), eff("connect", "api.github.com", "curl", "https"), sec])
	"effects.secret-in-request" in rules(shield.deny) with input as inp
}

test_bind_in_a_container_not_judged_here if {
	e := object.union(eff("listen", "0.0.0.0", "uvicorn", "bind"), {"remote": "container:acme/api"})
	not "net.listen-exposed" in rules(shield.escalate) with input as act([e])
	r := object.union(eff("listen", "0.0.0.0", "socat", "relay"), {"remote": "pod:api-0"})
	not "net.relay-exposed" in rules(shield.deny) with input as act([r])
}

test_remote_access_relay_escalates if {
	"net.remote-access" in rules(shield.escalate) with input as act([eff("listen", "code tunnel", "code", "remote access")])
	not "net.remote-access" in rules(shield.escalate) with input as act([eff("listen", "8080", "ssh", "tunnel -L")])
}
