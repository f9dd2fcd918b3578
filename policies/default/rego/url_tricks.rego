# URL tricks in requests and navigations: internationalised host names (punycode labels, the form
# a homoglyph look-alike such as gіthub.com with a Cyrillic i takes on the wire) and OAuth or
# login flows that hand their token or code to another host (redirect_uri pointing elsewhere).
package shield

import rego.v1

# A host with a punycode label: developer tooling, registries and APIs use ASCII names; an
# internationalised name in a request is most often a look-alike of an ASCII one.
escalate contains finding("url.idna-host", sprintf("%s is an internationalised (punycode) host name, the form homoglyph look-alikes take", [u.host])) if {
	some u in input.urls
	u.role != "text"
	some l in split(u.host, ".")
	startswith(l, "xn--")
}

# An authorization request whose redirect target is on another registrable domain and not this
# host, the configured egress or the organisation's own domains: the token or code is delivered there.
oauth_redirect_param := `(?i)(?:^|&)(?:redirect_uri|redirect_url|redirecturi|return_to|returnto|callback_url|post_logout_redirect_uri)=([^&]+)`

escalate contains finding("url.oauth-redirect-foreign", sprintf("the login flow at %s sends its token or code to %s", [u.host, h])) if {
	some u in input.urls
	u.role != "text"
	some m in regex.find_all_string_submatch_n(oauth_redirect_param, u.query, 4)
	v := urlquery.decode(m[1])
	hm := regex.find_all_string_submatch_n(`(?i)^[a-z][a-z0-9+.-]*://(?:[^/@]*@)?([^/:?#]+)`, v, 1)
	count(hm) == 1
	h := lower(hm[0][1])
	not loopback_host(h)
	not same_site(h, u)
	not host_allowed(h)
	not own_domain(h)
}

# The organisation's own domains (data: shield.lists.internal_email_domains): its apps' callbacks.
own_domain(h) if {
	some d, _ in data.shield.lists.internal_email_domains
	h == d
}

own_domain(h) if {
	some d, _ in data.shield.lists.internal_email_domains
	endswith(h, concat("", [".", d]))
}

same_site(h, u) if h == u.host

same_site(h, u) if {
	u.registrable != ""
	endswith(h, concat("", [".", u.registrable]))
}

same_site(h, u) if h == u.registrable
