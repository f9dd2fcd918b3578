package normalize

import (
	"regexp"
	"strings"
)

// Package sources: where package managers fetch code from, and whether they verify it, set by an
// option (npm --registry, pip --trusted-host, cargo --registry), by the environment (GOPROXY,
// PIP_INDEX_URL, npm_config_registry, GOSUMDB=off) or by a configuration command (npm/pnpm/yarn
// config set, pip config set, go env -w, gem sources --add, poetry source add, bundle config
// mirror.*, composer config repositories.*, conda config, git config http.sslVerify). Each is an
// install effect:
//
//   - Detail "package_source", Target the URL (or "registry NAME"): code comes from there; the
//     rules allow a source whose host is configured egress (the default registries) and flag
//     any other;
//   - Detail "verification_off", Target "SETTING=VALUE": checksums, signatures or TLS are not
//     checked; always a finding.
//
// Reviewable data; kept beside the matcher because values need their own reading (GOPROXY
// lists, GONOSUMDB patterns).

const (
	detailPackageSource   = "package_source"
	detailVerificationOff = "verification_off"
)

// sourceEnv: environment variables naming a package source (their value is one URL or a list).
var sourceEnv = set("npm_config_registry", "NPM_CONFIG_REGISTRY", "YARN_NPM_REGISTRY_SERVER", "YARN_REGISTRY", "BUN_CONFIG_REGISTRY",
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX",
	"UV_FIND_LINKS", "PIPENV_PYPI_MIRROR", "PDM_PYPI_URL", "GOPROXY", "RUBYGEMS_HOST", "GEM_SOURCE", "CONDA_CHANNELS",
	"COMPOSER_MIRROR_PATH_REPOS", "NUGET_SOURCE", "HOMEBREW_BOTTLE_DOMAIN", "HOMEBREW_API_DOMAIN", "HOMEBREW_ARTIFACT_DOMAIN",
	// toolchains and the binaries packages download while installing
	"COREPACK_NPM_REGISTRY", "NVM_NODEJS_ORG_MIRROR", "NODEJS_ORG_MIRROR", "N_NODE_MIRROR", "NODE_MIRROR", "npm_config_disturl",
	"PYTHON_BUILD_MIRROR_URL", "RUSTUP_DIST_SERVER", "RUSTUP_UPDATE_ROOT", "ELECTRON_MIRROR", "PUPPETEER_DOWNLOAD_BASE_URL",
	"PLAYWRIGHT_DOWNLOAD_HOST", "SASS_BINARY_SITE", "CYPRESS_DOWNLOAD_MIRROR", "CHROMEDRIVER_CDNURL", "PRISMA_ENGINES_MIRROR")

// sourceEnvPrefixSuffix: families of variables naming a source (CARGO_REGISTRIES_<NAME>_INDEX).
var sourceEnvPrefixSuffix = [][2]string{{"CARGO_REGISTRIES_", "_INDEX"}, {"POETRY_REPOSITORIES_", "_URL"}, {"BUNDLE_MIRROR__", ""},
	{"PDM_SOURCES_", "_URL"}, {"UV_INDEX_", "_URL"}}

// insecureEnv: variables that turn verification off, with the values that do it ("" any value but
// an empty, 0 or false one).
var insecureEnv = map[string]*regexp.Regexp{
	"GOSUMDB":                      regexp.MustCompile(`^off$`),
	"GOINSECURE":                   nil,
	"GOFLAGS":                      regexp.MustCompile(`(^|\s)-insecure\b`),
	"GONOSUMDB":                    nil, // judged by goPatternsBroad
	"GONOSUMCHECK":                 nil,
	"GOPRIVATE":                    nil, // judged by goPatternsBroad
	"npm_config_strict_ssl":        regexp.MustCompile(`(?i)^(false|0|no)$`),
	"NPM_CONFIG_STRICT_SSL":        regexp.MustCompile(`(?i)^(false|0|no)$`),
	"YARN_ENABLE_STRICT_SSL":       regexp.MustCompile(`(?i)^(false|0|no)$`),
	"NODE_TLS_REJECT_UNAUTHORIZED": regexp.MustCompile(`^0$`),
	"PIP_TRUSTED_HOST":             nil,
	"UV_INSECURE_HOST":             nil,
	"GIT_SSL_NO_VERIFY":            nil,
	"PYTHONHTTPSVERIFY":            regexp.MustCompile(`^0$`),
	"CARGO_HTTP_CHECK_REVOKE":      regexp.MustCompile(`(?i)^false$`),
	"npm_config_ignore_scripts":    nil, // judged below: false re-enables install scripts only when set to false explicitly
	"HOMEBREW_NO_INSTALL_FROM_API": nil,
}

// publicCodeHosts: hosts whose modules a GOPRIVATE/GONOSUMDB pattern without a path would take
// out of the checksum database wholesale.
var publicCodeHosts = set("github.com", "gitlab.com", "bitbucket.org", "golang.org", "go.googlesource.com", "gopkg.in", "google.golang.org",
	"k8s.io", "sigs.k8s.io", "go.uber.org", "cloud.google.com", "go.opentelemetry.io")

// configFileEnv: variables naming the package manager's configuration file or directory: a file
// outside the workspace may say anything about sources (one in the workspace is judged when it is
// written).
var configFileEnv = set("PIP_CONFIG_FILE", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig", "NPM_CONFIG_GLOBALCONFIG",
	"npm_config_globalconfig", "UV_CONFIG_FILE", "POETRY_CONFIG_DIR", "GOENV", "CONDARC", "GEMRC", "BUNDLE_APP_CONFIG", "CARGO_HOME",
	"YARN_RC_FILENAME", "PIXI_CONFIG")

// packageEnv records the package-source effects of one assignment; it reports whether the
// variable is one of them.
func (w *walker) packageEnv(prog, name, val string) bool {
	val = unquoteValue(val)
	if configFileEnv[name] {
		w.packageConfigFile(prog, val)
		return true
	}
	if sourceEnv[name] || sourceEnvFamily(name) {
		for _, v := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
			switch v {
			case "direct", "off", "":
				continue
			}
			w.packageSource(prog, v)
		}
		return true
	}
	if trustAnchorEnv[name] {
		w.trustAnchor(prog, name, val)
		return true
	}
	re, ok := insecureEnv[name]
	if !ok {
		return false
	}
	v := strings.TrimSpace(val)
	switch {
	case name == "GOPRIVATE" || name == "GONOSUMDB":
		if goPatternsBroad(v) {
			w.verificationOff(prog, name+"="+v)
		}
	case name == "npm_config_ignore_scripts":
	case re == nil:
		if v != "" && v != "0" && !strings.EqualFold(v, "false") {
			w.verificationOff(prog, name+"="+v)
		}
	case re.MatchString(v):
		w.verificationOff(prog, name+"="+v)
	}
	return true
}

func sourceEnvFamily(name string) bool {
	for _, ps := range sourceEnvPrefixSuffix {
		if strings.HasPrefix(name, ps[0]) && strings.HasSuffix(name, ps[1]) && len(name) > len(ps[0])+len(ps[1]) {
			return true
		}
	}
	return false
}

// goPatternsBroad: a GOPRIVATE/GONOSUMDB list that takes public modules out of checksum
// verification: a bare '*', a pattern starting with a wildcard element, or a public code host
// without a path (github.com, not github.com/acme).
func goPatternsBroad(v string) bool {
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		host, _, hasPath := strings.Cut(p, "/")
		if p == "*" || host == "*" || strings.HasPrefix(host, "*") && !strings.Contains(host[1:], ".") {
			return true
		}
		if !hasPath && publicCodeHosts[host] {
			return true
		}
	}
	return false
}

// packageSource records code fetched from v (a URL, a host or "registry NAME").
func (w *walker) packageSource(prog, v string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return
	}
	if isUnresolvedText(v) {
		w.s.addUnresolved("package source " + v + " (" + prog + ")")
		w.s.addEffect(Effect{Kind: EffectInstall, Target: v, Program: prog, Detail: detailPackageSource, Unresolved: true})
		return
	}
	w.s.addEffect(Effect{Kind: EffectInstall, Target: v, Program: prog, Detail: detailPackageSource})
	if strings.Contains(v, "://") {
		w.urlEffect(prog, v, false)
	}
}

// packageConfigFile records a configuration file given by path: outside the workspace (and the
// user's own tool directories, for CARGO_HOME-style variables) it is an unknown package source.
func (w *walker) packageConfigFile(prog, v string) {
	v = strings.TrimSpace(v)
	if v == "" || v == "/dev/null" {
		return
	}
	if isUnresolvedText(v) {
		w.packageSource(prog, v)
		return
	}
	clean, ok := resolvePath(v, w.s.cwd, w.s.n.opt.Home)
	if !ok || inDir(clean, w.s.n.opt.Workspace) {
		return
	}
	if home := w.s.n.opt.Home; home != "" && (clean == home+"/.cargo" || clean == home+"/.config/pip/pip.conf" || clean == home+"/.npmrc") {
		return // the defaults, named explicitly
	}
	w.packageSource(prog, "config "+clean)
}

// trustAnchorEnv: variables naming the certificates TLS trusts (a CA bundle in /tmp lets whoever
// wrote it intercept the download).
var trustAnchorEnv = set("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
	"GIT_SSL_CAPATH", "PIP_CERT", "npm_config_cafile", "NPM_CONFIG_CAFILE", "CARGO_HTTP_CAINFO", "UV_NATIVE_TLS")

// trustAnchor: a trust store outside the system's certificate directories and the workspace is
// verification off; an empty CA bundle (CURL_CA_BUNDLE=) disables checking in some clients.
func (w *walker) trustAnchor(prog, name, v string) {
	v = strings.TrimSpace(unquoteValue(v))
	if name == "UV_NATIVE_TLS" {
		return
	}
	if v == "" {
		if name == "CURL_CA_BUNDLE" || name == "REQUESTS_CA_BUNDLE" {
			w.verificationOff(prog, name+"=")
		}
		return
	}
	if isUnresolvedText(v) {
		w.verificationOff(prog, name+"="+v)
		return
	}
	clean, ok := resolvePath(v, w.s.cwd, w.s.n.opt.Home)
	if !ok || inDir(clean, w.s.n.opt.Workspace) {
		return
	}
	for _, d := range []string{"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/usr/share/ca-certificates", "/usr/local/share/ca-certificates",
		"/usr/lib/ssl", "/opt/homebrew/etc", "/usr/local/etc/openssl", "/etc/certs"} {
		if inDir(clean, d) {
			return
		}
	}
	if home := w.s.n.opt.Home; home != "" && inDir(clean, home) && !strings.Contains(clean, "/tmp") {
		return // the user's own corporate bundle (~/certs/corp.pem)
	}
	w.verificationOff(prog, name+"="+clean)
}

// verificationOff records a setting that turns checksum, signature or TLS verification off.
func (w *walker) verificationOff(prog, setting string) {
	if len(setting) > 200 {
		setting = setting[:200]
	}
	w.s.addEffect(Effect{Kind: EffectInstall, Target: setting, Program: prog, Detail: detailVerificationOff})
}

// sourceConfig: a configuration command of a package manager (the words after the program)
// whose key names a source or turns verification off. The key is the first operand after the
// words (a "set" in between is skipped); the value the next one.
type sourceConfig struct {
	progs  string
	words  string
	source *regexp.Regexp // key → the value is a package source
	off    *regexp.Regexp // key → verification off when the value matches offVal (nil: any value)
	offVal *regexp.Regexp
}

// urlInValue: the URL inside an option value (registries.x.index="https://…").
var urlInValue = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

var falseValue = regexp.MustCompile(`(?i)^(false|0|no|off|never)$`)

var sourceConfigs = []sourceConfig{
	{"npm,pnpm,yarn,bun", "config", regexp.MustCompile(`(?i)(^|:)registry$|npmRegistryServer$|^npmScopes\.`), regexp.MustCompile(`(?i)^(strict-ssl|enableStrictSsl)$`), falseValue},
	{"npm,pnpm", "set", regexp.MustCompile(`(?i)(^|:)registry$`), regexp.MustCompile(`(?i)^strict-ssl$`), falseValue},
	{"npm,pnpm,yarn", "config", nil, regexp.MustCompile(`(?i)^(cafile|ca|httpsCaFilePath|unsafeHttpWhitelist)$`), nil},
	{"pip,pip3", "config", regexp.MustCompile(`(?i)(index-url|find-links)$`), regexp.MustCompile(`(?i)trusted-host$`), nil},
	{"poetry", "config", regexp.MustCompile(`^repositories\.`), regexp.MustCompile(`^certificates\..*\.cert$`), falseValue},
	{"bundle", "config", regexp.MustCompile(`^mirror\.`), regexp.MustCompile(`(?i)^ssl_verify_mode$`), regexp.MustCompile(`^0$`)},
	{"composer", "config", regexp.MustCompile(`^repositories\.|^repo\.`), regexp.MustCompile(`^(secure-http|disable-tls)$`), regexp.MustCompile(`(?i)^(false|true)$`)},
	{"conda,mamba,micromamba", "config", regexp.MustCompile(`^(channels|default_channels|channel_alias|custom_channels)$`), regexp.MustCompile(`^ssl_verify$`), falseValue},
	{"git", "config", nil, regexp.MustCompile(`(?i)^(http(\..+)?\.sslverify|protocol(\..+)?\.allow|transfer\.fsckobjects|fetch\.fsckobjects|receive\.fsckobjects|core\.protectntfs|core\.protecthfs)$`), regexp.MustCompile(`(?i)^(false|0|no|off|always)$`)},
}

// sourceOption: an option of an install command that names a source or turns verification off.
type sourceOption struct {
	progs  string
	opts   string // option names, comma-separated
	source bool   // the value is a source; else verification off
	val    *regexp.Regexp
}

var sourceOptions = []sourceOption{
	{"pip,pip3,uv,pipx", "--trusted-host,--allow-insecure-host", false, nil},
	{"npm,pnpm,yarn,bun,npx", "--strict-ssl", false, falseValue},
	{"npm,pnpm,yarn,bun,npx", "--no-strict-ssl", false, nil},
	{"cargo", "--registry", true, nil},
	{"npm,pnpm,yarn,npx", "--userconfig,--globalconfig", true, nil},
	{"cargo", "--config", true, regexp.MustCompile(`(registries|registry|source)\.`)},
	{"pipenv", "--pypi-mirror", true, nil},
	{"go", "-insecure", false, nil},
	{"conda,mamba,micromamba", "-c,--channel", true, regexp.MustCompile(`://`)},
	{"apt,apt-get,aptitude", "--allow-unauthenticated,--allow-insecure-repositories,--allow-downgrades", false, nil},
	{"apt,apt-get", "-o", false, regexp.MustCompile(`(?i)(AllowInsecureRepositories|AllowUnauthenticated|Check-Valid-Until|Verify-Peer|Verify-Host|AllowDowngradeToInsecureRepositories)\s*=\s*(true|false|1|0|yes|no)`)},
	{"yum,dnf", "--nogpgcheck", false, nil},
	{"helm", "--insecure-skip-tls-verify", false, nil},
	{"gem", "-P,--trust-policy", false, regexp.MustCompile(`(?i)^NoSecurity$`)},
	{"git", "-c,--config", false, gitInsecureConfig},
}

// packageSources adds the package-source effects of one command (argv without the program).
func (w *walker) packageSources(name string, args words) {
	if name == "" || secretIdiomExempt[name] && name != "git" {
		return
	}
	ws, _ := secretWords(args)
	for _, o := range sourceOptions {
		if !matchAlt(o.progs, ',', name) {
			continue
		}
		for _, ov := range optionValues(args.argv, strings.Split(o.opts, ",")) {
			if o.val != nil && !o.val.MatchString(ov[1]) {
				continue
			}
			if o.source {
				if o.opts == "--registry" && (ov[1] == "crates-io" || ov[1] == "") {
					continue
				}
				if strings.HasSuffix(ov[0], "config") && !strings.Contains(ov[1], "://") && o.progs != "cargo" {
					w.packageConfigFile(name, ov[1])
					continue
				}
				if !strings.Contains(ov[1], "://") {
					w.packageSource(name, "registry "+ov[1])
					continue
				}
				w.packageSource(name, urlInValue.FindString(ov[1]))
				continue
			}
			w.verificationOff(name, strings.TrimSpace(ov[0]+" "+ov[1]))
		}
	}
	// npm-style scoped and prefixed registry options: --@acme:registry=URL, --config.registry=URL.
	if matchAlt("npm,pnpm,yarn,bun,npx,bunx", ',', name) {
		for i, a := range args.argv {
			if i >= 256 || a == "--" {
				break
			}
			o, v, eq := strings.Cut(a, "=")
			if !strings.HasPrefix(o, "--") || o == "--registry" || !strings.HasSuffix(o, "registry") && !strings.HasSuffix(o, "registry-server") {
				continue
			}
			if !eq && i+1 < len(args.argv) {
				v = args.argv[i+1]
			}
			w.packageSource(name, v)
		}
	}
	// A clone that fetches submodules runs what the repository's .gitmodules names: the
	// repository is a package source (a clone alone is data).
	if name == "git" && len(ws) > 1 && ws[0] == "clone" {
		if len(optionValues(args.argv, []string{"--recurse-submodules", "--recursive"})) > 0 {
			for _, v := range ws[1:] {
				if strings.Contains(v, "://") || strings.HasPrefix(v, "git@") {
					w.packageSource("git", v)
					break
				}
			}
		}
	}
	w.sourceCommands(name, ws)
}

// sourceCommands: configuration commands (npm config set registry URL, go env -w K=V, gem
// sources --add URL, poetry source add NAME URL).
func (w *walker) sourceCommands(name string, ws []string) {
	switch {
	case name == "go" && len(ws) > 1 && ws[0] == "env":
		// go env -w K=V… (the -w flag is gone with the options; K=V operands only come with it)
		for _, kv := range ws[1:] {
			if k, v, ok := strings.Cut(kv, "="); ok {
				w.packageEnv("go env", k, v)
			}
		}
		return
	case name == "gem" && len(ws) > 0 && ws[0] == "sources":
		for _, v := range ws[1:] {
			w.packageSource(name, v)
		}
		return
	case name == "yarn" && len(ws) > 2 && ws[0] == "set" && ws[1] == "version" && strings.Contains(ws[2], "://"):
		w.packageSource(name, ws[2]) // yarn set version URL: yarn itself from there
		return
	case name == "brew" && len(ws) > 2 && ws[0] == "tap":
		// brew tap USER/REPO URL: formulae from that repository (a tap without a URL is a
		// GitHub repository named by convention, and stays with the forge).
		w.packageSource(name, ws[2])
		return
	case name == "poetry" && len(ws) > 3 && ws[0] == "source" && ws[1] == "add":
		w.packageSource(name, ws[3])
		return
	case name == "dotnet" && len(ws) > 3 && ws[0] == "nuget" && ws[1] == "add" && ws[2] == "source",
		name == "nuget" && len(ws) > 2 && ws[0] == "sources" && (ws[1] == "add" || ws[1] == "update"):
		// dotnet nuget add source URL; nuget sources add -Source URL: packages from there.
		for _, v := range ws[2:] {
			if strings.Contains(v, "://") {
				w.packageSource(name, v)
			}
		}
		return
	case name == "uv" && len(ws) > 0 && ws[0] == "add":
		// uv add --index NAME=URL: the option's value was taken by the spec; see sourceOptions.
	}
	for _, c := range sourceConfigs {
		if !matchAlt(c.progs, ',', name) {
			continue
		}
		i := indexOf(ws, c.words)
		if i < 0 || i > 2 {
			continue
		}
		rest := ws[i+1:]
		if len(rest) > 0 && rest[0] == "set" {
			rest = rest[1:]
		}
		if len(rest) < 2 {
			continue
		}
		key, val := rest[0], rest[1]
		if name == "git" && len(rest) > 0 && rest[0] == "--add" {
			continue
		}
		switch {
		case c.source != nil && c.source.MatchString(key):
			for _, v := range rest[1:] {
				if strings.Contains(v, "://") || len(rest) == 2 {
					w.packageSource(name, v)
				}
			}
		case c.off != nil && c.off.MatchString(key) && (c.offVal == nil || c.offVal.MatchString(val)):
			w.verificationOff(name, key+"="+val)
		}
		return
	}
}

// optionValues returns [option, value] for each occurrence of the options in argv: "--opt v",
// "--opt=v", "-ov" (a one-letter option with its value attached); a flag without value gives "".
func optionValues(argv []string, opts []string) [][2]string {
	var out [][2]string
	for i := 0; i < len(argv) && i < 256; i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		for _, o := range opts {
			switch {
			case a == o:
				v := ""
				if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") && !strings.HasPrefix(o, "--no-") && !isFlagOnly(o) {
					v = argv[i+1]
				}
				out = append(out, [2]string{o, v})
			case strings.HasPrefix(a, o+"="):
				out = append(out, [2]string{o, a[len(o)+1:]})
			case len(o) == 2 && o[0] == '-' && o[1] != '-' && strings.HasPrefix(a, o) && len(a) > 2:
				out = append(out, [2]string{o, a[2:]})
			}
		}
	}
	return out
}

// isFlagOnly: options of sourceOptions that take no value.
func isFlagOnly(o string) bool {
	switch o {
	case "--allow-unauthenticated", "--allow-insecure-repositories", "--allow-downgrades", "--nogpgcheck", "--insecure-skip-tls-verify":
		return true
	}
	return false
}
