# Tests of launchers.rego.
package shield.launchers_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects) := {
	"tool": "Bash", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/home/user/project",
}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "detail": detail, "in_workspace": false,
	"sensitive": false, "unresolved": false, "program": program}

test_traced_credentials_denied if {
	"exec.captured-secret" in rules(shield.deny) with input as act([eff("secret", "traced sudo", "ltrace", "traced_credentials")])
}

test_injected_env_denied if {
	"exec.captured-secret" in rules(shield.deny) with input as act([eff("secret", "mise exec environment", "mise", "injected_env")])
}

test_plain_env_dump_not_captured if {
	not "exec.captured-secret" in rules(shield.deny) with input as act([eff("secret", "printenv", "printenv", "env")])
}
