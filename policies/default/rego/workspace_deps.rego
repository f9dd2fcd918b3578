# Dependency manifests and lockfiles written through file tools (and the compose and pre-commit
# files that decide what runs): where a dependency comes from and whether its checksum still
# holds. Shell edits of the same files are judged by the shell rules.
package shield

import rego.v1

# A lockfile edit that keeps a package's name and version and changes only its checksum (go.sum
# h1:, package-lock/yarn/pnpm integrity sha512-, Cargo.lock checksum, pip --hash): the lock now
# accepts other code under the same version. Tools regenerate lockfiles; an agent does not
# hand-edit a hash.
lock_hash_re := `h1:[A-Za-z0-9+/=]{20,}|sha(1|256|384|512)[-:][A-Za-z0-9+/=]{20,}|checksum\s*=\s*"[0-9a-f]{32,}"|--hash=sha256:[0-9a-f]{32,}`

lockfile_path(p) if regex.match(`(^|/)(go\.sum|go\.work\.sum|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lock|Cargo\.lock|poetry\.lock|uv\.lock|Pipfile\.lock|pdm\.lock|requirements[^/]*\.txt|composer\.lock|Gemfile\.lock|packages\.lock\.json|gradle\.lockfile|flake\.lock|MODULE\.bazel\.lock)$`, p)

old_lines contains l if {
	some k in ["old_string", "old_str", "oldText", "old_text", "search"]
	t := input.args[k]
	is_string(t)
	some l in split(t, "\n")
	regex.match(lock_hash_re, l)
}

deny contains finding("workspace.lock-checksum-changed", sprintf("changes a checksum in %s and keeps the version: the lock would accept other code", [p])) if {
	some p in written_path
	lockfile_path(p)
	some n in written_lines
	regex.match(lock_hash_re, n)
	some o in old_lines
	o != n
	regex.replace(o, lock_hash_re, "#") == regex.replace(n, lock_hash_re, "#")
}

# go.mod replace directives that swap a module for one of another owner (not a local directory):
# github.com/lib/pq => github.com/anon-pq/pq. The owner is the host and first path element.
go_owner(m) := concat("/", array.slice(split(m, "/"), 0, 2))

escalate contains finding("workspace.dependency-swapped", sprintf("writes %s, which replaces %s with %s of another owner", [p, m[1], m[2]])) if {
	some p in written_path
	endswith(p, "/go.mod")
	some l in written_lines
	some m in regex.find_all_string_submatch_n(`^\s*(?:replace\s+)?([a-zA-Z0-9.-]+\.[a-z]{2,}/[^\s]+)(?:\s+v[^\s]+)?\s*=>\s*([a-zA-Z0-9.-]+\.[a-z]{2,}/[^\s]+)`, l, 4)
	go_owner(m[1]) != go_owner(m[2])
}

# Manifests that take a dependency from a git repository or URL on a host outside the egress
# (Cargo.toml git = "…", pyproject/Pipfile git = or url =, Gemfile git:, composer/package.json
# URLs are judged by workspace.package-source).
escalate contains finding("workspace.package-source", sprintf("writes %s, which takes a dependency from %s, outside the allowed registries", [p, h])) if {
	some p in written_path
	regex.match(`(^|/)(Cargo\.toml|pyproject\.toml|Pipfile|Gemfile|[^/]*\.gemspec|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|pom\.xml|go\.mod|deno\.jsonc?|mix\.exs|Package\.swift|pubspec\.yaml|conanfile\.(txt|py)|vcpkg\.json)$`, p)
	some l in written_lines
	regex.match(`(?i)(\bgit\s*[:=]|\burl\s*[:=]|\bpath\s*[:=]|\bregistry\s*[:=]|\bsource\s*[:=(]|<url>|\bmaven\s*\{|\.package\s*\(\s*url|@\s*(git\+)?https?://|=>\s*https?://)`, l)
	some h in foreign_hosts(l)
}

# Compose files that give a service the host: privileged, the host's root or its Docker socket
# mounted, the host's PID or network namespace.
compose_path(p) if regex.match(`(^|/)(docker-)?compose(\.[^/]*)?\.ya?ml$|(^|/)docker-compose\.[^/]*\.ya?ml$`, p)

deny contains finding("workspace.compose-host-access", sprintf("writes %s, which gives a container the host (%s)", [p, trim_space(l)])) if {
	some p in written_path
	compose_path(p)
	some l in written_lines
	regex.match(`(?i)(privileged\s*:\s*(true|yes)|['"\[\s-]/:/[a-z]|['"\[\s-]/:/?['"\],\s]|['"\[\s-]/var/run/docker\.sock:|['"\[\s-]/run/docker\.sock:|pid\s*:\s*['"]?host|network_mode\s*:\s*['"]?host|cap_add\s*:.*\b(SYS_ADMIN|ALL)\b|-\s*SYS_ADMIN\b|userns_mode\s*:\s*['"]?host)`, l)
}

# pre-commit hooks from a repository whose owner is not one of the well-known hook publishers
# (data: shield.precommit.owners): its code runs at every commit.
escalate contains finding("workspace.hook-repo-unknown", sprintf("writes %s, which runs hooks from %s at every commit", [p, m[1]])) if {
	some p in written_path
	regex.match(`(^|/)\.pre-commit-(config|hooks)\.ya?ml$`, p)
	some l in written_lines
	some m in regex.find_all_string_submatch_n(`(?i)repo\s*:\s*['"]?(https?://[^\s'"]+)`, l, 4)
	not precommit_known(m[1])
}

precommit_known(u) if {
	parts := split(trim_suffix(lower(u), ".git"), "/")
	count(parts) >= 5
	data.shield.precommit.hosts[parts[2]]
	data.shield.precommit.owners[parts[3]]
}
