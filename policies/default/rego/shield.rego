# Tier 1 of the default bundle: rules that need data lists or relate several parts of a call
# (what a command line reads and where it sends it, who a message goes to, what a sub-agent is
# told). Input: the normalised action (see shield/normalize/action.go) plus input.context.
#
# Output contract (policy/regoeval): data.shield.decision = {"deny": set, "escalate": set,
# "allow": set}, each element {"rule": id, "reason": text safe to show the agent}.
package shield

import rego.v1

decision := {"deny": deny, "escalate": escalate, "allow": allow}

finding(id, reason) := {"rule": id, "reason": reason}

# ---------------------------------------------------------------------------------------------
# Helpers

command_names contains c.name if some c in input.commands

# The lists used for membership are objects in data.json ({"curl": true, …}): a lookup is one
# indexed reference, where `x in array` is a builtin call per element.
uses_network if {
	some name in command_names
	data.shield.lists.network_tools[name]
}

uses_network if {
	some c in input.commands
	some r in c.redirects
	dev_socket(r.path)
}

dev_socket(p) if startswith(p, "/dev/tcp/")

dev_socket(p) if startswith(p, "/dev/udp/")

reads_sensitive if {
	some p in input.paths
	p.sensitive
	not workspace_material(p)
}

# Keys and .env files the project keeps in its own tree (test certificates, dev keys) are the
# project's business; rules on dotenv files handle those separately.
workspace_material(p) if {
	p.in_workspace
	p.kind in {"private_key", "dotenv"}
}

uses_network if {
	some c in input.commands
	c.name == "openssl"
	some a in c.args
	a in {"s_client", "s_server"}
}

reads_dotenv if {
	some p in input.paths
	base := regex.replace(p.clean, `^.*/`, "")
	startswith(base, ".env")
	not dotenv_template(base)
}

dotenv_template(base) if regex.match(`\.(example|sample|template|dist|defaults)$`, base)

dumps_environment if {
	some name in command_names
	name in {"env", "printenv"}
}

# host_in_list: the host or one of its parent domains is a key of names (an object). Only names
# of two labels or more count: the host itself when it has a dot, then each parent domain that
# still has one.
host_in_list(host, names) if {
	contains(host, ".")
	names[host]
}

host_in_list(host, names) if {
	labels := split(host, ".")
	count(labels) > 2
	some i in numbers.range(1, count(labels) - 2)
	names[concat(".", array.slice(labels, i, count(labels)))]
}

exfil_host(u) if {
	u.ip_class == "hostname"
	host_in_list(u.host, data.shield.lists.exfil_domains)
}

uploads if input.method in {"POST", "PUT", "PATCH"}

uploads if {
	some c in input.commands
	c.name in {"curl", "wget", "http", "xh", "httpie"}
	some a in c.args
	upload_flag(a)
}

upload_flag(a) if a in {"-d", "-F", "-T", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--form", "--upload-file", "--post-data", "--post-file", "-X"}

upload_flag(a) if regex.match(`^(--data[a-z-]*|--form|--post-(data|file)|--upload-file)=`, a)

lower_strings contains lower(s) if some s in input.strings

secret_text(s) if regex.match(`-----BEGIN ([A-Z]+ )*PRIVATE KEY-----`, s)

secret_text(s) if regex.match(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`, s)

secret_text(s) if regex.match(`\b(hvs|hvb)\.[A-Za-z0-9_-]{10,}`, s)

secret_text(s) if regex.match(`\bgh[pousr]_[A-Za-z0-9]{20,}`, s)

secret_text(s) if regex.match(`\bxox[abprs]-[A-Za-z0-9-]{10,}`, s)

secret_text(s) if regex.match(`\bsk-(live-|proj-|ant-)?[A-Za-z0-9_-]{20,}`, s)

secret_text(s) if regex.match(`(?i)\b[A-Z0-9_]*(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY)[A-Z0-9_]*\s*[=:]\s*[^\s'"]{6,}`, s)

# Texts a message or request carries out of the host.
outbound_text contains input.body if input.body != ""

outbound_text contains input.content if {
	input.class in {"message_send", "net_request"}
	input.content != ""
}

outbound_text contains s if {
	input.class in {"message_send", "net_request"}
	some s in input.strings
}

# ---------------------------------------------------------------------------------------------
# Exfiltration

deny contains finding("exfil.secret-to-network", "the command reads credential files and sends data over the network") if {
	input.class == "exec"
	reads_sensitive
	uses_network
}

deny contains finding("exfil.dotenv-to-network", "the command reads a .env file and sends data over the network") if {
	input.class == "exec"
	reads_dotenv
	uses_network
}

deny contains finding("exfil.environment-to-network", "the command dumps environment variables to the network") if {
	input.class == "exec"
	dumps_environment
	uses_network
}

deny contains finding("exfil.substitution-into-request", "the command embeds the output of another command in a network request") if {
	input.class == "exec"
	some c in input.commands
	c.dynamic
	data.shield.lists.network_tools[c.name]
	some d in input.commands
	d.via == "subst"
	d.name in {"cat", "base64", "xxd", "od", "pwd", "whoami", "id", "hostname", "env", "printenv", "ls", "head", "tail", "uname", "gpg", "tar"}
}

deny contains finding("exfil.raw-socket", "the command writes to a raw /dev/tcp or /dev/udp socket") if {
	some c in input.commands
	some r in c.redirects
	dev_socket(r.path)
}

deny contains finding("exfil.upload-to-drop-site", sprintf("uploads data to %s, a paste, file-drop, webhook or tunnel service", [u.host])) if {
	some u in input.urls
	exfil_host(u)
	uploads
}

deny contains finding("exfil.encoded-data-in-url", sprintf("the URL to %s carries encoded secrets in its query", [u.host])) if {
	some u in input.urls
	u.ip_class in {"public", "hostname"}
	some tok in regex.find_n(`[A-Za-z0-9+/_-]{16,}={0,2}`, u.query, 8)
	decoded := base64.decode(tok)
	regex.match(`(?i)(token|passw|secret|api_?key|private key|aws_|vault)`, decoded)
}

escalate contains finding("exfil.drop-site", sprintf("%s is a paste, file-drop, webhook or tunnel service", [u.host])) if {
	some u in input.urls
	exfil_host(u)
	not uploads
}

deny contains finding("exfil.secret-in-message", "the message or request body contains a credential or private key") if {
	some s in outbound_text
	secret_text(s)
}

# ---------------------------------------------------------------------------------------------
# Messages

escalate contains finding("message.external-recipient", sprintf("e-mail to %s, outside the organisation, needs approval", [r])) if {
	input.class == "message_send"
	some r in input.recipients
	contains(r, "@")
	domain := lower(regex.replace(r, `^.*@`, ""))
	not host_in_list(domain, data.shield.lists.internal_email_domains)
	not undeliverable_outside(domain) # org_domains.rego
}

# ---------------------------------------------------------------------------------------------
# Sub-agents, schedules and agent instruction files

agent_text contains lower(input.prompt) if input.prompt != ""

agent_text contains s if {
	input.class in {"agent_spawn", "schedule", "memory_write"}
	some s in lower_strings
}

agent_text contains lower(input.content) if {
	some p in input.paths
	p.role in {"write", "dest"}
	agent_instruction_file(p.clean)
}

agent_instruction_file(path) if {
	regex.match(data.shield_derived.contains.shield.lists.agent_instruction_files, path)
}

deny contains finding("agent.safety-bypass", "the instructions tell an agent to drop its safety controls or hide what it does") if {
	some t in agent_text
	regex.match(data.shield_derived.contains.shield.lists.safety_bypass_phrases, t) # one of the phrases
}

deny contains finding("agent.instructions-run-downloads", "writes agent instructions that download and run code") if {
	some t in agent_text
	regex.match(`(curl|wget|iwr|invoke-webrequest)[^|\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b`, t)
}

escalate contains finding("agent.injection-marker", "an argument carries a prompt-injection phrase") if {
	not input.class in {"agent_spawn", "schedule", "memory_write"}
	some s in lower_strings
	regex.match(`ignore previous instructions|ignore all previous instructions|disregard previous instructions|you are now in developer mode`, s) # contains one
}

# ---------------------------------------------------------------------------------------------
# Reconnaissance

deny contains finding("recon.network-scan", sprintf("%s scans networks", [c.name])) if {
	some c in input.commands
	data.shield.lists.scanners[c.name]
	not scan_of_loopback_only(c.name)
}

# Recon of loopback (shield/normalize/loopback_scans.go): every run of the scanner in the call is
# confined to this host's loopback addresses, which is local development.
scan_of_loopback_only(name) if {
	some e in input.effects
	e.program == name
	e.detail == "network_scan,loopback"
	not e.unresolved
	not scan_elsewhere(name)
	count([c | some c in input.commands; c.name == name]) == 1
}

scan_elsewhere(name) if {
	some e in input.effects
	e.program == name
	e.kind == "read"
	e.detail == "network_scan"
}

scan_elsewhere(name) if {
	some e in input.effects
	e.program == name
	e.kind == "connect"
	not loopback_host(e.target)
}

deny contains finding("recon.address-sweep", "the command probes a range of addresses in a loop") if {
	some c in input.commands
	c.name in {"ping", "fping", "nc", "ncat", "netcat", "telnet", "curl", "wget", "ssh", "host", "dig", "nmap", "arping"}
	some a in c.args
	regex.match(`^([0-9]{1,3}\.){2,3}\$`, a)
}

deny contains finding("recon.port-sweep", "the command probes many hosts or ports in a loop") if {
	some c in input.commands
	c.name in {"nc", "ncat", "netcat"}
	c.dynamic
	some a in c.args
	regex.match(`^-[a-zA-Z]*z`, a)
}

# ---------------------------------------------------------------------------------------------
# Remote code in ML tooling

escalate contains finding("supply-chain.trust-remote-code", "enables running code shipped with a remote model or dataset") if {
	some s in input.strings
	regex.match(`(?i)(trust_remote_code\s*=\s*true|--trust-remote-code\b|HF_DATASETS_TRUST_REMOTE_CODE\s*=\s*(1|true|yes))`, s)
}

# ---------------------------------------------------------------------------------------------
# Money and privileges

escalate contains finding("finance.payment", "moving money needs a human decision") if {
	regex.match(`(?i)(pay|transfer|checkout|purchase|red_?packet|refund|withdraw|wire|转账|支付|付款|红包)`, input.tool)
	not input.class in {"query", "file_read", "file_search", "file_list", "memory_read", "vcs", "vcs_push", "agent_state"}
}

escalate contains finding("finance.amount", "moving money needs a human decision") if {
	some k, _ in input.args
	k in {"amount", "金额", "收款人"}
	not input.class in {"file_read", "file_search", "query"}
}

escalate contains finding("identity.privileged-role", "grants an administrative role") if {
	some k, v in input.args
	lower(k) in {"role", "access_level", "permission", "permissions", "privilege", "privileges", "group"}
	is_string(v)
	regex.match(`(?i)^(admin|administrator|superuser|root|owner|sudo|wheel|god)$`, v)
}

escalate contains finding("identity.admin-flag", "sets an administrator flag") if {
	some k, v in input.args
	lower(k) in {"admin", "is_admin", "isadmin", "superuser", "is_superuser"}
	lower(sprintf("%v", [v])) in {"true", "1", "yes"}
}
