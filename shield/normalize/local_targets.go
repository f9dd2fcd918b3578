package normalize

import (
	"net"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Local targets: the developer's own disposable systems on this machine, which cluster and
// database CLIs name the same way they name shared ones.
//
// A Kubernetes context created by a local cluster tool (kind, minikube, k3d, Docker Desktop,
// Rancher Desktop, colima, OrbStack, MicroK8s) names a cluster that runs on this host and that the
// next `kind create cluster` re-creates. When every cluster command of a call (kubectl, oc, helm)
// names such a context explicitly, reads no other kubeconfig (--kubeconfig, KUBECONFIG), names no
// other server or credentials (--server, --cluster, --user, --token, --as) and the call changes no
// context (kubectl config …), the call's cluster effects happen there: their Remote is
// "local-cluster:CONTEXT" (cluster changes) or "local-cluster:pod:NAME" (a command run in a pod).
// A call without --context uses the kubeconfig's current context, which may be anything: it is
// not local. The rules judge a local cluster like a local container (rego/local.rego,
// rules/destructive.yaml).
//
// Reviewable data; the names are the ones the tools give their contexts.

// RemoteLocalCluster prefixes the Remote of an effect on a local cluster.
const RemoteLocalCluster = "local-cluster:"

// localKubeContextRE: context names local cluster tools create.
var localKubeContextRE = regexp.MustCompile(`^(kind-[a-z0-9][a-z0-9.-]*|minikube|docker-desktop|docker-for-desktop|k3d-[a-z0-9][a-z0-9.-]*|rancher-desktop|colima|colima-[a-z0-9][a-z0-9.-]*|orbstack|microk8s)$`)

// kubePrograms: cluster CLIs whose effects the local-cluster reading covers.
var kubePrograms = set("kubectl", "oc", "helm")

// kubeRetarget: options that point a cluster CLI elsewhere than the named context's cluster.
var kubeRetarget = set("--kubeconfig", "--server", "-s", "--cluster", "--user", "--token", "--as", "--as-group", "--as-uid",
	"--certificate-authority", "--client-certificate", "--client-key", "--kube-apiserver", "--kube-token", "--kube-as-user",
	"--kube-as-group", "--kube-ca-file", "--kube-insecure-skip-tls-verify", "--insecure-skip-tls-verify", "--tls-server-name")

// kubeContextOf returns the context a cluster command names explicitly and whether it names
// nothing that retargets it.
func kubeContextOf(c Command) (string, bool) {
	ctx := ""
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" {
			break
		}
		opt, val, hasVal := strings.Cut(a, "=")
		if kubeRetarget[opt] {
			return "", false
		}
		if opt == "--context" || opt == "--kube-context" {
			if !hasVal {
				if i+1 >= len(c.Args) {
					return "", false
				}
				i++
				val = c.Args[i]
			}
			if ctx != "" && ctx != val {
				return "", false
			}
			ctx = val
		}
	}
	return ctx, ctx != ""
}

// localClusterCall: the one local context every cluster command of the call names, or "".
func (s *state) localClusterCall() string {
	ctx := ""
	for _, c := range s.act.Commands {
		if !kubePrograms[c.Name] {
			continue
		}
		if c.Dynamic || strings.Contains(c.Raw, "KUBECONFIG") {
			return ""
		}
		for _, e := range c.Env {
			if strings.HasPrefix(e, "KUBECONFIG=") || strings.HasPrefix(e, "HELM_KUBE") {
				return ""
			}
		}
		if c.Name != "helm" && len(c.Args) > 0 && hasWord(c.Args, "config") {
			return "" // kubectl config set-context/rename-context: the name may mean another cluster now
		}
		x, ok := kubeContextOf(c)
		if !ok || !localKubeContextRE.MatchString(x) || (ctx != "" && x != ctx) {
			return ""
		}
		ctx = x
	}
	if strings.Contains(s.act.Command, "KUBECONFIG") {
		return ""
	}
	return ctx
}

// markLocalTargets tags the cluster effects of a call on a local cluster (see above).
func (s *state) markLocalTargets() {
	ctx := s.localClusterCall()
	if ctx == "" {
		return
	}
	for i := range s.act.Effects {
		e := &s.act.Effects[i]
		switch {
		case strings.HasPrefix(e.Remote, "pod:"):
			e.Remote = RemoteLocalCluster + e.Remote
		case kubePrograms[e.Program] && e.Remote == "" && e.Target == "cluster" && (e.Kind == EffectWrite || e.Kind == EffectDelete):
			e.Remote = RemoteLocalCluster + ctx
		}
	}
}

// User caches: directories package managers and build tools fill with what they download or
// build, and re-create on the next run (`go clean -cache`, `npm cache clean`, `pip cache purge`
// remove the same). Deleting one, or something under it, loses nothing but time: the delete
// effect is marked Detail "user_cache" (rules: rego/local.rego, rules/destructive.yaml). Only
// these roots under a home directory count, never their parents (~/.cache itself holds other
// programs' state, ~/.cargo holds installed binaries and credentials); a sensitive path under
// one is not a cache.
const detailUserCache = "user_cache"

var userCacheRoots = []string{
	".cache/go-build", ".cache/pip", ".cache/pypoetry", ".cache/uv", ".cache/yarn", ".cache/pnpm", ".cache/node-gyp",
	".cache/ms-playwright", ".cache/pre-commit", ".cache/bazel", ".cache/coursier", ".cache/golangci-lint", ".cache/mypy",
	".cache/ruff", ".cache/puppeteer", ".cache/Cypress", ".cache/huggingface/datasets", ".cache/torch/hub", ".cache/typescript",
	".cache/deno", ".cache/bun", ".cache/sccache", ".cache/ccache", ".cache/electron", ".cache/jedi", ".cache/black",
	".npm/_cacache", ".npm/_npx", ".npm/_logs", ".yarn/berry/cache", ".pnpm-store", ".bun/install/cache", ".ccache",
	".gradle/caches", ".gradle/build-cache", ".m2/repository", ".ivy2/cache", ".sbt/boot", ".cargo/registry/cache",
	".cargo/registry/src", ".cargo/git/checkouts", ".nuget/packages", ".composer/cache", ".cache/composer",
	"go/pkg/mod/cache", "Library/Caches/go-build", "Library/Caches/pip", "Library/Caches/Yarn", "Library/Caches/pypoetry",
	"Library/Caches/ms-playwright", "Library/Caches/Cypress", "Library/Caches/Homebrew", "Library/Caches/pnpm",
	// macOS: Apple's rule for ~/Library/Caches is that the system may purge it at any time and
	// apps re-create what they keep there; Xcode's build products, module caches, simulator
	// caches and device symbol copies are rebuilt or re-copied on the next build or connection.
	// Archives (signed releases) and simulator devices (their data) are not caches.
	"Library/Caches", "Library/Developer/Xcode/DerivedData", "Library/Developer/Xcode/iOS DeviceSupport",
	"Library/Developer/Xcode/watchOS DeviceSupport", "Library/Developer/Xcode/tvOS DeviceSupport",
	"Library/Developer/CoreSimulator/Caches", "Library/Developer/Xcode/UserData/Previews",
	"Library/Developer/Xcode/Products",
	// XDG and toolchain caches of other languages and build tools: each is what the tool's own
	// clean/purge command removes.
	".cache/rebar3", ".cache/zig", ".cache/cabal", ".cabal/packages", ".cache/bazelisk", ".cache/node/corepack",
	".cache/prisma", ".cache/esbuild", ".cache/turbo", ".cache/nx", ".cache/pdm", ".cache/hatch", ".cache/pylint",
	".cache/clangd", ".cache/gopls", ".cache/helm/repository", ".cache/matplotlib", ".cache/fontconfig",
	".cache/thumbnails", ".cache/org.swift.swiftpm", ".cache/JetBrains", ".cache/vscode-cpptools", ".cache/sbt",
	".cache/selenium", ".cache/restic", ".cache/buildx", ".cache/act", ".cache/dotnet", ".cache/R", ".cache/stack",
	".cache/nix", ".cache/pants", ".cache/pex", ".cache/uv-python", ".cache/rye", ".cache/wheel",
	".conda/pkgs", ".gradle/wrapper/dists", ".gradle/daemon", ".android/build-cache", ".android/cache",
	".konan/cache", ".pub-cache/hosted", ".pub-cache/git/cache", ".bundle/cache", ".gem/specs",
	".local/share/NuGet/http-cache", ".local/share/NuGet/v3-cache", ".nuget/v3-cache", ".cargo/registry/index",
	".rustup/downloads", ".rustup/tmp", ".terraform.d/plugin-cache", ".cache/terraform", ".cache/vagrant",
	".stack/pantry", ".hex/cache", ".mix/cache", ".cache/deno_dir", ".cache/typescript-language-server",
}

// windowsCacheRoots: the same kind of directories under a Windows user profile seen from WSL
// (/mnt/c/Users/NAME/…): the profile's temporary files and the package managers' caches.
var windowsCacheRoots = []string{
	"AppData/Local/Temp", "AppData/Local/npm-cache", "AppData/Local/pip/cache", "AppData/Local/Yarn/Cache",
	"AppData/Local/pnpm-cache", "AppData/Local/NuGet/Cache", "AppData/Local/NuGet/v3-cache", "AppData/Local/go-build",
	"AppData/Local/Microsoft/Windows/INetCache", "AppData/Local/ms-playwright", "AppData/Local/Cypress/Cache",
	"AppData/Local/pypoetry/Cache", "AppData/Local/uv/cache", "AppData/Local/Gradle/caches", ".gradle/caches",
	".m2/repository", ".nuget/packages", "AppData/Local/CrashDumps", "AppData/Local/D3DSCache",
}

// homeOf: the home directory a cleaned absolute path lies in ("/home/NAME", "/Users/NAME",
// "/root", or the configured home), and the rest of the path below it.
func homeOf(clean, home string) (string, bool) {
	home = strings.TrimSuffix(home, "/")
	if home != "" && strings.HasPrefix(clean, home+"/") {
		return clean[len(home)+1:], true
	}
	if r, ok := strings.CutPrefix(clean, "/root/"); ok {
		return r, true
	}
	for _, h := range []string{"/home/", "/Users/"} {
		if r, ok := strings.CutPrefix(clean, h); ok {
			if _, rest, ok := strings.Cut(r, "/"); ok {
				return rest, true
			}
		}
	}
	return "", false
}

// isUserCache: clean is one of the cache roots or below one.
func isUserCache(clean, home string) bool {
	clean = path.Clean(clean)
	if rel, ok := windowsProfileOf(clean); ok {
		return underAnyRoot(rel, windowsCacheRoots)
	}
	rel, ok := homeOf(clean, home)
	if !ok {
		return false
	}
	return underAnyRoot(rel, userCacheRoots) || inCacheHome(rel) // cache_homes.go
}

// windowsProfileOf: the rest of a path below a Windows user profile mounted in WSL
// (/mnt/c/Users/NAME/REST, any drive letter; the case of "Users" as Windows writes it).
func windowsProfileOf(clean string) (string, bool) {
	if len(clean) < len("/mnt/c/Users/") || !strings.HasPrefix(clean, "/mnt/") || clean[6] != '/' {
		return "", false
	}
	if c := clean[5]; c < 'a' || c > 'z' {
		return "", false
	}
	r, ok := strings.CutPrefix(clean[7:], "Users/")
	if !ok {
		return "", false
	}
	name, rest, ok := strings.Cut(r, "/")
	if !ok || name == "" || name == "Public" || name == "Default" || name == "All Users" {
		return "", false
	}
	return rest, true
}

// underAnyRoot: rel is one of roots or below one.
func underAnyRoot(rel string, roots []string) bool {
	for _, r := range roots {
		if rel == r || strings.HasPrefix(rel, r+"/") {
			return true
		}
	}
	return false
}

// Public keys: an SSH public key file (the .pub next to a private key, or any *.pub in an .ssh
// directory) is the half of a key pair that is handed to others (forge settings,
// authorized_keys); reading it reveals nothing secret. isPublicKey is consulted before the
// sensitive table, so reading one is no secret read; writing one is still a write outside the
// workspace, and authorized_keys keeps its own kind.
func isPublicKey(clean string) bool {
	base := path.Base(clean)
	if !strings.HasSuffix(base, ".pub") || len(base) <= len(".pub") || strings.ContainsAny(base, "*?[{") {
		return false
	}
	return path.Base(path.Dir(clean)) == ".ssh" || strings.HasPrefix(base, "id_")
}

// Local development databases: a database client given an explicit loopback host (-h localhost,
// 127.0.0.1, ::1, or a URL with such a host) and a database named as a development or test one
// (app_test, app_development, test_app, dev, local_app) addresses the developer's own database,
// which the project's setup or test run re-creates. A destroying statement there is marked
// Remote "local-db:NAME" (rules: rego/local.rego). The default socket without a host is not
// enough (PGHOST or a socket file may point anywhere), nor is a loopback port alone (an SSH
// tunnel to a shared server listens there too; its database is not named *_test).
const remoteLocalDB = "local-db:"

// Wave 8 adds the names developers give throwaway databases: scratch, tmp/temp, sandbox, e2e,
// throwaway, playground (app_scratch, e2e_app, tmp-import).
var devDBNameRE = regexp.MustCompile(`(?i)^(test|dev|devel|development|local|scratch|tmp|temp|sandbox|e2e|throwaway|playground)([_-][a-z0-9_-]*)?$|^[a-z0-9_-]*[_-](test|tests|testing|dev|devel|development|local|ci|scratch|tmp|temp|sandbox|e2e|throwaway|playground)$`)

// loopbackName: a host word that names this machine — localhost, ip6-localhost or a literal
// loopback address (127.0.0.0/8, ::1). A DNS name that merely starts with "127." is not one.
func loopbackName(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	switch h {
	case "localhost", "ip6-localhost":
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// localDevDB returns the development database a client call names on a loopback host, or "".
func (w *walker) localDevDB(pa parsedArgs, name string, args words) string {
	var host, db string
	switch name {
	case "psql", "mysql", "mariadb":
	case "mongosh", "mongo":
		return w.localDevMongo(pa, args)
	case "redis-cli", "valkey-cli", "keydb-cli":
		return w.localDevRedis(pa, args)
	default:
		return ""
	}
	if h, dyn, ok := pa.val("-h", "--host"); ok && !dyn {
		host = h
	}
	if d, dyn, ok := pa.val("-d", "--dbname", "-D", "--database"); ok {
		if dyn || (name == "psql" && strings.Contains(d, "://")) {
			return ""
		}
		db = d
	}
	ops := pa.words(args)
	for k, a := range ops.argv {
		if ops.dyn[k] {
			return ""
		}
		if dbURLSchemeRE.MatchString(a) {
			u := parseURL(a, URLConnect, false)
			if host != "" || db != "" || u.Query != "" {
				return ""
			}
			host, db = u.Host, strings.TrimPrefix(u.Path, "/")
			continue
		}
		if db == "" && k == 0 {
			db = a
		}
	}
	if host == "" {
		host = w.localDefaultHost() // no host: the client's default (local_default.go)
	}
	if !loopbackName(host) || !devDBNameRE.MatchString(db) {
		return ""
	}
	return db
}

// sparkLocalMasterRE: the masters that run a Spark job in this process (local, local[4],
// local[*], local[4,2]).
var sparkLocalMasterRE = regexp.MustCompile(`^local(\[(\*|[0-9]{1,4})(,[0-9]{1,4})?\])?$`)

// sparkMaster: a Spark job launched on any master but an explicit local one runs on a cluster
// whose effects the call does not show.
func (w *walker) sparkMaster(pa parsedArgs, name string) {
	// local[4] unquoted is also a glob; it could only match a file named local4, which is no
	// master at all: the job would not start.
	if m, _, ok := pa.val("--master"); ok && sparkLocalMasterRE.MatchString(m) {
		return
	}
	m, _, _ := pa.val("--master")
	w.s.addUnresolved("spark master " + m + " (" + name + ")")
	w.s.addEffect(Effect{Kind: EffectExec, Target: "spark master " + m, Program: name, Detail: "cluster job", Unresolved: true})
}

// readLoopOverListing: a while loop whose condition is `read [-r] NAME` (IFS= allowed) and whose
// input is a process substitution of a listing command, or the pipeline stage before it is one
// (listingStmts: git ls-files, find without actions, under the working directory in the
// workspace); returns NAME, or "".
func (w *walker) readLoopOverListing(c *syntax.WhileClause, st *syntax.Stmt) string {
	listed := w.listedInput
	w.listedInput = false // the loop's own commands read no pipe of it
	if c.Until || len(c.Cond) != 1 {
		return ""
	}
	switch {
	case listed && len(st.Redirs) == 0:
		// git ls-files | while read -r f; do …; done
	case len(st.Redirs) == 1:
		r := st.Redirs[0]
		if r.Op != syntax.RdrIn || r.N != nil || r.Word == nil || len(r.Word.Parts) != 1 {
			return ""
		}
		ps, ok := r.Word.Parts[0].(*syntax.ProcSubst)
		if !ok || ps.Op != syntax.CmdIn || !w.listingStmts(ps.Stmts) {
			return ""
		}
	default:
		return ""
	}
	cond := c.Cond[0]
	call, ok := cond.Cmd.(*syntax.CallExpr)
	if !ok || cond.Background || cond.Negated || len(cond.Redirs) > 0 || len(call.Args) < 2 {
		return ""
	}
	for _, a := range call.Assigns {
		if a.Name == nil || a.Name.Value != "IFS" {
			return ""
		}
	}
	var argv []string
	for _, a := range call.Args {
		v, ok := w.litWord(a)
		if !ok {
			return ""
		}
		argv = append(argv, v)
	}
	if argv[0] != "read" {
		return ""
	}
	name := ""
	for _, a := range argv[1:] {
		switch {
		case a == "-r":
		case name == "" && shellNameRE.MatchString(a):
			name = a
		default:
			return ""
		}
	}
	return name
}

var shellNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
