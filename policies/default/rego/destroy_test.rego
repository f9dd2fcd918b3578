# Tests of destroy.rego: irreversible deletes, production database tasks, disk formatting,
# package lookalikes.
package shield.destroy_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "program": program, "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}

test_volume_delete_blocked if {
	"effects.irreversible-delete" in rules(shield.deny) with input as act([eff("delete", "block_volume", "lvremove", "block_volume")])
}

test_unpublish_blocked if {
	"effects.irreversible-delete" in rules(shield.deny) with input as act([eff("delete", "npm_registry", "npm", "npm_registry")])
}

test_audit_off_blocked if {
	"effects.irreversible-delete" in rules(shield.deny) with input as act([eff("delete", "audit_trail", "aws", "aws cloudtrail stop-logging")])
}

# A delete of cloud state in general stays a human's decision, not a block of this module.
test_cloud_delete_not_blocked_here if {
	inp := act([eff("delete", "cloud", "flyctl", "flyctl apps destroy")])
	not "effects.irreversible-delete" in rules(shield.deny) with input as inp
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

# A publish or a dist-tag change is a push: escalated, never blocked by this module.
test_registry_push_escalates if {
	inp := act([eff("push", "npm_registry", "npm", "npm_registry")])
	not "effects.irreversible-delete" in rules(shield.deny) with input as inp
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_production_database_task_blocked if {
	"effects.production-database-destroy" in rules(shield.deny) with input as act([eff("delete", "app_database:production", "rails", "task rails db:drop")])
}

test_development_database_task_allowed if {
	inp := act([eff("delete", "app_database:development", "rails", "task rails db:reset")])
	"exec.known-effects" in rules(shield.allow) with input as inp
	count(shield.deny) == 0 with input as inp
	count(shield.escalate) == 0 with input as inp
}

test_unnamed_environment_database_task_escalates if {
	inp := act([eff("delete", "app_database", "prisma", "task prisma migrate reset")])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
	not "effects.production-database-destroy" in rules(shield.deny) with input as inp
}

test_history_delete_escalates if {
	inp := act([eff("delete", "vcs_history", "git", "git reflog expire --expire=now")])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
	count(shield.deny) == 0 with input as inp
}

test_disk_format_blocked if {
	"effects.disk-format" in rules(shield.deny) with input as act([{"kind": "privilege", "target": "root", "program": "nvme", "detail": "format",
		"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}])
}

test_other_privilege_not_a_format if {
	not "effects.disk-format" in rules(shield.deny) with input as act([{"kind": "privilege", "target": "root", "program": "sudo", "detail": "sudo",
		"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}])
}

test_lookalike_install_escalates if {
	inp := act([eff("install", "loadsh", "npm", "registry"), eff("install", "loadsh", "npm", "lookalike:lodash")])
	"effects.package-lookalike" in rules(shield.escalate) with input as inp
}

test_registry_install_plain if {
	inp := act([eff("install", "lodash", "npm", "registry")])
	not "effects.package-lookalike" in rules(shield.escalate) with input as inp
	"exec.known-effects" in rules(shield.allow) with input as inp
}
