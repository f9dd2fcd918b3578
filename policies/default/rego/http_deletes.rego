# HTTP DELETE from a command (shield/normalize/http_deletes.go: delete effects "http:HOST[:PORT]PATH").
# On this host the developer deletes their own data (a test index of a local search engine):
# inside the envelope unless it names everything at once. Elsewhere a delete changes shared
# state and leaves the envelope (exec.outside-envelope escalates it); one that names every index
# or object (_all, a wildcard) destroys a service's data.
package shield

import rego.v1

http_delete_host(e) := h if {
	rest := trim_prefix(e.target, "http:")
	hostport := split(rest, "/")[0]
	h := split(hostport, ":")[0]
}

inside(e) if {
	e.kind == "delete"
	startswith(e.target, "http:")
	not "bulk" in split(e.detail, ",")
	loopback_host(http_delete_host(e))
}

deny contains finding("effects.http-bulk-delete", sprintf("deletes everything at %s", [trim_prefix(e.target, "http:")])) if {
	some e in input.effects
	e.kind == "delete"
	startswith(e.target, "http:")
	"bulk" in split(e.detail, ",")
	not loopback_host(http_delete_host(e))
}
