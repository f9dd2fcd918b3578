package shield_test

import data.shield

test_net_denied if {
	some f in shield.decision.deny with input as {"class": "net_request"}
	f.rule == "net.any"
}

test_exec_denied if {
	some f in shield.decision.deny with input as {"class": "exec"}
	f.rule == "net.any"
}

todo_test_later if false
