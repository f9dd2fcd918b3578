package shield

decision := {"deny": deny, "escalate": escalate, "allow": allow}

deny contains {"rule": "net.metadata", "reason": "cloud metadata endpoint", "severity": "critical"} if {
	some u in input.urls
	u.ip_class == "metadata"
}

deny contains {"rule": "net.exfil-domain", "reason": sprintf("uploads to %s are not allowed", [u.host])} if {
	some u in input.urls
	u.host in data.shield.lists.exfil_domains
}

escalate contains {"rule": "msg.external", "reason": "message to an external recipient"} if {
	input.class == "message_send"
	some r in input.recipients
	not is_internal(r)
}

is_internal(r) if {
	some d in data.shield.lists.internal_domains
	endswith(r, concat("", ["@", d]))
}

escalate contains {"rule": "ctx.untrusted-runtime", "reason": "calls from this runtime need a human"} if {
	input.context.labels.trust == "low"
}

allow contains {"rule": "net.docs", "reason": "documentation site"} if {
	input.class == "net_request"
	every u in input.urls {
		u.host == "pkg.go.dev"
	}
}
