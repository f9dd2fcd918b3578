# Tests of the reach rules (reach.rego), on actions as the normaliser builds them.
package shield.reach_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(class, effects) := {
	"tool": "t", "class": class, "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

eff(kind, target, detail, in_ws) := {"kind": kind, "target": target, "detail": detail, "in_workspace": in_ws,
	"sensitive": false, "unresolved": false, "program": "p"}

test_recursive_read_of_home_escalates if {
	inp := act("exec", [eff("read", "/home/u", "", false), eff("secret", "/home/u", "reach ssh_key", false)])
	"effects.secret-reach" in rules(shield.escalate) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_reach_secret_into_connection_blocked if {
	inp := json.patch(act("exec", [
		eff("secret", "/home/u", "reach ssh_key", false),
		eff("connect", "backup.example:22", "ssh", false),
	]), [{"op": "replace", "path": "/flows", "value": [{"from": 0, "to": 1, "via": "arg"}]}])
	"effects.secret-egress" in rules(shield.deny) with input as inp
}

test_plain_secret_is_not_reach if {
	inp := act("exec", [eff("secret", "/home/u/.aws/credentials", "cloud_credentials", false)])
	not "effects.secret-reach" in rules(shield.escalate) with input as inp
}

test_vcs_dir_delete_escalates if {
	every t in ["/w/.git", "/w/.hg", "/w/.git/objects", "/w/.git/refs", "/w/.svn"] {
		"effects.vcs-history-delete" in rules(shield.escalate) with input as act("file_move", [eff("delete", t, "", true)])
	}
}

test_vcs_other_deletes_not_history if {
	every t in ["/w/.git/index.lock", "/w/.git/hooks/pre-commit", "/w/src/.gitkeep", "/w/.github", "/w/sub/.git", "/other/.git"] {
		not "effects.vcs-history-delete" in rules(shield.escalate) with input as act("file_delete", [eff("delete", t, "", true)])
	}
}
