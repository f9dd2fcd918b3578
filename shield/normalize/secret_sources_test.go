package normalize

import (
	"strings"
	"testing"
)

// TestSecretSources: commands that print or hand over a credential carry a secret effect, with
// or without a command spec; their ordinary neighbours do not.
func TestSecretSources(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	secret := []string{
		// environment listings
		"export -p", "export", "declare -x", "declare -xp", "declare -p -x", "typeset -x", "typeset -p", "readonly -p",
		"declare -p AWS_SECRET_ACCESS_KEY", "compgen -e", "compgen -v", "compgen -A export", "ps eww", "ps auxe", "ps axe -o pid,command",
		"ps -E", "ps axeo pid,cmd", "systemctl show-environment", "systemctl --user show-environment", "launchctl getenv GITHUB_TOKEN", "tmux showenv",
		"docker inspect -f '{{.Config.Env}}' web", "kubectl set env deploy/api --list",
		// stores
		"secret-tool search --all service github", "secret-tool lookup service gh", "gopass show -o prod/db", "gopass cat x",
		"keyctl print 1234", "keyctl pipe %user:t", "kwallet-query -r github kdewallet", "kwalletcli -f Passwords -e gh",
		"op item get github --fields password", "op document get key", "op signin --raw", "bw get password github", "bw list items",
		"bw unlock --raw", "lpass show github", "keepassxc-cli show db.kdbx github", "security find-generic-password -s gh -w",
		"vault token lookup", "vault print token", "vault kv get -mount=secret prod", "doppler secrets download --no-file",
		"infisical export", "chamber export prod", "rbw get github", "bws secret get 1234", "conjur variable get -i prod/db/password",
		"akeyless get-secret-value -n /prod/db", "passage show email", "sops -d secrets.enc.yaml", "sops decrypt s.yaml", "age -d -i k.txt x.age",
		"ansible-vault view vault.yml", "pulumi stack output --show-secrets", "terraform output -json", "terraform state pull",
		// cloud, cluster, forge, registry
		"aws ssm get-parameters-by-path --path /prod --with-decryption", "aws --profile prod secretsmanager get-secret-value --secret-id x",
		"aws ecr get-login-password", "aws codeartifact get-authorization-token --domain d", "aws eks get-token --cluster-name c",
		"aws rds generate-db-auth-token --hostname h", "aws kms decrypt --ciphertext-blob fileb://x", "gcloud auth print-access-token",
		"gcloud config config-helper --format=json", "gcloud sql generate-login-token", "az account get-access-token",
		"az storage account keys list -n acct", "az acr login -n r --expose-token", "kubectl get secret db -o yaml",
		"kubectl -n prod get secrets -ojson", "kubectl create token default", "kubectl config view --raw", "kubeadm token create",
		"heroku auth:token", "heroku config -a app", "fly auth token", "flyctl tokens create deploy", "doctl auth token", "cf oauth-token",
		"gh auth status -t", "glab auth status --show-token", "npm token create", "npm config get //registry.npmjs.org/:_authToken",
		"yarn config get npmAuthToken", "docker-credential-desktop get", "git credential fill", "git credential-manager get",
		"git-credential-libsecret get",
		// secret-named variables printed
		`echo "$GITHUB_TOKEN"`, `printf %s "$AWS_SECRET_ACCESS_KEY"`, `echo $DATABASE_URL`, `echo ${STRIPE_API_KEY}`,
		`op run -- env`, `doppler run -- printenv`,
		// rendered values, manifests, settings and state printed with their secrets
		"helm get values billing -n prod -a -o yaml", "helm get manifest billing", "helm get all api", "terraform show -json",
		"terragrunt output -json", "oc extract secret/db --to=-", "az webapp config appsettings list -g rg -n app",
		"aws lambda get-function-configuration --function-name f", "cf env app", "dokku config:export app", "railway variables",
		"netlify env:list --plain", "vercel env pull .env.local", "glab variable export", "firebase functions:config:get",
		"consul kv export", "nomad var get nomad/jobs/x", "mc alias ls", "rclone config show",
	}
	ordinary := []string{
		"export PATH=$PATH:./bin", "export NODE_ENV=production", "export -f myfn", "declare -a arr=(1 2)", "declare -f", "local x=1",
		"typeset -i n=3", "compgen -c git", "ps aux", "ps -ef", "ps -o pid,user,command", "ps -u user", "systemctl status nginx",
		"tmux new-session -d -s dev", "docker inspect web", "kubectl get pods -o wide", "kubectl get configmap app -o yaml",
		"gh auth status", "pass ls", "vault status", "aws sts get-caller-identity", "gcloud config list", "npm whoami",
		"npm config get registry", "sops -e secrets.yaml", "age -e -r age1x x.txt", "terraform output", "terraform plan",
		"echo auth token", "echo get-access-token", "grep -rn print-access-token docs", "git checkout -b fix/get-token-refresh",
		"make build", "npm run test", "git credential-cache exit", "op --version", "bw --help",
		`echo "$HOME"`, `echo ${#GITHUB_TOKEN}`, `echo ${GITHUB_TOKEN:+set}`, `echo "$GITHUB_TOKEN" > /dev/null`, `op run -- npm test`,
		"gcloud container clusters get-credentials dev --zone z", "az aks get-credentials -g rg -n c",
		"helm list -A", "helm status billing", "helm get notes billing", "helm template ./chart", "terraform show", "cf apps",
		"netlify deploy --prod", "rclone copy a remote:b", "mc ls local/bucket", "consul members",
	}
	for _, cmd := range secret {
		t.Run("secret/"+cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
			if !hasEffectKind(a.Effects, EffectSecret) {
				t.Errorf("no secret effect in %v", effectStrings(a.Effects))
			}
		})
	}
	for _, cmd := range ordinary {
		t.Run("ordinary/"+cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
			if hasEffectKind(a.Effects, EffectSecret) {
				t.Errorf("secret effect in %v", effectStrings(a.Effects))
			}
		})
	}
}

func hasEffectKind(es []Effect, kind string) bool {
	for _, e := range es {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

// TestSecretWordsBounded: a long argv is read up to a bound and never panics.
func TestSecretWordsBounded(t *testing.T) {
	argv := strings.Fields(strings.Repeat("get-token -x ", 10000))
	ws, _ := secretWords(words{argv: argv, dyn: make([]bool, len(argv))})
	if len(ws) > 64 {
		t.Fatalf("secretWords read %d words, want at most 64", len(ws))
	}
}
