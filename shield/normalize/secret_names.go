package normalize

import (
	"regexp"
	"strings"
)

// Credential files named for what they hold. The sensitive table (sensitive.go) lists the
// credential files of known tools; a daemon, CLI or app it does not list still names its
// secret files for what they are: /etc/rsyncd.secrets, /etc/davfs2/secrets, /etc/postfix/
// sasl_passwd, /etc/openvpn/client/auth.txt, /var/lib/zerotier-one/identity.secret,
// ~/.vast_api_key, ~/.config/planetscale/access-token. secretByName classifies such a path as
// "credentials" when the table has no row for it, in the places where tools and services keep
// their state:
//
//   - service locations: /etc, /usr/local/etc, /var/lib, /opt, /srv, /root;
//   - a tool's own directory or file in a home directory (~/.NAME…: the first element after the
//     home is hidden; a checkout under the home, the workspace, is not).
//
// It reads the file's name (and directory names such as secrets/ or credentials/), never its
// content; library and cache trees (node_modules, site-packages, a toolchain's sources) and
// source, documentation and media files are left out, so a module named token.py or a manual
// page named passwd.5 is not a credential.

// secretFileNameRE: a file name that says it holds a credential.
var secretFileNameRE = regexp.MustCompile(`(?i)(secret|passw|credential|creds\b|token|api[_-]?key|apikey|auth[_-]?key|keyfile|private[_-]?key|sasldb|authinfo|\.psk$|\.erlang\.cookie$|^cookies?$|^auth(\.[a-z]+)?$|^(client|user|vpn|login)[_-]?auth(\.[a-z]+)?$|[_.-]auth\.(txt|conf|cfg|json|ya?ml|toml)$)`)

// secretDirNameRE: a directory whose files are credentials.
var secretDirNameRE = regexp.MustCompile(`(?i)^(secrets?|secrets?\.d|credentials?|creds|private[_-]?keys?|tokens?)$`)

// secretNameSkipElem: library, cache and documentation trees.
var secretNameSkipElem = set("node_modules", "site-packages", "dist-packages", "vendor", "lib", "lib64", "include", "doc", "docs",
	"man", "locale", "src", "extensions", "toolchains", "versions", "candidates", "pkgs", "caches", "cache", ".cache", "__pycache__",
	"registry", "repository", "mod", "test", "tests", "examples", "share-doc", ".npm", ".cargo", ".rustup", ".nvm", ".pyenv", ".m2",
	".gradle", ".vscode", ".vscode-server", ".cursor-server", ".git", "python3", "gems", "bundle", "jdk", "node",
	// package managers' and security frameworks' records name packages (passwd, libsecret-1-0)
	"dpkg", "rpm", "apt", "pacman", "yum", "dnf", "snapd", "flatpak", "apparmor.d", "selinux", "alternatives", "X11", "fonts")

// secretNameSkipExt: source, documentation, media and package files.
var secretNameSkipExt = set(".py", ".pyc", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rb", ".go", ".rs", ".java", ".class",
	".jar", ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".php", ".pl", ".pm", ".lua", ".vim", ".el", ".ex", ".exs", ".erl",
	".so", ".a", ".o", ".dylib", ".dll", ".md", ".rst", ".html", ".htm", ".css", ".scss", ".map", ".svg", ".png", ".jpg", ".jpeg",
	".gif", ".ico", ".whl", ".egg", ".gz", ".zip", ".deb", ".rpm", ".mo", ".po", ".tmpl", ".template", ".example", ".sample", ".dist",
	".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".d")

var secretNameServiceRoots = []string{"/etc/", "/usr/local/etc/", "/var/lib/", "/opt/", "/srv/", "/root/"}

// secretByName returns "credentials" for a path whose name says it holds a credential, in a
// service location or a tool's directory under the home, or "".
func secretByName(clean, home string) string {
	if len(clean) > 4096 {
		return ""
	}
	rest := ""
	for _, r := range secretNameServiceRoots {
		if strings.HasPrefix(clean, r) {
			rest = clean[len(r):]
			break
		}
	}
	if rest == "" {
		rest = hiddenHomeRest(clean, home)
	}
	if rest == "" {
		return ""
	}
	elems := strings.Split(rest, "/")
	if len(elems) > 64 {
		return ""
	}
	base := elems[len(elems)-1]
	if i := strings.LastIndexByte(base, '.'); i > 0 && secretNameSkipExt[strings.ToLower(base[i:])] {
		return ""
	}
	for _, e := range elems[:len(elems)-1] {
		if secretNameSkipElem[strings.ToLower(e)] {
			return ""
		}
	}
	if secretFileNameRE.MatchString(base) {
		return "credentials"
	}
	for _, e := range elems[:len(elems)-1] {
		if secretDirNameRE.MatchString(e) {
			return "credentials"
		}
	}
	return ""
}

// hiddenHomeRest: the part of a path below a home directory whose first element is hidden
// (~/.NAME…), or "".
func hiddenHomeRest(clean, home string) string {
	var rest string
	switch {
	case home != "" && home != "/" && strings.HasPrefix(clean, strings.TrimSuffix(home, "/")+"/"):
		rest = clean[len(strings.TrimSuffix(home, "/"))+1:]
	case strings.HasPrefix(clean, "/home/"), strings.HasPrefix(clean, "/Users/"):
		r := clean[strings.IndexByte(clean[1:], '/')+2:]
		i := strings.IndexByte(r, '/')
		if i < 0 {
			return ""
		}
		rest = r[i+1:]
	default:
		return ""
	}
	if !strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "./") || strings.HasPrefix(rest, "../") {
		return ""
	}
	return rest
}
