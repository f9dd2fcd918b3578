# Tier 1 over effects (shield/normalize/effects.go): what a call would do, whatever tool or program
# carries it. Configuration is data (data.json, shield.effects): allowed egress hosts, the repo's
# own remotes, protected branches, protected paths (the appliance's state, keys and audit trail),
# the directories outside the workspace that commands may read or write.
#
# Positive security for exec: defaults.yaml escalates exec; exec.known-effects allows a command
# only when every effect is known (no unresolved operand, no program without a spec, nothing
# truncated or unparsed) and inside the envelope: paths in the workspace or the configured roots,
# connections to configured egress, nothing privileged, persistent or escaping.
#
# Name-based rules still kept (rules/*.yaml, shield.rego) while the effect rules take over, so that
# recall does not drop on calls the specs model incompletely: destructive.* (disk wipe, fork
# bomb, cloud/cluster/database deletes have no effect kind yet), exec.* (reverse shells, decoding
# to a shell, tunnels, account and kernel changes), files.read-secret and files.write-* for exec
# (the effects say the same; the rules stay as a second opinion), vcs.force-push (shell form),
# exfil.* and message.* in shield.rego. Rules that now defer to effects once a call carries
# them: destructive.rm-outside-workspace, destructive.rm-workspace-root, files.path-traversal,
# the eval clause of exec.decode-to-shell.
package shield

import rego.v1

cfg := data.shield.effects

# Forms of cfg's lists computed when the bundle loads (policy/regoeval/derive.go): one built-in
# call answers what a loop over the list would, e.g. cfg_under.read_roots is read_roots with one
# trailing "/" trimmed and "/" appended (see under_any), cfg_contains.user_cache_dirs one
# pattern matching any string that contains an element. Edit the lists, never these.
cfg_under := data.shield_derived.under.shield.effects

cfg_contains := data.shield_derived.contains.shield.effects

cfg_match := data.shield_derived.match.shield.effects

# ---------------------------------------------------------------------------------------------
# Envelope helpers

under(p, root) if p == root

under(p, root) if startswith(p, concat("", [trim_suffix(root, "/"), "/"]))

# under(p, root) for some root of roots, in one or two built-in calls: prefixes is the roots'
# derived "under" form (cfg_under).
under_any(p, roots, _) if p in roots

under_any(p, _, prefixes) if strings.any_prefix_match(p, prefixes)

protected_path(p) if {
	under_any(p, cfg.protected_paths, cfg_under.protected_paths)
}

user_cache(p) if {
	regex.match(cfg_contains.user_cache_dirs, p)
}

readable(e) if e.in_workspace

# A read of something that is not a file path (a crontab listing, a registry's metadata).
readable(e) if not startswith(e.target, "/")

readable(e) if {
	under_any(e.target, cfg.read_roots, cfg_under.read_roots)
}

readable(e) if user_cache(e.target)

# A key read only to be loaded into the local ssh agent (judged by its agent_load secret effect).
readable(e) if {
	some x in input.effects
	x.kind == "secret"
	x.detail == "agent_load"
	x.target == e.target
}

# Listing a home directory itself (not what is in it).
readable(e) if {
	regex.match(cfg_match.read_exact_patterns, e.target)
}

writable(e) if e.in_workspace

writable(e) if {
	under_any(e.target, cfg.write_roots, cfg_under.write_roots)
}

writable(e) if user_cache(e.target)

# The host of a connect target ("host:port", "[v6]:port" or "host").
effect_host(t) := h if {
	startswith(t, "[")
	h := trim_prefix(split(t, "]")[0], "[")
} else := h if {
	parts := split(t, ":")
	count(parts) == 2
	h := parts[0]
} else := t

loopback_host(h) if h in {"localhost", "127.0.0.1", "::1", "0.0.0.0", "ip6-localhost"}

loopback_host(h) if startswith(h, "127.")

loopback_host(h) if endswith(h, ".localhost")

egress_allowed(e) if {
	cfg.egress_loopback
	loopback_host(effect_host(e.target))
}

egress_allowed(e) if host_in_list(effect_host(e.target), cfg.egress_hosts)

egress_allowed(e) if cfg.egress_hosts[effect_host(e.target)]

# An effect inside the envelope. A sensitive path that is no secret (sshd_config, /etc/passwd, a
# crontab) may be read; reading a secret is a secret effect, judged on its own.
inside(e) if {
	e.kind in {"read"}
	readable(e)
	not secret_target(e.target)
}

secret_target(t) if {
	some x in input.effects
	x.kind == "secret"
	x.detail != "agent_load"
	x.target == t
}

# A private key loaded into the local ssh agent (ssh-add KEY): the key goes to the agent, not to
# the caller; inside while nothing in the call leaves the host (with anything leaving,
# effects.secret-egress judges it).
inside(e) if {
	e.kind == "secret"
	e.detail == "agent_load"
	not anything_leaves
}

anything_leaves if {
	some o in input.effects
	leaves_host(o)
}

# Writes in the workspace, sensitive or not: what runs later (hooks, editor tasks) is judged by its
# own persistence effect.
inside(e) if {
	e.kind in {"write", "delete"}
	e.in_workspace
}

inside(e) if {
	e.kind in {"write", "delete"}
	not e.sensitive
	writable(e)
}

# Code whose effects are known: a shell script the walker parsed (its commands have their own
# effects), awk/jq programs that start nothing, a script file of the workspace not written in
# this call, a build, a module or package the effects engine modelled. Inline code of other
# interpreters (python -c, node -e), code from stdin or a download, and anything run on
# another host or container is not known.
inside(e) if {
	e.kind == "exec"
	not e.unresolved
	object.get(e, "remote", "") == ""
	cfg.walked_code_programs[e.target]
	not e.detail in {"stdin", "file"}
	not startswith(e.detail, "<(")
	not startswith(e.detail, "/dev/fd/")
	not regex.match(`system\s*\(|\|\s*getline|\|&`, e.detail)
}

# Inline interpreter code the normaliser analysed against the bundle's allow list (inline.yaml,
# shield/normalize/inline_code.go): confined when every import, name, member and method it uses
# is allow-listed and nothing is reached dynamically; its effects are those the engine read from
# it (the paths it reads, the URLs it names). Capable code (e.inline "capable: why") is outside.
inside(e) if {
	e.kind == "exec"
	not e.unresolved
	object.get(e, "remote", "") == ""
	object.get(e, "inline", "") == "confined"
}

# Code of programs the allow list does not cover (SQL clients, a tool's fixed effect): no
# capability the lexical check below sees.
inside(e) if {
	e.kind == "exec"
	not e.unresolved
	object.get(e, "remote", "") == ""
	object.get(e, "inline", "") == ""
	not e.detail in {"stdin", "file", ""}
	not startswith(e.detail, "/")
	not inline_code_capable(e.detail)
}

inline_code_capable(code) if contains(code, "\u0060") # Ruby/Perl/shell backticks run a command

inline_code_capable(code) if regex.match(`(?i)\b(os\.(system|popen|exec|spawn|remove|unlink|rmdir|fork|kill|chmod|environ)|subprocess|pty|socket|urllib|requests|httpx|http\.client|aiohttp|ftplib|smtplib|telnetlib|paramiko|exec\s*\(|eval\s*\(|compile\s*\(|__import__|importlib|ctypes|marshal|pickle|shutil|pathlib|open\s*\([^)]*['"][wax+]|write(file|_text|_bytes)?\s*\(|child_process|spawn|execSync|require\s*\(\s*['"](https?|net|tls|dgram|fs|child_process|vm)['"]|fetch\s*\(|XMLHttpRequest|system\s*\(|IO::Socket|LWP|Net::|open3|%x|Kernel\.|Open3|File\.(write|delete|open)|IO\.popen|Process\.(spawn|kill|exec|fork|daemon|detach|setuid|setgid|setsid|binding|dlopen|chdir|abort)|Runtime\.getRuntime|ProcessBuilder|unlink|rmtree|chmod|chown|setuid|getenv|ENV\[|process\.env|\$_ENV)`, code)

inside(e) if {
	e.kind == "exec"
	not e.unresolved
	object.get(e, "remote", "") == ""
	e.detail == "file"
	e.in_workspace
	not e.sensitive
	not written_here(e.target)
}

inside(e) if {
	e.kind == "exec"
	not e.unresolved
	object.get(e, "remote", "") == ""
	strings.any_prefix_match(e.detail, cfg.known_exec_details)
}

written_here(p) if {
	some w in input.effects
	w.kind == "write"
	w.target == p
	not mode_only_write(w) # workspace_mode.rego
}

inside(e) if {
	e.kind == "connect"
	not e.sensitive
	egress_allowed(e)
}

# A plain connection: nothing of this host flows into it, the call reads no secret and installs
# nothing, and the host is no metadata, link-local or unparsable address. Only the request itself
# (a URL, a port probe, a TLS handshake) leaves; what comes back is judged where it goes (a
# write, an exec). Exfiltration is data flowing into a connection (effects.secret-egress,
# exec.outside-envelope on a connect with a flow in); internal admin services are judged by
# net.internal-service.
inside(e) if {
	e.kind == "connect"
	not flows_into(e)
	not reads_secret
	not installs
	not dangerous_host(effect_host(e.target))
}

installs if {
	some x in input.effects
	x.kind == "install"
}

dangerous_host(h) if {
	some u in input.urls
	u.host == h
	u.ip_class in {"metadata", "link_local", "invalid"}
}

flows_into(e) if {
	some f in input.flows
	input.effects[f.to] == e
}

reads_secret if {
	some x in input.effects
	x.kind == "secret"
	x.detail != "request"
}

# A secret-named environment variable carried in a request (a header, the user agent, the URL):
# inside when every host the call connects to is allowed egress (a token sent to the API it
# authenticates); effects.secret-in-request judges the rest.
inside(e) if {
	e.kind == "secret"
	e.detail == "request"
	not connects_beyond_egress
}

connects_beyond_egress if {
	some o in input.effects
	o.kind == "connect"
	not egress_allowed(o)
}

inside(e) if {
	e.kind == "listen"
}

inside(e) if {
	e.kind == "install"
	not e.detail == "verification_off"
	not install_off_registry(e)
}

inside(e) if {
	e.kind == "push"
	cfg.own_remotes[e.target]
	not push_rewrites(e)
}

fully_known if {
	count(input.unresolved) == 0
	unknown_programs_confined
	not input.truncated
	input.parse_error == ""
}

# A program without a spec has unknown effects; it may still run without review when nothing it
# is given reaches outside the workspace: every path it names is in the workspace (or a read root,
# not sensitive) and it names no URL or host beyond loopback and the configured egress.
unknown_programs_confined if count(input.unknown_programs) == 0

unknown_programs_confined if {
	count(input.unknown_programs) > 0
	not unknown_program_dynamic
	every p in input.paths {
		confined_path(p)
	}
	every u in input.urls {
		confined_url(u)
	}
	not unknown_program_connects_out
}

# A host an unknown program's operands name (a bare host, HOST:PORT, a connection string or URI,
# a host option's value: shield/normalize/unknown_operands.go) beyond loopback and the egress.
unknown_program_connects_out if {
	some e in input.effects
	e.kind == "connect"
	e.program in input.unknown_programs
	not egress_allowed(e)
}

# An unknown program given an expansion ($db, $(…)) may be handed anything.
# (A glob of relative names expands to workspace files only and is no expansion here.)
unknown_program_dynamic if {
	some u in input.unknown_programs
	some c in input.commands
	c.name == split(u, " ")[0]
	some a in array.concat([c.name], c.args)
	regex.match("[$`]|^<\\(", a)
}

confined_path(p) if p.in_workspace

confined_path(p) if {
	not p.sensitive
	under_any(p.clean, cfg.read_roots, cfg_under.read_roots)
	p.role in {"read", "arg", "list"}
}

confined_url(u) if u.role == "text"

confined_url(u) if u.ip_class == "loopback"

confined_url(u) if host_in_list(u.host, cfg.egress_hosts)

# ---------------------------------------------------------------------------------------------
# Positive security for exec

allow contains finding("exec.known-effects", "every effect of the command is known and inside the workspace and allowed egress") if {
	input.class == "exec"
	fully_known
	every e in input.effects {
		not e.unresolved
		inside(e)
	}
}

escalate contains finding("exec.outside-envelope", sprintf("the command %s %s, outside the workspace and the allowed egress", [e.kind, e.target])) if {
	input.class == "exec"
	some e in input.effects
	not inside(e)
	not e.kind in {"secret", "persistence", "privilege", "escape"} # judged by the rules below
}

escalate contains finding("exec.unknown-effects", "the command runs programs or uses operands whose effects are unknown") if {
	input.class == "exec"
	count(input.effects) > 0
	not fully_known
}

# A command run in a local container (docker exec, kubectl exec): its text is judged like inline
# code; nothing it names may reach the network.
inside(e) if {
	e.kind == "exec"
	not e.unresolved
	startswith(object.get(e, "remote", ""), "container:")
	not inline_code_capable(e.detail)
	not regex.match(`://|@-|/dev/(tcp|udp)|\b(curl|wget|nc|ncat|netcat|socat|ssh|scp|rsync|ftp|telnet|pg_dumpall|mysqldump|mongodump)\b`, e.detail)
}

# ---------------------------------------------------------------------------------------------
# Effects judged for every call, whatever the tool

deny contains finding("effects.protected-path", sprintf("touches %s, which belongs to the appliance (state, keys or audit trail)", [e.target])) if {
	some e in input.effects
	e.kind in {"read", "write", "delete", "exec", "secret", "persistence"}
	protected_path(e.target)
}

deny contains finding("effects.escape", sprintf("reaches out of its container (%s %s)", [e.detail, e.target])) if {
	some e in input.effects
	e.kind == "escape"
	not e.detail == "host_mount"
}

# A host directory mounted into a container: the host's system, users' homes, the container
# runtime or the appliance are an escape; a data or project directory is reviewed.
deny contains finding("effects.escape", sprintf("mounts %s of the host into a container", [e.target])) if {
	some e in input.effects
	e.kind == "escape"
	e.detail == "host_mount"
	some root in cfg.escape_block_mounts
	mount_hits(e.target, root)
}

mount_hits(t, root) if t == root

mount_hits(t, root) if {
	root != "/"
	under(t, root)
}

escalate contains finding("effects.host-mount", sprintf("mounts %s of the host into a container", [e.target])) if {
	some e in input.effects
	e.kind == "escape"
	e.detail == "host_mount"
	not e.in_workspace
}

deny contains finding("effects.persistence", sprintf("plants code that runs later (%s: %s)", [e.detail, e.target])) if {
	some e in input.effects
	e.kind == "persistence"
	not e.in_workspace
}

escalate contains finding("effects.persistence-in-workspace", sprintf("changes %s, which runs code later", [e.target])) if {
	some e in input.effects
	e.kind == "persistence"
	e.in_workspace
	not own_hooks_dir(e) # workspace_code.rego
}

deny contains finding("effects.privilege", sprintf("changes privileges (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "privilege"
	input.class != "exec" # the shell rules judge sudo and friends
	e.detail != "claimed" # an approval free text claims: request_targets.rego escalates
	e.detail != "approval requested" # an approval asked of someone else: requests.rego escalates
	not e.detail in request_act_details # acts asked of others: request_acts.rego judges them
}

# Exfiltration: a secret read, requested or carried, together with anything leaving the host.
leaves_host(e) if {
	e.kind == "connect"
	not loopback_host(effect_host(e.target))
}

leaves_host(e) if e.kind in {"send", "push"}

deny contains finding("effects.secret-egress", sprintf("a secret (%s) and data leaving the host (%s %s) in one call", [s.target, o.kind, o.target])) if {
	some s in input.effects
	s.kind == "secret"
	not s.detail in {"session", "request"}
	some o in input.effects
	leaves_host(o)
}

# A secret-named environment variable in any part of a request (header, user agent, form field,
# URL, body) sent to a host outside the allowed egress: exfiltration whatever the argument.
# A database client's statement that destroys data (DROP, TRUNCATE, DELETE/UPDATE without WHERE,
# FLUSHALL, dropDatabase) against a database that is not a workspace file or on this host: a
# destructive effect on shared data, whatever the client. Against a local server it stays outside
# the envelope (a human decides).
deny contains finding("effects.database-destroy", sprintf("%s on %s", [e.detail, e.target])) if {
	some e in input.effects
	e.kind == "delete"
	startswith(e.detail, "database ")
	not e.in_workspace
	not loopback_host(trim_prefix(e.target, "database:"))
	e.target != "database:(default)" # a client without a spec and no host named: outside, a human decides
}

deny contains finding("effects.secret-in-request", sprintf("sends %s to %s, outside the allowed egress", [s.target, o.target])) if {
	some s in input.effects
	s.kind == "secret"
	s.detail == "request"
	some o in input.effects
	o.kind == "connect"
	not egress_allowed(o)
}

# Session context (shield/normalize/sessions.go): a secret read by an earlier allowed call of the
# session makes anything this call sends off the host, beyond the configured egress (registries,
# the repository's own remotes), a possible carrier of it.
escalate contains finding("effects.session-secret-egress", sprintf("a secret read earlier in this session (%s) and data leaving the host (%s %s)", [s.target, o.kind, o.target])) if {
	some s in input.effects
	s.kind == "secret"
	s.detail == "session"
	some o in input.effects
	session_sink(o)
}

session_sink(o) if {
	o.kind == "connect"
	not loopback_host(effect_host(o.target))
	not egress_allowed(o)
}

session_sink(o) if o.kind == "send"

session_sink(o) if {
	o.kind == "push"
	not cfg.own_remotes[o.target]
}

# A credential sent to the service it authenticates (a token in a header to the API) is no
# effect: headers are not a body. Only a secret carried in the body or read from a file counts.

# Calls whose text another agent acts on: sub-agents, schedules, memories, messages, and what a
# file tool writes to an agent instruction file (shield.rego agent_instruction_file).
requested_class if input.class in {"agent_spawn", "schedule", "memory_write", "message_send"}

requested_class if {
	input.class == "file_write"
	some p in input.paths
	p.role in {"write", "dest"}
	agent_instruction_file(p.clean)
}

deny contains finding("effects.requested-secret", sprintf("asks another agent, a schedule or a memory for a secret (%s)", [e.target])) if {
	requested_class
	some e in input.effects
	e.kind == "secret"
	not e.detail in {"content", "session"}
}

deny contains finding("effects.requested-delete", sprintf("asks another agent to delete %s, outside the workspace", [e.target])) if {
	requested_class
	some e in input.effects
	e.kind == "delete"
	not e.in_workspace
}

deny contains finding("effects.secret-search", sprintf("searches for secrets (%s)", [e.target])) if {
	input.class in {"file_search", "file_list"}
	some e in input.effects
	e.kind == "secret"
	e.detail != "session"
	not e.in_workspace
}

deny contains finding("effects.secret-read", sprintf("reads a secret (%s: %s)", [e.detail, e.target])) if {
	input.class in {"file_read", "file_move", "code_exec"}
	some e in input.effects
	e.kind == "secret"
	e.detail != "session"
	not e.in_workspace
}

deny contains finding("effects.delete-outside-workspace", sprintf("deletes %s, outside the workspace", [e.target])) if {
	input.class != "exec" # until the shell engine's effects land, the destructive.* rules judge commands
	some e in input.effects
	e.kind == "delete"
	startswith(e.target, "/") # a file; an MCP tool's own destructiveHint ("mcp:TOOL") is escalated below
	not e.in_workspace
	not scratch_delete(e.target)
}

scratch_delete(p) if {
	some root in cfg.scratch_delete_roots
	startswith(p, concat("", [root, "/"]))
}

deny contains finding("effects.connect-metadata", sprintf("connects to %s, a cloud metadata or link-local address", [e.target])) if {
	some e in input.effects
	e.kind == "connect"
	some u in input.urls
	u.role != "text"
	u.ip_class in {"metadata", "link_local"}
}

escalate contains finding("effects.remote-delete", sprintf("a DELETE request to %s", [u.host])) if {
	input.method == "DELETE"
	some u in input.urls
	u.role == "request"
	not u.ip_class == "loopback"
}

# Pushes: rewriting history, deleting or merging (escalate; on a protected branch, block), pushing
# where the repo does not live. A plain push to one of the repo's own remotes is ordinary work,
# whatever the branch: branch protection is the forge's job.
push_rewrites(e) if {
	some d in split(e.detail, ",")
	d in {"force", "delete", "mirror", "merge", "fork"}
}

# A lease or deletion confined to feature branches (shield/normalize/push_own_branch.go) is no
# rewrite of shared history, unless the bundle lists one of its branches as protected.
push_rewrites(e) if {
	some d in split(e.detail, ",")
	d in {"lease", "delete-own"}
	push_to_protected(e)
}

push_to_protected(e) if {
	some d in split(e.detail, ",")
	startswith(d, "branch=")
	cfg.protected_branches[trim_prefix(d, "branch=")]
}

push_to_protected(e) if {
	some d in split(e.detail, ",")
	startswith(d, "ref=")
	ref := trim_prefix(trim_prefix(d, "ref="), "+")
	parts := split(ref, ":")
	dst := trim_prefix(parts[count(parts) - 1], "refs/heads/")
	cfg.protected_branches[dst]
}

escalate contains finding("effects.push-rewrite", sprintf("%s push to %s", [e.detail, e.target])) if {
	some e in input.effects
	e.kind == "push"
	push_rewrites(e)
}

deny contains finding("effects.push-protected", sprintf("rewrites or deletes a protected branch of %s", [e.target])) if {
	some e in input.effects
	e.kind == "push"
	push_rewrites(e)
	push_to_protected(e)
}

escalate contains finding("effects.commit-to-protected", sprintf("commits directly to a protected branch of %s", [e.target])) if {
	some e in input.effects
	e.kind == "push"
	"commit" in split(e.detail, ",")
	push_to_protected(e)
}

escalate contains finding("effects.push-foreign-remote", sprintf("pushes to %s, not one of the repository's own remotes", [e.target])) if {
	input.class == "vcs_push"
	some e in input.effects
	e.kind == "push"
	contains(e.target, "://")
}

# Installs from anything but a registry (a URL, a git repository, a local archive).
install_off_registry(e) if {
	not package_setting(e)
	contains(e.target, "://")
}

install_off_registry(e) if {
	not package_setting(e)
	startswith(e.target, "git+")
}

install_off_registry(e) if {
	not package_setting(e)
	endswith(e.target, ".tar.gz")
}

install_off_registry(e) if {
	not package_setting(e)
	endswith(e.target, ".whl")
}

# Package sources set by an option, the environment or a configuration command
# (shield/normalize/package_sources.go): a registry, index, proxy or mirror is allowed when its
# host is configured egress (the default registries); any other (another URL, a named registry
# configured elsewhere, an unresolved value) is code from outside.
package_setting(e) if e.detail in {"package_source", "verification_off"}

# A container image is judged by its registry and namespace (rego/ops_supply.rego).
package_setting(e) if e.detail == "container_image"

install_off_registry(e) if {
	e.detail == "package_source"
	not source_allowed(e.target)
}

source_allowed(t) if {
	m := regex.find_all_string_submatch_n(`^[a-z][a-z0-9+.-]*://(?:[^/@]*@)?(\[[^\]]*\]|[^/:?#]+)`, lower(t), 1)
	count(m) == 1
	h := trim_suffix(trim_prefix(m[0][1], "["), "]")
	source_host_allowed(h)
}

source_host_allowed(h) if host_in_list(h, cfg.egress_hosts)

source_host_allowed(h) if cfg.egress_hosts[h]

source_host_allowed(h) if {
	cfg.egress_loopback
	loopback_host(h)
}

# Checksum, signature or TLS verification turned off (GOSUMDB=off, --trusted-host,
# strict-ssl=false, protocol.file.allow=always): whatever is fetched is not checked.
escalate contains finding("effects.verification-off", sprintf("turns package or transport verification off (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "verification_off"
}

# Verification off and a source outside the allowed egress in one call: unverified code from
# outside.
deny contains finding("effects.unverified-foreign-source", sprintf("fetches code from %s with verification off (%s)", [s.target, v.target])) if {
	some v in input.effects
	v.kind == "install"
	v.detail == "verification_off"
	some s in input.effects
	s.kind == "install"
	s.detail == "package_source"
	not source_allowed(s.target)
}

# A module path names the host its code comes from (go install host/path@v): that host must be
# configured egress.
install_off_registry(e) if {
	not package_setting(e)
	not contains(e.target, "://")
	first := split(e.target, "/")[0]
	contains(first, ".")
	count(split(e.target, "/")) > 1
	not host_in_list(first, cfg.egress_hosts)
	not cfg.egress_hosts[first]
}

escalate contains finding("effects.install-off-registry", sprintf("installs %s from outside a package registry", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	install_off_registry(e)
}

# Code that arrives over the network and runs: a connection whose bytes flow into an exec, or a
# file written and run in the same call while the call downloads.
deny contains finding("effects.exec-downloaded", "runs code it downloads") if {
	some f in input.flows
	input.effects[f.from].kind == "connect"
	input.effects[f.to].kind == "exec"
}

deny contains finding("effects.exec-downloaded", "runs a file it downloads") if {
	some w in input.effects
	w.kind == "write"
	some x in input.effects
	x.kind == "exec"
	x.target == w.target
	some c in input.effects
	c.kind == "connect"
	not loopback_host(effect_host(c.target))
}

# ---------------------------------------------------------------------------------------------
# MCP tools the catalog does not know, by their annotations. A proxy in front of an MCP server
# passes a tool's annotations as call labels "mcp.readOnlyHint", "mcp.destructiveHint",
# "mcp.openWorldHint" ("true"/"false"); the normaliser turns them into unresolved effects
# (shield/normalize/tools_annotations.go: delete or write "mcp:TOOL", connect "(open world)",
# with the MCP defaults for hints not given), so the effect rules judge them like any other
# (a secret read by an open-world tool is secret egress). Annotations are the server's word, not
# a proof: they only ever allow a tool that says it reads, changes nothing and reaches no open
# world, and only when every effect the normaliser found in its arguments is a read of the
# workspace.

mcp_label(name) := object.get(object.get(object.get(input, "context", {}), "labels", {}), concat("", ["mcp.", name]), "")

allow contains finding("mcp.read-only-annotated", "an MCP tool annotated read-only and closed-world, reading only the workspace") if {
	input.class == "unknown"
	mcp_label("readOnlyHint") == "true"
	mcp_label("destructiveHint") != "true"
	mcp_label("openWorldHint") == "false"
	count(input.urls) == 0
	every e in input.effects {
		e.kind == "read"
		e.in_workspace
		not e.sensitive
	}
}

escalate contains finding("mcp.destructive-annotated", "an MCP tool annotated destructive needs a human") if {
	input.class == "unknown"
	mcp_label("destructiveHint") == "true"
}
