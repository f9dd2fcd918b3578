package normalize

import (
	"strings"
	"testing"
)

func TestSensitiveTable(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		{"/home/user/.ssh/id_rsa", "ssh_key"}, {"/root/.ssh/id_ed25519", "ssh_key"}, {"/home/user/.ssh", "ssh_key"},
		{"/home/bob/.ssh/authorized_keys2", "ssh_authorized_keys"}, {"/etc/ssh/ssh_host_rsa_key", "ssh_key"},
		{"/home/user/.aws/credentials", "cloud_credentials"}, {"/home/user/.config/gcloud/credentials.db", "cloud_credentials"},
		{"/home/user/.kube/config", "kube_config"}, {"/home/user/.docker/config.json", "docker_config"},
		{"/home/user/.netrc", "credentials"}, {"/home/user/.pgpass", "credentials"}, {"/home/user/.git-credentials", "credentials"},
		{"/etc/shadow", "shadow"}, {"/etc/gshadow", "shadow"}, {"/etc/sudoers", "sudoers"}, {"/etc/sudoers.d/x", "sudoers"},
		{"/proc/1/environ", "proc_environ"}, {"/proc/self/environ", "proc_environ"}, {"/proc/self/mem", "proc_mem"},
		{"/home/user/.bashrc", "shell_rc"}, {"/home/user/.zshrc", "shell_rc"}, {"/etc/profile.d/x.sh", "shell_rc"},
		{"/etc/crontab", "cron"}, {"/etc/cron.d/job", "cron"}, {"/var/spool/cron/crontabs/root", "cron"},
		{"/etc/systemd/system/x.service", "service_unit"}, {"/home/user/.config/systemd/user/x.service", "service_unit"},
		{"/home/user/.config/autostart/x.desktop", "autostart"},
		{"/home/user/project/.env", "dotenv"}, {"/srv/app/.env.production", "dotenv"}, {"/home/user/project/.env.example", ""},
		{"/home/user/.mozilla/firefox/abc.default/logins.json", "browser_credentials"},
		{"/home/user/.config/google-chrome/Default/Login Data", "browser_credentials"},
		{"/home/user/.password-store/x.gpg", "password_store"}, {"/home/user/db.kdbx", "password_store"},
		{"/home/user/.gnupg/private-keys-v1.d/x.key", "gpg_keyring"},
		{"/dev/sda", "block_device"}, {"/dev/nvme0n1", "block_device"}, {"/boot/vmlinuz", "boot"}, {"/boot", "boot"},
		{"/etc/ld.so.preload", "ld_preload"}, {"/var/run/docker.sock", "container_socket"},
		{"/home/user/project/.git/hooks/pre-commit", "git_hooks"},
		{"/home/user/project/src/main.go", ""}, {"/etc/hostname", ""}, {"/tmp/x", ""}, {"/home/user/project/shadow.txt", ""},
		{"/home/user/project/ssh/notes.md", ""}, {"/dev/null", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.classify(tc.path); got != tc.kind {
				t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
			}
		})
	}
}

// BenchmarkClassify covers an ordinary path and adversarial long ones (repeated elements must not
// repeat pattern matching).
func BenchmarkClassify(b *testing.B) {
	m := newSensitiveMatcher("/home/user")
	for _, tc := range []struct{ name, path string }{
		{"workspace_file", "/home/user/project/src/main.go"},
		{"ssh_key", "/home/user/.ssh/id_ed25519"},
		{"long_repeated_elements", "/" + strings.Repeat(".ssh/", 20000) + "x"},
		{"long_deep", "/" + strings.Repeat("a/", 50000) + ".env"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				m.classify(tc.path)
			}
		})
	}
}

// TestSensitiveSurvey: credential files of common tools, one or more per family of the survey
// (cloud CLIs, cluster configs under /etc and /var/lib, registries, forges, hosting platforms,
// agents' own keys, mail, wallets, browsers, keychains, system secrets), and files of the same
// names that are ordinary project files.
func TestSensitiveSurvey(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		// cloud
		{"/home/user/.config/rclone/rclone.conf", "cloud_credentials"}, {"/home/user/.s3cfg", "cloud_credentials"},
		{"/root/.s3cfg", "cloud_credentials"}, {"/home/user/.config/openstack/clouds.yaml", "cloud_credentials"},
		{"/home/user/.pulumi/credentials.json", "cloud_credentials"}, {"/home/user/.databrickscfg", "cloud_credentials"},
		{"/var/lib/cloud/instance/user-data.txt", "cloud_credentials"}, {"/home/user/.config/hcloud/cli.toml", "cloud_credentials"},
		// clusters
		{"/etc/rancher/k3s/k3s.yaml", "kube_config"}, {"/etc/rancher/rke2/rke2.yaml", "kube_config"},
		{"/var/lib/rancher/k3s/server/token", "kube_config"}, {"/etc/kubernetes/admin.conf", "kube_config"},
		{"/var/lib/kubelet/kubeconfig", "kube_config"}, {"/home/user/.minikube/profiles/minikube/client.key", "kube_config"},
		{"/home/user/.talos/config", "kube_config"}, {"/var/lib/etcd/member/snap/db", "kube_config"},
		{"/var/run/secrets/kubernetes.io/serviceaccount/token", "k8s_service_account"},
		// container registries
		{"/home/user/.config/containers/auth.json", "docker_config"}, {"/run/user/1000/containers/auth.json", "docker_config"},
		{"/home/user/.config/helm/registry/config.json", "docker_config"},
		// tools, forges, registries, hosting, agents
		{"/home/user/.terraformrc", "credentials"}, {"/home/user/.terraform.d/credentials.tfrc.json", "credentials"},
		{"/home/user/.config/sops/age/keys.txt", "credentials"}, {"/home/user/.config/git/credentials", "credentials"},
		{"/home/user/.config/glab-cli/config.yml", "credentials"}, {"/home/user/.yarnrc.yml", "credentials"},
		{"/home/user/.m2/settings-security.xml", "credentials"}, {"/home/user/.ivy2/.credentials", "credentials"},
		{"/home/user/.fly/config.yml", "credentials"}, {"/home/user/.config/netlify/config.json", "credentials"},
		{"/home/user/.wrangler/config/default.toml", "credentials"}, {"/home/user/.local/share/com.vercel.cli/auth.json", "credentials"},
		{"/home/user/.codex/auth.json", "credentials"}, {"/home/user/.claude/.credentials.json", "credentials"},
		{"/home/user/.config/github-copilot/hosts.json", "credentials"}, {"/home/user/.cache/huggingface/token", "credentials"},
		{"/home/user/.mylogin.cnf", "credentials"}, {"/home/user/.authinfo.gpg", "credentials"}, {"/home/user/.msmtprc", "credentials"},
		{"/etc/gitlab-runner/config.toml", "credentials"}, {"/var/lib/jenkins/secrets/master.key", "credentials"},
		{"/var/lib/grafana/secrets", "credentials"}, {"/etc/NetworkManager/system-connections/home.nmconnection", "credentials"},
		{"/etc/wireguard/wg0.conf", "credentials"}, {"/etc/mysql/debian.cnf", "credentials"}, {"/etc/krb5.keytab", "credentials"},
		// keys, system secrets, stores, browsers
		{"/home/user/keys/sf.p8", "private_key"}, {"/etc/pki/tls/private/server.key", "private_key"},
		{"/etc/master.passwd", "shadow"}, {"/home/user/Library/Keychains/login.keychain-db", "password_store"},
		{"/home/user/.bitcoin/wallet.dat", "password_store"}, {"/home/user/.config/solana/id.json", "password_store"},
		{"/home/user/.ethereum/keystore/UTC--x", "password_store"}, {"/home/user/.config/Bitwarden CLI/data.json", "password_store"},
		{"/home/user/.config/vivaldi/Default/Login Data", "browser_credentials"}, {"/home/user/.pki/nssdb/key4.db", "browser_credentials"},
		{"/home/user/.var/app/org.mozilla.firefox/.mozilla/firefox/x/logins.json", "browser_credentials"},
		{"/home/user/.sqlite_history", "shell_history"},
		// ordinary project files and look-alikes
		{"/home/user/project/.yarnrc.yml", ""}, {"/home/user/project/pip.conf", ""}, {"/home/user/project/docs/rclone.md", ""},
		{"/home/user/project/keys.txt", ""}, {"/etc/rancher-notes.txt", ""}, {"/var/lib/apt/lists/x", ""}, {"/etc/os-release", ""},
		{"/home/user/project/k8s/deployment.yaml", ""}, {"/home/user/project/.sentryclirc", ""}, {"/home/user/.sentryclirc", "credentials"},
		{"/home/user/project/.continue/config.json", ""}, {"/home/user/.continue/config.json", "credentials"}, {"/home/user/.config/Code/User/keybindings.json", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.classify(tc.path); got != tc.kind {
				t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
			}
		})
	}
}

// TestSensitiveFolded: Windows path texts (left relative by the resolver, so prefixed with the
// working directory) and macOS user paths on case-insensitive volumes are matched folded.
func TestSensitiveFolded(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		{`/w/C:\Users\alice\.aws\credentials`, "cloud_credentials"}, {`C:\Users\alice\.ssh\id_rsa`, "ssh_key"},
		{`/w/%USERPROFILE%\.docker\config.json`, "docker_config"}, {`/w/%APPDATA%\rclone\rclone.conf`, "credentials"},
		{`/w/C:\Users\a\AppData\Local\Google\Chrome\User Data\Default\Login Data`, "browser_credentials"},
		{`/w/C:\Windows\System32\config\SAM`, "shadow"}, {`/w/$env:USERPROFILE\.kube\config`, "kube_config"},
		{"/Users/alice/.SSH/id_ed25519", "ssh_key"}, {"/Users/alice/.AWS/credentials", "cloud_credentials"},
		{`/w/C:\Users\alice\project\src\main.go`, ""}, {`/w/docs\notes.md`, ""}, {"/Users/alice/project/README.md", ""},
		{"/home/user/.SSH/config", ""}, // Linux file systems are case-sensitive: another file
	}
	for _, tc := range tests {
		if got := m.classify(tc.path); got != tc.kind {
			t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
		}
	}
}

// FuzzSensitiveClassify: any path text is classified without a panic, and a folded match never
// applies to a plain Linux path outside /Users and /Volumes (case-sensitive file systems).
func FuzzSensitiveClassify(f *testing.F) {
	for _, s := range []string{"/home/user/.ssh/id_rsa", `C:\Users\a\.aws\credentials`, `/w/%APPDATA%\rclone\rclone.conf`, "/Users/A/.SSH/x",
		`\\server\share\x`, "%", "$env:", "c:", "/w/c:/", "/", "", strings.Repeat(`a\`, 300), "/Volumes/X/.AWS/credentials"} {
		f.Add(s)
	}
	m := newSensitiveMatcher("/home/user")
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) > 8192 {
			return
		}
		k := m.classify(p)
		if k != "" && !strings.ContainsAny(p, `\%`) && !strings.Contains(p, "$env:") && !strings.HasPrefix(p, "/Users/") &&
			!strings.HasPrefix(p, "/Volumes/") && m.match(p) == "" {
			t.Fatalf("classify(%q) = %q only by folding", p, k)
		}
	})
}
