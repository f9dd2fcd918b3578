package normalize

import (
	"strings"
	"testing"
)

func TestGlobsIntersect(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"/home/user/.config/*/credentials*", "**/.config/gh/hosts.yml", false},
		{"/home/user/.config/*/credentials*", "**/credentials.json", true},
		{"/home/user/.config/*/*token*", "**/.config/supabase/access-token", true},
		{"/home/user/**/id_*", "**/id_rsa", true},
		{"/home/user/*.md", "**/.ssh/**", false},
		{"/etc/*/*.secrets", "/etc/rsyncd.secrets", false},
		{"*", "x.json", true}, {"*.json", "x.json", true}, {"credentials*", "x.json", false}, {"a?c", "abc", true},
		{"a/*", "a/b/c", false}, {"a/**", "a/b/c", true}, {"[abc]x", "bx", true}, {"a\\*b", "a*b", true}, {"", "", true}, {"", "*", true},
	}
	for _, tc := range tests {
		if got := globsIntersect(parseGlob(tc.a), parseGlob(tc.b)); got != tc.want {
			t.Errorf("globsIntersect(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestGlobSecretKind: globs that can match credential files, and globs over documents that
// cannot (or reach a secret directory only through a generic name).
func TestGlobSecretKind(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	secret := func(k string) bool { return hasKind(defaultPathEffects[EffectSecret], k) }
	tests := []struct {
		glob   string
		secret bool
	}{
		{"/home/user/.config/*/credentials*", true}, {"/home/user/.config/*/*token*", true}, {"/home/user/**/id_*", true},
		{"/home/user/.ssh/*", true}, {"/home/user/.aws/*", true}, {"/home/*/.ssh/id_*", true}, {"/etc/*/*.secrets", true},
		{"/home/user/**/*.pem", true}, {"/home/user/**/.env", true}, {"/root/**/*.{pem,key}", true}, {"/home/user/**/*wallet*", true},
		{"/home/user/notes/*.md", false}, {"/home/user/other-project/*.json", false}, {"/home/user/**/*.md", false},
		{"/usr/share/doc/**/*", false}, {"/home/user/**/*.go", false}, {"/etc/nginx/*.conf", false}, {"/home/user/project/src/**/*.ts", false},
		{"/home/user/.config/nvim/**/*.lua", false}, {"/home/user/.config/nvim/**/init.lua", false}, {"/no/meta/here", false},
		{"/home/user/**/config.json", true}, {"/home/user/**/*.pem.bak", false},
	}
	for _, tc := range tests {
		t.Run(tc.glob, func(t *testing.T) {
			if got := m.globSecretKind(tc.glob, secret) != ""; got != tc.secret {
				t.Errorf("globSecretKind(%q) secret = %v, want %v", tc.glob, got, tc.secret)
			}
		})
	}
}

// FuzzGlobReach: any glob text is judged without panicking, in bounded work, and agrees with
// itself; a glob without metacharacters is never judged by reach.
func FuzzGlobReach(f *testing.F) {
	for _, s := range []string{"/home/user/.config/*/credentials*", "/home/user/**/id_*", "a\\", "[", "[]]", "{a,b", "{a,{b,c}}/**",
		"/etc/*/*.secrets", "**", "***", "/home/user/" + strings.Repeat("{a,b}", 8), "?/?/?", "/root/**/*.{pem,key}"} {
		f.Add(s)
	}
	m := newSensitiveMatcher("/home/user")
	secret := func(k string) bool { return hasKind(defaultPathEffects[EffectSecret], k) }
	f.Fuzz(func(t *testing.T, g string) {
		if len(g) > 4096 {
			return
		}
		k := m.globSecretKind(g, secret)
		if !hasGlobMeta(g) && k != "" {
			t.Fatalf("globSecretKind(%q) = %q without metacharacters", g, k)
		}
		if k2 := m.globSecretKind(g, secret); k2 != k {
			t.Fatalf("globSecretKind(%q) not deterministic: %q then %q", g, k, k2)
		}
		globsIntersect(parseGlob(g), parseGlob(g))
	})
}

func BenchmarkGlobSecretKind(b *testing.B) {
	m := newSensitiveMatcher("/home/user")
	secret := func(k string) bool { return hasKind(defaultPathEffects[EffectSecret], k) }
	for b.Loop() {
		m.globSecretKind("/home/user/.config/*/*token*", secret)
		m.globSecretKind("/home/user/notes/**/*.md", secret)
	}
}
