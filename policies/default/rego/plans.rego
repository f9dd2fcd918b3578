# Tier 1: the agent's own plans, todo lists and notes (class agent_state: Claude Code TodoWrite,
# Codex update_plan, Gemini CLI write_todos, Cursor todo_write, Cline plan_mode_respond, the
# sequential-thinking server …). Every string of such a call is read as text the agent will act on
# (shield/normalize/tools_agent_text.go): a plan step that asks for a secret, a credential file, a
# push to a foreign repository, a protection switched off or a delete outside the workspace is
# what a hijacked agent writes down before it does it. Writing the plan does nothing yet, so a
# human looks (escalate); the effect-wide rules (effects.rego) still block what is blocked for
# every call. Ordinary plans ("run the tests", "fix the failing lint in api/", "update README",
# "push the branch to origin") name none of these.
package shield

import rego.v1

# Plans are written constantly and speak of secrets in passing ("return an error when the password
# is too short", "show how to set up SSH keys"): a secret counts when the plan names it exactly (a
# credential file, a variable such as GITHUB_TOKEN), or asks to publish one (the instruction-file
# reading of workspace_files.rego: a secret, a verb that puts it somewhere, a place others read).
escalate contains finding("plan.requested-secret", sprintf("the agent's plan asks for a secret (%s)", [e.target])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind == "secret"
	not e.detail in {"content", "session"}
	plan_named_secret(e.target)
}

plan_named_secret(t) if startswith(t, "/")

plan_named_secret(t) if regex.match(`^\$?\{?[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\}?$`, t)

escalate contains finding("plan.publishes-secret", "the agent's plan puts credentials where others can read them") if {
	input.class == "agent_state"
	some s in lower_strings
	some l in split(s, "\n")
	instruction_publishes_secret(l)
}

escalate contains finding("plan.sensitive-path", sprintf("the agent's plan names %s (%s)", [e.target, e.detail])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind in {"read", "write", "delete"}
	e.sensitive
}

escalate contains finding("plan.outside-workspace", sprintf("the agent's plan asks to %s %s, outside the workspace", [e.kind, e.target])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind in {"write", "delete"}
	startswith(e.target, "/")
	not e.in_workspace
	not scratch_delete(e.target)
}

escalate contains finding("plan.requested-delete", sprintf("the agent's plan asks to destroy %s", [e.target])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind == "delete"
	e.detail == "requested"
	not startswith(e.target, "/")
}

escalate contains finding("plan.protection-off", sprintf("the agent's plan switches off a protection (%s)", [e.target])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind in {"privilege", "persistence", "escape"}
}

escalate contains finding("plan.push-foreign", sprintf("the agent's plan pushes to %s", [e.target])) if {
	input.class == "agent_state"
	some e in input.effects
	e.kind == "push"
	plan_push_foreign(e)
}

plan_push_foreign(e) if contains(e.target, "://")

plan_push_foreign(e) if contains(e.target, "@")

plan_push_foreign(e) if {
	some d in split(e.detail, ",")
	d in {"foreign", "force", "mirror", "delete"}
}

escalate contains finding("plan.safety-bypass", "the agent's plan drops its safety controls or hides what it does") if {
	input.class == "agent_state"
	some s in lower_strings
	some phrase in data.shield.lists.safety_bypass_phrases
	contains(s, phrase)
}

# The whole environment asked for, in a plan that names a place others read.
escalate contains finding("plan.publishes-secret", "the agent's plan puts the environment where others can read it") if {
	input.class == "agent_state"
	some e in input.effects
	e.kind == "secret"
	e.target == "environment"
	some s in lower_strings
	regex.match(`\b(pr|pull request|issue|comment|description|gist|pastebin|paste|webhook|slack|discord|channel|chat|public|commit message|release notes)\b|https?://`, s)
}
