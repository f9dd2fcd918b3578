# Tests of the argument rules (arguments.rego) and URL readings (url_readings.rego), on effects
# as shield/normalize/tools_arguments.go and urls_readings.go build them.
package shield.arguments_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(class, effects) := {
	"tool": "t", "class": class, "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

eff(kind, target, detail) := {"kind": kind, "target": target, "detail": detail, "in_workspace": false,
	"sensitive": false, "unresolved": false, "program": "p", "remote": ""}

test_wildcard_deletion_denied if {
	inp := act("memory_write", [eff("delete", "all entitynames of delete_entities", "argument wildcard deletion")])
	"structured.argument-destroy" in rules(shield.deny) with input as inp
}

test_production_destroy_denied if {
	inp := act("database", [eff("delete", "environment:production", "argument destroy: down in production (all steps)")])
	"structured.argument-destroy" in rules(shield.deny) with input as inp
}

test_production_revert_escalates_only if {
	inp := act("database", [eff("delete", "environment:prod", "argument revert: down in production")])
	"structured.argument-revert" in rules(shield.escalate) with input as inp
	not "structured.argument-destroy" in rules(shield.deny) with input as inp
}

test_exposure_escalates if {
	inp := act("vcs", [eff("expose", "create_repository", "argument private=false")])
	"structured.argument-exposure" in rules(shield.escalate) with input as inp
}

test_forge_credential_denied if {
	e := object.union(eff("secret", "forge:acme/infra:.env.prod", "argument forge file dotenv"), {"remote": "acme/infra"})
	"structured.forge-credential-read" in rules(shield.deny) with input as act("query", [e])
}

test_remote_credential_file_escalates if {
	inp := act("net_request", [eff("secret", "raw.example/a/.env.prod", "argument remote file dotenv")])
	"structured.remote-credential-file" in rules(shield.escalate) with input as inp
}

test_ordinary_delete_not_judged_here if {
	inp := act("file_write", [eff("delete", "/w/build", "")])
	not "structured.argument-destroy" in rules(shield.deny) with input as inp
}

test_url_differential_escalates if {
	inp := act("net_request", [
		eff("connect", "registry.npmjs.org:80", "http"),
		eff("connect", "203.0.113.6:80", "url reading by curl as 203.0.113.6 (a browser reads registry.npmjs.org)"),
	])
	"url.parser-differential" in rules(shield.escalate) with input as inp
}

test_plain_connect_no_differential if {
	inp := act("net_request", [eff("connect", "registry.npmjs.org:443", "https")])
	not "url.parser-differential" in rules(shield.escalate) with input as inp
}
