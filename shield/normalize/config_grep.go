package normalize

import (
	"regexp"
	"strings"
)

// Credential keys picked out of configuration. grep, sed and awk over a service's or a tool's
// configuration with a pattern that names a credential key (`grep -E 'admin_password|secret_key'
// /etc/grafana/grafana.ini`, `grep auth_pass /etc/keepalived/keepalived.conf`, `awk -F=
// '/password/{print $2}' ~/.cassandra/cqlshrc`, `grep -r requirepass /etc/redis`) print the
// credential whatever the file is called. configSecretGrep adds a secret effect (Detail
// "pattern") for each file operand outside the workspace in the places services and tools keep
// their configuration (secret_names.go: /etc, /usr/local/etc, /var/lib, /opt, /srv, /root, a
// tool's hidden directory in a home, and web roots under /var/www). Searches of the workspace,
// of system headers and documentation, and of logs are not judged here.

// configSecretKeyRE: a pattern or script that names a credential key.
var configSecretKeyRE = regexp.MustCompile(`(?i)passw(or)?d|passwd|\bpass\b|_pass\b|auth_?pass|requirepass|masterauth|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|bindpw|rootpw|authtok|psk\b|license_key`)

// configExampleRE: examples and templates shipped beside a configuration.
var configExampleRE = regexp.MustCompile(`(?i)[._-](example|sample|template|dist|defaults?)(\.[a-z0-9]+)?$`)

var configGrepRoots = []string{"/etc/", "/usr/local/etc/", "/var/lib/", "/opt/", "/srv/", "/root/", "/var/www/"}

// configSecretGrep: prog searched or printed files with a pattern or script text.
func (w *walker) configSecretGrep(prog, pattern string, files []string) {
	if pattern == "" || len(pattern) > 4096 {
		return
	}
	// A search for credential values by their form (xox[bp]-…, AKIA…, BEGIN … PRIVATE KEY) over a
	// home or a tree that holds homes harvests every token kept there, whatever the files are
	// called: rg -uuu -o 'xox[bp]-[A-Za-z0-9-]+' ~, grep -rhoE 'gh[pousr]_[A-Za-z0-9]{36}' /home.
	valueSearch := historySecretContentRE.MatchString(pattern)
	if !valueSearch && !namesSecretKey(pattern) {
		return
	}
	s := w.s
	for i, raw := range files {
		if i >= 64 {
			break
		}
		if raw == "" || raw == "-" || isUnresolvedText(raw) {
			continue
		}
		clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
		if !ok || inDir(clean, s.n.opt.Workspace) {
			continue
		}
		if valueSearch && holdsHome(clean, s.n.opt.Home) {
			s.addEffect(Effect{Kind: EffectSecret, Target: clean, Program: prog, Detail: "pattern", Sensitive: true})
			continue
		}
		if !configLocation(clean, s.n.opt.Home) || configExampleRE.MatchString(clean) {
			continue
		}
		// A system file of a known kind that holds no secret (sshd_config, nsswitch.conf, pam.d,
		// login.defs is unclassified but names settings only): searching it for password
		// settings is administration.
		if k := s.n.sens.classify(clean); k != "" && !hasKind(s.n.pathEffectKinds(k), EffectSecret) {
			continue
		}
		s.addEffect(Effect{Kind: EffectSecret, Target: clean, Program: prog, Detail: "pattern", Sensitive: true})
	}
}

// configLocation: a path where services or tools keep configuration.
func configLocation(clean, home string) bool {
	for _, r := range configGrepRoots {
		if strings.HasPrefix(clean, r) || clean+"/" == r {
			return true
		}
	}
	return hiddenHomeRest(clean, home) != ""
}

// configSettingRE: settings about passwords and tokens that hold none (PasswordAuthentication,
// password_encryption, PASS_MAX_DAYS, token_expiry).
var configSettingRE = regexp.MustCompile(`(?i)(passw(or)?d|pass|token|secret)_?(encryption|authentication|auth\b|policy|hash(ing)?|min|max|length|expir\w*|reset|prompt|lifetime|ttl|validity|rotation|complexity|quality|age|warn)`)

// namesSecretKey: the pattern names a credential key: a keyword not continued by letters
// (PasswordAuthentication is a setting) and not a setting about credentials.
func namesSecretKey(pattern string) bool {
	for _, m := range configSecretKeyRE.FindAllStringIndex(pattern, 16) {
		end := m[1]
		if end < len(pattern) && (pattern[end] == 's' || pattern[end] == 'S') {
			end++ // credentials, secrets, tokens
		}
		if end < len(pattern) {
			c := pattern[end]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				continue
			}
		}
		rest := pattern[m[0]:]
		if len(rest) > 64 {
			rest = rest[:64]
		}
		if configSettingRE.MatchString(rest) && configSettingRE.FindStringIndex(rest)[0] == 0 {
			continue
		}
		return true
	}
	return false
}

// holdsHome: the path is a home directory or a directory above homes (/, /home, /Users, /root).
func holdsHome(clean, home string) bool {
	if home != "" && (clean == home || strings.HasPrefix(home, clean+"/")) {
		return true
	}
	switch clean {
	case "/", "/home", "/Users", "/root", "/var/lib", "/opt", "/srv", "/etc":
		return true
	}
	return strings.HasPrefix(clean, "/home/") && strings.Count(clean, "/") == 2 || strings.HasPrefix(clean, "/Users/") && strings.Count(clean, "/") == 2
}
