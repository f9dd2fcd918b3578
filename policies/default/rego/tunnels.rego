# SSH tunnels by direction (shield/normalize/tunnels.go): the flag and the ssh_config spelling
# (-R / -o RemoteForward, -D / -o DynamicForward, -w / -o Tunnel) are one listen effect each.
#
# - A remote forward or a tun device puts this host (its services, its network) within reach of
#   the other host: BLOCKed, as exec.tunnel does for the programs made for it (ngrok, chisel …).
# - A dynamic forward is a SOCKS proxy from this host into the other host's network: traffic of
#   any program leaves through it, beyond the allowed egress. ESCALATEd: a human decides.
# - A local forward (-L) reaches one named service through the bastion: judged as the ssh
#   connection itself (allowed when the host is), its bind address by net.relay-exposed.
package shield

import rego.v1

deny contains finding("net.tunnel-in", sprintf("%s opens a tunnel from %s into this host (%s %s)", [e.program, ssh_peer, e.detail, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail in {"tunnel -R", "tunnel -w"}
	object.get(e, "remote", "") == ""
	ssh_peer := tunnel_peer
}

escalate contains finding("net.tunnel-proxy", sprintf("%s opens a SOCKS proxy out through %s (%s)", [e.program, tunnel_peer, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	e.detail == "tunnel -D"
	object.get(e, "remote", "") == ""
}

# The host the tunnel goes to (the ssh connection of the same call), or "its peer".
tunnel_peer := h if {
	hs := [c.target | some c in input.effects; c.kind == "connect"; c.detail == "ssh"]
	count(hs) > 0
	h := hs[0]
} else := "its peer"

# A relay that joins a service of this host to an outside host (socat TCP:OUTSIDE:4444
# TCP:127.0.0.1:22, websocat): the outside host reaches the local service through the relay's
# outbound connection, the reverse tunnel of a program not made for tunnels. Relays are the
# programs whose operands are two addresses joined together.
relay_programs := {"socat", "websocat", "gost", "rinetd", "redir", "tcptunnel", "proxytunnel", "sslh"}

deny contains finding("net.tunnel-in", sprintf("%s joins %s on this host to %s outside", [l.program, l.target, o.target])) if {
	some l in input.effects
	l.kind == "connect"
	l.program in relay_programs
	object.get(l, "remote", "") == ""
	loopback_host(effect_host(l.target))
	some o in input.effects
	o.kind == "connect"
	o.program == l.program
	not loopback_host(effect_host(o.target))
	not egress_allowed(o)
}
