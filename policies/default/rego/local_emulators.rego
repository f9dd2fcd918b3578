# Local endpoints make cloud and storage CLIs local.
#
# Principle: a cloud or object-storage CLI pointed at an endpoint on this host (aws --endpoint-url
# http://localhost:4566, mc's loopback aliases, Azurite's development storage, the Firebase and
# Google emulators) acts on a local emulator, not on an account; its destructive verbs empty a test
# fixture. The normaliser marks each effect of such a command on the service (not on files) with
# Remote "local-emulator:HOST" (shield/normalize/local_emulators.go); such an effect is inside
# the envelope. What the command does to files (an upload reads its file) keeps its own judgement.
# Caveat, by decision: a loopback port may forward to a shared server (an ssh tunnel); a reset of
# a test bucket through it is a cost we accept, as for local databases (local.rego).
package shield

import rego.v1

local_emulator(e) if {
	startswith(object.get(e, "remote", ""), "local-emulator:")
	not e.unresolved
	not startswith(e.target, "/")
}

inside(e) if {
	local_emulator(e)
	e.kind in {"delete", "write", "connect", "operate", "read"}
}

# The operation itself is judged as local too (operations.rego), however the endpoint was given
# (option, AWS_ENDPOINT_URL=, an Azure development connection string, an mc alias).
op_local(e) if local_emulator(e)
