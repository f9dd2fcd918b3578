# Tests of the structured-read envelope and of history secrets (reads.rego).
package shield.reads_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(class, effects) := {
	"tool": "Read", "class": class, "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/home/user/project",
}

eff(kind, target, detail, in_ws) := {"kind": kind, "target": target, "detail": detail, "in_workspace": in_ws,
	"sensitive": false, "unresolved": false, "program": "p"}

test_read_tool_hidden_home_escalates if {
	inp := act("file_read", [eff("read", "/home/user/.aptos/config.yaml", "", false)])
	"files.read-outside-envelope" in rules(shield.escalate) with input as inp
}

test_read_tool_service_state_escalates if {
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/var/lib/app/state.db", "", false)])
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_list", [eff("read", "/root/.config", "", false)])
}

test_read_tool_ordinary_locations_not_escalated if {
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/home/user/project/src/a.go", "", true)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/etc/os-release", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/usr/share/doc/git/README.md", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/home/user/documents/report.pdf", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/mnt/data/train.csv", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/home/user/.gitconfig", "git_hooks", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_list", [eff("read", "/home/user", "", false)])
}

test_read_tool_secret_named_document_escalates if {
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/home/user/documents/passwords.txt", "", false)])
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/mnt/backup/.ssh-old/id", "", false)])
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_read", [eff("read", "/Users/alice/Library/Application Support/App/config.json", "", false)])
}

test_search_rooted_at_home_escalates if {
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_search", [eff("read", "/home/user", "", false)])
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_search", [eff("read", "/etc", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_search", [eff("read", "/usr/include", "", false)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_search", [eff("read", "/home/user/project", "", true)])
}

test_copy_tool_source_outside_escalates if {
	"files.read-outside-envelope" in rules(shield.escalate) with input as act("file_move", [eff("read", "/var/lib/app/state.json", "", false), eff("write", "/home/user/project/state.json", "", true)])
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("file_move", [eff("read", "/home/user/Downloads/logo.png", "", false), eff("write", "/home/user/project/logo.png", "", true)])
}

test_exec_not_judged_here if {
	not "files.read-outside-envelope" in rules(shield.escalate) with input as act("exec", [eff("read", "/home/user/.aptos/config.yaml", "", false)])
}

test_history_secret_blocks if {
	inp := act("exec", [eff("secret", "HEAD~4:/home/user/project/deploy/.env.production", "git_history dotenv", false)])
	"effects.history-secret" in rules(shield.deny) with input as inp
}

test_history_search_escalates if {
	inp := act("exec", [eff("secret", "git log -S AKIA", "git_history pattern", false)])
	"effects.history-secret-search" in rules(shield.escalate) with input as inp
	not "effects.history-secret" in rules(shield.deny) with input as inp
}
