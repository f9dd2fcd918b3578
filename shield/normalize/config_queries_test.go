package normalize

import (
	"strings"
	"testing"
)

// TestConfigSecretQueries: configuration readers asked for a key, or given a pattern, that can
// name a credential key carry a secret effect, across git's query forms (regex-aware) and other
// CLIs' config sub-commands; queries of settings, names-only listings, whole listings and
// writes do not.
func TestConfigSecretQueries(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	tests := []struct {
		cmd    string
		secret bool
	}{
		{"git config --get-regexp 'http.*extraheader'", true}, {"git config --global --get-regexp 'credential|token'", true},
		{"git config --get http.https://github.com/.extraheader", true}, {"git config get --all --regexp '^url\\..*insteadof'", true},
		{"git config --get-regexp '.*'", true}, {"git config --get-regexp 'HTTP\\..*EXTRA'", true},
		{"git config --get-all sendemail.smtppass", true}, {"git config --get-regexp '^(github|hub)\\.'", true},
		{"git config --get-regexp '('", true}, {"git -C /srv/repo config --get-regexp 'http\\..*'", true},
		{"git config --get-urlmatch http.extraheader https://github.com/org/repo", true},
		{"composer config -g github-oauth.github.com", true}, {"poetry config http-basic.pypi", true},
		{"gh config get -h github.com oauth_token", true}, {"npm config get //registry.npmjs.org/:_authToken", true},
		{"pnpm config get '//npm.pkg.github.com/:_authToken'", true}, {"yarn config get npmAuthToken", true},
		// settings, names, listings, writes
		{"git config --get-regexp '^user\\.'", false}, {"git config --get user.email", false}, {"git config --get remote.origin.url", false},
		{"git config --get-regexp --name-only http", false}, {"git config --get-regexp alias", false}, {"git config --get-regexp '^branch\\.'", false},
		{"git config --list --show-origin", false}, {"git config --get credential.helper", false}, {"git config core.autocrlf input", false},
		{"composer config -g github-oauth.github.com abc123", false}, {"npm config get registry", false}, {"pip config list", false},
		{"kubectl config get-contexts", false}, {"poetry config virtualenvs.in-project true", false}, {"npm config set //r.example/:_authToken x", false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			got := hasEffectKind(a.Effects, EffectSecret)
			if got != tc.secret {
				t.Errorf("secret effect = %v, want %v (effects %v)", got, tc.secret, effectStrings(a.Effects))
			}
		})
	}
}

// FuzzConfigSecretQuery: any git config query and any config argv are judged without panicking,
// bounded in time by the key length limit; a key that names a secret is always a secret query.
func FuzzConfigSecretQuery(f *testing.F) {
	for _, s := range []string{"http.*extraheader", "credential|token", "^user\\.", "(", "x{1000}{1000}", ".*", "github.token",
		strings.Repeat("(a|", 100), "url.https://u:p@h/.insteadof"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, key string, regex bool) {
		if len(key) > 4096 {
			return
		}
		flag := "--get"
		if regex {
			flag = "--get-regexp"
		}
		pa := parsedArgs{flags: []string{flag}}
		ops := words{argv: []string{key}, dyn: []bool{false}}
		_, ok := gitConfigSecretQuery(pa, ops)
		if secretKeyRE.MatchString(key) && !ok {
			t.Fatalf("key %q names a secret but the query is not one", key)
		}
		configSecretQuery([]string{"config", "get", key})
	})
}
