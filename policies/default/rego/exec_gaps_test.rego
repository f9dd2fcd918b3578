# Tests of exec_gaps.rego.
package shield.exec_gaps_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

cmd(name, args, urls) := {
	"tool": "Bash", "class": "exec", "urls": urls, "strings": [], "args": {}, "paths": [], "recipients": [], "body": "",
	"content": "", "prompt": "", "method": "", "parse_error": "", "truncated": false, "flows": [], "unresolved": [],
	"unknown_programs": [], "workspace": "/w", "effects": [],
	"commands": [{"name": name, "args": args, "argv": array.concat([name], args), "raw": "", "depth": 0, "via": "", "env": [], "redirects": []}],
}

test_sideloaded_extension_denied if {
	"persistence.editor-extension-sideload" in rules(shield.deny) with input as cmd("code", ["--install-extension", "/tmp/helper.vsix"], [])
}

test_marketplace_extension_allowed if {
	not "persistence.editor-extension-sideload" in rules(shield.deny) with input as cmd("code", ["--install-extension", "golang.go"], [])
}

test_workspace_vsix_allowed if {
	not "persistence.editor-extension-sideload" in rules(shield.deny) with input as cmd("code", ["--install-extension", "/w/dist/ext.vsix"], [])
}
