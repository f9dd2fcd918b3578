# Reach: what an operation touches without naming it (shield/normalize/reach.go).
#
# - A recursive read (grep -r, rg, an archiver, a secret scanner, find -exec / fd -x / xargs over a
#   listing) of a directory above credential locations (the home, /, /etc …) reads them: a secret
#   effect with detail "reach KIND". It escalates here; flowing into a connection it is blocked by
#   effects.secret-egress like any secret.
# - Deleting or moving away the workspace repository's own metadata (.git, .hg, .svn …, or the
#   objects, refs and logs that hold its history) destroys the history, whichever program or tool
#   does it (rm, mv, move_file, delete_directory, find -delete, rsync --remove-source-files).
package shield

import rego.v1

escalate contains finding("effects.secret-reach", sprintf("reads every file under %s, where credentials are kept (%s)", [e.target, e.detail])) if {
	some e in input.effects
	e.kind == "secret"
	startswith(e.detail, "reach ")
}

# Version-control metadata directories a workspace keeps its history in, and the parts of them
# that hold it (reviewable data).
vcs_metadata_dirs := {".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", ".pijul", ".fossil"}

vcs_history_parts := {"", "/objects", "/refs", "/logs", "/packed-refs", "/store", "/db", "/repo"}

escalate contains finding("effects.vcs-history-delete", sprintf("deletes or moves away the repository's history (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "delete"
	vcs_history_target(e.target)
}

vcs_history_target(t) if {
	ws := object.get(input, "workspace", "")
	ws != ""
	startswith(t, concat("", [ws, "/"]))
	rest := substring(t, count(ws) + 1, -1)
	parts := split(rest, "/")
	vcs_metadata_dirs[parts[0]]
	vcs_history_parts[substring(rest, count(parts[0]), -1)]
}
