# Tests of tunnels.rego.
package shield.tunnels_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects) := {
	"tool": "Bash", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/home/user/project",
}

conn := {"kind": "connect", "target": "198.51.100.8", "detail": "ssh", "program": "ssh", "in_workspace": false, "sensitive": false, "unresolved": false}

listen(detail, target) := {"kind": "listen", "target": target, "detail": detail, "program": "ssh", "in_workspace": false, "sensitive": false, "unresolved": false}

test_remote_forward_denied if {
	"net.tunnel-in" in rules(shield.deny) with input as act([conn, listen("tunnel -R", "8080:localhost:22")])
}

test_tun_device_denied if {
	"net.tunnel-in" in rules(shield.deny) with input as act([conn, listen("tunnel -w", "0:0")])
}

test_socks_escalated if {
	inp := act([conn, listen("tunnel -D", "1080")])
	"net.tunnel-proxy" in rules(shield.escalate) with input as inp
	not "net.tunnel-in" in rules(shield.deny) with input as inp
}

test_local_forward_not_judged_here if {
	inp := act([conn, listen("tunnel -L", "5432:localhost:5432")])
	not "net.tunnel-proxy" in rules(shield.escalate) with input as inp
	not "net.tunnel-in" in rules(shield.deny) with input as inp
}

relay(target) := {"kind": "connect", "target": target, "detail": "tcp", "program": "socat", "in_workspace": false, "sensitive": false, "unresolved": false, "port": 0}

test_relay_local_to_outside_denied if {
	"net.tunnel-in" in rules(shield.deny) with input as act([relay("198.51.100.8"), relay("127.0.0.1")])
}

test_relay_two_locals_not_denied if {
	not "net.tunnel-in" in rules(shield.deny) with input as act([relay("localhost"), relay("127.0.0.1")])
}
