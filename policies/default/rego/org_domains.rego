# The organisation's own domains are not outside (issue 11, wave 8). message.external-recipient
# (shield.rego) escalates e-mail to a domain that is not the organisation's. Two sources say which
# domains are the organisation's:
#   - the configured list, data.shield.lists.internal_email_domains (data.json; an operator puts
#     the company's mail domains there; a sub-domain of a listed domain counts);
#   - names that no outside party can hold (undeliverable_outside below): the top-level names IANA
#     reserves for documentation, testing and private use (RFC 2606, RFC 6761, RFC 8375 and the
#     2024 ICANN reservation of .internal): .example, .test, .invalid, .localhost, .internal,
#     home.arpa, and the IANA documentation domains example.com/.net/.org (null MX, RFC 7505).
#     Mail to them reaches no third party: either the organisation's own relay routes it (a
#     private-use name) or it is not delivered at all. The sample organisation of the corpora
#     (acme.example) is one of them.
# Every other domain is outside, however close it looks: acme-example.com, acme.example.com.evil,
# acmeexample.com and company.com (a registrable name the bundle does not know as the
# organisation's) stay escalated. FPR cost: none; recall cost: a message to a reserved name
# leaves nothing outside the organisation.
package shield

import rego.v1

undeliverable_outside(domain) if {
	some suffix in data.shield.lists.reserved_mail_suffixes
	domain_at_or_under(domain, suffix)
}

domain_at_or_under(domain, suffix) if domain == suffix

domain_at_or_under(domain, suffix) if endswith(domain, concat("", [".", suffix]))
