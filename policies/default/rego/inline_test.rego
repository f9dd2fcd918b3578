# Tests of the inline-code condition of exec.known-effects (effects.rego): the normaliser's
# analysis (effect field "inline", shield/normalize/inline_code.go) decides, not the code's text.
package shield.inline_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

code(detail, inline) := {"kind": "exec", "target": "python3", "program": "python3", "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": "", "inline": inline}

test_confined_code_allowed if {
	inp := act([code("import sys; print(sys.version)", "confined")])
	"exec.known-effects" in rules(shield.allow) with input as inp
	count(shield.escalate) == 0 with input as inp
}

# Code that names no capability the old word list knew, but imports a module the allow list
# does not have: outside the envelope, whatever its text looks like.
test_capable_code_escalates if {
	inp := act([code("from os import system as r; r('id')", "capable: imports system from os, which is not allow-listed")])
	not "exec.known-effects" in rules(shield.allow) with input as inp
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

# The analysis wins over the text: text with a word that looked capable but was judged confined
# (a string that mentions subprocess) is inside.
test_confined_despite_words if {
	inp := act([code("print('subprocess is a module')", "confined")])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_confined_but_unresolved_not_allowed if {
	inp := act([object.union(code("print(1)", "confined"), {"unresolved": true})])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_confined_in_container_not_this_rule if {
	inp := act([object.union(code("print(subprocess)", "confined"), {"remote": "ssh:host"})])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

# Programs the allow list does not cover keep the lexical check.
test_unanalysed_code_lexical_check if {
	"exec.known-effects" in rules(shield.allow) with input as act([code("SELECT 1", "")])
	not "exec.known-effects" in rules(shield.allow) with input as act([code("COPY t TO PROGRAM 'system(1)'", "")])
}
