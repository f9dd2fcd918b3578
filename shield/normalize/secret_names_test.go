package normalize

import "testing"

// TestSecretNames: credential files found by their names (secret_names.go) and the service and
// CLI configuration rows of the sensitive table, with ordinary files of similar names that must
// stay unclassified.
func TestSecretNames(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		// service credential files named for their secret
		{"/etc/rsyncd.secrets", "credentials"}, {"/etc/davfs2/secrets", "credentials"}, {"/etc/postfix/sasl_passwd", "credentials"},
		{"/etc/postfix/sasl_passwd.db", "credentials"}, {"/etc/openvpn/client/auth.txt", "credentials"}, {"/etc/squid/passwd", "credentials"},
		{"/etc/nginx/.htpasswd", "credentials"}, {"/etc/apache2/htpasswd.users", "credentials"}, {"/var/lib/zerotier-one/identity.secret", "credentials"},
		{"/etc/ldap.secret", "credentials"}, {"/etc/zabbix/zabbix_agentd.psk", "credentials"}, {"/etc/cifs-credentials", "credentials"},
		{"/opt/app/config/secrets.yml", "credentials"}, {"/srv/app/secrets/db.json", "credentials"}, {"/etc/myapp/api_key", "credentials"},
		{"/var/lib/myservice/token", "credentials"}, {"/root/.smbcredentials", "credentials"}, {"/etc/corosync/authkey", "credentials"},
		{"/var/lib/rabbitmq/.erlang.cookie", "credentials"}, {"/usr/local/etc/myapp/credentials.ini", "credentials"},
		// service configuration holding passwords under an ordinary name
		{"/etc/keepalived/keepalived.conf", "credentials"}, {"/etc/grafana/grafana.ini", "credentials"}, {"/etc/redis/redis.conf", "credentials"},
		{"/etc/pgbouncer/userlist.txt", "credentials"}, {"/etc/sssd/sssd.conf", "credentials"}, {"/var/lib/tailscale/tailscaled.state", "credentials"},
		{"/etc/openvpn/server.conf", "credentials"}, {"/etc/apt/auth.conf.d/private.conf", "credentials"}, {"/etc/gitlab/gitlab.rb", "credentials"},
		// developer CLIs and apps in the home directory
		{"/home/user/.aptos/config.yaml", "credentials"}, {"/home/user/.expo/state.json", "credentials"}, {"/home/user/.config/twilio-cli/config.json", "credentials"},
		{"/home/user/.runpod/config.toml", "credentials"}, {"/home/user/.vast_api_key", "credentials"}, {"/home/user/.modal.toml", "credentials"},
		{"/home/user/.local/share/DBeaverData/workspace6/General/.dbeaver/credentials-config.json", "credentials"},
		{"/home/user/.config/planetscale/access-token", "credentials"}, {"/home/user/.config/newtool/auth.json", "credentials"},
		{"/home/user/.mytool/api-key.txt", "credentials"}, {"/home/bob/.someapp/token", "credentials"}, {"/home/user/.fastlane/spaceship/a@b.c/cookie", "credentials"},
		// ordinary files: system files, libraries, caches, documentation, the workspace
		{"/etc/passwd", "account_db"}, {"/etc/pam.d/passwd", "pam"}, {"/etc/os-release", ""}, {"/etc/hostname", ""}, {"/etc/nginx/nginx.conf", ""},
		{"/etc/ssh/ssh_config", ""}, {"/etc/default/keyboard", ""}, {"/etc/apt/keyrings/docker.gpg", ""}, {"/etc/resolv.conf", "hosts"},
		{"/opt/conda/lib/python3.11/secrets.py", ""}, {"/opt/app/node_modules/jsonwebtoken/index.js", ""}, {"/opt/app/src/auth/token.ts", ""},
		{"/home/user/.local/lib/python3.12/site-packages/tokenizers/__init__.py", ""}, {"/home/user/.cache/pip/token-x.whl", ""},
		{"/home/user/.cargo/registry/src/index/proc-macro2/src/token.rs", ""}, {"/home/user/.nvm/versions/node/v20/lib/node_modules/npm/lib/commands/token.js", ""},
		{"/home/user/project/src/secrets.ts", ""}, {"/home/user/project/.github/workflows/secret-scan.yml", ""}, {"/home/user/project/config/credentials.yml.enc", ""},
		{"/home/user/documents/passwords-policy.md", ""}, {"/usr/share/man/man5/passwd.5.gz", ""}, {"/etc/secret-notes.md", ""},
		{"/var/lib/dpkg/info/passwd.list", ""}, {"/var/lib/dpkg/info/libsecret-1-0:amd64.md5sums", ""}, {"/etc/apparmor.d/usr.bin.passwd", ""},
		{"/home/user/.config/nvim/init.lua", ""}, {"/home/user/.vimrc", ""}, {"/var/lib/apt/lists/deb.debian.org_dists", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.classify(tc.path); got != tc.kind {
				t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
			}
		})
	}
}

// FuzzSecretByName: any path text, bounded or not, classifies without panicking, and a path in
// the workspace under a visible element is never named a credential by its name alone.
func FuzzSecretByName(f *testing.F) {
	for _, s := range []string{"/etc/rsyncd.secrets", "/home/user/.x/token", "/home/user/", "/home/", "/Users/a/.b", "/root/.c/creds",
		"/opt/a/node_modules/secret.js", "/home/user/project/.env.secret", "//", "/home/user/.", "/home/user/./token"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		k := secretByName(p, "/home/user")
		if k != "" && k != "credentials" {
			t.Fatalf("secretByName(%q) = %q", p, k)
		}
		if len(p) > len("/home/user/project/") && p[:len("/home/user/project/")] == "/home/user/project/" && k != "" {
			t.Fatalf("workspace path %q named a credential", p)
		}
	})
}
