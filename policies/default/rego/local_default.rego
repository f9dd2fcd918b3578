# No host means the client's default, which is local (issue 11, wave 8; the normaliser's decision
# and its risk: shield/normalize/local_default.go). Restoring a dump into a development database
# on this machine (pg_restore -d app_dev --clean fixtures.dump, no host, no PGHOST/PGSERVICE in
# the call, no -C) is a test set-up like re-creating it: the write is inside. The mark is the
# same as for dropdb/createdb (Remote "local-db:NAME", a loopback host); a remote host, a
# connection string or a database not named as a development one carries no mark.
package shield

import rego.v1

inside(e) if {
	e.kind == "write"
	e.program == "pg_restore"
	startswith(e.target, "database:")
	startswith(object.get(e, "remote", ""), "local-db:")
	loopback_host(trim_prefix(e.target, "database:"))
	not e.unresolved
}
