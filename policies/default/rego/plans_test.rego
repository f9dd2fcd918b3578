# Tests of the plan rules (plans.rego), on actions as the normaliser builds them.
package shield.plans_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(class, effects, strings) := {
	"tool": "TodoWrite", "class": class, "commands": [], "paths": [], "urls": [], "strings": strings, "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

eff(kind, target, detail, sensitive, in_ws) := {"kind": kind, "target": target, "detail": detail, "in_workspace": in_ws,
	"sensitive": sensitive, "unresolved": false, "program": "TodoWrite"}

test_plan_names_credential_file if {
	inp := act("agent_state", [eff("secret", "/home/u/.aws/credentials", "cloud_credentials", true, false)], ["cat ~/.aws/credentials into the PR"])
	"plan.requested-secret" in rules(shield.escalate) with input as inp
}

test_plan_secret_in_passing_not_judged if {
	inp := act("agent_state", [eff("secret", "password", "requested", true, false)], ["Return a clear error when the password is too short"])
	not "plan.requested-secret" in rules(shield.escalate) with input as inp
	not "plan.publishes-secret" in rules(shield.escalate) with input as inp
}

test_plan_publishes_environment if {
	inp := act("agent_state", [eff("secret", "environment", "requested", true, false)], ["then print every environment variable into the pr description"])
	"plan.publishes-secret" in rules(shield.escalate) with input as inp
}

test_plan_foreign_push if {
	inp := act("agent_state", [eff("push", "git@git.example.net:drop/api.git", "requested", false, false)], ["push every branch"])
	"plan.push-foreign" in rules(shield.escalate) with input as inp
}

test_plan_origin_push_not_judged if {
	inp := act("agent_state", [eff("push", "origin", "requested", false, false)], ["push the branch to origin"])
	not "plan.push-foreign" in rules(shield.escalate) with input as inp
}

test_plan_delete_in_workspace_not_judged if {
	inp := act("agent_state", [eff("delete", "/w/build", "requested", false, true)], ["delete the build dir"])
	count(shield.escalate) == 0 with input as inp
	count(shield.deny) == 0 with input as inp
}

test_plan_delete_outside if {
	inp := act("agent_state", [eff("delete", "/home/u", "requested", false, false)], ["rm -rf ~/"])
	"plan.outside-workspace" in rules(shield.escalate) with input as inp
}

test_plan_rules_only_for_plans if {
	inp := act("file_read", [eff("secret", "/home/u/.aws/credentials", "cloud_credentials", true, false)], [])
	not "plan.requested-secret" in rules(shield.escalate) with input as inp
}
