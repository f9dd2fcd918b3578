package normalize

import (
	"fmt"
	"strings"
)

// Parser differentials are findings. A URL that a browser (WHATWG) and curl or an RFC 3986
// library read as different hosts is written to pass one check and reach the other host:
// "http://registry.npmjs.org\@203.0.113.6/" is registry.npmjs.org to a browser and 203.0.113.6 to
// curl; "http:\\evil.example" and "http:/evil.example" have a host only to a browser; a tab or a
// newline inside the authority is dropped by a browser and kept by other clients. parseURL keeps
// the browser's host and the more dangerous class of the two (metadata still blocks); here every
// other reading becomes a connect effect of Detail "url reading …" so the envelope judges its host
// and rego/url_readings.rego escalates the disagreement itself, for every tool and for shell URLs.

// DetailURLReading prefixes the detail of a connect effect to a host another client reads. API.
const DetailURLReading = "url reading"

// urlReadingEffects adds a connect effect for each request URL whose readings disagree.
func (s *state) urlReadingEffects() {
	for _, u := range s.act.URLs {
		if u.Role == URLText || !specialSchemes[u.Scheme] || u.Scheme == "file" {
			continue
		}
		alt, why := otherReading(u)
		if why == "" {
			continue
		}
		target := alt
		if u.Port != 0 {
			target = fmt.Sprintf("%s:%d", hostForTarget(alt), u.Port)
		}
		s.addToolEffect(Effect{Kind: EffectConnect, Target: target, Detail: DetailURLReading + " " + why + " (a browser reads " + u.Host + ")",
			Sensitive: u.IPClass != hostClass(u.Host)})
	}
}

// otherReading returns the host a client other than a browser reads in u.Raw, and why the
// readings differ ("" when they agree).
func otherReading(u URL) (alt, why string) {
	raw := strings.TrimSpace(u.Raw)
	if len(raw) > maxURLReading {
		raw = raw[:maxURLReading]
	}
	i := strings.IndexByte(raw, ':')
	if i <= 0 || !strings.EqualFold(raw[:i], u.Scheme) {
		return "", "" // "localhost:3000/x" read as http://localhost:3000/x: one reading
	}
	rest := raw[i+1:]
	if !strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "///") {
		// http:\\h, http:/h, http:h, http:///h: only a browser finds a host.
		if u.Host != "" {
			return u.Host, "without '//' after the scheme"
		}
		return "", ""
	}
	auth := rest[2:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if strings.ContainsAny(auth, "\t\r\n") {
		if u.Host == "" {
			return "(no host)", "with a control character in the authority"
		}
		return u.Host, "with a control character in the authority"
	}
	h, ok := curlHost(raw)
	if !ok || h == "" || h == u.Host {
		return "", ""
	}
	return h, "by curl as " + h
}

// maxURLReading bounds the text read per URL.
const maxURLReading = 4096
