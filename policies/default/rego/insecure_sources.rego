# Tier 1: packages over a channel nobody can verify are someone else's code.
#
# Principle: a package manager that installs from a source over plain HTTP, or from a host whose
# TLS verification the same command turns off (pip --trusted-host, strict-ssl=false), takes
# whatever anyone on the path serves: the index, the files and their hashes come over the same
# unauthenticated channel. An install of a foreign source is escalated by
# effects.install-off-registry; over such a channel it is blocked. Loopback and private
# addresses (a local devpi or verdaccio, a LAN mirror) and names under .local, .internal, .lan
# stay with the escalation. FPR cost: a company index served over plain HTTP on a public name is
# blocked (it should not exist).
package shield

import rego.v1

insecure_source_private(h) if loopback_host(h)

insecure_source_private(h) if regex.match(`^(10\.|192\.168\.|172\.(1[6-9]|2[0-9]|3[01])\.|169\.254\.)|\.(local|internal|lan|home\.arpa)$`, h)

insecure_source_installs(p) if {
	some i in input.effects
	i.kind == "install"
	i.program == p
	not i.detail in {"verification_off", "container_image", "build_requirement"}
}

deny contains finding("supply.insecure-package-source", sprintf("installs packages from %s over plain HTTP: anyone on the path chooses the code", [h])) if {
	input.class == "exec"
	some c in input.effects
	c.kind == "connect"
	c.detail == "http"
	h := effect_host(c.target)
	not insecure_source_private(h)
	insecure_source_installs(c.program)
}

deny contains finding("supply.insecure-package-source", sprintf("installs packages from %s with its TLS verification turned off", [h])) if {
	input.class == "exec"
	some v in input.effects
	v.kind == "install"
	v.detail == "verification_off"
	some c in input.effects
	c.kind == "connect"
	c.program == v.program
	h := effect_host(c.target)
	not insecure_source_private(h)
	not source_host_allowed(h)
	insecure_source_installs(c.program)
}
