# Exposure: what a command opens to others. Listening sockets bound beyond loopback (the bind
# address the call asked for: shield/normalize/listen.go), code run on other hosts (remote
# execution on a fleet, a VM, a node), data and resources made public, and grants of cloud or
# cluster administration.
package shield

import rego.v1

# A server the call binds to an address other than loopback (uvicorn --host 0.0.0.0, jupyter
# --ip=*, php -S 0.0.0.0:8000, vite --host, docker run -p 0.0.0.0:80:80): reachable from the
# network. A dev server on loopback stays allowed; a program's own default bind (python -m
# http.server) is judged by what it serves (net.exposed-server), not here.
escalate contains finding("net.listen-exposed", sprintf("%s listens on %s, reachable beyond this host", [e.program, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail == "bind"
	object.get(e, "remote", "") == "" # in a container or on another host: the remote exec is judged
	not bind_loopback(e.target)
}

# A forwarder bound beyond loopback (kubectl proxy/port-forward --address 0.0.0.0, ssh -g or
# -L 0.0.0.0:…, socat TCP-LISTEN relaying elsewhere): every client of the address uses the
# user's own access (cluster credentials, a bastion's network, a local socket) without
# authenticating.
deny contains finding("net.relay-exposed", sprintf("%s relays the user's access to anyone reaching %s", [e.program, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail == "relay"
	object.get(e, "remote", "") == ""
	not e.unresolved
	not bind_loopback(e.target)
}

escalate contains finding("net.relay-exposed", sprintf("%s relays to an address not known (%s)", [e.program, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail == "relay"
	object.get(e, "remote", "") == ""
	e.unresolved
}

# A routing override to an address beyond loopback and the allowed egress (curl --resolve /
# --connect-to / -x / --socks5 / --dns-servers, HTTPS_PROXY=… on the command, HTTPie --proxy,
# kubectl --server / VAULT_ADDR=… for clients that send their stored credentials to the server):
# the request, and whatever credentials the program attaches to it, goes there, whatever host
# the URL names. A secret in the request is blocked by effects.secret-in-request.
escalate contains finding("net.route-override", sprintf("routes the request through %s (%s)", [e.target, e.detail])) if {
	some e in input.effects
	e.kind == "connect"
	e.detail in {"proxy", "resolve", "connect-to", "dns-server", "server"}
	not loopback_host(effect_host(e.target))
	not egress_allowed(e)
}

# This host's shell offered through a vendor relay to whoever signs in (code tunnel): remote
# access a human should approve.
escalate contains finding("net.remote-access", sprintf("%s offers this host's shell through a relay", [e.program])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail == "remote access"
}
