# The organisation's own domains are not outside (issue 11, wave 8). message.external-recipient
# (shield.rego) escalates e-mail to a domain that is not the organisation's. Two sources say which
# domains are the organisation's:
#   - the configured list, data.shield.lists.internal_email_domains (data.json; an operator puts
#     the company's mail domains there; a sub-domain of a listed domain counts). The default
#     bundle lists the sample organisations of its corpora (globex.io, acme.example);
#   - private-use names (data.shield.lists.reserved_mail_suffixes): .internal (reserved by ICANN
#     in 2024 for private networks, never delegated) and .localhost (this machine). Mail there
#     can only reach the organisation's own relay.
# The documentation and test names (.example, .test, example.com/.net/.org) are NOT treated as
# inside although no third party can hold them: corpora and red-team sets use them as stand-ins
# for real outside domains (vendor.example, newsdesk.example.org), so reading them as the
# organisation's would teach the policy that an outside party is inside. Every other domain is
# outside, however close it looks: acme-example.com, acme.example.com.evil.io, acmeexample.com,
# globex.io.attacker.net and company.com stay escalated. FPR cost: none; recall cost: none on the
# corpora (an operator who lists a domain vouches for it).
package shield

import rego.v1

undeliverable_outside(domain) if {
	some suffix in data.shield.lists.reserved_mail_suffixes
	domain_at_or_under(domain, suffix)
}

domain_at_or_under(domain, suffix) if domain == suffix

domain_at_or_under(domain, suffix) if endswith(domain, concat("", [".", suffix]))
