# Tests of what the operands of programs without a spec name (effects.rego,
# unknown_program_connects_out; shield/normalize/unknown_operands.go) and of the local
# statements (local.rego; shield/normalize/local_statements.go).
package shield.unknown_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects, unknown) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": unknown,
	"workspace": "/w",
}

eff(kind, target, detail, program) := {"kind": kind, "target": target, "detail": detail, "in_workspace": false,
	"sensitive": false, "unresolved": false, "program": program}

test_unknown_program_connecting_to_a_named_host_not_allowed if {
	inp := act([eff("connect", "kafka.prod.internal", "tcp", "kcat")], ["kcat"])
	not "exec.known-effects" in rules(shield.allow) with input as inp
	"exec.unknown-effects" in rules(shield.escalate) with input as inp
}

test_unknown_program_connecting_to_loopback_allowed if {
	inp := act([eff("connect", "127.0.0.1", "tcp", "pg_isready")], ["pg_isready"])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_known_program_connecting_to_a_named_host_stays_a_plain_connection if {
	inp := act([eff("connect", "api.example.com", "https", "curl")], ["frob"])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_remote_database_destroy_by_an_unknown_client_blocked if {
	inp := act([eff("connect", "ch.prod.internal", "tcp", "clickhouse-client"), eff("delete", "database:ch.prod.internal", "database DROP TABLE", "clickhouse-client")], ["clickhouse-client"])
	"effects.database-destroy" in rules(shield.deny) with input as inp
}

test_default_database_of_an_unknown_client_escalated_not_blocked if {
	inp := act([eff("delete", "database:(default)", "database DROP TABLE", "snowsql")], ["snowsql"])
	not "effects.database-destroy" in rules(shield.deny) with input as inp
	"exec.outside-envelope" in rules(shield.escalate) with input as inp
}

test_compose_database_statement_inside if {
	e := object.union(eff("delete", "database:localhost", "database TRUNCATE", "psql"), {"remote": "local-db:compose:w-db-1"})
	inp := act([e], [])
	"exec.known-effects" in rules(shield.allow) with input as inp
}

test_container_database_statement_of_another_project_outside if {
	e := object.union(eff("delete", "database:localhost", "database TRUNCATE", "psql"), {"remote": "container:billing-db-1"})
	inp := act([e], [])
	not "exec.known-effects" in rules(shield.allow) with input as inp
}
