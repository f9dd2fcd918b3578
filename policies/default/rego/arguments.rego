# Tier 1: the arguments of structured tools whose class would otherwise default to ALLOW
# (shield/normalize/tools_arguments.go reads them by field-name and value class). Privilege
# effects (an administrative group, role or flag) are denied by effects.privilege.
#
# - A wildcard or all-entity deletion, a signal to init or every process, a destructive
#   operation in production: destroy.
# - Stepping production back (migrate down, rollback, revert) by a bounded number of steps: a
#   human decides.
# - A repository, bucket, gist or package made public: a human decides.
# - A credential path read through a forge content tool from a named repository: a secret read
#   from a repository that is not checked out here.
package shield

import rego.v1

deny contains finding("structured.argument-destroy", sprintf("%s (%s)", [trim_prefix(e.detail, "argument "), e.target])) if {
	some e in input.effects
	e.kind == "delete"
	startswith(e.detail, "argument ")
	not startswith(e.detail, "argument revert:")
}

escalate contains finding("structured.argument-revert", sprintf("%s (%s)", [trim_prefix(e.detail, "argument revert: "), e.target])) if {
	some e in input.effects
	e.kind == "delete"
	startswith(e.detail, "argument revert:")
}

escalate contains finding("structured.argument-exposure", sprintf("%s makes a resource public (%s)", [e.target, trim_prefix(e.detail, "argument ")])) if {
	some e in input.effects
	e.kind == "expose"
	startswith(e.detail, "argument ")
}

deny contains finding("structured.forge-credential-read", sprintf("reads the credential file %s from the repository %s", [e.target, e.remote])) if {
	some e in input.effects
	e.kind == "secret"
	startswith(e.detail, "argument forge file")
}

# A request URL whose path names a credential file: the credential is read from that host.
escalate contains finding("structured.remote-credential-file", sprintf("fetches the credential file %s", [e.target])) if {
	some e in input.effects
	e.kind == "secret"
	startswith(e.detail, "argument remote file")
}
