# Supply-chain operations judged by what they change (data: shield/ops/data.yaml).
#
# Principle: a lock file is written by its package manager. Any other program of a shell command
# writing one (sed -i, perl -pi, awk, a redirection, tee) edits what the manager verified:
# escalated, and blocked when the command names the verification entries (integrity, resolved,
# checksum, h1: hashes) — stripping them makes the next install take whatever the registry or a
# mirror serves. A file tool's edit that removes such entries is blocked the same way.
# A dependency redirected to another owner (go.mod replace, package.json overrides/resolutions,
# a Cargo [patch]) swaps the code every build runs: escalated.
package shield

import rego.v1

ops_lockfile_write(e) := base if {
	e.kind in {"write", "delete"}
	startswith(e.target, "/")
	parts := split(e.target, "/")
	base := parts[count(parts) - 1]
	ops_cfg.lockfiles[base]
}

ops_foreign_lock_edit(e) if {
	input.class == "exec"
	base := ops_lockfile_write(e)
	not e.program in ops_cfg.lockfiles[base]
	not e.program in ops_cfg.lockfile_any_writers
}

escalate contains finding("ops.lockfile-edit", sprintf("%s edits %s, which only its package manager writes", [e.program, e.target])) if {
	some e in input.effects
	ops_foreign_lock_edit(e)
}

deny contains finding("ops.lockfile-verification-stripped", sprintf("%s removes verification entries from %s", [e.program, e.target])) if {
	some e in input.effects
	ops_foreign_lock_edit(e)
	regex.match(ops_cfg.lockfile_verification_pattern, input.command)
}

# A file tool's edit of a lock file: a removed line (old text, a patch's '-' line) with a
# verification entry that the new text does not keep.
deny contains finding("ops.lockfile-verification-stripped", sprintf("an edit removes verification entries from %s", [e.target])) if {
	input.class in {"file_write", "file_edit"}
	some e in input.effects
	ops_lockfile_write(e)
	some line in ops_removed_lines
	regex.match(ops_cfg.lockfile_verification_pattern, line)
	count(ops_added_verification) == 0
}

ops_removed_lines contains line if {
	some line in split(object.get(input.args, "old_string", ""), "\n")
}

ops_removed_lines contains trim_prefix(line, "-") if {
	some k in {"input", "patch"}
	some line in split(object.get(input.args, k, ""), "\n")
	startswith(line, "-")
	not startswith(line, "---")
}

ops_added_verification contains line if {
	some line in split(object.get(input.args, "new_string", ""), "\n")
	regex.match(ops_cfg.lockfile_verification_pattern, line)
}

ops_added_verification contains line if {
	some k in {"input", "patch"}
	some line in split(object.get(input.args, k, ""), "\n")
	startswith(line, "+")
	regex.match(ops_cfg.lockfile_verification_pattern, line)
}

# go.mod: "replace OLD => NEW" where NEW is a module of another host or owner than OLD (a local
# directory is judged as a path by the install rules).
escalate contains finding("ops.dependency-redirected", sprintf("redirects %s to %s, another owner's code", [m[1], m[2]])) if {
	some e in input.effects
	e.kind == "write"
	endswith(e.target, "/go.mod")
	some m in regex.find_all_string_submatch_n(`(?m)^[+ ]?\s*(?:replace\s+)?([a-zA-Z0-9.-]+\.[a-z]+/[^\s/]+/[^\s]+?)(?:\s+v[^\s]+)?\s+=>\s+([a-zA-Z0-9.-]+\.[a-z]+/[^\s/]+/[^\s]+)`, ops_written_text, 20)
	ops_owner(m[1]) != ops_owner(m[2])
}

# package.json: overrides/resolutions whose value is another package (npm:NAME@), a repository,
# a URL or a file.
escalate contains finding("ops.dependency-redirected", "package.json overrides or resolutions point a dependency at other code") if {
	some e in input.effects
	e.kind == "write"
	endswith(e.target, "/package.json")
	regex.match(`(?s)"(overrides|resolutions|pnpm)"\s*:\s*\{[^}]*"\s*:\s*"(npm:|github:|git\+|git:|https?:|file:|link:|[\w.-]+/[\w.-]+#)`, ops_written_text)
}

ops_owner(mod) := concat("/", array.slice(split(mod, "/"), 0, 2))

ops_written_text := concat("\n", [input.content, object.get(input.args, "new_string", ""), object.get(input.args, "input", ""), object.get(input.args, "patch", ""), input.command, ops_shell_written])

# The text shell commands write into files (shield/normalize/shell_writes.go adds it to the strings).
ops_shell_written := concat("\n", input.strings) if input.class == "exec"

else := ""

# Principle: code installed or run from a code host is trusted by its owner, not by the host. A
# go install/run of host/owner/… where the owner is not a known publisher (shield/ops
# trusted_module_owners) and an image of a registry host under an unknown namespace (not a
# trusted_image_prefixes entry) run someone's code unreviewed: escalated.
escalate contains finding("ops.untrusted-source", sprintf("runs %s, code of an owner the configuration does not know", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "module"
	parts := split(split(e.target, "@")[0], "/")
	parts[0] in ops_cfg.code_hosts
	not lower(concat("/", [parts[0], parts[1]])) in ops_trusted_owners
}

ops_trusted_owners := {lower(o) | some o in ops_cfg.trusted_module_owners}

escalate contains finding("ops.untrusted-source", sprintf("runs the image %s of a namespace the configuration does not know", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "container_image"
	ops_image_host(e.target) in ops_cfg.image_registries
	not strings.any_prefix_match(ops_image_ref(e.target), ops_cfg.trusted_image_prefixes)
}

escalate contains finding("ops.untrusted-source", sprintf("runs the image %s, whose source is an expansion", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "container_image"
	e.unresolved
}

ops_image_host(ref) := split(ref, "/")[0] if contains(ref, "/")

# docker.io/NAME is Docker Hub's library image NAME.
ops_image_ref(ref) := concat("", ["docker.io/library/", trim_prefix(ref, "docker.io/")]) if {
	startswith(ref, "docker.io/")
	count(split(ref, "/")) == 2
} else := ref

inside(e) if {
	e.kind == "install"
	e.detail == "container_image"
	not e.unresolved
}

escalate contains finding("ops.release-published", sprintf("publishes a release (%s) that consumers take", [e.detail])) if {
	some e in input.effects
	e.kind == "push"
	startswith(e.target, "release:")
}
