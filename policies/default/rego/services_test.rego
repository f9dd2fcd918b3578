# Tests of services.rego: loopback admin services, exposed file servers, tunnels.
package shield.services_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(urls, effects) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": urls, "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

url(port, path) := {"raw": sprintf("http://127.0.0.1:%d%s", [port, path]), "scheme": "http", "host": "127.0.0.1",
	"port": port, "path": path, "query": "", "userinfo": false, "ip_class": "loopback", "role": "target", "registrable": ""}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "program": program, "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}

test_docker_api_port_blocked if {
	"net.loopback-admin" in rules(shield.deny) with input as act([url(2375, "/containers/create")], [])
}

test_kubelet_blocked if {
	"net.loopback-admin" in rules(shield.deny) with input as act([url(10250, "/run/ns/pod/c")], [])
}

test_approval_api_any_port_blocked if {
	"net.loopback-admin" in rules(shield.deny) with input as act([url(7443, "/v1/approvals/apr-1/resolve")], [])
}

test_port_and_path_service_escalates if {
	inp := act([url(8500, "/v1/kv/")], [])
	"net.loopback-admin" in rules(shield.escalate) with input as inp
	not "net.loopback-admin" in rules(shield.deny) with input as inp
}

test_path_outside_service_paths_allowed if {
	inp := act([url(8500, "/ui/")], [])
	not "net.loopback-admin" in rules(shield.escalate) with input as inp
}

test_dev_services_not_findings if {
	inp := act([url(9200, "/_cluster/health"), url(3000, "/api/users"), url(5432, "/")], [])
	not "net.loopback-admin" in rules(shield.deny) with input as inp
	not "net.loopback-admin" in rules(shield.escalate) with input as inp
}

test_url_in_text_not_a_target if {
	u := object.union(url(2375, "/containers/create"), {"role": "text"})
	not "net.loopback-admin" in rules(shield.deny) with input as act([u], [])
}

test_docker_socket_by_client_blocked if {
	"net.loopback-admin" in rules(shield.deny) with input as act([], [eff("read", "/run/user/1000/docker.sock", "curl", "")])
}

test_docker_socket_listed_not_blocked if {
	not "net.loopback-admin" in rules(shield.deny) with input as act([], [eff("read", "/var/run/docker.sock", "ls", "")])
}

test_home_served_to_network_blocked if {
	"net.exposed-server" in rules(shield.deny) with input as act([], [eff("listen", "0.0.0.0:8000", "python3", "serves /home/user")])
	"net.exposed-server" in rules(shield.deny) with input as act([], [eff("listen", "[::]:8000", "python3", "serves /")])
}

test_workspace_or_loopback_server_allowed if {
	not "net.exposed-server" in rules(shield.deny) with input as act([], [eff("listen", "0.0.0.0:8000", "python3", "serves /w/dist")])
	not "net.exposed-server" in rules(shield.deny) with input as act([], [eff("listen", "127.0.0.1:8000", "python3", "serves /home/user")])
}

test_tunnel_package_escalates if {
	"net.tunnel-expose" in rules(shield.escalate) with input as act([], [eff("exec", "localtunnel", "npx", "package")])
}

test_appliance_cli_blocked if {
	inp := json.patch(act([], []), [{"op": "replace", "path": "/commands", "value": [{"name": "shield", "args": ["approvals", "approve", "apr-1"]}]}])
	"net.loopback-admin" in rules(shield.deny) with input as inp
	ok := json.patch(act([], []), [{"op": "replace", "path": "/commands", "value": [{"name": "shield", "args": ["version"]}]}])
	not "net.loopback-admin" in rules(shield.deny) with input as ok
}

test_grpc_approval_path_blocked if {
	"net.loopback-admin" in rules(shield.deny) with input as act([url(7000, "/shield.v1.ApprovalService/Resolve")], [])
}

admin_url(host, class, path) := {"raw": concat("", ["http://", host, path]), "scheme": "http", "host": host, "port": 9090,
	"path": path, "query": "", "userinfo": false, "ip_class": class, "role": "request", "registrable": ""}

admin_act(u) := {
	"tool": "Bash", "class": "exec", "commands": [], "paths": [], "urls": [u], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": [], "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/home/user/project",
}

test_admin_destroy_any_port_and_spelling if {
	"net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("0.0.0.0", "loopback", "/api/v1/admin/tsdb/delete_series"))
	"net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("127.0.0.1", "loopback", "/actuator/shutdown"))
	"net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("10.0.0.5", "private", "/_nodes/_shutdown"))
	"net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("localhost", "loopback", "/-/quit"))
}

test_admin_read_or_app_route_not_destroy if {
	not "net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("localhost", "loopback", "/api/v1/admin/tsdb/snapshot_status"))
	not "net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("localhost", "loopback", "/api/users/3/delete"))
	not "net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("localhost", "loopback", "/actuator/health"))
	not "net.admin-destroy" in rules(shield.deny) with input as admin_act(admin_url("example.com", "public", "/admin/delete"))
}

test_admin_delete_method if {
	u := admin_url("127.0.0.1", "loopback", "/api/v2/admin/silences")
	inp := object.union(admin_act(u), {"effects": [{"kind": "delete", "target": "http:127.0.0.1:9093/api/v2/admin/silences", "detail": "http DELETE", "program": "curl", "in_workspace": false, "sensitive": false, "unresolved": false}]})
	"net.admin-destroy" in rules(shield.deny) with input as inp
	not "net.admin-destroy" in rules(shield.deny) with input as admin_act(u)
}
