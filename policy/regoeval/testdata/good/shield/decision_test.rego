package shield.decision_test

import data.shield

test_metadata_denied if {
	d := shield.decision with input as {"class": "net_request", "urls": [{"host": "169.254.169.254", "ip_class": "metadata"}], "recipients": [], "context": {"labels": {}}}
	some f in d.deny
	f.rule == "net.metadata"
}

test_internal_message_not_escalated if {
	d := shield.decision with input as {"class": "message_send", "urls": [], "recipients": ["bob@example.com"], "context": {"labels": {}}}
	count(d.escalate) == 0
}
