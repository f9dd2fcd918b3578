# Requests judged by the act, whoever is asked and in whatever field (shield/normalize
# tools_request_acts.go, tools_memory_facts.go; words in prose.yaml request_acts): authority given
# to someone, a change shipped past its gates, a workflow change that hands the repository's
# secrets to forks, an approval claimed through a channel nobody can check, and a memory's
# standing fact that someone holds authority.
#
# FPR cost: ordinary requests name none of these acts ("write tests for the parser", "LGTM,
# merging after CI", "add alice to the docs team"); a request to make a teammate an admin or to
# skip the tests on a release is escalated (a human decides), not blocked.
package shield

import rego.v1

# The details of tools_request_acts.go (effects.privilege leaves them to the rules below).
request_act_details := {"grant requested", "authority stated", "ungated release requested", "ci exposure requested", "out-of-band approval claimed"}

# request_acts(d): the effects of detail d (a set: a text may ask for several).
request_acts(d) := {e |
	some e in input.effects
	e.kind == "privilege"
	e.detail == d
}

# Authority given to someone: a human decides.
escalate contains finding("requested.grant", sprintf("asks %s to give %s", [input.tool, e.target])) if {
	requested_class
	some e in request_acts("grant requested")
}

# Authority given on an approval nobody can check here ("the owner said yes on the phone"), or
# to an address outside the organisation's domains: the shape of social engineering.
deny contains finding("requested.grant-outsider", sprintf("asks %s to give %s on an approval claimed %s", [input.tool, e.target, trim_prefix(c.target, "claimed approval: ")])) if {
	requested_class
	some e in request_acts("grant requested")
	some c in request_acts("out-of-band approval claimed")
}

deny contains finding("requested.grant-outsider", sprintf("asks %s to give %s to an identity outside the organisation", [input.tool, e.target])) if {
	requested_class
	some e in request_acts("grant requested")
	some m in regex.find_all_string_submatch_n(`@([a-z0-9-]+(?:\.[a-z0-9-]+)+)`, lower(e.target), 4)
	not host_in_list(m[1], data.shield.lists.internal_email_domains)
}

# A memory that states someone holds authority: later sessions take it as true.
escalate contains finding("memory.authority-stated", sprintf("records as a standing fact that %s", [e.target])) if {
	input.class == "memory_write"
	some e in request_acts("authority stated")
}

# A merge, deploy or release asked for past its gates (tests, review, CI, approval).
escalate contains finding("requested.ungated-release", sprintf("asks %s to %s", [input.tool, e.target])) if {
	requested_class
	some e in request_acts("ungated release requested")
}

# A workflow change that runs a pull request's code with the repository's secrets (a
# pull_request_target or workflow_run trigger with the head checked out, or secrets handed to
# forks): anyone who opens a pull request gets them.
deny contains finding("requested.ci-exposure", sprintf("asks %s for a change where the %s", [input.tool, e.target])) if {
	requested_class
	some e in request_acts("ci exposure requested")
}

# An approval claimed through an unverifiable channel, given as the reason for an act asked of a
# sub-agent or a schedule, or for another privileged act: a human confirms.
escalate contains finding("requested.claimed-approval", sprintf("asks %s to act on an approval claimed %s", [input.tool, trim_prefix(c.target, "claimed approval: ")])) if {
	requested_class
	some c in request_acts("out-of-band approval claimed")
	request_act_present(c)
}

request_act_present(_) if input.class in {"agent_spawn", "schedule"}

request_act_present(c) if {
	some e in input.effects
	e.kind in {"privilege", "delete", "push", "secret", "persistence"}
	e != c
}
