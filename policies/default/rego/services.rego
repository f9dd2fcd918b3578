# Loopback services reached from a command (data: shield/services/data.yaml). Loopback is allowed
# egress for exec, and a dev server, a local database or a search engine health check stays
# allowed; the services of the table are not the developer's: the Docker API, the kubelet, etcd,
# a metadata proxy, the appliance's own approval and audit API. What decides is the port and the
# path of the request (or the socket's name), read from the URL the normaliser parsed.
package shield

import rego.v1

svc := data.shield.services

loopback_admin(u) := s if {
	u.role != "text"
	u.ip_class == "loopback"
	some s in svc.loopback_services
	service_matches(s, u)
}

service_matches(s, u) if {
	count(s.ports) > 0
	u.port in s.ports
	count(s.paths) == 0
}

service_matches(s, u) if {
	count(s.ports) > 0
	u.port in s.ports
	some p in s.paths
	startswith(lower(u.path), p)
}

service_matches(s, u) if {
	count(s.ports) == 0
	some p in s.paths
	startswith(lower(u.path), p)
}

deny contains finding("net.loopback-admin", sprintf("reaches the %s on this host (%s)", [s.name, u.raw])) if {
	some u in input.urls
	s := loopback_admin(u)
	s.decision == "block"
}

escalate contains finding("net.loopback-admin", sprintf("reaches the %s on this host (%s)", [s.name, u.raw])) if {
	some u in input.urls
	s := loopback_admin(u)
	s.decision != "block"
}

admin_socket(t) := s if {
	some s in svc.loopback_sockets
	some b in s.basenames
	endswith(t, concat("", ["/", b]))
}

deny contains finding("net.loopback-admin", sprintf("talks to the %s through its socket %s", [s.name, e.target])) if {
	some e in input.effects
	e.kind in {"read", "write", "connect"}
	e.program in svc.socket_clients
	s := admin_socket(e.target)
	s.decision == "block"
}

# A static file server bound to an address other than loopback that serves a directory outside
# the workspace (the home directory, /): everything under it is handed to the network. The
# served directory is also a read effect, judged by the envelope; a dev server on loopback
# serving the workspace stays allowed.
deny contains finding("net.exposed-server", sprintf("serves %s to the network on %s", [dir, e.target])) if {
	some e in input.effects
	e.kind == "listen"
	startswith(e.detail, "serves ")
	not bind_loopback(effect_host(e.target))
	dir := substring(e.detail, 7, -1)
	not under(dir, input.workspace)
}

# Tunnels that publish a local port on the internet (data: shield.services.tunnel_programs).
escalate contains finding("net.tunnel-expose", sprintf("publishes a local port on the internet (%s)", [e.target])) if {
	some e in input.effects
	e.kind in {"exec", "install"}
	svc.tunnel_programs[e.target]
}

escalate contains finding("net.tunnel-expose", sprintf("publishes a local port on the internet (%s)", [c.name])) if {
	some c in input.commands
	svc.tunnel_programs[c.name]
	not tunnel_info_only(c)
}

# A bind address that only this host reaches (0.0.0.0 and :: are every interface).
bind_loopback(h) if h in {"localhost", "::1", "ip6-localhost"}

bind_loopback(h) if startswith(h, "127.")

bind_loopback(h) if endswith(h, ".localhost")

# The appliance's own command line run by the agent (data: shield.services.appliance_commands).
deny contains finding("net.loopback-admin", sprintf("runs the appliance's own %s %s", [c.name, c.args[0]])) if {
	some c in input.commands
	subs := svc.appliance_commands[c.name]
	count(c.args) > 0
	c.args[0] in subs
}

# The admin API of a local or internal service asked to delete, stop or reset (data:
# admin_segments, admin_destroy_words; see the data file for the reading and its cost).
deny contains finding("net.admin-destroy", sprintf("asks the admin API of a service on %s to %s (%s)", [u.host, w, u.raw])) if {
	some u in input.urls
	u.role != "text"
	u.ip_class in {"loopback", "private", "internal"}
	segs := [s | some s in split(lower(u.path), "/"); s != ""]
	admin_path(segs)
	some s in segs
	some w in regex.split(`[_.-]+`, s)
	w in svc.admin_destroy_words
}

# A DELETE request to an admin API is a destroy whatever the path's words (http_deletes.go:
# the delete effect names the path).
deny contains finding("net.admin-destroy", sprintf("sends DELETE to the admin API of a service on %s (%s)", [u.host, u.raw])) if {
	some u in input.urls
	u.role != "text"
	u.ip_class in {"loopback", "private", "internal"}
	segs := [s | some s in split(lower(u.path), "/"); s != ""]
	admin_path(segs)
	some e in input.effects
	e.kind == "delete"
	startswith(e.detail, "http DELETE")
	endswith(e.target, u.path)
}

admin_path(segs) if {
	some s in segs
	s in svc.admin_segments
}

admin_path(segs) if {
	some s in segs
	startswith(s, "_")
	count(s) > 1
}
