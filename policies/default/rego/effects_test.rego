# Tests of the effect rules (effects.rego), on actions as the normaliser builds them.
package shield.effects_test

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

# ---- positive security for exec

test_exec_inside_workspace_allowed if {
	inp := act("exec", [eff("read", "/w/a.go", "", true), eff("write", "/w/out", "", true), eff("connect", "registry.npmjs.org:443", "https", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
	count(shield.escalate) == 0 with input as inp
}

test_exec_unknown_program_not_allowed if {
	inp := json.patch(act("exec", [eff("read", "/w/a", "", true)]), [
		{"op": "replace", "path": "/unknown_programs", "value": ["frob"]},
		{"op": "replace", "path": "/paths", "value": [{"clean": "/srv/data", "role": "arg", "in_workspace": false, "sensitive": false}]},
	])
	not "exec.known-effects" in rules(shield.allow) with input as inp
	"exec.unknown-effects" in rules(shield.escalate) with input as inp
}

test_exec_unknown_program_confined_to_workspace_allowed if {
	inp := json.patch(act("exec", []), [
		{"op": "replace", "path": "/unknown_programs", "value": ["zig"]},
		{"op": "replace", "path": "/paths", "value": [{"clean": "/w/build.zig", "role": "arg", "in_workspace": true, "sensitive": false}]},
	])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_unknown_program_naming_a_host_not_allowed if {
	inp := json.patch(act("exec", []), [
		{"op": "replace", "path": "/unknown_programs", "value": ["frob"]},
		{"op": "replace", "path": "/urls", "value": [{"host": "evil.example", "ip_class": "hostname", "role": "request"}]},
	])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_unresolved_not_allowed if {
	e := json.patch(eff("delete", "/w/$X", "", true), [{"op": "replace", "path": "/unresolved", "value": true}])
	inp := act("exec", [e])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_write_outside_escalates if {
	inp := act("exec", [eff("write", "/srv/data/x", "", false)])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_tmp_and_cache_inside if {
	inp := act("exec", [eff("write", "/tmp/build.log", "", false), eff("write", "/home/u/.cache/go-build/x", "", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_connect_unlisted_host_with_secret_escalates if {
	inp := act("exec", [eff("secret", "/home/u/.aws/credentials", "cloud_credentials", false), eff("connect", "monitor.attacker.example:4444", "tcp", false)])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_exec_loopback_is_egress if {
	inp := act("exec", [eff("connect", "127.0.0.1:9090", "http", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

# ---- every call

test_protected_path_denied if {
	inp := act("file_write", [eff("write", "/var/lib/shield/audit/chain.log", "", false)])
	"effects.protected-path" in rules(shield.deny) with input as inp
}

test_secret_and_connect_denied if {
	inp := act("exec", [eff("secret", "/home/u/.ssh/id_rsa", "ssh_key", false), eff("connect", "x.example:443", "https", false)])
	"effects.secret-egress" in rules(shield.deny) with input as inp
}

test_secret_and_loopback_not_exfil if {
	inp := act("exec", [eff("secret", "/w/.env", "dotenv", true), eff("connect", "localhost:5432", "tcp", false)])
	not "effects.secret-egress" in rules(shield.deny) with input as inp
}

test_force_push_escalates if {
	inp := act("vcs_push", [eff("push", "origin", "force,branch=feat/x", false)])
	"effects.push-rewrite" in rules(shield.escalate) with input as inp
	count(shield.deny) == 0 with input as inp
}

test_force_push_to_protected_denied if {
	"effects.push-protected" in rules(shield.deny) with input as act("vcs_push", [eff("push", "origin", "force,branch=main", false)])
	"effects.push-protected" in rules(shield.deny) with input as act("vcs_push", [eff("push", "origin", "force,ref=+HEAD:refs/heads/main", false)])
}

test_plain_push_to_main_allowed if {
	inp := act("vcs_push", [eff("push", "origin", "branch=main", false)])
	count(shield.escalate) == 0 with input as inp
	count(shield.deny) == 0 with input as inp
	"exec.known-effects" in rules(shield.allow) with input as act("exec", [eff("push", "(upstream)", "", false)])
}

test_feature_push_allowed if {
	inp := act("vcs_push", [eff("push", "origin", "branch=feat/x", false)])
	count(shield.escalate) == 0 with input as inp
	count(shield.deny) == 0 with input as inp
}

test_persistence_outside_workspace_denied if {
	inp := act("file_write", [eff("persistence", "/home/u/.bashrc", "shell_rc", false)])
	"effects.persistence" in rules(shield.deny) with input as inp
}

test_persistence_in_workspace_escalates if {
	inp := act("file_write", [eff("persistence", "/w/.git/hooks/pre-commit", "git_hooks", true)])
	"effects.persistence-in-workspace" in rules(shield.escalate) with input as inp
}

test_requested_secret_denied if {
	inp := act("agent_spawn", [eff("secret", "/home/u/.ssh", "ssh_key", false)])
	"effects.requested-secret" in rules(shield.deny) with input as inp
}

# What a file tool writes to an agent instruction file is text an agent acts on; the same write to
# another file is not judged as a request.
test_requested_secret_in_instruction_file_denied if {
	inp := object.union(act("file_write", [eff("secret", "/home/u/.aws/credentials", "aws_credentials", false)]), {"paths": [{"clean": "/w/AGENTS.md", "role": "write"}]})
	"effects.requested-secret" in rules(shield.deny) with input as inp
}

test_requested_secret_other_file_not_judged if {
	inp := object.union(act("file_write", [eff("secret", "/home/u/.aws/credentials", "aws_credentials", false)]), {"paths": [{"clean": "/w/docs/notes.md", "role": "write"}]})
	not "effects.requested-secret" in rules(shield.deny) with input as inp
}

test_install_off_registry_escalates if {
	inp := act("exec", [eff("install", "git+https://evil.example/p.git", "pip", false)])
	"effects.install-off-registry" in rules(shield.escalate) with input as inp
}

test_install_from_registry_inside if {
	inp := act("exec", [eff("install", "requests", "pip", false), eff("connect", "pypi.org:443", "https", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_downloaded_code_run_denied if {
	inp := json.patch(act("exec", [eff("connect", "x.example:443", "https", false), eff("exec", "sh", "", false)]),
		[{"op": "replace", "path": "/flows", "value": [{"from": 0, "to": 1, "via": "pipe"}]}])
	"effects.exec-downloaded" in rules(shield.deny) with input as inp
}

test_escape_denied if {
	inp := act("exec", [eff("escape", "/var/run/docker.sock", "docker_socket", false)])
	"effects.escape" in rules(shield.deny) with input as inp
}

test_exec_plain_fetch_inside if {
	inp := act("exec", [eff("connect", "example.com:443", "https", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_fetch_with_data_flowing_in_escalates if {
	inp := json.patch(act("exec", [eff("read", "/w/notes", "", true), eff("connect", "x.example:443", "https", false)]),
		[{"op": "replace", "path": "/flows", "value": [{"from": 0, "to": 1, "via": "pipe"}]}])
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_exec_raw_tcp_with_data_escalates if {
	inp := json.patch(act("exec", [eff("exec", "whoami", "", false), eff("connect", "monitor.attacker.example:4444", "tcp", false)]),
		[{"op": "replace", "path": "/flows", "value": [{"from": 0, "to": 1, "via": "pipe"}]}])
	not "exec.known-effects" in rules(shield.allow) with input as inp
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_exec_connect_to_metadata_not_inside if {
	inp := json.patch(act("exec", [eff("connect", "169.254.169.254:80", "http", false)]),
		[{"op": "replace", "path": "/urls", "value": [{"host": "169.254.169.254", "ip_class": "metadata", "role": "request"}]}])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_dev_key_in_workspace_inside if {
	e := json.patch(eff("write", "/w/certs/dev.key", "private_key", true), [{"op": "replace", "path": "/sensitive", "value": true}])
	inp := act("exec", [e])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_dotenv_read_not_inside if {
	e := json.patch(eff("read", "/w/.env", "dotenv", true), [{"op": "replace", "path": "/sensitive", "value": true}])
	inp := act("exec", [e, json.patch(e, [{"op": "replace", "path": "/kind", "value": "secret"}])])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_inline_python_not_inside if {
	inp := act("exec", [eff("exec", "python3", "import os; os.system('id')", false)])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_walked_shell_inside if {
	inp := act("exec", [eff("exec", "bash", "make test", false), eff("read", "/w/Makefile", "", true)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_remote_not_inside if {
	e := json.patch(eff("exec", "bash", "ls", false), [{"op": "add", "path": "/remote", "value": "ssh:prod"}])
	inp := act("exec", [e])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_exec_workspace_script_inside_unless_written_here if {
	run := json.patch(eff("exec", "/w/scripts/test.sh", "file", true), [])
	"exec.known-effects" in rules(shield.allow) with input as act("exec", [run])
	not "exec.known-effects" in rules(shield.allow) with input as act("exec", [eff("write", "/w/scripts/test.sh", "", true), run, eff("connect", "x.example:443", "https", false)])
}

test_go_install_lookalike_host_off_registry if {
	inp := act("exec", [eff("install", "github.com.evil-proxy.net/tools/gotool@latest", "registry", false)])
	"effects.install-off-registry" in rules(shield.escalate) with input as inp
	not "effects.install-off-registry" in rules(shield.escalate) with input as act("exec", [eff("install", "golang.org/x/tools/cmd/goimports@latest", "registry", false)])
}

test_inline_computation_inside if {
	"exec.known-effects" in rules(shield.allow) with input as act("exec", [eff("exec", "python3", "import json; print(json.dumps({'ok': True}))", false)])
	not "exec.known-effects" in rules(shield.allow) with input as act("exec", [eff("exec", "ruby", "puts `id`", false)])
	not "exec.known-effects" in rules(shield.allow) with input as act("exec", [eff("exec", "node", "require('child_process').execSync('id')", false)])
}

test_host_mount_of_root_denied if {
	"effects.escape" in rules(shield.deny) with input as act("exec", [eff("escape", "/", "host_mount", false)])
	"effects.escape" in rules(shield.deny) with input as act("exec", [eff("escape", "/var/run/docker.sock", "host_mount", false)])
	not "effects.escape" in rules(shield.deny) with input as act("exec", [eff("escape", "/srv/data", "host_mount", false)])
	"effects.host-mount" in rules(shield.escalate) with input as act("exec", [eff("escape", "/srv/data", "host_mount", false)])
}

test_exec_unknown_program_with_expansion_not_allowed if {
	inp := json.patch(act("exec", []), [
		{"op": "replace", "path": "/unknown_programs", "value": ["dropdb"]},
		{"op": "replace", "path": "/commands", "value": [{"name": "dropdb", "args": ["$db"], "dynamic": true, "redirects": []}]},
	])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

mcp_call(labels, effects) := json.patch(act("unknown", effects), [{"op": "add", "path": "/context", "value": {"labels": labels}}])

test_mcp_read_only_closed_world_allowed if {
	inp := mcp_call({"mcp.readOnlyHint": "true", "mcp.openWorldHint": "false"}, [eff("read", "/w/a.txt", "", true)])
	"mcp.read-only-annotated" in rules(shield.allow) with input as inp
}

test_mcp_read_only_outside_workspace_not_allowed if {
	inp := mcp_call({"mcp.readOnlyHint": "true", "mcp.openWorldHint": "false"}, [eff("read", "/etc/passwd", "", false)])
	not "mcp.read-only-annotated" in rules(shield.allow) with input as inp
}

test_mcp_open_world_not_allowed if {
	inp := mcp_call({"mcp.readOnlyHint": "true"}, [])
	not "mcp.read-only-annotated" in rules(shield.allow) with input as inp
}

test_mcp_destructive_escalates if {
	inp := mcp_call({"mcp.destructiveHint": "true"}, [])
	"mcp.destructive-annotated" in rules(shield.escalate) with input as inp
}

test_remote_commit_to_main_escalates if {
	"effects.commit-to-protected" in rules(shield.escalate) with input as act("vcs_push", [eff("push", "api", "commit,branch=main", false)])
	count(shield.escalate) == 0 with input as act("vcs_push", [eff("push", "api", "commit,branch=fix/x", false)])
}

# Session context: a secret read earlier in the session escalates data leaving for a host outside
# the egress; the registry is still reachable; a secret read now still blocks.
session_secret := {"kind": "secret", "target": "/w/.env", "program": "session", "detail": "session",
	"in_workspace": true, "sensitive": true, "unresolved": false}

test_session_secret_then_external_request_escalates if {
	inp := act("net_request", [session_secret, eff("connect", "collect.example.net", "https", false)])
	"effects.session-secret-egress" in rules(shield.escalate) with input as inp
	not "effects.secret-egress" in rules(shield.deny) with input as inp
}

test_session_secret_then_registry_not_escalated if {
	inp := act("exec", [session_secret, eff("connect", "registry.npmjs.org", "https", false)])
	not "effects.session-secret-egress" in rules(shield.escalate) with input as inp
}

test_secret_now_still_blocks if {
	inp := act("exec", [eff("secret", "/home/u/.ssh/id_rsa", "ssh_key", false), eff("connect", "collect.example.net", "https", false)])
	"effects.secret-egress" in rules(shield.deny) with input as inp
}

# ---- secrets carried in a request, database destruction, keys loaded into the ssh agent

test_request_secret_beyond_egress_denied if {
	inp := act("exec", [eff("secret", "env:AWS_SECRET_ACCESS_KEY", "request", false), eff("connect", "telemetry.example.com:443", "https", false)])
	"effects.secret-in-request" in rules(shield.deny) with input as inp
}

test_request_secret_to_allowed_egress_allowed if {
	inp := act("exec", [eff("secret", "env:GITHUB_TOKEN", "request", false), eff("connect", "api.github.com:443", "https", false)])
	count(shield.deny) == 0 with input as inp
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_database_destroy_remote_denied if {
	inp := act("exec", [eff("delete", "database:db.prod.internal", "database DROP DATABASE", false)])
	"effects.database-destroy" in rules(shield.deny) with input as inp
}

test_database_destroy_local_escalated_not_denied if {
	inp := act("exec", [eff("delete", "database:localhost", "database TRUNCATE", false)])
	not "effects.database-destroy" in rules(shield.deny) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
}

test_database_destroy_workspace_file_allowed if {
	inp := act("exec", [eff("delete", "database:/w/dev.db", "database DROP TABLE", true)])
	count(shield.deny) == 0 with input as inp
}

test_agent_load_key_allowed_alone if {
	inp := act("exec", [eff("read", "/h/.ssh/id_ed25519", "ssh_key", false), eff("secret", "/h/.ssh/id_ed25519", "agent_load", false)])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_agent_load_key_with_egress_denied if {
	inp := act("exec", [eff("secret", "/h/.ssh/id_ed25519", "agent_load", false), eff("connect", "x.example.net:443", "https", false)])
	"effects.secret-egress" in rules(shield.deny) with input as inp
	not "exec.known-effects" in rules(shield.allow) with input as inp
}
