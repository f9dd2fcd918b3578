package normalize

import "testing"

func TestParseURLAsBrowsersDo(t *testing.T) {
	tests := []struct {
		raw, host, class string
	}{
		{"http://①⑥⑨.②⑤④.①⑥⑨.②⑤④/latest/meta-data/", "169.254.169.254", IPMetadata},
		{"http://１６９．２５４．１６９．２５４/", "169.254.169.254", IPMetadata},
		{"https://pastebin。com/api/api_post.php", "pastebin.com", IPHostname},
		{"https://ＥＸＡＭＰＬＥ.com/", "example.com", IPHostname},
		{`http:\\169.254.169.254\latest\meta-data`, "169.254.169.254", IPMetadata},
		{`http:/169.254.169.254/`, "169.254.169.254", IPMetadata},
		{"http:169.254.169.254/", "169.254.169.254", IPMetadata},
		{" \thttp://169.254.\n169.254/", "169.254.169.254", IPMetadata},
		{"http://%31%36%39.254.169.254/", "169.254.169.254", IPMetadata},
		{"http://2852039166/", "2852039166", IPMetadata},
		{"http://0xa9.0xfe.0xa9.0xfe/", "0xa9.0xfe.0xa9.0xfe", IPMetadata},
		{"http://0251.0376.0251.0376/", "0251.0376.0251.0376", IPMetadata},
		{"http://169.254.43518/", "169.254.43518", IPMetadata},
		{"http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254", IPMetadata},
		{"http://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe", IPMetadata},
		{"http://good.com@evil.com/", "evil.com", IPHostname},
		{"http://good.com:pw@127.0.0.1:8080/", "127.0.0.1", IPLoopback},
		// A browser reaches example.com, curl reaches 169.254.169.254: the class is the worse one.
		{`http://example.com\@169.254.169.254/`, "example.com", IPMetadata},
		{"http://bücher.example/", "xn--bcher-kva.example", IPHostname},
		{"https://registry.npmjs.org/react", "registry.npmjs.org", IPHostname},
		{"http://localhost:3000/", "localhost", IPLoopback},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			u := parseURL(tc.raw, URLRequest, true)
			if u.Host != tc.host || u.IPClass != tc.class {
				t.Errorf("parseURL(%q) host %q class %s, want %q %s", tc.raw, u.Host, u.IPClass, tc.host, tc.class)
			}
		})
	}
}

func TestWhatwgPrepare(t *testing.T) {
	tests := []struct{ in, want string }{
		{`http:\\a\b`, "http://a/b"},
		{"HTTPS:///x.com/", "https://x.com/"},
		{"mailto:a@b", "mailto:a@b"},
		{"git@github.com:o/r.git", "git@github.com:o/r.git"},
		{"file:///etc/passwd", "file:///etc/passwd"},
	}
	for _, tc := range tests {
		if got := whatwgPrepare(tc.in); got != tc.want {
			t.Errorf("whatwgPrepare(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInternalNames(t *testing.T) {
	for host, want := range map[string]string{
		"kubernetes.default.svc": IPInternal, "vault.infra.svc.cluster.local": IPInternal, "db.corp": IPInternal,
		"kubernetes": IPInternal, "api.internal": IPInternal, "printer.local": IPInternal,
		"example.com": IPHostname, "svc.example.com": IPHostname, "metadata.google.internal": IPMetadata,
	} {
		if got := hostClass(host); got != want {
			t.Errorf("hostClass(%q) = %s, want %s", host, got, want)
		}
	}
}
