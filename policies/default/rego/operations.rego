# Cloud API operations judged by their verb (shield/normalize/cloud_ops.go: an "operate" effect
# per call of a %verbs CLI, Target the operation words; the words are data in shield/ops/data.yaml).
#
# Principle: what an operation does is said by its verb, not by a list of operations. A read verb
# (describe, list, get, tail…) or a transfer between the workspace and storage (cp, sync; judged by
# the paths it reads) is inside the envelope; a destroy word anywhere in the operation (delete,
# terminate, batch-delete, schedule-key-deletion, disable-key, deregister…) or an option scaling
# its object to 0 is blocked; anything else — a change, a grant, a verb the data does not know —
# leaves the envelope (exec.outside-envelope escalates it). An endpoint on this host (a local
# emulator) is the developer's own.
package shield

import rego.v1

ops_cfg := data.shield.ops

# The words that name the operation (at most the CLI's depth).
op_words(e) := array.slice(split(e.target, " "), 0, ops_cfg.clis[e.program])

op_parts(w) := regex.split(`[-:_]`, w)

# Class of one word: read, transfer, local, destroy, change or none (a service, group or name).
op_word_class(_, w) := "read" if {
	ops_cfg.read_verbs[op_parts(w)[0]]
} else := "transfer" if {
	ops_cfg.transfer_verbs[op_parts(w)[0]]
} else := "local" if {
	ops_cfg.local_verbs[w]
} else := "destroy" if {
	some p in op_parts(w)
	ops_cfg.destroy_words[p]
} else := "change" if {
	ops_cfg.change_verbs[op_parts(w)[0]]
} else := "none"

# A command group named like a verb (gcloud run services list, az vm run-command list).
op_group_word(prog, w) if w in object.get(ops_cfg.group_words, prog, [])

op_classes(e) := {op_word_class(e.program, w) | some w in op_words(e); not op_group_word(e.program, w)}

op_local(e) if {
	some p in ops_cfg.local_operations
	startswith(concat(" ", [e.target, ""]), concat(" ", [p, ""]))
}

op_local(e) if "endpoint:local" in split(e.detail, ",")

op_scaled_to_zero(e) if {
	some f in split(e.detail, ",")
	startswith(f, "zero:")
	regex.match(ops_cfg.scale_options_pattern, trim_prefix(f, "zero:"))
}

# The class of the whole operation: the most severe of its words.
op_class(e) := "local" if {
	op_local(e)
} else := "destroy" if {
	op_scaled_to_zero(e)
} else := "destroy" if {
	"destroy" in op_classes(e)
} else := "change" if {
	"change" in op_classes(e)
} else := "read" if {
	some c in op_classes(e)
	c in {"read", "transfer", "local"}
} else := "unknown"

# Operations of CLIs the data does not judge by verb keep their other effects' verdict.
inside(e) if {
	e.kind == "operate"
	not ops_cfg.clis[e.program]
	not forge_api(e)
}

forge_api(e) if split(e.detail, ",")[0] == "forge_api"

# ---------------------------------------------------------------------------------------------
# Forge API calls (gh/glab/hub api; shield/normalize/effects_forge.go: Target "METHOD PATH").
# Principle: a read (GET, HEAD) is inside; a write is inside only on the endpoints of the
# project's own content (issues, comments, pull/merge requests, labels, reviews, statuses); any
# other write (protection, rulesets, members, collaborators, keys, hooks, secrets, variables,
# settings, an endpoint the data does not name) changes the forge and is escalated.
forge_method(e) := split(e.target, " ")[0]

forge_path(e) := trim_prefix(substring(e.target, count(forge_method(e)) + 1, -1), "/")

inside(e) if {
	e.kind == "operate"
	forge_api(e)
	not e.unresolved
	forge_method(e) in {"GET", "HEAD"}
}

inside(e) if {
	e.kind == "operate"
	forge_api(e)
	not e.unresolved
	not forge_method(e) in {"GET", "HEAD"}
	regex.match(ops_cfg.forge_content_paths, forge_path(e))
	not regex.match(ops_cfg.forge_control_paths, forge_path(e))
}

# A write of only descriptive fields (description, homepage, topics) to a repository or project.
inside(e) if {
	e.kind == "operate"
	forge_api(e)
	not e.unresolved
	regex.match(ops_cfg.forge_owner_paths, forge_path(e))
	keys := forge_fields(e)
	count(keys) > 0
	every k in keys {
		ops_cfg.forge_meta_fields[k]
	}
}

forge_fields(e) := {k |
	some d in split(e.detail, ",")
	startswith(d, "fields:")
	some k in split(trim_prefix(d, "fields:"), "+")
}

forge_meta_write(e) if {
	regex.match(ops_cfg.forge_owner_paths, forge_path(e))
	keys := forge_fields(e)
	count(keys) > 0
	every k in keys {
		ops_cfg.forge_meta_fields[k]
	}
}

escalate contains finding("ops.forge-settings", sprintf("%s %s changes the forge's settings, access or protection", [e.program, e.target])) if {
	some e in input.effects
	e.kind == "operate"
	forge_api(e)
	not forge_method(e) in {"GET", "HEAD"}
	not regex.match(ops_cfg.forge_content_paths, forge_path(e))
	not forge_meta_write(e)
}

inside(e) if {
	e.kind == "operate"
	not e.unresolved
	op_class(e) in {"read", "local"}
}

deny contains finding("ops.cloud-destroy", sprintf("destroys cloud resources (%s %s)", [e.program, e.target])) if {
	some e in input.effects
	e.kind == "operate"
	ops_cfg.clis[e.program]
	not op_local(e)
	op_class(e) == "destroy"
}

# An exec-class tool called without any command the catalog can read (a kubectl tool given keys
# its entry does not name): what runs is unknown, so nothing is known about its effects.
escalate contains finding("exec.no-command", "an exec tool called without a command the catalog can read") if {
	input.class == "exec"
	trim_space(input.command) == ""
	count(input.commands) == 0
}
