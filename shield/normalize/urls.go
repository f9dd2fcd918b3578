package normalize

import (
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// IPInternal is the class of a host name that only resolves inside a cluster or a private network
// (kubernetes.default.svc, db.corp, a single label such as "vault"). It is API.
const IPInternal = "internal"

// URL roles (URL.Role). They are API.
const (
	URLRequest = "request" // the URL the tool itself fetches or posts to (a url argument, a curl/wget target)
	URLConnect = "connect" // a raw connection target (nc, telnet, /dev/tcp/HOST/PORT)
	URLText    = "text"    // a URL found inside some other string (a body, a file's content, a command's text)
)

var defaultPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "ftps": 990,
	"sftp": 22, "ssh": 22, "scp": 22, "git": 9418, "gopher": 70, "ldap": 389, "ldaps": 636, "smtp": 25,
	"imap": 143, "redis": 6379, "mysql": 3306, "postgres": 5432, "postgresql": 5432, "mongodb": 27017,
	"dict": 2628, "tftp": 69, "telnet": 23, "smb": 445, "rtsp": 554}

// metadataHosts are names of cloud instance metadata services (lower case, no trailing dot).
var metadataHosts = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"metadata.azure.com": true, "metadata.azure.internal": true,
	"instance-data": true, "instance-data.ec2.internal": true,
	"metadata.tencentyun.com": true, "metadata.platformequinix.com": true,
	"metadata.packet.net": true, "metadata.oraclecloud.com": true,
}

// metadataAddrs are addresses of cloud instance metadata services.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata and credentials
	netip.MustParseAddr("169.254.169.253"): true, // AWS DNS resolver
	netip.MustParseAddr("169.254.169.123"): true, // AWS time service
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"):   true, // Azure wire server
	netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud (legacy)
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IMDS over IPv6
	netip.MustParseAddr("fd00:ec2::23"):    true, // AWS ECS over IPv6
}

var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNet     = netip.MustParsePrefix("0.0.0.0/8")
	benchmark   = netip.MustParsePrefix("198.18.0.0/15")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	siteLocalV6 = netip.MustParsePrefix("fec0::/10")
)

// parseURL splits and classifies raw. A raw string without "scheme://" is read as http://raw when
// assumeHTTP is set (a url argument holding "169.254.169.254/latest").
func parseURL(raw, role string, assumeHTTP bool) (out URL) {
	out = URL{Raw: raw, Role: role}
	s := strings.TrimSpace(raw)
	if assumeHTTP && !strings.Contains(s, "://") && !hasSpecialScheme(s) && !opaqueScheme(s) {
		s = "http://" + strings.TrimPrefix(s, "//")
	}
	asWritten := s
	s = whatwgPrepare(s) // urls_whatwg.go: as a browser reads it
	defer func() {
		// Where curl reads another host than a browser, keep the more dangerous class.
		if h, ok := curlHost(asWritten); ok && h != out.Host && out.IPClass != "" {
			out.IPClass = moreDangerous(out.IPClass, hostClass(h))
		}
	}()
	u, err := url.Parse(s)
	if err != nil {
		out.IPClass = IPInvalid
		// Keep what can be read so rules still see the host.
		if i := strings.Index(s, "://"); i > 0 {
			out.Scheme = strings.ToLower(s[:i])
			rest := s[i+3:]
			if j := strings.IndexAny(rest, "/?#"); j >= 0 {
				rest = rest[:j]
			}
			if k := strings.LastIndexByte(rest, '@'); k >= 0 {
				out.UserInfo = true
				rest = rest[k+1:]
			}
			out.Host = strings.ToLower(rest)
			if h, _, ok := cutHostPort(out.Host); ok {
				out.Host = h
			}
			out.Host, _ = whatwgHost(out.Host)
			// A URL Go rejects may still be fetched by a laxer client: keep the more dangerous class.
			switch c := hostClass(out.Host); c {
			case IPLoopback, IPPrivate, IPLinkLocal, IPMetadata:
				out.IPClass = c
			}
		}
		return out
	}
	out.Scheme = strings.ToLower(u.Scheme)
	out.Host, _ = whatwgHost(u.Hostname())
	out.Path = u.Path
	out.Query = u.RawQuery
	out.UserInfo = u.User != nil
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			out.IPClass = IPInvalid
			return out
		}
		out.Port = n
	} else {
		out.Port = defaultPorts[out.Scheme]
	}
	if out.Host == "" {
		if out.Scheme == "file" || out.Scheme == "" {
			out.IPClass = ""
			return out
		}
		out.IPClass = IPInvalid
		return out
	}
	out.IPClass = hostClass(out.Host)
	if out.IPClass == IPHostname {
		out.Registrable = registrable(out.Host)
	}
	return out
}

// registrable is the registrable domain of a host name (publicsuffix: ICANN and private
// suffixes), "" when the name has none (a bare suffix, an invalid name).
func registrable(host string) string {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return ""
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return d
}

// hostClass classifies a host (lower case, no brackets, no port). Names are never resolved; only
// localhost and the known metadata names are classified by name.
func hostClass(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || host == "localhost.localdomain" || host == "ip6-localhost" || host == "ip6-loopback" {
		return IPLoopback
	}
	if metadataHosts[host] {
		return IPMetadata
	}
	a, ok := parseHostAddr(host)
	if !ok {
		if looksNumericHost(host) {
			return IPInvalid
		}
		if internalName(host) {
			return IPInternal
		}
		if c := embeddedClass(host); c != "" { // urls_nested.go: a name that spells an address
			return c
		}
		return IPHostname
	}
	return addrClass(a)
}

// internalSuffixes are DNS suffixes that only resolve inside a cluster or a private network.
var internalSuffixes = []string{".svc", ".svc.cluster.local", ".cluster.local", ".pod.cluster.local", ".internal",
	".local", ".localdomain", ".lan", ".intranet", ".corp", ".home.arpa", ".consul"}

// internalName reports whether a host name can only reach an internal service: a cluster or
// private-network suffix, or a single label (resolved through the search domains, as
// "kubernetes", "vault" or a compose service name are).
func internalName(host string) bool {
	if !strings.Contains(host, ".") {
		return host != ""
	}
	for _, suf := range internalSuffixes {
		if strings.HasSuffix(host, suf) {
			return true
		}
	}
	return host == "kubernetes.default"
}

// addrClass classifies an address.
func addrClass(a netip.Addr) string {
	a = embeddedV4(a)
	switch {
	case metadataAddrs[a]:
		return IPMetadata
	case a.IsLoopback() || a.IsUnspecified() || (a.Is4() && thisNet.Contains(a)):
		return IPLoopback // 0.0.0.0 and :: reach the local host on Linux
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return IPLinkLocal
	case a.IsPrivate() || (a.Is4() && (cgnat.Contains(a) || benchmark.Contains(a))) || siteLocalV6.Contains(a):
		return IPPrivate
	case a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return IPPrivate
	}
	return IPPublic
}

// embeddedV4 returns the IPv4 address carried by an IPv4-mapped, NAT64 or 6to4 IPv6 address.
func embeddedV4(a netip.Addr) netip.Addr {
	if a.Is4In6() {
		return a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		if nat64.Contains(a) {
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
		if nat64Local.Contains(a) {
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
		if sixToFour.Contains(a) {
			return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		// IPv4-compatible (deprecated) ::a.b.c.d
		zero := true
		for _, x := range b[:12] {
			if x != 0 {
				zero = false
				break
			}
		}
		if zero && (b[12] != 0 || b[13] != 0) {
			return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		}
	}
	return a
}

// parseHostAddr parses an IP literal the way a resolver (inet_aton) would: dotted quad, and the
// decimal, hex and octal forms with one to four parts ("2852039166", "0xA9FEA9FE",
// "0251.0376.0251.0376", "169.254.43518"); IPv6 with an optional zone.
func parseHostAddr(host string) (netip.Addr, bool) {
	h := strings.TrimPrefix(strings.TrimSuffix(host, "]"), "[")
	if i := strings.IndexByte(h, '%'); i >= 0 && strings.Contains(h, ":") {
		h = h[:i]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone(""), true
	}
	return parseInetAton(h)
}

func parseInetAton(s string) (netip.Addr, bool) {
	if s == "" || len(s) > 64 {
		return netip.Addr{}, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i := 0; i < last; i++ {
		if vals[i] > 255 {
			return netip.Addr{}, false
		}
		n |= vals[i] << (8 * (3 - i))
	}
	if vals[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// looksNumericHost: every label is made of hex digits/x (a malformed numeric address such as
// "999.1.1.1" or "0x1g"), which resolvers treat unpredictably.
func looksNumericHost(h string) bool {
	if h == "" {
		return false
	}
	last := h
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	if last == "" {
		return false
	}
	// A name whose last label is all digits is not a valid DNS name under any TLD.
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// urlInTextRE finds scheme://… URLs inside free text.
var urlInTextRE = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]{1,15}://[^\s'"<>` + "`" + `\\)}|;]+`)
