# Code a tool runs connects where its URLs say (shield/normalize tools_code_targets.go): the URL
# rules (services.rego, the CEL network rules) judge its literal targets. A loopback origin whose
# port or path the code joins at run time ('http://127.0.0.1:' + p + '/…') could be any local
# service, the Docker API and the kubelet included: a human decides.
#
# FPR cost: page code that builds a loopback URL from a variable port (a dev server's port read
# from config) is escalated; literal ports are judged as before.
package shield

import rego.v1

escalate contains finding("code.loopback-runtime-target", sprintf("runs code (%s) that connects to a loopback port chosen at run time", [e.program])) if {
	some e in input.effects
	e.kind == "connect"
	e.detail == "loopback port at run time"
}
