package normalize

import (
	"strings"
	"testing"
)

// TestSecretDerivatives: copies of credential files take the credential's kind across bases
// (dotenv, keys, cloud and cluster configs, project credential files, IaC state) and decorations
// (editors, backups, package managers, numbers, dates, compression, file-manager copies);
// copies of files that are no secret, or whose kind is not a secret, stay unclassified.
func TestSecretDerivatives(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		// editors
		{"/home/user/project/.env.swp", "dotenv"}, {"/home/user/project/.env~", "dotenv"},
		{"/home/user/project/.env.local.swo", "dotenv"}, {"/home/user/project/#.env#", "dotenv"},
		{"/home/user/project/.#.env.production", "dotenv"}, {"/home/user/project/.env.un~", "dotenv"},
		{"/home/user/project/config/.secrets.json.swp", "credentials"}, {"/srv/app/.env.kate-swp", "dotenv"},
		{"/home/user/project/.env___jb_old___", "dotenv"}, {"/home/user/project/.env.~1~", "dotenv"},
		// backups and saved copies
		{"/home/user/.pgpass.bak", "credentials"}, {"/home/user/project/android/key.properties.orig", "credentials"},
		{"/home/user/certs/server.key.old", "private_key"}, {"/etc/ssl/private/site.pem.save", "private_key"},
		{"/home/user/.netrc.dpkg-old", "credentials"}, {"/home/user/.docker/config.json.rpmsave", "docker_config"},
		{"/home/user/project/google-services.json.backup", "credentials"}, {"/home/user/project/secrets.yaml_backup", "credentials"},
		{"/home/user/release.keystore.copy", "private_key"}, {"/home/user/.git-credentials-old", "credentials"},
		// numbered, dated, compressed, chained
		{"/home/user/project/.env.1", "dotenv"}, {"/home/user/.pgpass.20240501", "credentials"},
		{"/home/user/infra/terraform.tfstate.2024-05-01T12:00:00", "credentials"}, {"/home/user/project/.env.bak.2.gz", "dotenv"},
		{"/home/user/project/credentials.json.gz", "credentials"}, {"/tmp/id_ed25519.tar", "ssh_key"},
		// file managers
		{"/home/user/project/secrets (copy).json", "credentials"}, {"/home/user/project/key.properties (2)", "credentials"},
		{"/home/user/Downloads/credentials - Copy.json", "credentials"}, {"/home/user/project/Copy of .env", "dotenv"},
		// copies of hidden credential directories
		{"/home/user/.aws.bak/config", "cloud_credentials"}, {"/home/user/.kube.orig/config", "kube_config"},
		{"/home/user/.gnupg~/pubring.kbx", "gpg_keyring"}, {"/home/user/.ssh.old/known_hosts", "ssh_key"},
		// not derivatives of a secret
		{"/home/user/project/README.md~", ""}, {"/home/user/project/config.bak", ""}, {"/home/user/project/main.go.orig", ""},
		{"/home/user/project/.env.example.bak", ""}, {"/home/user/.bashrc.bak", ""}, {"/home/user/project/.git/config.bak", ""},
		{"/home/user/project/package.json (copy)", ""}, {"/home/user/project/src/.eslintrc.swp", ""},
		{"/home/user/project/build.1", ""}, {"/home/user/project/.vscode.bak/settings.json", ""}, {"/home/user/project/env.bak", ""},
		{"/home/user/project/.environment~", ""}, {"/tmp/x.gz", ""}, {"/home/user/project/~", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.classify(tc.path); got != tc.kind {
				t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
			}
		})
	}
}

// TestSecretStateKinds: state, ticket and token caches and signing material by kind.
func TestSecretStateKinds(t *testing.T) {
	m := newSensitiveMatcher("/home/user")
	tests := []struct{ path, kind string }{
		{"/home/user/project/.terraform/terraform.tfstate", "credentials"}, {"/home/user/infra/prod.tfstate", "credentials"},
		{"/home/user/project/terraform.tfstate.backup", "credentials"}, {"/home/user/project/terraform.tfstate.d/prod/terraform.tfstate", "credentials"},
		{"/home/user/project/live/.terragrunt-cache/ab/cd/terraform.tfstate", "credentials"},
		{"/home/user/.pulumi/stacks/app/dev.json", "credentials"}, {"/home/user/project/.pulumi/backups/app/dev.json.1", "credentials"},
		{"/tmp/krb5cc_1000", "credentials"}, {"/tmp/krb5cc_1000_Xy12ab", "credentials"}, {"/run/user/1000/krb5cc/tkt", "credentials"},
		{"/var/lib/sss/db/ccache_EXAMPLE.COM", "credentials"}, {"/var/kerberos/krb5kdc/principal", "credentials"},
		{"/home/user/svc.keytab", "private_key"}, {"/tmp/ssh-XXXXabcd/agent.1234", "credentials"},
		{"/run/user/1000/gnupg/S.gpg-agent.extra", ""}, {"/run/user/1000/ssh-agent.socket", ""}, {"/home/user/.cache/git/credential/socket", "credentials"},
		{"/home/user/.azure/msal_token_cache.json", "cloud_credentials"}, {"/home/user/.IdentityService/msal.cache", "credentials"},
		{"/home/user/.databricks/token-cache.json", "credentials"}, {"/home/user/.cache/snowflake/credential_cache_v1.json", "credentials"},
		{"/home/user/.local/share/jupyter/runtime/jpserver-1234.json", "credentials"}, {"/home/user/.cache/mytool/oauth_cache.db", "credentials"},
		{"/tmp/session-cache.json", "credentials"}, {"/home/user/.config/gcloud/legacy_credentials/a@b.com/adc.json", "cloud_credentials"},
		{"/home/user/app/release.jceks", "private_key"}, {"/home/user/app/truststore.bks", "private_key"}, {"/home/user/sign.snk", "private_key"},
		{"/home/user/.gnupg/secring.gpg", "gpg_keyring"}, {"/home/user/old/secring.gpg", "private_key"},
		{"/home/user/Library/Keychains/login.keychain-db", "password_store"}, {"/home/user/build/ci.keychain", "password_store"},
		{"/home/user/project/deploy/kubeconfig", "credentials"}, {"/home/user/project/prod.kubeconfig", "credentials"},
		{"/home/user/project/talosconfig", "credentials"}, {"/home/user/vpn/wg0.conf", "credentials"},
		// ordinary look-alikes
		{"/home/user/project/src/auth/token_cache.py", ""}, {"/home/user/project/node_modules/x/token-cache.js", ""},
		{"/home/user/project/infra/main.tf", ""}, {"/home/user/project/cdk.context.json", ""}, {"/home/user/project/Pulumi.dev.yaml", ""},
		{"/home/user/project/tfplan", ""}, {"/home/user/project/app.mobileprovision", ""}, {"/tmp/krb5.conf", ""},
		{"/home/user/project/docs/kubeconfig.md", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if got := m.classify(tc.path); got != tc.kind {
				t.Errorf("classify(%q) = %q, want %q", tc.path, got, tc.kind)
			}
		})
	}
}

// FuzzDerivativeKind: any path classifies without panicking; a kind found through a derivative is
// a secret kind, and decorating a secret with a backup suffix never loses it.
func FuzzDerivativeKind(f *testing.F) {
	for _, s := range []string{"/home/user/project/.env.swp", "/home/user/#.env#", "/home/user/.aws.bak/credentials",
		"/home/user/project/secrets (copy).json", "/tmp/krb5cc_0", "/home/user/a.key.bak.1.gz", "/x/~", "/.#", "/##", "/ (1)",
		"/home/user/" + strings.Repeat(".a.bak/", 40) + "x", "/home/user/project/README.md~"} {
		f.Add(s)
	}
	m := newSensitiveMatcher("/home/user")
	f.Fuzz(func(t *testing.T, p string) {
		if len(p) > 8192 {
			return
		}
		direct := m.classifyDirect(p)
		got := m.classify(p)
		if direct == "" && got != "" && !derivativeKinds[got] {
			t.Fatalf("classify(%q) = %q through a derivative, not a secret kind", p, got)
		}
		if direct != "" && derivativeKinds[direct] && strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && len(p) < 200 {
			if k := m.classify(p + ".bak"); k == "" {
				t.Fatalf("classify(%q) = %q but its .bak is unclassified", p, direct)
			}
		}
	})
}
