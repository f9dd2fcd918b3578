# Tier 1: what a request target and a structured call carry besides their own host
# (shield/normalize/urls_nested.go, tools_structured.go).
#
# - Every URL inside a URL is a target: a request to an outside host that carries an internal
#   target (loopback, private, link-local, cluster-internal) in a query value, the fragment or the
#   path is an open redirect, a proxy or a link-follower taking it there. Metadata targets are
#   blocked by net.cloud-metadata and effects.connect-metadata whatever role the URL has.
# - A DNS name that spells an internal address in its labels resolves there by construction.
# - Data in a request target is data sent: beyond the allowed egress a human decides; secret
#   material in it is blocked by effects.secret-egress.
# - A secret typed into a page: a human decides whether that page should have it.
# - Mass deletion through structured edits: a patch or file tool deleting a project's manifests or
#   entry points with other files at once (data: shield.edits).
package shield

import rego.v1

nested_internal_classes := {"loopback", "private", "link_local", "internal", "invalid"}

escalate contains finding("url.nested-internal", sprintf("the request to an outside host carries the internal target %s (an open redirect or proxy reaches it)", [u.raw])) if {
	some u in input.urls
	u.role == "nested"
	u.ip_class in nested_internal_classes
	some o in input.urls
	o.role in {"request", "connect"}
	o.ip_class in {"public", "hostname"}
}

escalate contains finding("url.embedded-address", sprintf("%s is a name that spells a %s address in its labels", [u.host, u.ip_class])) if {
	some u in input.urls
	u.role != "text"
	u.ip_class in {"loopback", "private", "link_local"}
	regex.match(`[g-z]`, u.host)
	not loopback_name(u.host)
}

loopback_name(h) if h in {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}

loopback_name(h) if endswith(h, ".localhost")

escalate contains finding("url.data-in-target", sprintf("sends data encoded in the request target to %s, outside the allowed egress", [e.target])) if {
	some e in input.effects
	e.kind == "send"
	e.detail == "url data"
	not egress_allowed(e)
}

# Data in a request to an allowed egress host (a registry search, the forge's API) stays inside.
inside(e) if {
	e.kind == "send"
	e.detail == "url data"
	egress_allowed(e)
}

escalate contains finding("browser.typed-secret", sprintf("types a credential (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "secret"
	e.detail == "typed"
}

# ---- mass deletion through structured edits

deleted_files contains e.target if {
	input.class != "exec"
	some e in input.effects
	e.kind == "delete"
	e.in_workspace
	not rewritten(e.target)
}

rewritten(t) if {
	some w in input.effects
	w.kind == "write"
	w.target == t
}

deleted_key_files contains t if {
	some t in deleted_files
	parts := split(t, "/")
	data.shield.edits.key_files[parts[count(parts) - 1]]
}

escalate contains finding("edits.mass-delete", sprintf("deletes %d files at once, among them the project's %v", [count(deleted_files), sort(deleted_key_files)])) if {
	count(deleted_key_files) > 0
	count(deleted_files) >= data.shield.edits.min_with_key_file
}

escalate contains finding("edits.mass-delete", sprintf("deletes %d files at once", [count(deleted_files)])) if {
	count(deleted_files) >= data.shield.edits.min_files
}

# ---- free text grants nothing (shield/normalize/tools_claims.go)

# An approval free text claims (a memory, a plan, a schedule, a message to a bot): nobody gave it
# in this session; a human confirms before anything acts on it.
escalate contains finding("freetext.claimed-approval", sprintf("the text claims a permission nobody gave here (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "privilege"
	e.detail == "claimed"
}

# Free text that asks for production or customer data and names a recipient outside the
# organisation's domains or a host beyond the allowed egress: an export of data to outside.
deny contains finding("freetext.data-export", sprintf("asks for %s and sends it to %s", [d.target, o.target])) if {
	some d in input.effects
	d.kind == "read"
	startswith(d.target, "data: ")
	d.detail == "requested"
	some o in input.effects
	outside_recipient(o)
}

outside_recipient(o) if {
	o.kind == "send"
	parts := split(o.target, "@")
	count(parts) == 2
	not own_domain(lower(parts[1]))
}

outside_recipient(o) if {
	o.kind == "connect"
	not loopback_host(effect_host(o.target))
	not egress_allowed(o)
}

# The repository's history deleted or moved away by a file tool (shield/normalize/tools_history.go):
# what exec.outside-envelope escalates for a command, escalated for every tool.
escalate contains finding("edits.history-removed", sprintf("removes the repository's history (%s)", [e.detail])) if {
	input.class != "exec"
	some e in input.effects
	e.kind == "delete"
	e.target == "vcs_history"
}
