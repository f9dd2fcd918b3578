package shield

import rego.v1

test_loopback_runtime_target_escalates if {
	r := escalate with input as {"class": "code_exec", "tool": "puppeteer_evaluate", "effects": [{"kind": "connect", "target": "loopback:(run time)", "detail": "loopback port at run time", "program": "puppeteer_evaluate", "unresolved": true}]}
	ra_has(r, "code.loopback-runtime-target")
}

test_runtime_target_elsewhere_not_this_rule if {
	r := escalate with input as {"class": "code_exec", "tool": "puppeteer_evaluate", "effects": [{"kind": "connect", "target": "(run time)", "detail": "code", "program": "puppeteer_evaluate", "unresolved": true}]}
	not ra_has(r, "code.loopback-runtime-target")
}
