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
