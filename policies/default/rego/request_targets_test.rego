# Tests of the request-target, typed-secret, claim and mass-deletion rules (request_targets.rego).
package shield.request_targets_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(class, patch) := json.patch({
	"tool": "t", "class": class, "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": [], "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}, patch)

eff(kind, target, detail) := {"kind": kind, "target": target, "detail": detail, "in_workspace": false,
	"sensitive": false, "unresolved": false, "program": "p"}

ws_delete(target) := {"kind": "delete", "target": target, "detail": "", "in_workspace": true,
	"sensitive": false, "unresolved": false, "program": "apply_patch"}

url(raw, host, ip_class, role) := {"raw": raw, "scheme": "http", "host": host, "port": 80, "path": "/",
	"query": "", "userinfo": false, "ip_class": ip_class, "role": role, "registrable": ""}

with_effects(class, effects) := act(class, [{"op": "replace", "path": "/effects", "value": effects}])

with_urls(class, urls) := act(class, [{"op": "replace", "path": "/urls", "value": urls}])

# ---- nested targets

test_nested_internal_target_escalated if {
	inp := with_urls("net_request", [url("https://r.example/?to=http://10.0.0.5/", "r.example", "hostname", "request"), url("http://10.0.0.5/", "10.0.0.5", "private", "nested")])
	"url.nested-internal" in rules(shield.escalate) with input as inp
}

test_nested_public_target_not_escalated if {
	inp := with_urls("net_request", [url("https://web.archive.org/web/2023/https://go.dev/", "web.archive.org", "hostname", "request"), url("https://go.dev/", "go.dev", "hostname", "nested")])
	not "url.nested-internal" in rules(shield.escalate) with input as inp
}

test_nested_in_local_request_not_escalated if {
	inp := with_urls("net_request", [url("http://localhost:3000/?next=http://localhost:3000/x", "localhost", "loopback", "request"), url("http://localhost:3000/x", "localhost", "loopback", "nested")])
	not "url.nested-internal" in rules(shield.escalate) with input as inp
}

test_embedded_address_escalated if {
	inp := with_urls("net_request", [url("http://10-0-0-1.wild.example/", "10-0-0-1.wild.example", "private", "request")])
	"url.embedded-address" in rules(shield.escalate) with input as inp
}

test_localhost_no_embedded_address if {
	inp := with_urls("net_request", [url("http://app.localhost:3000/", "app.localhost", "loopback", "request")])
	not "url.embedded-address" in rules(shield.escalate) with input as inp
}

test_literal_no_embedded_address if {
	inp := with_urls("net_request", [url("http://10.0.0.1/", "10.0.0.1", "private", "request")])
	not "url.embedded-address" in rules(shield.escalate) with input as inp
}

# ---- data in targets

test_url_data_to_outside_escalated if {
	inp := with_effects("net_request", [eff("send", "collect.example:443", "url data")])
	"url.data-in-target" in rules(shield.escalate) with input as inp
}

test_url_data_to_registry_inside if {
	inp := with_effects("exec", [eff("send", "registry.npmjs.org:443", "url data")])
	not "url.data-in-target" in rules(shield.escalate) with input as inp
	not "exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_url_data_from_command_outside_envelope if {
	inp := with_effects("exec", [eff("send", "c2.example:443", "url data")])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_encoded_secret_in_target_denied if {
	inp := with_effects("net_request", [eff("connect", "c.example:443", "https"), eff("send", "c.example:443", "url data"), eff("secret", "url data (encoded) to c.example", "content")])
	"effects.secret-egress" in rules(shield.deny) with input as inp
}

# ---- typed secrets

test_typed_secret_escalated if {
	inp := with_effects("browser", [eff("secret", "typed into password field", "typed")])
	"browser.typed-secret" in rules(shield.escalate) with input as inp
	count(shield.deny) == 0 with input as inp
}

# ---- claims

test_claimed_approval_escalated_not_denied if {
	inp := with_effects("memory_write", [eff("privilege", "claimed approval: approved", "claimed")])
	"freetext.claimed-approval" in rules(shield.escalate) with input as inp
	not "effects.privilege" in rules(shield.deny) with input as inp
}

test_waiver_denied if {
	inp := with_effects("memory_write", [eff("privilege", "protection: approvals", "requested")])
	"effects.privilege" in rules(shield.deny) with input as inp
}

test_data_export_outside_denied if {
	inp := with_effects("schedule", [eff("read", "data: database", "requested"), eff("send", "x@partner.example", "requested")])
	"freetext.data-export" in rules(shield.deny) with input as inp
}

test_data_export_inside_not_denied if {
	inp := with_effects("schedule", [eff("read", "data: database", "requested"), eff("send", "team@globex.io", "requested")])
	not "freetext.data-export" in rules(shield.deny) with input as inp
}

# ---- mass deletion

test_manifest_and_entry_point_deleted_escalated if {
	inp := with_effects("file_write", [ws_delete("/w/Cargo.toml"), ws_delete("/w/src/main.rs")])
	"edits.mass-delete" in rules(shield.escalate) with input as inp
}

test_one_manifest_deleted_not_escalated if {
	inp := with_effects("file_write", [ws_delete("/w/Cargo.toml")])
	not "edits.mass-delete" in rules(shield.escalate) with input as inp
}

test_moved_entry_point_not_deleted if {
	w := {"kind": "write", "target": "/w/src/main.rs", "detail": "", "in_workspace": true, "sensitive": false, "unresolved": false, "program": "apply_patch"}
	inp := with_effects("file_write", [ws_delete("/w/src/main.rs"), w, ws_delete("/w/src/old.rs")])
	not "edits.mass-delete" in rules(shield.escalate) with input as inp
}

test_many_files_deleted_escalated if {
	inp := with_effects("file_write", [ws_delete(sprintf("/w/docs/p%d.md", [i])) | some i in numbers.range(1, 8)])
	"edits.mass-delete" in rules(shield.escalate) with input as inp
}

test_commands_not_judged_here if {
	inp := with_effects("exec", [ws_delete("/w/Cargo.toml"), ws_delete("/w/src/main.rs")])
	not "edits.mass-delete" in rules(shield.escalate) with input as inp
}

test_history_moved_away_escalated if {
	inp := with_effects("file_move", [eff("delete", "vcs_history", "move_file /w/.git")])
	"edits.history-removed" in rules(shield.escalate) with input as inp
}
