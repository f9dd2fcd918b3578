# A destructive verb is destructive in any CLI (shield/normalize/remote_destroy.go): a destroy
# word in sub-command position, or a destructive statement in a statement option, against a
# remote or production-named target deletes data no local undo brings back.
package shield

import rego.v1

deny contains finding("effects.remote-destroy", sprintf("%s deletes data of a remote service (%s)", [e.program, e.detail])) if {
	some e in input.effects
	e.kind == "delete"
	e.target == "remote_service"
}
