# Tests of the text rules (text.rego), on actions as the normaliser builds them.
package shield.text_test

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
	"sensitive": true, "unresolved": false, "program": "p"}

test_destructive_control_escalated if {
	"text.destructive-control" in rules(shield.escalate) with input as act("browser", [eff("delete", "control: Delete organization", "browser control")])
}

test_ordinary_delete_not_a_control if {
	not "text.destructive-control" in rules(shield.escalate) with input as act("browser", [eff("delete", "/w/x", "")])
}

test_stored_token_read_escalated if {
	"text.stored-token-read" in rules(shield.escalate) with input as act("code_exec", [eff("read", "page storage: t", "browser storage")])
}

test_credential_columns_escalated if {
	"text.credential-columns" in rules(shield.escalate) with input as act("query", [eff("read", "database:q password_hash", "credential columns")])
}

test_export_to_outside_bucket_denied if {
	"text.data-export" in rules(shield.deny) with input as act("database", [eff("connect", "outside-bucket", "s3")])
}

test_lookup_of_a_web_page_is_no_export if {
	not "text.data-export" in rules(shield.deny) with input as act("query", [eff("connect", "192.168.1.10:80", "http")])
}

test_query_export_to_bucket_denied if {
	"text.data-export" in rules(shield.deny) with input as act("query", [eff("connect", "drop-bucket", "gs")])
}

test_export_to_loopback_allowed if {
	not "text.data-export" in rules(shield.deny) with input as act("database", [eff("connect", "127.0.0.1:9000", "http")])
}

test_open_to_everyone_escalated if {
	"text.open-to-everyone" in rules(shield.escalate) with input as act("query", [eff("listen", "0.0.0.0/0", "open to everyone")])
}

test_listen_bind_is_not_open_to_everyone if {
	not "text.open-to-everyone" in rules(shield.escalate) with input as act("query", [eff("listen", "0.0.0.0:80", "bind")])
}
