package normalize

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHostClass(t *testing.T) {
	tests := []struct{ host, want string }{
		{"localhost", IPLoopback}, {"LOCALHOST.", IPLoopback}, {"app.localhost", IPLoopback},
		{"127.0.0.1", IPLoopback}, {"127.1", IPLoopback}, {"0.0.0.0", IPLoopback}, {"0", IPLoopback},
		{"::1", IPLoopback}, {"[::1]", IPLoopback}, {"::", IPLoopback}, {"2130706433", IPLoopback}, {"0x7f000001", IPLoopback},
		{"017700000001", IPLoopback}, {"::ffff:127.0.0.1", IPLoopback},
		{"10.1.2.3", IPPrivate}, {"172.16.0.1", IPPrivate}, {"172.31.255.255", IPPrivate}, {"192.168.1.1", IPPrivate},
		{"100.64.0.1", IPPrivate}, {"100.127.255.255", IPPrivate}, {"fc00::1", IPPrivate}, {"fd12:3456::1", IPPrivate},
		{"198.18.0.1", IPPrivate},
		{"169.254.1.1", IPLinkLocal}, {"fe80::1", IPLinkLocal}, {"fe80::1%eth0", IPLinkLocal},
		{"169.254.169.254", IPMetadata}, {"169.254.170.2", IPMetadata}, {"fd00:ec2::254", IPMetadata},
		{"100.100.100.200", IPMetadata}, {"metadata.google.internal", IPMetadata}, {"metadata.azure.com", IPMetadata},
		{"2852039166", IPMetadata}, {"0xA9FEA9FE", IPMetadata}, {"0xa9.0xfe.0xa9.0xfe", IPMetadata},
		{"0251.0376.0251.0376", IPMetadata}, {"169.254.43518", IPMetadata}, {"::ffff:169.254.169.254", IPMetadata},
		{"::ffff:a9fe:a9fe", IPMetadata}, {"64:ff9b::a9fe:a9fe", IPMetadata}, {"2002:a9fe:a9fe::1", IPMetadata},
		{"8.8.8.8", IPPublic}, {"2001:4860:4860::8888", IPPublic}, {"100.63.255.255", IPPublic}, {"172.32.0.1", IPPublic},
		{"example.com", IPHostname}, {"169.254.169.254.nip.io", IPMetadata} /* a name that spells an address is classified by it (urls_nested.go) */, {"metadata.google.internal.evil.com", IPHostname},
		{"999.1.1.1", IPInvalid}, {"1.2.3.4.5", IPInvalid}, {"256.256.256.256", IPInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			if got := hostClass(tc.host); got != tc.want {
				t.Errorf("hostClass(%q) = %s, want %s", tc.host, got, tc.want)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw        string
		assumeHTTP bool
		want       URL
	}{
		{"https://User:pw@Example.COM:8443/a/b?x=1#f", false, URL{Scheme: "https", Host: "example.com", Port: 8443, Path: "/a/b", Query: "x=1", UserInfo: true, IPClass: IPHostname, Registrable: "example.com"}},
		{"HTTP://[::ffff:169.254.169.254]/latest", false, URL{Scheme: "http", Host: "::ffff:169.254.169.254", Port: 80, Path: "/latest", IPClass: IPMetadata}},
		{"169.254.169.254/latest/meta-data", true, URL{Scheme: "http", Host: "169.254.169.254", Port: 80, Path: "/latest/meta-data", IPClass: IPMetadata}},
		{"//evil.example/x", true, URL{Scheme: "http", Host: "evil.example", Port: 80, Path: "/x", IPClass: IPHostname, Registrable: "evil.example"}},
		{"gopher://127.0.0.1:6379/_SET", false, URL{Scheme: "gopher", Host: "127.0.0.1", Port: 6379, Path: "/_SET", IPClass: IPLoopback}},
		{"file:///etc/passwd", true, URL{Scheme: "file", Path: "/etc/passwd"}},
		{"http://exa mple.com/", false, URL{Scheme: "http", Host: "exa mple.com", IPClass: IPInvalid}},
		{"http://example.com:0/", false, URL{Scheme: "http", Host: "example.com", Path: "/", IPClass: IPInvalid}},
		// WHATWG: any number of slashes after a special scheme starts the authority.
		{"https:///nohost", false, URL{Scheme: "https", Host: "nohost", Port: 443, IPClass: IPInternal}}, // a single label resolves through the search domains,
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			tc.want.Raw = tc.raw
			tc.want.Role = URLRequest
			got := parseURL(tc.raw, URLRequest, tc.assumeHTTP)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

// TestRegistrable: the registrable domain is what the host belongs to, by the public suffix list
// (private suffixes included), whatever brand its other labels name.
func TestRegistrable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"https://accounts-google.com.signin-verify.net/login", "signin-verify.net"},
		{"https://paypal.com-secure.xyz/", "com-secure.xyz"},
		{"https://login.microsoftonline.com/", "microsoftonline.com"},
		{"https://www.amazon.co.uk/", "amazon.co.uk"},
		{"https://paypal-login.github.io/", "paypal-login.github.io"},
		{"https://Accounts.Google.COM./", "google.com"},
		{"https://198.51.100.7/", ""},
		{"http://localhost:8080/", ""},
		{"https://co.uk/", ""},
		{"https://vault/", ""},
	} {
		if got := parseURL(tc.raw, URLRequest, false).Registrable; got != tc.want {
			t.Errorf("%s: registrable %q, want %q", tc.raw, got, tc.want)
		}
	}
}
