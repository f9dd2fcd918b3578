# Destruction beyond files (shield/normalize/effects_destroy.go and commands/volumes.spec,
# publish.spec): what a call removes from a disk, a package registry, an audit trail, an
# application's database or the repository's own history. Every such effect targets no path, so
# it is outside the envelope (exec.outside-envelope escalates it); the rules here say which of
# them no human should be asked to approve in passing, and which are the developer's own.
package shield

import rego.v1

# Targets whose delete cannot be undone by whoever runs the call: a logical volume, pool,
# dataset, array member or device mapping; a version published to a registry that consumers
# resolve (npm unpublish, gem yank, nuget delete); what a cloud or host records about activity.
irreversible_delete_targets := {
	"block_volume": "destroys a volume, pool or device mapping and the data on it",
	"npm_registry": "removes a published package version from the registry for every consumer",
	"rubygems": "removes a published package version from the registry for every consumer",
	"nuget": "removes a published package version from the registry for every consumer",
	"vscode_marketplace": "removes a published extension for every user",
	"hex": "removes a published package version from the registry for every consumer",
	"cocoapods": "removes a published package version from the registry for every consumer",
	"conan": "removes a published package version from the registry for every consumer",
	"audit_trail": "stops or deletes the record of what happens (audit logging, detection)",
	"security_control": "switches off the host's confinement (security profiles unloaded)",
	"database_cluster": "drops a database cluster and its data directory",
}

deny contains finding("effects.irreversible-delete", sprintf("%s (%s)", [irreversible_delete_targets[e.target], e.detail])) if {
	some e in input.effects
	e.kind == "delete"
	irreversible_delete_targets[e.target]
}

# Decision: a framework's destructive database task (db:drop, db:reset, flush, migrate reset,
# migrate:fresh, ecto.drop, ef database drop…) is judged by the environment the call names:
# - production-like (RAILS_ENV/NODE_ENV/MIX_ENV/…=production|staging, -e/--env production, a
#   settings module or a database URL of a named remote server, Rails' environment check
#   disabled, artisan --force): blocked, it destroys shared data;
# - development or test (an explicit dev/test environment, a loopback or file database): the
#   developer's own disposable database, re-created by the next migrate or seed: inside;
# - none named: the framework's default comes from the agent's environment or the project's
#   configuration, which the call does not show: outside (exec.outside-envelope escalates).
deny contains finding("effects.production-database-destroy", sprintf("%s against a production environment", [e.detail])) if {
	some e in input.effects
	e.kind == "delete"
	e.target == "app_database:production"
}

inside(e) if {
	e.kind == "delete"
	e.target == "app_database:development"
}

# An install from a default registry of a name that imitates a popular package of that registry
# (shield/normalize/effects_lookalike.go: one edit away, or the same name with other separators,
# scope or homoglyphs): a typo the agent made or a typosquat it was led to. A human confirms the
# name; the popular package itself installs as before.
escalate contains finding("effects.package-lookalike", sprintf("installs %s, a name that imitates the popular package %s", [e.target, trim_prefix(e.detail, "lookalike:")])) if {
	some e in input.effects
	e.kind == "install"
	startswith(e.detail, "lookalike:")
}

# Writing a new file system, partition table, label, pool or array onto a device (mkfs, wipefs,
# sgdisk, pvcreate, zpool create, mdadm --create, cryptsetup luksFormat, nvme format…): whatever
# the device held is gone.
deny contains finding("effects.disk-format", sprintf("formats or overwrites a storage device (%s)", [e.program])) if {
	some e in input.effects
	e.kind == "privilege"
	e.detail == "format"
}
