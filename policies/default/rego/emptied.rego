# Tier 1: emptying files is destroying them (shield/normalize/emptied.go).
#
# Principle: truncating a file to nothing (truncate -s0, : > f, cp /dev/null f, dd if=/dev/null,
# shred, sed -i d, perl -i -ne '') destroys its content like rm, and leaves the file in place.
# Emptying many files at once (a glob, every file find selects, a list fed to xargs, a loop over
# an expansion) outside the disposable paths (logs, caches, build output: shield/later
# scratch_path_pattern) is a mass destruction of the project's content: a human decides; when it
# reaches every directory of the tree (find, "**", xargs from a listing) it is blocked. One named
# file emptied (a log reset, a lock file, a fixture) stays ordinary.
# FPR cost: resetting many non-log files by glob escalates (rare outside logs and caches).
package shield

import rego.v1

later_cfg := data.shield.later

emptied_effect contains e if {
	some e in input.effects
	e.kind == "write"
	startswith(e.detail, "emptied ")
}

emptied_scope(e) := substring(e.detail, 8, -1)

emptied_scratch(e) if regex.match(later_cfg.scratch_path_pattern, e.target)

emptied_many(e) if emptied_scope(e) in {"glob", "tree", "unresolved"}

emptied_recursive(e) if emptied_scope(e) == "tree"

emptied_recursive(e) if {
	emptied_scope(e) == "glob"
	contains(e.target, "**")
}

deny contains finding("destroy.files-emptied", sprintf("empties every file it selects under %s: the project's content is destroyed", [e.target])) if {
	some e in emptied_effect
	emptied_recursive(e)
	not emptied_scratch(e)
}

escalate contains finding("destroy.files-emptied", sprintf("empties many files at once (%s)", [e.target])) if {
	some e in emptied_effect
	emptied_many(e)
	not emptied_scratch(e)
}
