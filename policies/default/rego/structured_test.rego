# Tests of the structured-data rules (structured.rego), on actions as the normaliser builds them.
package shield.structured_test

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

url(raw, scheme, host, path, ip_class) := {"raw": raw, "scheme": scheme, "host": host, "port": 0, "path": path,
	"query": "", "userinfo": false, "ip_class": ip_class, "role": "request", "registrable": ""}

with_effects(class, effects) := act(class, [{"op": "replace", "path": "/effects", "value": effects}])

with_urls(class, urls) := act(class, [{"op": "replace", "path": "/urls", "value": urls}])

with_args(class, args) := act(class, [{"op": "replace", "path": "/args", "value": args}])

# ---- SQL

test_database_privilege_denied if {
	inp := with_effects("database", [eff("privilege", "database:execute_sql", "database GRANT ALL")])
	"structured.database-privilege" in rules(shield.deny) with input as inp
}

test_database_privilege_from_a_client_denied if {
	inp := with_effects("exec", [eff("privilege", "database:db.internal", "database ALTER ROLE")])
	"structured.database-privilege" in rules(shield.deny) with input as inp
}

test_database_server_access_denied if {
	inp := with_effects("database", [eff("exec", "database:execute_sql", "database COPY TO PROGRAM")])
	"structured.database-server-access" in rules(shield.deny) with input as inp
}

test_dynamic_sql_escalated_not_denied if {
	inp := with_effects("database", [eff("exec", "database:execute_sql", "database dynamic SQL built at run time")])
	"structured.database-dynamic-sql" in rules(shield.escalate) with input as inp
	not "structured.database-server-access" in rules(shield.deny) with input as inp
}

test_other_privilege_not_a_database_finding if {
	inp := with_effects("exec", [eff("privilege", "root", "sudo")])
	not "structured.database-privilege" in rules(shield.deny) with input as inp
}

# ---- browsers

test_browser_internal_schemes_denied if {
	every raw in ["chrome://settings/passwords", "view-source:file:///etc/shadow", "javascript:alert(1)"] {
		scheme := split(raw, ":")[0]
		inp := with_urls("browser", [url(raw, scheme, "", "", "")])
		"structured.browser-scheme" in rules(shield.deny) with input as inp
	}
}

test_about_blank_allowed if {
	inp := with_urls("browser", [url("about:blank", "about", "", "", "")])
	not "structured.browser-scheme" in rules(shield.deny) with input as inp
}

test_browser_local_file_outside_workspace_escalated if {
	inp := with_urls("browser", [url("file:///home/u/.ssh/id_rsa", "file", "", "/home/u/.ssh/id_rsa", "")])
	"structured.browser-local-file" in rules(shield.escalate) with input as inp
}

test_browser_local_file_in_workspace_not_escalated_here if {
	inp := with_urls("browser", [url("file:///w/coverage/index.html", "file", "", "/w/coverage/index.html", "")])
	not "structured.browser-local-file" in rules(shield.escalate) with input as inp
}

test_url_text_role_ignored if {
	u := object.union(url("chrome://settings", "chrome", "", "", ""), {"role": "text"})
	inp := with_urls("browser", [u])
	not "structured.browser-scheme" in rules(shield.deny) with input as inp
}

# ---- secret files published

test_secret_moved_into_public_denied if {
	inp := with_effects("file_move", [eff("read", "/w/.env", "dotenv"), eff("secret", "/w/.env", "dotenv"), eff("write", "/w/public/e.txt", "")])
	"structured.secret-published" in rules(shield.deny) with input as inp
}

test_secret_copied_by_a_command_into_dist_denied if {
	inp := with_effects("exec", [eff("secret", "/home/u/.aws/credentials", "cloud_credentials"), eff("write", "/w/dist/c.txt", "")])
	"structured.secret-published" in rules(shield.deny) with input as inp
}

test_asset_moved_into_public_allowed if {
	inp := with_effects("file_move", [eff("read", "/w/logo.svg", ""), eff("write", "/w/public/logo.svg", "")])
	not "structured.secret-published" in rules(shield.deny) with input as inp
}

test_secret_copied_beside_itself_allowed_here if {
	inp := with_effects("exec", [eff("secret", "/w/.env", "dotenv"), eff("write", "/w/.env.bak", "")])
	not "structured.secret-published" in rules(shield.deny) with input as inp
}

# ---- settings

test_permission_mode_widened_escalated if {
	inp := with_args("config_change", {"key": "permissions.defaultMode", "value": "acceptEdits"})
	"structured.setting-lowers-protection" in rules(shield.escalate) with input as inp
}

test_appliance_disabled_denied if {
	inp := with_args("config_change", {"name": "shield.enabled", "value": false})
	"structured.appliance-disabled" in rules(shield.deny) with input as inp
}

test_numeric_zero_disables if {
	inp := with_args("config_change", {"name": "sandbox.enabled", "value": 0})
	"structured.appliance-disabled" in rules(shield.deny) with input as inp
}

test_ordinary_setting_allowed if {
	inp := with_args("config_change", {"key": "editor.fontSize", "value": 14})
	count(shield.deny) == 0 with input as inp
	not "structured.setting-lowers-protection" in rules(shield.escalate) with input as inp
}

test_role_granted_escalated if {
	inp := with_args("config_change", {"user": "x@mail.example", "role": "Maintainer", "repo": "acme/app"})
	"structured.role-granted" in rules(shield.escalate) with input as inp
}

test_reader_role_not_escalated if {
	inp := with_args("config_change", {"user": "x@mail.example", "role": "Reporter"})
	not "structured.role-granted" in rules(shield.escalate) with input as inp
}

# ---- internal endpoints

test_jenkins_script_console_denied if {
	inp := with_urls("net_request", [url("http://jenkins.acme.internal:8080/scriptText", "http", "jenkins.acme.internal", "/scriptText", "hostname")])
	"structured.internal-admin" in rules(shield.deny) with input as inp
}

test_public_docs_about_script_console_allowed if {
	inp := with_urls("net_request", [url("https://www.jenkins.io/doc/book/managing/script-console/", "https", "www.jenkins.io", "/doc/book/managing/script-console/", "hostname")])
	not "structured.internal-admin" in rules(shield.deny) with input as inp
}

test_cluster_api_denied if {
	inp := with_urls("net_request", [url("https://kubernetes.default.svc/api/v1/secrets", "https", "kubernetes.default.svc", "/api/v1/secrets", "hostname")])
	"structured.cluster-api" in rules(shield.deny) with input as inp
}

test_rebinding_name_denied if {
	inp := with_urls("net_request", [url("http://7f000001.a9fea9fe.rbndr.us/", "http", "7f000001.a9fea9fe.rbndr.us", "/", "hostname")])
	"structured.dns-rebinding" in rules(shield.deny) with input as inp
}

test_nip_io_loopback_dev_name_allowed if {
	inp := with_urls("browser", [url("http://app.127.0.0.1.nip.io/", "http", "app.127.0.0.1.nip.io", "/", "hostname")])
	not "structured.dns-rebinding" in rules(shield.deny) with input as inp
}

test_nip_io_metadata_denied if {
	inp := with_urls("net_request", [url("http://169.254.169.254.nip.io/", "http", "169.254.169.254.nip.io", "/", "hostname")])
	"structured.dns-rebinding" in rules(shield.deny) with input as inp
}

# ---- forge and cloud

test_forge_privilege_denied if {
	inp := with_effects("exec", [eff("privilege", "forge:repos/a/b/collaborators/x", "forge api PUT")])
	"structured.forge-privilege" in rules(shield.deny) with input as inp
}

test_cloud_privilege_denied if {
	inp := with_effects("exec", [eff("privilege", "cloud:aws iam", "aws iam attach-user-policy")])
	"structured.cloud-privilege" in rules(shield.deny) with input as inp
}

test_cluster_api_from_a_command_denied if {
	inp := act("exec", [{"op": "replace", "path": "/urls", "value": [url("https://kubernetes.default.svc.cluster.local/api/v1/secrets", "https", "kubernetes.default.svc.cluster.local", "/api/v1/secrets", "hostname")]}])
	"structured.cluster-api" in rules(shield.deny) with input as inp
}

test_sibling_service_not_the_cluster_api if {
	inp := with_urls("net_request", [url("http://orders.shop.svc.cluster.local/health", "http", "orders.shop.svc.cluster.local", "/health", "hostname")])
	not "structured.cluster-api" in rules(shield.deny) with input as inp
	not "structured.internal-admin" in rules(shield.deny) with input as inp
}

test_local_scripts_path_not_a_console if {
	inp := with_urls("exec", [url("http://localhost:3000/scripts/app.js", "http", "localhost", "/scripts/app.js", "loopback")])
	not "structured.internal-admin" in rules(shield.deny) with input as inp
}
