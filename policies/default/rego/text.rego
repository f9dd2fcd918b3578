# Tier 1: text that leaves or instructs (shield/normalize/tools_text_egress.go).
#
# - A click on a control whose label destroys data or hands an account over (Delete
#   organization, Revoke all keys, Transfer ownership): a human decides.
# - Page script reading a stored auth token (localStorage, sessionStorage, cookies), even
#   without sending it: a human decides.
# - A query selecting credential columns (password_hash, totp_secret, api_key): the values land
#   in the transcript; a human decides.
# - A structured call that adds, opens or changes something with every address (0.0.0.0/0,
#   ::/0) as its value: an allow list or an ingress rule opened to the internet; a human decides.
# - A database or query tool exporting, unloading or copying data to a storage or web URL
#   outside the allowed egress: exfiltration.
# Secrets carried in text that leaves are judged by effects.secret-egress; a value that lowers an
# agent runtime's own protections (Bash(*) allowed, approvals never) by effects.privilege.
package shield

import rego.v1

escalate contains finding("text.destructive-control", sprintf("clicks %s", [e.target])) if {
	some e in input.effects
	e.kind == "delete"
	e.detail == "browser control"
}

escalate contains finding("text.stored-token-read", sprintf("page script reads a stored auth token (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "read"
	e.detail == "browser storage"
}

escalate contains finding("text.credential-columns", sprintf("selects credential columns (%s)", [e.target])) if {
	some e in input.effects
	e.kind == "read"
	e.detail == "credential columns"
}

escalate contains finding("text.open-to-everyone", sprintf("%s allows every address (%s)", [input.tool, e.target])) if {
	input.class != "exec"
	some e in input.effects
	e.kind == "listen"
	e.detail == "open to everyone"
}

storage_schemes := {"s3", "s3a", "s3n", "gs", "gcs", "az", "abfs", "abfss", "wasb", "wasbs", "azure", "r2", "oss", "cos", "ftp", "sftp", "http", "https", "scp", "hdfs"}

deny contains finding("text.data-export", sprintf("exports data to %s, outside the allowed egress", [e.target])) if {
	some e in input.effects
	e.kind == "connect"
	e.detail in storage_schemes
	export_class(e)
	not egress_allowed(e)
	not loopback_host(effect_host(e.target))
}

# A database tool's URLs are where its data goes; a lookup tool's web URLs are what it looks up:
# only its storage URLs (s3:, gs:, written in SQL it runs) carry data out.
export_class(_) if input.class == "database"

export_class(e) if {
	input.class == "query"
	not e.detail in {"http", "https"}
}
