# Tests of the dependency-manifest, lockfile, compose and pre-commit rules (workspace_deps.rego),
# bucket uploads (buckets.rego) and HTTP deletes (http_deletes.rego).
package shield.workspace_deps_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

write(path, content) := {
	"tool": "Write", "class": "file_write", "commands": [], "urls": [], "strings": [path, content], "args": {},
	"paths": [{"raw": path, "clean": path, "role": "write", "in_workspace": true, "sensitive": false, "kind": ""}],
	"recipients": [], "body": "", "content": content, "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": [{"kind": "write", "target": path, "detail": "", "in_workspace": true, "sensitive": false, "unresolved": false, "program": "Write"}],
	"flows": [], "unresolved": [], "unknown_programs": [], "workspace": "/w",
}

edit(path, old, new) := object.union(write(path, new), {"tool": "Edit", "args": {"old_string": old, "new_string": new}})

exec_with(effects) := {
	"tool": "Bash", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [], "workspace": "/w",
}

eff(kind, target, detail) := {"kind": kind, "target": target, "detail": detail, "in_workspace": false, "sensitive": false, "unresolved": false, "program": "x"}

test_go_sum_hash_swap_denied if {
	inp := edit("/w/go.sum", "golang.org/x/net v0.30.0 h1:AcW1SDZMkb8IpzCdQUaIq2sP4sZ4zw+55h6ynffypl4=", "golang.org/x/net v0.30.0 h1:Zz9aTTvM1rFwWe3m1e5x1gq5hkzE9i0rHn+3UoQ2ZsA=")
	"workspace.lock-checksum-changed" in rules(shield.deny) with input as inp
}

test_go_sum_version_bump_allowed if {
	inp := edit("/w/go.sum", "golang.org/x/net v0.29.0 h1:5ORfpBpCs4HzDYoodCDBbwHzdR5UrLBZ3sOnUJmFoHo=", "golang.org/x/net v0.30.0 h1:AcW1SDZMkb8IpzCdQUaIq2sP4sZ4zw+55h6ynffypl4=")
	not "workspace.lock-checksum-changed" in rules(shield.deny) with input as inp
}

test_go_mod_replace_other_owner_escalated if {
	inp := write("/w/go.mod", "module a\n\nreplace github.com/lib/pq => github.com/anon-pq/pq v1.10.9\n")
	"workspace.dependency-swapped" in rules(shield.escalate) with input as inp
}

test_go_mod_replace_local_or_same_owner_allowed if {
	inp := write("/w/go.mod", "module a\n\nreplace github.com/lib/pq => ../pq\nreplace github.com/acme/x => github.com/acme/x-fork v1.0.0\n")
	not "workspace.dependency-swapped" in rules(shield.escalate) with input as inp
}

test_compose_host_root_denied if {
	inp := write("/w/docker-compose.override.yml", "services:\n  app:\n    volumes: ['/:/host']\n")
	"workspace.compose-host-access" in rules(shield.deny) with input as inp
}

test_compose_project_volume_allowed if {
	inp := write("/w/docker-compose.yml", "services:\n  db:\n    volumes:\n      - ./data:/var/lib/postgresql/data\n")
	not "workspace.compose-host-access" in rules(shield.deny) with input as inp
}

test_precommit_unknown_owner_escalated if {
	inp := write("/w/.pre-commit-config.yaml", "repos:\n- repo: https://github.com/anon-hooks/fmt\n  rev: v0.1\n")
	"workspace.hook-repo-unknown" in rules(shield.escalate) with input as inp
}

test_precommit_known_owner_allowed if {
	inp := write("/w/.pre-commit-config.yaml", "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v5.0.0\n")
	not "workspace.hook-repo-unknown" in rules(shield.escalate) with input as inp
}

test_workspace_to_unnamed_bucket_denied if {
	inp := exec_with([eff("push", "bucket:gs://tmp-share", "upload (gsutil cp),workspace")])
	"effects.workspace-to-bucket" in rules(shield.deny) with input as inp
}

test_workspace_to_configured_bucket_allowed if {
	inp := exec_with([eff("push", "bucket:gs://acme-data", "upload (gsutil cp),workspace")])
	not "effects.workspace-to-bucket" in rules(shield.deny) with input as inp with data.shield.effects.egress_buckets as {"gs://acme-data": true}
}

test_data_upload_escalated_artifact_inside if {
	"exec.outside-envelope" in rules(shield.escalate) with input as exec_with([eff("push", "bucket:s3://share", "upload (aws cp)")])
	not "exec.outside-envelope" in rules(shield.escalate) with input as exec_with([eff("push", "bucket:s3://share", "upload (aws cp),artifact")])
}

test_http_bulk_delete if {
	"effects.http-bulk-delete" in rules(shield.deny) with input as exec_with([eff("delete", "http:es.example.com:9200/_all", "http DELETE,bulk")])
	not "effects.http-bulk-delete" in rules(shield.deny) with input as exec_with([eff("delete", "http:localhost:9200/_all", "http DELETE,bulk")])
	not "exec.outside-envelope" in rules(shield.escalate) with input as exec_with([eff("delete", "http:localhost:9200/test", "http DELETE")])
}

url(raw, host, registrable, query) := {"raw": raw, "scheme": "https", "host": host, "port": 443, "path": "/", "query": query, "userinfo": false, "ip_class": "hostname", "role": "request", "registrable": registrable}

net(u) := object.union(exec_with([]), {"tool": "fetch", "class": "net_request", "urls": [u]})

test_idna_host_escalated if {
	"url.idna-host" in rules(shield.escalate) with input as net(url("https://xn--gthub-n2e.com/", "xn--gthub-n2e.com", "xn--gthub-n2e.com", ""))
	not "url.idna-host" in rules(shield.escalate) with input as net(url("https://github.com/", "github.com", "github.com", ""))
}

test_oauth_redirect_foreign if {
	"url.oauth-redirect-foreign" in rules(shield.escalate) with input as net(url("x", "accounts.google.com", "google.com", "redirect_uri=https://203.0.113.172/cb&client_id=x"))
	not "url.oauth-redirect-foreign" in rules(shield.escalate) with input as net(url("x", "accounts.google.com", "google.com", "redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcb"))
	not "url.oauth-redirect-foreign" in rules(shield.escalate) with input as net(url("x", "github.com", "github.com", "redirect_uri=https://github.com/settings"))
}
