package shield

import rego.v1

ra_has(r, id) if {
	some f in r
	f.rule == id
}

ra_grant := {"kind": "privilege", "target": "outsider-user admin", "detail": "grant requested", "program": "delegate_task"}

ra_claim := {"kind": "privilege", "target": "claimed approval: said yes on the phone", "detail": "out-of-band approval claimed", "program": "delegate_task"}

test_grant_escalates_not_blocks if {
	inp := {"class": "agent_spawn", "tool": "delegate_task", "effects": [ra_grant]}
	r1 := escalate with input as inp
	ra_has(r1, "requested.grant")
	r2 := deny with input as inp
	not ra_has(r2, "requested.grant-outsider")
	r3 := deny with input as inp
	not ra_has(r3, "effects.privilege")
}

test_grant_on_out_of_band_claim_blocks if {
	inp := {"class": "agent_spawn", "tool": "delegate_task", "effects": [ra_grant, ra_claim]}
	r4 := deny with input as inp
	ra_has(r4, "requested.grant-outsider")
}

test_grant_to_outside_address_blocks if {
	e := object.union(ra_grant, {"target": "jdoe@gmail.example owner"})
	r5 := deny with input as {"class": "message_send", "tool": "send_message", "effects": [e]}
	ra_has(r5, "requested.grant-outsider")
}

test_grant_to_internal_address_escalates if {
	some d, _ in data.shield.lists.internal_email_domains
	e := object.union(ra_grant, {"target": sprintf("kim@%s admin", [d])})
	inp := {"class": "message_send", "tool": "send_message", "effects": [e]}
	r6 := deny with input as inp
	not ra_has(r6, "requested.grant-outsider")
	r7 := escalate with input as inp
	ra_has(r7, "requested.grant")
}

test_grant_in_own_plan_not_judged_here if {
	inp := {"class": "agent_state", "tool": "TodoWrite", "effects": [ra_grant]}
	r8 := escalate with input as inp
	not ra_has(r8, "requested.grant")
}

test_claim_alone_in_message_not_judged if {
	inp := {"class": "message_send", "tool": "send_message", "effects": [ra_claim]}
	r9 := escalate with input as inp
	not ra_has(r9, "requested.claimed-approval")
}

test_claim_with_delegation_escalates if {
	inp := {"class": "agent_spawn", "tool": "create_agent", "effects": [ra_claim]}
	r10 := escalate with input as inp
	ra_has(r10, "requested.claimed-approval")
}

test_authority_stated_in_memory_escalates if {
	e := {"kind": "privilege", "target": "x acme-admins", "detail": "authority stated"}
	r11 := escalate with input as {"class": "memory_write", "tool": "create_relations", "effects": [e, object.union(e, {"target": "y owners"})]}
	ra_has(r11, "memory.authority-stated")
	r12 := deny with input as {"class": "memory_write", "tool": "create_relations", "effects": [e]}
	not ra_has(r12, "effects.privilege")
}

test_ungated_escalates if {
	e := {"kind": "privilege", "target": "merge skipping tests", "detail": "ungated release requested"}
	inp := {"class": "message_send", "tool": "post_comment", "effects": [e]}
	r13 := escalate with input as inp
	ra_has(r13, "requested.ungated-release")
	r14 := deny with input as inp
	not ra_has(r14, "effects.privilege")
}

test_ci_exposure_blocks if {
	e := {"kind": "privilege", "target": "workflow runs a pull request's code with the repository's secrets", "detail": "ci exposure requested"}
	r15 := deny with input as {"class": "agent_spawn", "tool": "Task", "effects": [e]}
	ra_has(r15, "requested.ci-exposure")
}
