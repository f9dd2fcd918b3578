# A memory is a standing instruction (shield/normalize/tools_standing.go). A memory, an agent's state
# or a sub-agent's system prompt that names a source (a registry, an index, a mirror, a download
# site, a binary) with an address tells every later session where to fetch code from: when the host
# is outside the allowed egress, a human decides. Controls a memory waives are privilege effects
# (effects.privilege); permissions it claims are claimed approvals (freetext.claimed-approval).
package shield

import rego.v1

escalate contains finding("memory.standing-source", sprintf("a kept instruction names %s as a source (%s), outside the allowed egress", [e.target, e.detail])) if {
	some e in input.effects
	e.kind == "connect"
	startswith(e.detail, "standing source")
	not egress_allowed(e)
	not loopback_host(effect_host(e.target))
}
