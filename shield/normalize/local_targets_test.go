package normalize

import "testing"

// Local targets (local_targets.go, names_only.go): what the normaliser marks as local, and the
// look-alikes it must not mark.
func TestLocalTargets(t *testing.T) {
	t.Parallel()
	const ws, home = "/home/user/project", "/home/user"
	local := func(kind, ctx string) fx { return fx{kind: kind, target: "cluster", remote: "local-cluster:" + ctx} }
	shared := func(kind string) fx { return fx{kind: kind, target: "cluster"} }
	runEffectCases(t, []effectCase{
		// Cluster contexts.
		{name: "kind context delete", cmd: "kubectl --context kind-dev delete ns scratch", want: []fx{local("delete", "kind-dev")}},
		{name: "minikube context= apply", cmd: "kubectl --context=minikube apply -f k8s/", want: []fx{local("write", "minikube")}},
		{name: "helm kube-context", cmd: "helm --kube-context docker-desktop upgrade --install api charts/api", want: []fx{local("write", "docker-desktop")}},
		{name: "pod exec in a local cluster", cmd: "kubectl --context k3d-dev exec deploy/api -- ls /app",
			want: []fx{{kind: "exec", target: "pod:deploy/api", remote: "local-cluster:pod:deploy/api"}}},
		{name: "no context", cmd: "kubectl delete ns scratch", want: []fx{shared("delete")}},
		{name: "prod context", cmd: "kubectl --context prod delete ns scratch", want: []fx{shared("delete")}},
		{name: "kind prefix inside a longer name", cmd: "kubectl --context prod-kind-dev delete ns scratch", want: []fx{shared("delete")}},
		{name: "other kubeconfig", cmd: "kubectl --kubeconfig ./kc --context kind-dev delete ns scratch", want: []fx{shared("delete")}},
		{name: "server override", cmd: "kubectl --context kind-dev -s https://10.0.0.1:6443 delete ns scratch", want: []fx{shared("delete")}},
		{name: "kubeconfig in the environment", cmd: "KUBECONFIG=/tmp/kc kubectl --context kind-dev delete ns scratch", want: []fx{shared("delete")}},
		{name: "exported kubeconfig", cmd: "export KUBECONFIG=/tmp/kc; kubectl --context kind-dev delete ns scratch", want: []fx{shared("delete")}},
		{name: "second command without context", cmd: "kubectl --context kind-dev get po && kubectl delete ns prod", want: []fx{shared("delete")}},
		{name: "two different local contexts", cmd: "kubectl --context kind-a delete po x; kubectl --context kind-b delete po y", want: []fx{shared("delete")}},
		{name: "context renamed in the call", cmd: "kubectl config rename-context prod kind-dev; kubectl --context kind-dev delete ns x", want: []fx{shared("delete")}},
		{name: "context from an expansion", cmd: "kubectl --context $CTX delete ns x", want: []fx{shared("delete")}},
		// Development databases.
		{name: "loopback test database", cmd: "psql -h localhost -U dev app_test -c 'TRUNCATE t'",
			want: []fx{{kind: "delete", target: "database:localhost", remote: "local-db:app_test"}},
			not:  []fx{{kind: "write", target: ws + "/dev"}}},
		{name: "loopback URL dev database", cmd: "psql postgres://dev@127.0.0.1:5432/shop_development -c 'DELETE FROM carts'",
			want: []fx{{kind: "delete", target: "database:127.0.0.1", remote: "local-db:shop_development"}}},
		{name: "mysql loopback test database", cmd: "mysql -h 127.0.0.1 -D app_test -e 'TRUNCATE TABLE s'",
			want: []fx{{kind: "delete", target: "database:127.0.0.1", remote: "local-db:app_test"}}},
		{name: "loopback, database not a dev one", cmd: "psql -h localhost app -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:localhost"}}},
		// Wave 8: no host means the client's default, which is local (local_default.go).
		{name: "default socket", cmd: "psql app_test -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:localhost", remote: "local-db:app_test"}}},
		{name: "default socket, PGHOST in the call", cmd: "PGHOST=db.prod psql app_test -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:localhost"}}},
		{name: "default socket, PGHOST exported", cmd: "export PGHOST=db.prod; psql app_test -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:localhost"}}},
		{name: "remote host", cmd: "psql -h db.example app_test -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:db.example"}}},
		{name: "database from an expansion", cmd: "psql -h localhost $DB -c 'TRUNCATE t'", want: []fx{{kind: "delete", target: "database:localhost"}}},
		// Cache roots.
		{name: "go build cache", cmd: "rm -rf ~/.cache/go-build", want: []fx{{kind: "delete", target: home + "/.cache/go-build", detail: "user_cache"}}},
		{name: "under a cache root", cmd: "rm -rf ~/.npm/_cacache/index-v5", want: []fx{{kind: "delete", target: home + "/.npm/_cacache/index-v5", detail: "user_cache"}}},
		{name: "parent of the caches", cmd: "rm -rf ~/.cache", want: []fx{{kind: "delete", target: home + "/.cache"}}},
		{name: "climbing out of a cache", cmd: "rm -rf ~/.cache/go-build/../../.config", want: []fx{{kind: "delete", target: home + "/.config"}}},
		{name: "cache-named directory in the workspace", cmd: "rm -rf .cache/go-build", want: []fx{{kind: "delete", target: ws + "/.cache/go-build"}}},
		// Public keys.
		{name: "public key is no secret", cmd: "cat ~/.ssh/id_ed25519.pub", want: []fx{{kind: "read", target: home + "/.ssh/id_ed25519.pub"}},
			not: []fx{{kind: "secret", target: home + "/.ssh/id_ed25519.pub"}}},
		{name: "private key is", cmd: "cat ~/.ssh/id_ed25519", want: []fx{{kind: "secret", target: home + "/.ssh/id_ed25519"}}},
		{name: "ssh config is", cmd: "cat ~/.ssh/config", want: []fx{{kind: "secret", target: home + "/.ssh/config"}}},
		// Names-only listings of secret stores.
		{name: "kubectl names", cmd: "kubectl get secrets -o name", not: []fx{{kind: "secret", target: "kubernetes secrets"}}},
		{name: "kubectl custom columns of names", cmd: "kubectl get secrets -o custom-columns=NAME:.metadata.name,TYPE:.type",
			not: []fx{{kind: "secret", target: "kubernetes secrets"}}},
		{name: "kubectl custom columns of data", cmd: "kubectl get secrets -o custom-columns=PW:.data.password", want: []fx{{kind: "secret", target: "kubernetes secrets"}}},
		{name: "kubectl jsonpath of data", cmd: "kubectl get secrets -o jsonpath='{.items[*].data}'", want: []fx{{kind: "secret", target: "kubernetes secrets"}}},
		{name: "kubectl yaml", cmd: "kubectl get secret db -o yaml", want: []fx{{kind: "secret", target: "kubernetes secrets"}}},
		{name: "aws list-secrets", cmd: "aws secretsmanager list-secrets", not: []fx{{kind: "secret", target: "aws secretsmanager list-secrets"}}},
		{name: "aws get-secret-value", cmd: "aws secretsmanager get-secret-value --secret-id x", want: []fx{{kind: "secret", target: "aws secretsmanager get-secret-value"}}},
		// Test expressions and read loops.
		{name: "[ is a program, not a glob", cmd: "[ -f go.mod ] && go build ./...", unres: false},
		{name: "read loop over git ls-files", cmd: `while read -r f; do gofmt -l "$f"; done < <(git ls-files '*.go')`, unres: false},
		{name: "read loop over a file", cmd: `while read -r f; do rm -rf "$f"; done < list.txt`, unres: true},
		{name: "read loop over find /", cmd: `while read -r f; do rm -rf "$f"; done < <(find / -name x)`, unres: true},
		{name: "read loop piped from git ls-files", cmd: `git ls-files | while read -r f; do wc -l "$f"; done`, unres: false},
		{name: "read loop piped from a file", cmd: `cat list.txt | while read -r f; do rm -rf "$f"; done`, unres: true},
		{name: "read loop piped from a filter", cmd: `git ls-files | grep x | while read -r f; do rm "$f"; done`, unres: true},
		{name: "read of two variables", cmd: `while read -r a b; do rm -rf "$b"; done < <(git ls-files)`, unres: true},
		// Spark.
		{name: "spark local master", cmd: "spark-submit --master local[4] jobs/a.py --in data", unres: false,
			want: []fx{{kind: "exec", target: ws + "/jobs/a.py"}}},
		{name: "spark cluster master", cmd: "spark-submit --master yarn jobs/a.py", unres: true},
		{name: "spark default master", cmd: "spark-submit jobs/a.py", unres: true},
	})
}

// The look-alikes of a cache root carry no user_cache mark.
func TestUserCacheOnlyRoots(t *testing.T) {
	t.Parallel()
	n := effNormalizer(t)
	for _, cmd := range []string{"rm -rf ~/.cache", "rm -rf ~/.cache/go-build/../../.config", "rm -rf .cache/go-build", "rm -rf ~/.npm",
		"rm -rf ~/.cargo", "rm -rf /var/cache/apt", "rm -rf ~/.cache/go-build/$X/..", "rm -rf ~/.cache/huggingface", "rm -rf ~/.cache/huggingface/token"} {
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		for _, e := range a.Effects {
			if e.Detail == detailUserCache {
				t.Errorf("%s: %s %s is marked a user cache", cmd, e.Kind, e.Target)
			}
		}
	}
	if !isUserCache("/home/user/.cache/go-build/ab/cd", "/home/user") || !isUserCache("/Users/dev/Library/Caches/pip", "") {
		t.Error("a path under a cache root is not a user cache")
	}
}

func TestKubeFieldsNamesOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"name", true},
		{"wide", true},
		{"custom-columns=NAME:.metadata.name,TYPE:.type", true},
		{"custom-columns=L:.metadata.labels.app", true},
		{"jsonpath={.items[*].metadata.name}", true},
		{`jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, true},
		{"yaml", false},
		{"json", false},
		{"custom-columns=D:.data", false},
		{"custom-columns=A:.metadata.annotations", false},
		{"custom-columns=N:.metadata.name,D:.data.password", false},
		{"custom-columns", false},
		{"jsonpath={.items[*].data}", false},
		{"jsonpath={.items[*].metadata.name}{.items[*].data}", false},
		{`jsonpath={.data.password}`, false},
		{`jsonpath={range .items[*]}{.stringData}{end}`, false},
		{"jsonpath={{.data}}", false},
		{"go-template={{.data}}", false},
		{"name=x", false},
	} {
		if got := kubeFieldsNamesOnly(tc.v); got != tc.want {
			t.Errorf("kubeFieldsNamesOnly(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// FuzzKubeOutputNamesOnly: the output-format reader never panics, and a format it calls names
// only never names a value field.
func FuzzKubeOutputNamesOnly(f *testing.F) {
	for _, s := range []string{"name", "custom-columns=NAME:.metadata.name,TYPE:.type", "jsonpath={.items[*].metadata.name}",
		`jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`, "jsonpath={.items[*].data}", "custom-columns=D:.data.password", "yaml",
		"jsonpath={{}}", "custom-columns=:,:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if len(v) > 4096 {
			return
		}
		if kubeOutputNamesOnly([]string{"get", "secrets", "-o", v}) {
			for _, bad := range []string{".data", "stringData", "annotations", "spec", "status"} {
				if containsFold(v, bad) {
					t.Fatalf("%q is read as names only but names %s", v, bad)
				}
			}
		}
	})
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
