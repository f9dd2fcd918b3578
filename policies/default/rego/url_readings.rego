# Tier 1: a URL whose host differs between a browser's reading (WHATWG) and curl's or an RFC 3986
# library's (a backslash before '@', a missing '//', a tab or newline in the authority:
# shield/normalize/urls_readings.go). The URL is written to pass one check and reach the other
# host; a human decides. Every reading's host is also judged as a connect effect (the envelope,
# metadata and internal-host rules).
package shield

import rego.v1

escalate contains finding("url.parser-differential", sprintf("clients disagree on the host: %s", [trim_prefix(e.detail, "url reading ")])) if {
	some e in input.effects
	e.kind == "connect"
	startswith(e.detail, "url reading ")
}
