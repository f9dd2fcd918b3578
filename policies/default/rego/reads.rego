# Tier 1: structured reads, listings and searches outside the envelope.
#
# A command that reads outside the workspace and the read roots leaves the positive-security
# envelope (exec.outside-envelope, effects.rego); the same read through a file tool (Read,
# read_file, read_text_file, view, read_many_files, read_multiple_files, get_file_info, list and
# tree tools, the source of a copy or move tool) or a search tool (Grep, Glob, grep_search, search_files, search_file_content …) must
# not be ALLOWed by default either. Credential files are BLOCKed by their kind (files.read-secret,
# effects.secret-read, effects.secret-search); this module escalates what is merely unknown:
#
# - a read or listing of a location outside the workspace, the read roots, the user caches and the
#   home directory's listing itself (effects.rego readable());
# - except a user's own documents and data: a path below a home directory or a data mount
#   (data.json document_roots: /data, /mnt, /media …) whose every element is visible (no dot file or
#   dot directory, where tools keep their configuration and tokens) and names no secret
#   (documents/report.pdf, another checkout's README.md, /mnt/data/train.csv);
# - except known configuration without credentials (shell start-up files, git configuration);
# - a search rooted outside the workspace and the read roots: a search reads every file under its
#   root, so the home directory (or /) as a root is a read of every dot file in it; the listing
#   allowance of the home directory does not apply.
package shield

import rego.v1

structured_read_classes := {"file_read", "file_list", "file_search", "file_move"}

escalate contains finding("files.read-outside-envelope", sprintf("%s reads %s, outside the workspace and the read roots", [input.tool, e.target])) if {
	input.class in structured_read_classes
	some e in input.effects
	e.kind == "read"
	not structured_readable(e)
}

structured_readable(e) if {
	input.class != "file_search"
	readable(e)
}

structured_readable(e) if {
	input.class != "file_search"
	home_document(e.target)
}

structured_readable(e) if {
	input.class == "file_search"
	search_root_readable(e)
}

# Known configuration that holds no credential: the shell's start-up files and git's own
# configuration (~/.bashrc, ~/.gitconfig, ~/.config/git/config). Writing them is persistence
# (files.write-system); reading one says how the user's tools are set up.
structured_readable(e) if {
	input.class == "file_read"
	e.detail in {"shell_rc", "git_hooks"}
	not secret_target(e.target)
}

search_root_readable(e) if e.in_workspace

search_root_readable(e) if not startswith(e.target, "/")

search_root_readable(e) if {
	some root in cfg.read_roots
	under(e.target, root)
	not search_reaches_secrets(e.target)
}

search_root_readable(e) if user_cache(e.target)

# A search over the root of the system or a whole read root that holds service credentials.
search_reaches_secrets(t) if t in {"/", "/etc", "/opt", "/var", "/srv"}

# A user's own document: below a home directory or a data mount, no hidden element, no secret word.
home_document(t) if {
	regex.match(`^(/home/[^/]+|/Users/[^/]+)/[^.][^/]*(/[^./][^/]*)*$`, t)
	not regex.match(`^/(home|Users)/[^/]+/(Library|AppData|snap)(/|$)`, t) # applications' own state (macOS, Windows, snaps)
	visible_document(t)
}

home_document(t) if {
	some root in object.get(cfg, "document_roots", [])
	startswith(t, concat("", [trim_suffix(root, "/"), "/"]))
	regex.match(`^(/[^./][^/]*)+$`, t)
	visible_document(t)
}

visible_document(t) if {
	not regex.match(`(?i)(secret|passw|credential|token|private[_-]?key|wallet|keystore|\.(pem|key|p12|pfx|kdbx|ppk)$)`, t)
	not startswith(t, concat("", [trim_suffix(input.workspace, "/"), "/"]))
}

# ---------------------------------------------------------------------------------------------
# Credentials read from a repository's history (shield/normalize/git_history.go): a credential
# file at a revision (git show REV:.env, git diff REV -- config/secrets.yml) is the secret itself,
# however long ago it was removed from the working tree. A search of the history for credential
# content (git log -p -S AKIA, git grep PATTERN $(git rev-list --all)) escalates: it prints the
# matching lines or patches, but what it finds depends on the repository.

deny contains finding("effects.history-secret", sprintf("reads a credential file from the repository's history (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "secret"
	startswith(e.detail, "git_history ")
	e.detail != "git_history pattern"
}

escalate contains finding("effects.history-secret-search", sprintf("searches the repository's history for credentials (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "secret"
	e.detail == "git_history pattern"
}
