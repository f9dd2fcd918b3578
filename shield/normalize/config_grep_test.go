package normalize

import "testing"

// TestConfigSecretGrep: grep, sed and awk picking credential keys out of configuration outside
// the workspace carry a secret effect; searches of the workspace, of system files of a known
// non-secret kind, of headers and logs, and for settings about passwords do not.
func TestConfigSecretGrep(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	tests := []struct {
		cmd    string
		secret bool
	}{
		{"grep -E 'admin_password|secret_key' /etc/myapp/app.ini", true}, {"grep -r requirepass /etc/redis", true},
		{"grep -rn password /etc/myapp/", true}, {"grep -e bindpw /etc/nslcd.conf", true}, {"grep -i api_key /opt/agent/agent.yaml", true},
		{"sed -n '/password/p' /srv/app/config.ini", true}, {"awk '/token/ {print $3}' /var/lib/app/state.conf", true},
		{"grep -A3 '[credentials]' /home/user/.someclient/config", true}, {"grep -h auth_pass /root/ha.conf", true},
		{"grep -rn password src/", false}, {"grep -n listen /etc/nginx/nginx.conf", false},
		{"grep -i PasswordAuthentication /etc/ssh/sshd_config", false}, {"grep passwd /etc/nsswitch.conf", false},
		{"grep -n password_encryption /etc/postgresql/16/main/postgresql.conf", false}, {"grep PASS_MAX_DAYS /etc/login.defs", false},
		{"grep -rn token /usr/include/linux/", false}, {"grep -i token /opt/app/.env.example", false},
		{"grep -rn password /home/user/project/config/", false}, {"grep -r TODO /etc/myapp", false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			got := false
			for _, e := range a.Effects {
				if e.Kind == EffectSecret && e.Detail == "pattern" {
					got = true
				}
			}
			if got != tc.secret {
				t.Errorf("secret pattern effect = %v, want %v (effects %v)", got, tc.secret, effectStrings(a.Effects))
			}
		})
	}
}
