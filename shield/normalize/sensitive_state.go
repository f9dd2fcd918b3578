package normalize

import (
	"regexp"
	"strings"
)

// State and cache files of tools that hold credentials, by kind. The rows of sensitiveTable name
// the configuration files of tools; these name what tools keep *after* they ran, which holds
// the same secrets under names that do not say so. Appended after the table (the first
// matching row wins, so a specific row above still decides). Kinds:
//
//   - infrastructure-as-code state: every resource attribute in clear, database
//     passwords and generated keys included (terraform.tfstate and its .backup anywhere, also
//     under .terraform/ and terragrunt caches, terraform.tfstate.d workspaces, saved plans,
//     Pulumi's local backend stacks and backups). In the workspace they are judged like its
//     .env (kind "credentials": a secret effect, ESCALATE); outside it they are blocked.
//     `terraform state list` prints addresses only and reads no file operand: unchanged.
//     Not listed: saved plans (terraform plan -out=/tmp/x.tfplan is the ordinary review step
//     and a write of a credential kind outside the workspace is blocked), cdk.context.json (lookups, no secrets), Pulumi.<stack>.yaml (secrets there
//     are ciphertext), Ansible fact caches (host facts);
//   - ticket and agent caches: Kerberos credential caches (krb5cc_* in /tmp, /var/tmp, /run/user,
//     SSSD's ccache files), KDC databases and stash files, a session's SSH agent socket in /tmp
//     (ssh-agent's own per-session directory: naming one is using it, credential_handles.go) and
//     git's credential-cache daemon socket. The user's own sockets under /run/user
//     (ssh-agent.socket, gnupg, keyring) are how a session is set up and are not listed;
//   - token caches of CLIs and SDKs: MSAL caches (Azure CLI, PowerShell, azcopy), the
//     Databricks and Snowflake token and credential caches, cached OAuth tokens, Jupyter's
//     runtime files (server token, kernel HMAC keys); names that say "token/credential/auth/
//     msal/oauth/sso/session cache" are found by tokenCacheName below;
//   - keystores and signing material by format: JCEKS and BouncyCastle stores, Windows PVK and
//     .NET strong-name keys, macOS keychains, GnuPG secret rings, PKCS#12 spelled out;
//   - cluster and tunnel credentials kept beside a project under their tools' usual names
//     (kubeconfig, *.kubeconfig, talosconfig, wg0.conf).
//
// Decided: a provisioning profile (*.mobileprovision) holds certificates and entitlements,
// no private key: not listed.
func init() {
	sensitiveTable = append(sensitiveTable, []struct {
		Kind     string
		Patterns []string
	}{
		{"credentials", []string{"**/*.tfstate", "**/*.tfstate.backup", "**/*.tfstate.*.backup", "**/terraform.tfstate.d/**",
			"**/.terraform/terraform.tfstate", "**/.pulumi/stacks/**", "**/.pulumi/backups/**",
			"**/.terragrunt-cache/**/*.tfstate*"}},
		{"credentials", []string{"/tmp/krb5cc*", "/tmp/krb5cc*/**", "/var/tmp/krb5cc*", "/run/user/*/krb5cc*", "/run/user/*/krb5cc*/**", "**/krb5cc_*", "/var/lib/sss/db/ccache_*",
			"/var/kerberos/krb5kdc/**", "/etc/krb5kdc/**", "/var/lib/krb5kdc/**", "**/.k5.*", "**/*.keytab",
			"/tmp/ssh-*/agent.*", "**/.git-credential-cache/**", "**/.cache/git/credential/**"}},
		{"credentials", []string{"**/msal_token_cache*", "**/msal_http_cache*", "**/.IdentityService/**", "**/.local/share/.IdentityService/**",
			"**/.databricks/token-cache.json", "**/.cache/snowflake/**", "**/.azcopy/*.json", "**/.local/share/jupyter/runtime/*.json",
			"/run/user/*/jupyter/runtime/*.json", "**/Library/Jupyter/runtime/*.json", "**/.config/gcloud/legacy_credentials/**"}},
		{"private_key", []string{"**/*.{jceks,bks,uber,pvk,snk,pkcs12}", "**/secring.{gpg,pgp,skr}"}},
		{"password_store", []string{"**/*.keychain", "**/*.keychain-db"}},
		{"credentials", []string{"**/kubeconfig", "**/kubeconfig.{yaml,yml,json}", "**/*.kubeconfig", "**/kubeconfig-*", "**/talosconfig",
			"**/wg[0-9]*.conf"}},
	}...)
}

// tokenCacheRE: a file name that says it caches a token, a credential or a session.
var tokenCacheRE = regexp.MustCompile(`(?i)(token|credential|auth|msal|oauth|sso|session|cookie)s?[-_.]?cache`)

// tokenCacheName: "credentials" for a token cache by name (tokenCacheRE) outside library trees
// and source files, in a home directory's hidden tool directories, /tmp or a service location.
// Unlike secretByName it looks inside cache directories, where such files live.
func tokenCacheName(clean, home string) string {
	if len(clean) > 4096 {
		return ""
	}
	i := strings.LastIndexByte(clean, '/')
	base := clean[i+1:]
	if !tokenCacheRE.MatchString(base) {
		return ""
	}
	if j := strings.LastIndexByte(base, '.'); j > 0 && secretNameSkipExt[strings.ToLower(base[j:])] {
		return ""
	}
	rest := hiddenHomeRest(clean, home)
	if rest == "" {
		for _, r := range append(secretNameServiceRoots, "/tmp/", "/var/tmp/", "/run/user/") {
			if strings.HasPrefix(clean, r) {
				rest = clean[len(r):]
				break
			}
		}
	}
	if rest == "" {
		return ""
	}
	for _, e := range strings.Split(rest, "/") {
		switch strings.ToLower(e) {
		case "node_modules", "site-packages", "dist-packages", "vendor", "src", "lib", "include", "doc", "docs", "test", "tests":
			return ""
		}
	}
	return "credentials"
}
