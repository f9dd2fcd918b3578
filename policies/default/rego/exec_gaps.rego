# Tier 1: small exec gaps, each by its principle (the effects come from shield/normalize).
#
# - Editor extensions installed from a file outside the workspace or from a URL
#   (code/cursor/codium/windsurf --install-extension): code the editor runs in every later
#   session, from a source nobody reviewed. Marketplace ids (publisher.name) and vsix files in
#   the workspace are not flagged.
package shield

import rego.v1

editor_programs := {"code", "code-insiders", "codium", "vscodium", "cursor", "windsurf", "code-server", "positron"}

deny contains finding("persistence.editor-extension-sideload", sprintf("installs the editor extension %s from outside the workspace", [v])) if {
	input.class == "exec"
	some c in input.commands
	editor_programs[c.name]
	some i, a in c.args
	v := extension_value(c.args, i, a)
	extension_outside(v)
}

extension_value(args, i, a) := args[i + 1] if a == "--install-extension"

extension_value(_, _, a) := v if {
	startswith(a, "--install-extension=")
	v := substring(a, count("--install-extension="), -1)
}

extension_outside(v) if regex.match(`^[a-zA-Z][a-zA-Z0-9+.-]*://`, v)

extension_outside(v) if {
	endswith(lower(v), ".vsix")
	startswith(v, "/")
	not startswith(v, sprintf("%s/", [input.workspace]))
}

extension_outside(v) if {
	endswith(lower(v), ".vsix")
	regex.match(`^(~|\.\./)`, v)
}
