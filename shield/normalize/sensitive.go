package normalize

import (
	"path"
	"strings"

	"github.com/gobwas/glob"
)

// sensitiveTable classifies cleaned absolute paths. It is security policy kept as data: review it as
// such. Patterns use github.com/gobwas/glob syntax with '/' as separator: `*` stays within one path
// element, `**` crosses elements, `{a,b}` lists alternatives. `~` at the start stands for the home
// directory given in Options; patterns starting with `**/` match under every user's home too.
// The first matching row wins, so specific kinds come before general ones.
//
// Decisions recorded here:
//   - `.env` files are sensitive wherever they are, also inside the workspace (kind "dotenv");
//     rules combine Kind with InWorkspace. Examples and templates (.env.example, .env.sample,
//     .env.template, .env.dist) are not sensitive.
//   - Everything under ~/.ssh is "ssh_key" except authorized_keys* ("ssh_authorized_keys": writing it
//     is persistence, reading it is not credential access).
//   - Credential files of tools that projects also keep in their tree without secrets (.npmrc,
//     .yarnrc.yml, pip.conf, .sentryclirc, .continue) count in home directories only ("~/",
//     "/root/", "/home/*/"); written in the workspace they are judged by content (rego
//     workspace_files.rego).
//   - A credential file under a read root (/etc/rancher, /etc/kubernetes, /etc/wireguard) is still
//     a secret: the kind, not the root, decides.
//   - Paths are classified as written, after cleaning; symbolic links are not resolved (Shield does
//     not touch the file system on the decision path). Rules on workspace paths should expect that.
var sensitiveTable = []struct {
	Kind     string
	Patterns []string
}{
	{"ssh_authorized_keys", []string{"**/.ssh/authorized_keys*", "/etc/ssh/authorized_keys*", "/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/**"}},
	{"ssh_key", []string{"**/.ssh", "**/.ssh/**", "/etc/ssh/ssh_host_*", "**/id_{rsa,dsa,ecdsa,ed25519}{,_sk}", "**/id_{rsa,dsa,ecdsa,ed25519}{,_sk}.pub"}},
	// Cloud providers' CLIs and SDKs: access keys, refresh tokens, service-account keys.
	{"cloud_credentials", []string{"**/.aws", "**/.aws/**", "**/.config/gcloud", "**/.config/gcloud/**", "**/.azure", "**/.azure/**",
		"**/.oci/**", "**/.config/doctl/**", "**/application_default_credentials.json", "**/.boto",
		"**/.s3cfg", "**/.passwd-s3fs", "/etc/passwd-s3fs", "**/.config/rclone/rclone.conf", "**/.rclone.conf",
		"**/.config/openstack/{clouds,secure}.yaml", "/etc/openstack/{clouds,secure}.yaml", "**/.aliyun/**", "**/.tccli/**",
		"**/.config/hcloud/**", "**/.config/linode-cli", "**/.config/scw/**", "**/.bluemix/**", "**/.ibmcloud/**",
		"**/.config/exoscale/**", "**/.config/vultr-cli.yaml", "**/.databrickscfg", "**/.snowsql/config", "**/.pulumi/credentials.json",
		"/var/lib/waagent/ovf-env.xml", "/var/lib/cloud/instance/user-data.txt*", "/var/lib/cloud/instances/*/user-data.txt*",
		"/var/lib/cloud/instance/vendor-data.txt*", "/var/lib/cloud/instances/*/vendor-data.txt*"}},
	// Cluster credentials: kubeconfigs (users', k3s, rke2, kubeadm, kubelet), cluster CAs and
	// tokens, talos and minikube client keys, etcd's data (every Secret of the cluster).
	{"kube_config", []string{"**/.kube/config", "**/.kube/**", "/etc/kubernetes/**", "/var/lib/kubelet/**",
		"/etc/rancher/**", "/var/lib/rancher/**", "**/.minikube/**", "**/.talos/config", "**/.config/talos/**", "/var/lib/etcd/**",
		"**/.config/k3d/**", "**/.kube-credentials/**"}},
	{"k8s_service_account", []string{"/var/run/secrets/**", "/run/secrets/**"}},
	{"container_socket", []string{"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/var/run/containerd/containerd.sock", "/run/podman/podman.sock", "**/.docker/run/docker.sock"}},
	// Registry logins of the container tools (docker, podman/buildah/skopeo, helm, crane).
	{"docker_config", []string{"**/.docker/config.json", "**/.config/containers/auth.json", "/run/user/*/containers/auth.json",
		"/run/containers/*/auth.json", "/etc/containers/auth.json", "**/.config/helm/registry/config.json", "**/.config/helm/registry.json",
		"**/.config/helm/repositories.yaml", "**/.docker/.token_seed*"}},
	// Tokens and passwords of developer tools, forges, package registries, databases, mail,
	// hosting platforms and the agents' own API keys. Project-level files that are often kept in
	// a repository without secrets (.yarnrc.yml, pip.conf, .bundle/config, NuGet.Config) count in
	// the home directory only.
	{"credentials", []string{"**/.netrc", "**/_netrc", "**/.pgpass", "**/.git-credentials", "~/.npmrc", "/root/.npmrc", "/home/*/.npmrc", "/Users/*/.npmrc", "/etc/npmrc", "**/.config/npm/npmrc", "**/.pypirc", "**/.my.cnf",
		"**/.config/gh/hosts.yml", "**/.terraform.d/credentials.tfrc.json", "**/.vault-token", "**/.cargo/credentials{,.toml}",
		"**/.gem/credentials", "**/.config/hub", "**/.composer/auth.json", "**/.m2/settings.xml", "**/.gradle/gradle.properties",
		"**/credentials.json", "**/secrets.{json,yaml,yml,toml}", "**/.htpasswd",
		"**/.terraformrc", "**/terraform.rc", "**/.config/git/credentials", "**/.config/glab-cli/**", "**/.config/tea/config.yml",
		"**/.local/share/gem/credentials", "**/.m2/settings-security.xml", "**/.m2/settings*.xml", "**/.ivy2/.credentials", "**/.sbt/.credentials",
		"**/.sbt/credentials", "**/.config/composer/auth.json", "**/.pub-cache/credentials.json", "**/.config/dart/pub-credentials.json",
		"**/.hex/hex.config", "**/.config/jfrog/**", "**/.jfrog/jfrog-cli.conf*", "**/.mylogin.cnf", "**/.authinfo", "**/.authinfo.gpg",
		"**/.msmtprc", "**/.config/msmtp/config", "**/.fetchmailrc", "**/.config/aerc/accounts.conf",
		"~/.yarnrc.yml", "~/.yarnrc", "~/.config/pip/pip.conf", "~/.pip/pip.conf", "~/.bundle/config", "~/.nuget/NuGet/NuGet.Config",
		"~/.config/NuGet/NuGet.Config", "**/.config/configstore/*.json", "**/.fly/config.yml", "**/.config/fly/config.yml",
		"**/.local/share/com.vercel.cli/auth.json", "**/Library/Application Support/com.vercel.cli/auth.json", "**/.vercel/auth.json",
		"~/.netlify/config.json", "/root/.netlify/config.json", "/home/*/.netlify/config.json", "**/.config/netlify/config.json", "**/.wrangler/config/*.toml", "**/.config/.wrangler/config/*.toml",
		"**/.railway/config.json", "**/.supabase/access-token", "**/.config/supabase/access-token", "**/.config/heroku/**",
		"**/.ngrok2/ngrok.yml", "**/.config/ngrok/ngrok.yml", "**/Library/Application Support/ngrok/ngrok.yml",
		"**/.config/stripe/config.toml", "~/.sentryclirc", "/root/.sentryclirc", "/home/*/.sentryclirc", "~/.circleci/cli.yml", "/root/.circleci/cli.yml", "/home/*/.circleci/cli.yml", "~/.travis/config.yml", "/root/.travis/config.yml", "/home/*/.travis/config.yml", "**/.config/op/**",
		"**/.cloudflared/*.json", "**/.dbt/profiles.yml", "~/.kaggle/kaggle.json", "/root/.kaggle/kaggle.json", "/home/*/.kaggle/kaggle.json", "**/.huggingface/token", "**/.cache/huggingface/token",
		"**/.config/huggingface/token", "**/.codex/auth.json", "**/.claude/.credentials.json", "**/.config/github-copilot/{hosts,apps}.json",
		"**/.gemini/oauth_creds.json", "**/.config/sops", "**/.config/sops/**", "**/.config/rclone", "**/.config/rclone/**", "**/Library/Application Support/sops/age/keys.txt",
		"**/.ansible/vault_pass*", "**/.vault_pass*", "**/.vault-password*", "**/.config/gitlab-runner/config.toml",
		"/etc/gitlab-runner/config.toml", "/etc/gitlab/gitlab-secrets.json", "/etc/mysql/debian.cnf", "/etc/ipsec.secrets",
		"/etc/ppp/{chap,pap}-secrets", "/etc/wpa_supplicant/*.conf", "/etc/NetworkManager/system-connections/**", "/etc/wireguard/**",
		"/etc/ceph/*.keyring", "/var/lib/jenkins/secrets/**", "/var/lib/jenkins/credentials.xml", "/var/lib/*/secrets", "/var/lib/*/secrets/**",
		"/var/lib/samba/private/**", "/etc/krb5.keytab", "/etc/rclone/rclone.conf", "/etc/cloud/cloud.cfg.d/*password*",
		"**/.tsh/**", "**/.step/secrets/**", "**/.config/nix/nix.conf", "/etc/nix/nix.conf", "**/.lein/credentials.clj*",
		"~/.codeium/config.json", "/root/.codeium/config.json", "/home/*/.codeium/config.json", "~/.continue/config.{json,yaml}", "/root/.continue/config.{json,yaml}", "/home/*/.continue/config.{json,yaml}", "/var/lib/docker/containers/*/config.v2.json",
		"/etc/containerd/certs.d/**/*.key"}},
	// Credential files projects keep in their own tree, by kind (also inside the workspace): IaC
	// variable files named for secrets (secrets.auto.tfvars, db-credentials.tfvars.json), mobile
	// app configs that carry API keys, cloud service-account keys, Android signing properties.
	{"credentials", []string{"**/*{secret,secrets,credential,credentials,password,passwords}*.{tfvars,tfvars.json,pkrvars.hcl}",
		"**/google-services.json", "**/GoogleService-Info.plist", "**/agconnect-services.json",
		"**/*{service-account,service_account,serviceaccount,firebase-adminsdk}*.json", "**/key.properties", "**/keystore.properties", "**/signing.properties"}},
	{"dotenv", []string{"**/.env", "**/.env.{local,production,prod,development,dev,staging,test}", "**/.env.*.local", "**/.envrc"}},
	{"gpg_keyring", []string{"**/.gnupg", "**/.gnupg/**"}},
	{"private_key", []string{"**/*.{pem,key,p12,pfx,jks,keystore,ppk,p8,keytab,agekey,ovpn}", "/etc/ssl/private/**", "/etc/letsencrypt/**",
		"/etc/pki/tls/private/**", "/etc/pki/*/private/**"}},
	{"shadow", []string{"/etc/shadow", "/etc/shadow-", "/etc/shadow.*", "/etc/gshadow", "/etc/gshadow-", "/var/backups/*shadow*", "/etc/security/opasswd", "/etc/master.passwd",
		"/etc/spwd.db", "/etc/tcb/**", "/var/db/dslocal/nodes/Default/users/**"}},
	{"account_db", []string{"/etc/passwd", "/etc/passwd-", "/etc/group", "/etc/group-", "/etc/subuid", "/etc/subgid"}},
	{"sudoers", []string{"/etc/sudoers", "/etc/sudoers.d", "/etc/sudoers.d/**", "/etc/doas.conf"}},
	{"pam", []string{"/etc/pam.d/**", "/etc/security/**", "/lib/security/**", "/usr/lib/security/**", "/lib/*/security/**"}},
	{"ld_preload", []string{"/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d/**"}},
	{"proc_environ", []string{"/proc/*/environ", "/proc/*/task/*/environ"}},
	{"proc_mem", []string{"/proc/*/mem", "/proc/*/task/*/mem", "/proc/kcore", "/proc/*/maps", "/proc/kallsyms", "/dev/mem", "/dev/kmem", "/dev/port"}},
	{"proc_root", []string{"/proc/*/root", "/proc/*/root/**", "/proc/*/cwd/**", "/proc/*/fd/**", "/proc/sys/**", "/proc/sysrq-trigger"}},
	{"shell_history", []string{"**/.bash_history", "**/.zsh_history", "**/.history", "**/.python_history", "**/.psql_history", "**/.mysql_history", "**/.node_repl_history",
		"**/.sqlite_history", "**/.rediscli_history", "**/.mongodb/mongosh/*_history", "**/.irb_history", "**/.pry_history", "**/.lesshst",
		"**/.local/share/fish/fish_history", "**/.local/share/atuin/history.db"}},
	{"shell_rc", []string{"**/.bashrc", "**/.bash_profile", "**/.bash_login", "**/.bash_logout", "**/.profile", "**/.zshrc", "**/.zprofile",
		"**/.zshenv", "**/.zlogin", "**/.zlogout", "**/.cshrc", "**/.tcshrc", "**/.kshrc", "**/.inputrc", "**/.config/fish/**",
		"/etc/profile", "/etc/profile.d/**", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh/**", "/etc/zshrc", "/etc/zprofile", "/etc/environment"}},
	{"cron", []string{"/etc/cron*", "/etc/cron*/**", "/var/spool/cron", "/var/spool/cron/**", "/etc/anacrontab", "/var/spool/anacron/**", "/etc/at.allow", "/etc/at.deny", "/var/spool/at/**"}},
	{"service_unit", []string{"/etc/systemd/**", "/lib/systemd/**", "/usr/lib/systemd/**", "/run/systemd/system/**", "**/.config/systemd/**",
		"/etc/init.d/**", "/etc/rc.local", "/etc/rc*.d/**", "/etc/init/**", "/etc/xinetd.d/**", "/etc/udev/rules.d/**", "/etc/modules-load.d/**", "/etc/modprobe.d/**"}},
	{"autostart", []string{"**/.config/autostart", "**/.config/autostart/**", "/etc/xdg/autostart/**"}},
	{"git_hooks", []string{"**/.git/hooks/**", "**/.git/config", "**/.gitconfig", "**/.config/git/config"}},
	{"agent_config", []string{"**/.claude/**", "**/.claude.json", "**/.codex/**", "**/.cursor/**", "**/.mcp.json", "**/.gemini/**"}},
	{"browser_credentials", []string{"**/.mozilla/firefox/**", "**/.config/google-chrome/**", "**/.config/chromium/**", "**/.config/BraveSoftware/**",
		"**/.config/microsoft-edge/**", "**/.config/opera/**", "**/Library/Application Support/Google/Chrome/**", "**/snap/firefox/**",
		"**/.config/vivaldi/**", "**/snap/chromium/**", "**/.var/app/org.mozilla.firefox/**", "**/.var/app/com.google.Chrome/**",
		"**/.var/app/org.chromium.Chromium/**", "**/.var/app/com.brave.Browser/**", "**/Library/Application Support/Firefox/**",
		"**/Library/Application Support/{BraveSoftware,Microsoft Edge,Vivaldi,Arc,Chromium}/**", "**/Library/Cookies/**",
		"**/Library/Safari/**", "**/.pki/nssdb/**", "**/.config/Slack/{Cookies,Local Storage}/**", "**/.config/discord/Local Storage/**",
		"**/.local/share/TelegramDesktop/tdata/**", "**/.config/Signal/config.json", "**/.config/Signal/sql/**"}},
	{"password_store", []string{"**/.password-store", "**/.password-store/**", "**/*.kdbx", "**/*.kdb", "**/.local/share/keyrings/**",
		"**/.config/Bitwarden/**", "**/.config/1Password/**", "**/.config/KeePassXC/**", "**/.local/share/kwalletd/**",
		"**/.config/Bitwarden CLI/**", "**/.gnome2/keyrings/**", "**/Library/Keychains/**", "/Library/Keychains/**", "**/*.psafe3",
		"**/.bitcoin/wallet.dat", "**/.bitcoin/wallets/**", "**/wallet.dat", "**/.ethereum/keystore/**", "**/.electrum/wallets/**",
		"**/.config/Exodus/**", "**/Library/Application Support/Exodus/**", "**/.config/solana/id.json", "**/.solana/id.json",
		"**/.monero/**", "**/.local/share/io.parity.ethereum/keys/**"}},
	// Windows profiles and system secrets, matched on the path with its separators turned and
	// its case folded (sensitiveMatcher.classify reads C:\Users\a\.aws\credentials as
	// /users/a/.aws/credentials); the rows above apply to those paths as well.
	{"credentials", []string{"**/appdata/roaming/rclone/rclone.conf", "**/appdata/roaming/github cli/hosts.yml", "**/appdata/roaming/npm/etc/npmrc",
		"**/appdata/roaming/filezilla/{recentservers,sitemanager}.xml", "**/appdata/roaming/winscp.ini", "**/appdata/roaming/gcloud/**",
		"**/appdata/roaming/microsoft/{credentials,protect,crypto,systemcertificates/my}/**", "**/appdata/local/microsoft/credentials/**",
		"/windows/panther/unattend*.xml", "/windows/system32/sysprep/*.xml", "/programdata/ssh/ssh_host_*", "**/appdata/roaming/pypoetry/auth.toml"}},
	{"shadow", []string{"/windows/system32/config/{sam,system,security}", "/windows/ntds/ntds.dit", "/windows/repair/{sam,system}"}},
	{"browser_credentials", []string{"**/appdata/local/{google/chrome,microsoft/edge,bravesoftware/brave-browser,chromium,vivaldi}/user data/**",
		"**/appdata/roaming/mozilla/firefox/**", "**/appdata/roaming/opera software/**", "**/appdata/roaming/{discord,slack,signal}/**",
		"**/appdata/roaming/telegram desktop/tdata/**"}},
	{"password_store", []string{"**/appdata/roaming/{bitwarden,keepass,keepassxc}/**", "**/appdata/local/1password/**", "**/appdata/roaming/exodus/**",
		"**/appdata/roaming/{bitcoin,electrum,ethereum}/**"}},
	{"block_device", []string{"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/dm-*", "/dev/mapper/**", "/dev/loop*", "/dev/md*", "/dev/disk/**"}},
	{"boot", []string{"/boot", "/boot/**", "/efi/**", "/lib/modules/**", "/usr/lib/modules/**"}},
	{"hosts", []string{"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf"}},
	{"audit_log", []string{"/var/log/auth.log", "/var/log/secure", "/var/log/audit/**", "/var/log/wtmp", "/var/log/btmp", "/var/log/lastlog", "/var/run/utmp"}},
	// Configuration of developer CLIs and apps that keeps a token, key or password beside other
	// settings under a name that does not say so (files named for their secret are found by
	// secret_names.go): ML and GPU clouds, database clients, mobile and messaging platforms,
	// wallets, remote-desktop and mail clients.
	{"credentials", []string{"**/.modal.toml", "**/.comet.config", "**/.clearml.conf", "**/.runpod/**", "**/.config/runpod/**",
		"**/.vast_api_key", "**/.config/vastai/**", "**/.lambda_cloud/**", "**/.paperspace/**", "**/.replicate/**", "**/.config/replicate/**",
		"**/.together/**", "**/.config/wandb/**", "**/.neptune/**", "**/.dvc/config.local", "**/.snowflake/**", "**/.cassandra/cqlshrc",
		"**/.clickhouse-client/**", "**/.influxdbv2/configs", "**/.mc/config.json", "**/.mcli/config.json", "**/.mongodb/mongosh/**",
		"**/.local/share/DBeaverData/**/credentials-config.json", "**/.dbeaver4/**/credentials-config.json", "**/.config/dbeaver/**",
		"**/.datagrip/**/*.pwd", "**/.config/JetBrains/**/c.kdbx", "**/.redisclirc", "**/.mongorc.js", "**/.sqlpad/**",
		"**/.expo/state.json", "**/.config/twilio-cli/**", "**/.twilio-cli/**", "**/.fastlane/**", "**/.android/adbkey",
		"**/.appcenter-cli/**", "**/.config/firebase/**", "**/.config/configstore/firebase-tools.json", "**/.aptos/config.yaml",
		"**/.sui/sui_config/**", "**/.config/solana/**", "**/.foundry/keystores/**", "**/.config/hardhat-nodejs/vars.json",
		"**/.near-credentials/**", "**/.config/near-cli/**", "**/.starknet_accounts/**", "**/.config/doppler/**", "**/.config/neonctl/**",
		"**/.config/planetscale/**", "**/.config/turso/**", "**/.cf/config.json", "**/.config/render/**", "**/.config/filezilla/**",
		"**/.filezilla/**", "**/.purple/accounts.xml", "**/.local/share/remmina/**", "**/.config/remmina/**", "**/.thunderbird/**/logins.json",
		"**/.thunderbird/**/key4.db", "**/.mozilla-thunderbird/**/logins.json", "**/.config/hexchat/servlist.conf", "**/.irssi/config",
		"**/.weechat/sec.conf", "**/.config/weechat/sec.conf", "**/.muttrc", "**/.mutt/muttrc", "**/.config/mutt/muttrc", "**/.mbsyncrc",
		"**/.offlineimaprc", "**/.smbcredentials", "**/.cifs*", "**/.erlang.cookie", "**/.config/borg/keys/**", "**/.config/restic/**",
		"**/.boto3", "**/.aws-sam/**", "**/.config/atlas/**", "**/.config/mongocli.toml", "**/.config/vercel/**", "**/.config/sentry/**"}},
	// Daemons' and servers' configuration that carries passwords, shared keys or tokens under an
	// ordinary name: HA and cluster keys, mail relays and IMAP, VPNs, directory services, web
	// dashboards, databases, caches and brokers, monitoring agents, backup tools, CI and
	// configuration management. Reading one is reading the service's credentials.
	{"credentials", []string{"/etc/keepalived/keepalived.conf", "/etc/keepalived/*.conf", "/etc/corosync/authkey", "/etc/pacemaker/authkey",
		"/etc/ha.d/authkeys", "/etc/grafana/grafana.ini", "/etc/grafana/provisioning/**", "/etc/openvpn/**", "/etc/strongswan/**",
		"/etc/swanctl/**", "/etc/openconnect/**", "/etc/vpnc/**", "/etc/tinc/**", "/etc/postfix/sasl*",
		"/etc/postfix/*passwd*", "/etc/mail/authinfo*", "/etc/exim4/passwd*", "/etc/ssmtp/ssmtp.conf", "/etc/msmtprc", "/etc/fetchmailrc",
		"/etc/dovecot/users", "/etc/dovecot/*passwd*", "/etc/sasldb2", "/etc/sasl2/sasldb*", "/etc/redis/*.conf", "/etc/redis.conf",
		"/etc/valkey/*.conf", "/etc/keydb/*.conf", "/etc/pgbouncer/userlist.txt", "/etc/pgpool*/pool_passwd", "/etc/pgpool*/pcp.conf",
		"/etc/mongod.conf", "/etc/mongodb-keyfile", "/etc/rabbitmq/rabbitmq.conf", "/etc/rabbitmq/*.config", "/etc/rabbitmq/.erlang.cookie",
		"/etc/mysql/conf.d/*client*.cnf", "/etc/mosquitto/passwd*", "/etc/mosquitto/*.passwd", "/etc/nut/upsd.users", "/etc/nut/upsmon.conf",
		"/etc/openldap/slapd.conf", "/etc/ldap/slapd.d/**", "/etc/openldap/slapd.d/**", "/etc/*ldap*.secret", "/etc/ldap.conf",
		"/etc/sssd/sssd.conf", "/etc/sssd/conf.d/**", "/etc/zabbix/*.psk", "/etc/zabbix/zabbix_server.conf", "/etc/zabbix/zabbix_proxy.conf",
		"/etc/telegraf/telegraf.conf", "/etc/telegraf/telegraf.d/**", "/etc/datadog-agent/datadog.yaml", "/etc/dd-agent/datadog.conf",
		"/etc/newrelic-infra.yml", "/etc/newrelic/**", "/etc/kibana/kibana.yml", "/etc/icinga2/conf.d/api-users.conf", "/etc/nagios*/htpasswd*",
		"/etc/gitlab/gitlab.rb", "/etc/gitea/app.ini", "/etc/forgejo/app.ini", "/etc/drone/**", "/etc/concourse/**",
		"/etc/consul.d/**", "/etc/nomad.d/**", "/etc/vault.d/**", "/etc/borgmatic/**", "/etc/borgmatic.d/**", "/etc/restic/**",
		"/etc/bacula/*.conf", "/etc/bareos/**", "/etc/duplicity/**", "/etc/rsnapshot.conf", "/etc/chef/encrypted_data_bag_secret",
		"/etc/puppetlabs/puppet/ssl/private_keys/**", "/etc/salt/pki/**", "/etc/apt/auth.conf", "/etc/apt/auth.conf.d/**",
		"/etc/cifs*", "/etc/samba/*credentials*", "/etc/davfs2/secrets", "/etc/wvdial.conf", "/etc/hostapd/*.conf", "/etc/X11/xorg.conf.d/*.key",
		"/var/lib/tailscale/**", "/var/lib/zerotier-one/**", "/var/lib/netbird/**", "/var/lib/nebula/**", "/var/lib/rabbitmq/.erlang.cookie",
		"/var/lib/grafana/grafana.db", "/var/www/**/wp-config.php", "/srv/**/wp-config.php", "/var/www/**/LocalSettings.php",
		"/var/www/**/configuration.php", "/var/www/**/config/database.yml", "/var/www/**/settings.php", "/var/www/**/.my.cnf"}},
	// Token stores and certificate stores under ordinary names: every saved Hugging Face token,
	// ACME clients' account and certificate keys (Traefik's acme.json, acme.sh, lego, dehydrated,
	// Caddy's data directory), netplan and other network configuration that keeps Wi-Fi and VPN
	// passphrases.
	{"credentials", []string{"**/.cache/huggingface/stored_tokens", "**/.huggingface/stored_tokens", "**/.config/huggingface/stored_tokens",
		"**/acme.json", "**/.acme.sh/**", "/etc/acme.sh/**", "**/.lego/accounts/**", "**/.lego/certificates/*.key", "/etc/dehydrated/accounts/**",
		"/var/lib/acme/**/*.pem", "**/.local/share/caddy/certificates/**", "**/.local/share/caddy/acme/**", "/var/lib/caddy/**/certificates/**",
		"/etc/netplan/*.yaml", "/etc/netplan/*.yml", "/run/netplan/*.yaml", "/lib/netplan/*.yaml", "/etc/iwd/*.psk", "/var/lib/iwd/*.psk",
		"/etc/wpa_supplicant.conf", "/etc/connman/**/settings", "/var/lib/connman/**/settings"}},
	{"password_store", []string{"**/keystore.json", "**/*.wallet", "**/wallet.json", "**/.ethereum/keystore", "**/keystore/UTC--*"}},
}

// sensitiveMatcher classifies paths with the table. Patterns are compiled one by one (braces
// expanded) and indexed by their rightmost literal path element, so a path only runs the few
// patterns that could match it: its own elements are looked up in the index.
type sensitiveMatcher struct {
	byElem    map[string][]compiledPattern // rightmost literal element → patterns
	unindexed []compiledPattern            // patterns without a literal element, prefiltered by needle
	// folded matches paths of case-insensitive file systems (Windows forms, macOS /Users and
	// /Volumes) with the table's patterns case-folded.
	folded *sensitiveMatcher
	home   string // for secretByName (secret_names.go)
	// all: every compiled pattern in table order, for globSecretKind (glob_reach.go).
	all []compiledPattern
}

type compiledPattern struct {
	row    int // index in sensitiveTable: the lowest matching row wins
	kind   string
	needle string // a literal substring every match contains
	g      *glob.Pattern
	src    string // the expanded pattern text (glob_reach.go)
}

// newSensitiveMatcher compiles the table for a home directory. It panics on a bad pattern: the table
// is a constant of this package and its tests compile it.
func newSensitiveMatcher(home string) *sensitiveMatcher {
	m := compileSensitive(home, false)
	m.folded = compileSensitive(home, true)
	m.home = home
	return m
}

func compileSensitive(home string, fold bool) *sensitiveMatcher {
	m := &sensitiveMatcher{byElem: map[string][]compiledPattern{}}
	home = strings.TrimSuffix(home, "/")
	for row, r := range sensitiveTable {
		for _, p := range r.Patterns {
			if strings.HasPrefix(p, "~/") {
				if home == "" {
					continue
				}
				p = glob.QuoteMeta(home) + p[1:]
			}
			if fold {
				p = strings.ToLower(p)
			}
			for _, x := range expandBraces(p) {
				cp := compiledPattern{row: row, kind: r.Kind, needle: longestLiteral(x), g: glob.MustCompile(x, '/'), src: x}
				m.all = append(m.all, cp)
				if e := rightmostLiteralElem(x); e != "" {
					m.byElem[e] = append(m.byElem[e], cp)
				} else {
					m.unindexed = append(m.unindexed, cp)
				}
			}
		}
	}
	return m
}

// classify returns the sensitive kind of a cleaned absolute path, or "". A path that is the
// text of a Windows path (C:\Users\a\.ssh\id_rsa, %USERPROFILE%\.aws\credentials, left
// relative to the working directory by the resolver) or lies on a case-insensitive macOS volume is
// also matched in its folded form.
func (m *sensitiveMatcher) classify(clean string) string {
	if k := m.classifyDirect(clean); k != "" {
		return k
	}
	return m.derivativeKind(clean) // secret_derivatives.go
}

// classifyDirect: the kind of the path itself (table, folded forms, names), without derivatives.
func (m *sensitiveMatcher) classifyDirect(clean string) string {
	if k := m.match(clean); k != "" || m.folded == nil {
		return k
	}
	if f, ok := foldedForm(clean); ok {
		if k := m.folded.match(f); k != "" {
			return k
		}
	}
	if k := secretByName(clean, m.home); k != "" {
		return k
	}
	return tokenCacheName(clean, m.home) // sensitive_state.go
}

// foldedForm: the lower-cased POSIX form of a Windows path text or a macOS user path.
func foldedForm(p string) (string, bool) {
	if len(p) > 4096 {
		return "", false
	}
	win := strings.ContainsAny(p, `\%`) || strings.Contains(p, "$env:")
	if !win && !strings.HasPrefix(p, "/Users/") && !strings.HasPrefix(p, "/Volumes/") {
		return "", false
	}
	q := strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	for _, v := range [][2]string{{"%userprofile%", "/users/user"}, {"$env:userprofile", "/users/user"}, {"${env:userprofile}", "/users/user"},
		{"%homepath%", "/users/user"}, {"$home", "/users/user"}, {"%appdata%", "/users/user/appdata/roaming"},
		{"$env:appdata", "/users/user/appdata/roaming"}, {"%localappdata%", "/users/user/appdata/local"},
		{"$env:localappdata", "/users/user/appdata/local"}, {"%systemroot%", "/windows"}, {"$env:systemroot", "/windows"},
		{"%windir%", "/windows"}, {"%programdata%", "/programdata"}} {
		if i := strings.Index(q, v[0]); i >= 0 {
			q = v[1] + q[i+len(v[0]):]
			break
		}
	}
	// C:/Users/… anywhere in the text (also after a working directory the resolver prefixed).
	for i := 0; i+2 < len(q); i++ {
		if q[i] >= 'a' && q[i] <= 'z' && q[i+1] == ':' && q[i+2] == '/' && (i == 0 || q[i-1] == '/') {
			q = q[i+2:]
			break
		}
	}
	if !strings.HasPrefix(q, "/") {
		return "", false
	}
	return path.Clean(q), true
}

func (m *sensitiveMatcher) match(clean string) string {
	if isEnvExample(clean) || isPublicKey(clean) { // isPublicKey: local_targets.go
		return ""
	}
	best := len(sensitiveTable)
	kind := ""
	try := func(cp compiledPattern) {
		if cp.row < best && strings.Contains(clean, cp.needle) && cp.g.Match(clean) {
			best, kind = cp.row, cp.kind
		}
	}
	// Each distinct element's patterns run once (a path repeating an element must not repeat work).
	var seen map[string]bool
	rest := clean
	for n := 0; rest != ""; n++ {
		var e string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			e, rest = rest[:i], rest[i+1:]
		} else {
			e, rest = rest, ""
		}
		cands := m.byElem[e]
		if e == "" || len(cands) == 0 {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[e] {
			continue
		}
		seen[e] = true
		for _, cp := range cands {
			try(cp)
		}
	}
	for _, cp := range m.unindexed {
		try(cp)
	}
	return kind
}

// expandBraces expands {a,b} groups (not nested) into separate patterns.
func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	if i < 0 {
		return []string{p}
	}
	j := strings.IndexByte(p[i:], '}')
	if j < 0 {
		return []string{p}
	}
	j += i
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

func isLiteral(s string) bool { return !strings.ContainsAny(s, `*?[]{}\`) }

func rightmostLiteralElem(p string) string {
	elems := strings.Split(p, "/")
	for i := len(elems) - 1; i >= 0; i-- {
		if elems[i] != "" && isLiteral(elems[i]) {
			return elems[i]
		}
	}
	return ""
}

func longestLiteral(p string) string {
	best, cur := "", ""
	for i := 0; i < len(p); i++ {
		c := p[i]
		if strings.IndexByte(`*?[]{}\`, c) >= 0 {
			cur = ""
			continue
		}
		cur += string(c)
		if len(cur) > len(best) {
			best = cur
		}
	}
	return best
}

func isEnvExample(p string) bool {
	i := strings.LastIndexByte(p, '/')
	base := p[i+1:]
	if !strings.HasPrefix(base, ".env.") {
		return false
	}
	switch strings.TrimPrefix(base, ".env.") {
	case "example", "sample", "template", "dist", "defaults":
		return true
	}
	return false
}
