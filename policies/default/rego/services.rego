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
