package normalize

import (
	"strings"
	"testing"
)

// TestHistorySecrets: credential files read at a revision and history searches for credential
// values carry a git_history secret effect; ordinary history reads do not.
func TestHistorySecrets(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	tests := []struct{ cmd, detail string }{
		{"git show HEAD~4:deploy/.env.production", "git_history dotenv"},
		{"git show origin/main:config/secrets.yml", "git_history credentials"},
		{"git cat-file -p HEAD~2:config/credentials.json", "git_history credentials"},
		{"git cat-file blob 3f2a9c1:certs/server.key", "git_history private_key"},
		{"git -C /home/user/project show a1b2c3d:.env", "git_history dotenv"},
		{"git diff HEAD~3 -- .env", "git_history dotenv"},
		{"git diff v1.0..v1.1 -- config/secrets.json", "git_history credentials"}, {"git diff v1.2.0 -- .env.production", "git_history dotenv"},
		{"git diff main -- .env", "git_history dotenv"},
		{"git log -p -- .env.production", "git_history dotenv"},
		{"git log -p --all -S AKIA -- config/", "git_history pattern"},
		{"git log -p -SAKIA", "git_history pattern"},
		{"git log -p -G 'password\\s*='", "git_history pattern"},
		{"git log -p -S 'BEGIN RSA PRIVATE KEY'", "git_history pattern"},
		{"git grep -n ghp_ $(git rev-list --all)", "git_history pattern"},
		{"git grep -e 'api_key = ' HEAD~10", "git_history pattern"},
		{"", ""},
		// ordinary
		{"git show HEAD:package.json", ""}, {"git show HEAD~1:src/app.ts", ""}, {"git diff HEAD~1 -- src/", ""},
		{"git log --oneline -- .env", ""}, {"git log --stat -- .env", ""}, {"git log -p -S getUser", ""},
		{"git log -p -S 'AWS_SECRET_ACCESS_KEY' -- src/", ""}, {"git grep -n TODO $(git rev-list --all)", ""},
		{"git grep -n 'password = '", ""}, {"git diff -- .env", ""}, {"git show HEAD:.env.example", ""},
		{"git show --name-only HEAD -- .env", ""}, {"git log -S AKIA --oneline", ""}, {"git blame src/app.ts", ""},
	}
	for _, tc := range tests {
		if tc.cmd == "" {
			continue
		}
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			got := ""
			for _, e := range a.Effects {
				if e.Kind == EffectSecret && strings.HasPrefix(e.Detail, DetailHistory) {
					got = e.Detail
				}
			}
			if got != tc.detail {
				t.Errorf("history secret = %q, want %q (effects %v)", got, tc.detail, effectStrings(a.Effects))
			}
		})
	}
}

// TestHistorySecretsBounded: a git command with a huge argv is read up to a bound.
func TestHistorySecretsBounded(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cmd := "git show " + strings.Repeat("HEAD:a.txt ", 3000) + "HEAD:.env"
	a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
	for _, e := range a.Effects {
		if e.Kind == EffectSecret && strings.HasPrefix(e.Detail, DetailHistory) && len(e.Target) > 200 {
			t.Fatalf("target not bounded: %d", len(e.Target))
		}
	}
}
