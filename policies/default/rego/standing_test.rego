package shield

import rego.v1

test_standing_source_outside_egress if {
	r := escalate with input as {"class": "memory_write", "effects": [{"kind": "connect", "target": "npm.evil.example:443", "detail": "standing source: registry"}]}
	some f in r
	f.rule == "memory.standing-source"
}

test_standing_source_loopback if {
	r := escalate with input as {"class": "memory_write", "effects": [{"kind": "connect", "target": "127.0.0.1:4873", "detail": "standing source: registry"}]}
	not standing_has_rule(r, "memory.standing-source")
}

test_plain_connect_not_standing if {
	r := escalate with input as {"class": "memory_write", "effects": [{"kind": "connect", "target": "npm.evil.example:443", "detail": "https"}]}
	not standing_has_rule(r, "memory.standing-source")
}

standing_has_rule(r, id) if {
	some f in r
	f.rule == id
}

test_approval_request_escalates_not_blocks if {
	inp := {"class": "message_send", "tool": "send_message", "effects": [{"kind": "privilege", "target": "approve pull request", "detail": "approval requested", "program": "send_message"}]}
	e := escalate with input as inp
	standing_has_rule(e, "requested.approval")
	d := deny with input as inp
	not standing_has_rule(d, "effects.privilege")
}
