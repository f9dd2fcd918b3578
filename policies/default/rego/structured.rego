# Tier 1: the data of structured tools (shield/normalize/tools_data.go, sqlscan.go) and the
# forge, cloud and copy effects of commands (commands/forge.spec, shield/normalize/effects_forge.go).
#
# - SQL a database tool or client runs that changes privileges (GRANT ALL, a role granted, CREATE
#   USER, ALTER ROLE … SUPERUSER, row security or triggers turned off) or reaches files, programs or
#   the network from the database server (COPY … PROGRAM, pg_read_file, INTO OUTFILE, xp_cmdshell);
#   destroying statements are judged by effects.database-destroy.
# - A browser pointed at its own internals or at a local file (view-source:, chrome://, file:,
#   javascript:, data:).
# - A secret file moved or copied into a directory a web server or a build publishes (a move
#   tool's source, cp/mv/install in a shell: a secret read and a write there in one call).
# - A settings change that lowers a protection: permission modes, the appliance, the sandbox,
#   hooks; a role granted to someone.
# - Internal admin endpoints reached by a request or a command: script consoles, secrets and
#   role endpoints of a cluster API, the cluster's API server itself, names of DNS-rebinding
#   services that resolve to whatever address their labels spell.
package shield

import rego.v1

deny contains finding("structured.database-privilege", sprintf("%s on %s", [trim_prefix(e.detail, "database "), e.target])) if {
	some e in input.effects
	e.kind == "privilege"
	startswith(e.detail, "database ")
}

deny contains finding("structured.database-server-access", sprintf("%s reaches files or programs of the database server %s", [trim_prefix(e.detail, "database "), e.target])) if {
	some e in input.effects
	e.kind == "exec"
	startswith(e.detail, "database ")
	not startswith(e.detail, "database dynamic SQL")
}

# SQL text built at run time (EXEC(@q), EXECUTE format(…, var)): what it runs cannot be read.
escalate contains finding("structured.database-dynamic-sql", sprintf("runs SQL built at run time on %s", [e.target])) if {
	some e in input.effects
	e.kind == "exec"
	startswith(e.detail, "database dynamic SQL")
}

# ---- browsers

browser_internal_schemes := {"view-source", "chrome", "chrome-extension", "chrome-untrusted", "devtools", "about",
	"edge", "brave", "opera", "vivaldi", "moz-extension", "resource", "javascript", "data", "blob", "filesystem"}

deny contains finding("structured.browser-scheme", sprintf("opens %s in a browser (%s:)", [u.raw, u.scheme])) if {
	input.class in {"browser", "net_request"}
	some u in input.urls
	u.role != "text"
	lower(u.scheme) in browser_internal_schemes
	not about_blank(u)
}

about_blank(u) if lower(u.raw) in {"about:blank", "about:newtab"}

# A local file opened in a browser outside the workspace (the workspace's own pages are ordinary).
escalate contains finding("structured.browser-local-file", sprintf("opens the local file %s in a browser", [u.raw])) if {
	input.class in {"browser", "net_request"}
	some u in input.urls
	u.role != "text"
	lower(u.scheme) == "file"
	not startswith(u.path, concat("", [trim_suffix(input.workspace, "/"), "/"]))
}

# ---- secret files published

published_dir_re := `/(public|static|www|wwwroot|htdocs|html|dist|build|out|_site|site|assets|uploads|media|docs|web|served|pub)(/|$)`

deny contains finding("structured.secret-published", sprintf("puts the secret %s into %s, where it is served or published", [sec.target, w.target])) if {
	some sec in input.effects
	sec.kind == "secret"
	startswith(sec.target, "/")
	not sec.detail in {"session", "request", "content", "agent_load"}
	some w in input.effects
	w.kind == "write"
	regex.match(published_dir_re, w.target)
	not regex.match(published_dir_re, sec.target) # already there
}

# ---- settings that lower a protection

protection_key_re := `(?i)(permission|defaultmode|approval|sandbox|shield|guard|hook|safety|safe_?mode|security|audit|confirm|allow(ed)?_?(tools|commands|all)|auto_?approve|trust|yolo|firewall|policy|protect|review|restrict)`

lowering_values := {"acceptedits", "bypasspermissions", "dontask", "dangerously-skip-permissions", "danger-full-access",
	"full-auto", "auto", "never", "yolo", "off", "false", "disabled", "disable", "none", "no", "0", "*", "allow_all",
	"allow-all", "full_access", "unrestricted", "permissive", "trusted", "all"}

setting_key(a) := k if {
	some name in ["key", "setting", "name", "path", "option", "field"]
	k := a[name]
	is_string(k)
}

setting_value(a) := lower(format_int(a.value, 10)) if is_number(a.value)

else := lower(sprintf("%v", [a.value])) if not is_number(a.value)

escalate contains finding("structured.setting-lowers-protection", sprintf("sets %s to %v, lowering a protection", [k, input.args.value])) if {
	input.class == "config_change"
	k := setting_key(input.args)
	regex.match(protection_key_re, k)
	setting_value(input.args) in lowering_values
}

deny contains finding("structured.appliance-disabled", sprintf("turns off %s", [k])) if {
	input.class == "config_change"
	k := setting_key(input.args)
	regex.match(`(?i)(^|[._-])(shield|sandbox|hooks?|audit|landlock|seccomp)([._-]|$)`, k)
	setting_value(input.args) in {"false", "off", "disabled", "disable", "0", "no", "none"}
}

elevated_roles := {"admin", "administrator", "owner", "maintainer", "maintain", "write", "push", "developer",
	"editor", "superuser", "root", "collaborator", "manager", "contributor"}

escalate contains finding("structured.role-granted", sprintf("gives %v the role %v", [object.get(input.args, "user", object.get(input.args, "member", "?")), input.args.role])) if {
	input.class == "config_change"
	is_string(input.args.role)
	some r in elevated_roles
	contains(lower(input.args.role), r)
}

# ---- internal admin endpoints and rebinding names

admin_path_re := `(?i)/(scriptText|script|manage/script|computer/[^/]+/script|jmx-console|manager/html|v2/keys)(/|$)|/api/v1/(namespaces/[^/]+/)?secrets(/|$)|/apis/rbac[^/]*/|/actuator/(env|heapdump|shutdown|jolokia|gateway|restart|loggers)(/|$)|/v1/sys/(seal|unseal|policy|policies|auth|mounts|raw|generate-root|rekey)`

# The cluster's own API server, by the names a pod resolves it by.
cluster_host_re := `^kubernetes(\.default(\.svc(\.cluster\.local)?)?)?\.?$`

rebinding_re := `(^|\.)(rbndr\.us|1u\.ms|rebind\.it|rebind\.network|lock\.cmpxchg8b\.com|nip\.io|sslip\.io|xip\.io|traefik\.me|localtest\.me|lvh\.me|vcap\.me|lacolhost\.com|localh\.st)$`

deny contains finding("structured.internal-admin", sprintf("reaches the admin endpoint %s%s on an internal host", [u.host, u.path])) if {
	some u in input.urls
	u.role != "text"
	internal_url(u)
	regex.match(admin_path_re, u.path)
}

deny contains finding("structured.cluster-api", sprintf("reaches the cluster's API server %s", [u.host])) if {
	some u in input.urls
	u.role != "text"
	regex.match(cluster_host_re, lower(u.host))
}

deny contains finding("structured.dns-rebinding", sprintf("%s is a name that resolves to whatever address its labels spell (DNS rebinding)", [u.host])) if {
	some u in input.urls
	u.role != "text"
	regex.match(rebinding_re, lower(u.host))
	not regex.match(`(^|[.-])(127[.-]0[.-]0[.-]1|7f000001)([.-]|$)`, lower(u.host)) # plain loopback dev names
}

deny contains finding("structured.dns-rebinding", sprintf("%s alternates loopback with another address (DNS rebinding)", [u.host])) if {
	some u in input.urls
	u.role != "text"
	regex.match(`(^|\.)(rbndr\.us|1u\.ms|rebind\.it|rebind\.network)$`, lower(u.host))
}

internal_url(u) if u.ip_class in {"private", "loopback", "link_local", "metadata"}

internal_url(u) if regex.match(`(?i)(\.internal|\.local|\.lan|\.corp|\.intra(net)?|\.svc|\.cluster\.local|\.home\.arpa|^localhost)$`, u.host)

internal_url(u) if {
	u.ip_class == "hostname"
	not contains(u.host, ".")
}

# ---- forge CLIs (commands/forge.spec, shield/normalize/effects_forge.go)

deny contains finding("structured.forge-privilege", sprintf("changes who may do what on the forge (%s %s)", [e.detail, trim_prefix(e.target, "forge:")])) if {
	some e in input.effects
	e.kind == "privilege"
	startswith(e.target, "forge:")
}

# ---- cloud CLIs (shield/normalize/effects_upload.go)

deny contains finding("structured.cloud-privilege", sprintf("changes cloud privileges (%s)", [e.detail])) if {
	some e in input.effects
	e.kind == "privilege"
	startswith(e.target, "cloud:")
}
