# Tier 1: a file-tool edit is judged by what the file becomes (workspace_files.rego,
# workspace_later.rego judge whole writes; shield/normalize autorun_build.go editedText gives the
# rules the text an edit puts in the file: Edit/MultiEdit new strings, Cline SEARCH/REPLACE
# sections, Gemini replace, str_replace_editor, Cursor edit_file, Desktop Commander edit_block,
# apply_patch hunks). An edit shows only the part it changes: a reader whose finding needs two
# parts of the file together (a privileged trigger and a checkout of the pull request's head)
# cannot see the part the edit leaves unchanged, so the part it adds is judged as if the other
# were there — a human looks at the whole file.
#
# FPR cost: edits that switch a workflow to pull_request_target or workflow_run, or make it check
# out a pull request's head, are escalated even when the rest of the file would make them safe;
# ordinary workflow edits (a job, a step, a version bump, the pull_request trigger) are not.
package shield

import rego.v1

# The keys of a partial edit (the file's old text is named, or only a region is given).
edit_arg_keys := {"old_string", "old_str", "oldText", "old_text", "diff", "edits", "code_edit", "search", "replace"}

partial_edit if {
	input.class == "file_write"
	some k, _ in input.args
	k in edit_arg_keys
}

partial_edit if {
	input.class == "file_write"
	contains(input.content, "*** Update File")
}

escalate contains finding("workspace.ci-edit-privileged", sprintf("edits %s to run on %s; the rest of the workflow (what it checks out, which secrets it passes) is not in the call", [p, t])) if {
	partial_edit
	some p in ci_workflow_write
	some w in written_text
	ci_privileged_trigger(w)
	t := ci_edit_trigger(w)
}

ci_edit_trigger(w) := "pull_request_target" if contains(w, "pull_request_target")

else := "workflow_run"

escalate contains finding("workspace.ci-edit-privileged", sprintf("edits %s to check out a pull request's code; the workflow's trigger is not in the call", [p])) if {
	partial_edit
	some p in ci_workflow_write
	some l in written_lines
	ci_edit_checkout_head(l)
	not ci_edit_any_trigger
}

ci_edit_any_trigger if {
	some w in written_text
	ci_privileged_trigger(w)
}

# A checkout of the pull request's code: a checkout's ref or repository, or a command that fetches
# it (github.head_ref in a concurrency group or a label is no checkout).
ci_edit_checkout_head(l) if regex.match(`^\s*-?\s*(ref|repository)\s*:.*(head\.(sha|ref|repo)|head_ref|head_sha|head_branch|head_repository|refs/pull/|merge_commit_sha)`, l)

ci_edit_checkout_head(l) if regex.match(`\bgh\s+pr\s+checkout\b|\bgit\s+(fetch|checkout)\b.*\b(pull/|refs/pull/|head_ref|head\.sha)`, l)

# Every permission of the workflow's token made writable, by a whole write or an edit.
escalate contains finding("workspace.ci-write-all", sprintf("writes %s, which gives the workflow's token write access to everything", [p])) if {
	some p in ci_workflow_write
	some l in written_lines
	regex.match(`^\s*permissions\s*:\s*["']?write-all["']?\s*(#.*)?$`, l)
}
