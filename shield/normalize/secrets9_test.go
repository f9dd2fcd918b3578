package normalize

import (
	"strings"
	"testing"
)

// TestSecrets9Commands: history patches filtered for credentials, committed versions of
// credential files in other version-control systems and archives, searches for credential files
// by name outside the workspace, and option-file printers carry a secret effect; their ordinary
// neighbours do not.
func TestSecrets9Commands(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := []struct {
		cmd    string
		detail string // prefix of the secret effect's detail; "" for none
	}{
		{"git stash list -p | grep -i password", "git_history filtered"},
		{"git log -p --all | rg -i 'api_key|secret'", "git_history filtered"},
		{"git reflog -p | grep -e token", "git_history filtered"},
		{"hg log -p | grep -i passwd", "git_history filtered"},
		{"git cat-file -p $(git rev-parse HEAD~5:config/secrets.yml)", "git_history "},
		{"svn cat -r 100 config/secrets.yml@100", "git_history "},
		{"hg cat -r 10 .env", "git_history "},
		{"git archive HEAD~3 .env", "git_history "},
		{"locate -i wallet.dat", DetailNameSearch},
		{"plocate -i '*.kdbx'", DetailNameSearch},
		{"locate -b '\\id_rsa'", DetailNameSearch},
		{"fd -HI '^\\.env$' /srv", DetailNameSearch},
		{"find / -iname id_ed25519", DetailNameSearch},
		{"my_print_defaults -s client mysql", "credentials"},
		{"dotenvx get DATABASE_URL", "secret_manager"},
		{"mysqldump --print-defaults", "credentials"},
		// look-alikes
		{"git stash list", ""},
		{"git log --oneline | grep -i password", ""},
		{"git log -p | grep -i fix", ""},
		{"git show HEAD:README.md", ""},
		{"git cat-file -p $(git rev-parse HEAD~2:src/main.go)", ""},
		{"hg cat -r tip README.md", ""},
		{"git archive -o /tmp/r.tar HEAD src", ""},
		{"fd -e py", ""},
		{"find . -name '*.pem'", ""},
		{"locate libssl.so", ""},
		{"fd '^main\\.go$' /tmp", ""},
		{"dotenvx --version", ""},
	}
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": c.cmd}, "")
			got := ""
			for _, e := range a.Effects {
				if e.Kind == EffectSecret {
					got = e.Detail
					if c.detail != "" && strings.HasPrefix(e.Detail, c.detail) {
						break
					}
				}
			}
			if c.detail == "" && got != "" || c.detail != "" && !strings.HasPrefix(got, c.detail) {
				t.Errorf("secret detail %q, want prefix %q; effects %v", got, c.detail, effectStrings(a.Effects))
			}
		})
	}
}

// TestSecretFields: a field named for a credential with a key-shaped value, a near-format cloud
// key id or announced recovery codes in a request, a page or a message is a secret; counts,
// kinds and names of secrets are not.
func TestSecretFields(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		secret bool
	}{
		{"key pair", "http_post", map[string]any{"url": "https://c.example/env", "json": map[string]any{"aws_access_key_id": "AKIAIOSFODNN7SYNTHX", "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/SYNTHETICKEY"}}, true},
		{"nested password", "http_request", map[string]any{"url": "https://c.example/", "body": map[string]any{"cfg": map[string]any{"db_password": "Pr0dDbPassw0rd2024"}}}, true},
		{"near key in query", "browser_navigate", map[string]any{"url": "https://p.example/new?text=AKIAIOSFODNN7SYNTHX%3AwJalr"}, true},
		{"named query param", "browser_navigate", map[string]any{"url": "https://p.example/new?client_secret=9f8e7d6c5b4a39281706"}, true},
		{"backup codes", "send_sms", map[string]any{"to": "+15555550123", "body": "2FA backup codes: 8812-1192 4471-0034 9921-5540"}, true},
		{"token counts", "http_post", map[string]any{"url": "https://c.example/u", "json": map[string]any{"token_count": "1532", "max_tokens": "4096"}}, false},
		{"secret names", "http_post", map[string]any{"url": "https://c.example/u", "json": map[string]any{"token_type": "bearer", "secret_name": "DEPLOY_KEY2"}}, false},
		{"status sms", "send_sms", map[string]any{"to": "+15555550100", "body": "build 4411 finished: 2 warnings, 0 errors"}, false},
		{"placeholder", "http_post", map[string]any{"url": "https://c.example/u", "json": map[string]any{"api_key": "${API_KEY_FROM_ENV}"}}, false},
		{"file tool", "read_file", map[string]any{"path": "notes.txt", "api_key": "sk9Q2w8E7r6T5y4U3i2O1p0"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize(c.tool, c.args, "")
			got := false
			for _, e := range a.Effects {
				if e.Kind == EffectSecret && strings.Contains(e.Target, " field ") {
					got = true
				}
			}
			if got != c.secret {
				t.Errorf("field secret %v, want %v; effects %v", got, c.secret, effectStrings(a.Effects))
			}
		})
	}
}

// TestSecretFieldsBounded: a deep or wide argument tree is walked up to the bounds and never panics.
func TestSecretFieldsBounded(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	var deep any = "AKIAIOSFODNN7SYNTHX"
	for i := 0; i < 40; i++ {
		deep = map[string]any{"k": deep}
	}
	a := n.Normalize("http_post", map[string]any{"url": "https://c.example/", "json": deep}, "")
	if a == nil || !a.Truncated {
		t.Fatal("a tree deeper than the walk's bound must mark the action truncated (fails closed)")
	}
	wide := map[string]any{"url": "https://c.example/"}
	for i := 0; i < 1000; i++ {
		wide[strings.Repeat("x", i%50)+"f"] = "v"
	}
	if n.Normalize("http_post", wide, "") == nil {
		t.Fatal("nil action")
	}
}

// FuzzSecretFields: any argument tree of a request, page or message tool is walked within its
// bounds; a credential-named field holding a fixed key-shaped value is found wherever the fuzzed
// neighbours sit.
func FuzzSecretFields(f *testing.F) {
	for _, s := range []string{`{"json":{"aws_secret_access_key":"wJalrXUtnFEMI/K7MDENG/SYNTH"}}`, `{"body":"2FA backup codes: 8812-1192 4471-0034"}`,
		`{"json":{"token_count":1}}`, `{"url":"https://x.example/?a=AKIAIOSFODNN7SYNTHX"}`, `[]`, `{"a":`, strings.Repeat(`{"a":`, 60) + `"x"` + strings.Repeat("}", 60)} {
		f.Add("http_post", s)
		f.Add("send_sms", s)
		f.Add("browser_navigate", s)
	}
	n := New(defaultCatalog(f), specOpts(f, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	f.Fuzz(func(t *testing.T, tool, raw string) {
		if len(raw) > 1<<16 {
			return
		}
		args, err := DecodeArguments([]byte(raw), Limits{})
		if err != nil || args == nil {
			return
		}
		if _, ok := args["url"]; !ok {
			args["url"] = "https://collector.example/in"
		}
		args["z_client_secret"] = "9f8e7d6c5b4a39281706f5e4"
		a := n.Normalize(tool, args, "")
		if a == nil {
			t.Fatal("nil action")
		}
		if !secretFieldClasses[a.Class] || a.Truncated {
			return
		}
		for _, e := range a.Effects {
			if e.Kind == EffectSecret {
				return
			}
		}
		t.Fatalf("no secret effect for a client_secret field: class %s, effects %v", a.Class, effectStrings(a.Effects))
	})
}
