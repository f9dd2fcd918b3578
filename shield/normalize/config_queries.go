package normalize

import (
	"regexp"
)

// Configuration queries that print secret-named keys. A configuration reader prints what its
// keys hold; when the key it is asked for — or the pattern it is given — can name a key whose
// value is a credential, the query is a secret read, whatever the tool:
//
//   - git config --get KEY, --get-all KEY, --get-urlmatch KEY URL, `git config get [--all]
//     KEY`: KEY is matched against the secret key vocabulary (secretKeyRE);
//   - git config --get-regexp RE, `git config get --regexp RE`: RE is a regular expression over
//     key names, so it is *run* against exemplar secret keys (gitSecretKeyExemplars) the way git
//     runs it (case-insensitive over canonical names): `http.*extraheader` matches
//     `http.https://github.com/.extraheader`, `credential|token` matches `github.token`, `.`
//     matches everything. A pattern that does not compile is taken to match (fail closed).
//     --name-only prints names, not values: no secret;
//   - other CLIs' `config get|show|view|--get KEY` and the bare `config KEY` query (composer
//     config -g github-oauth.github.com, poetry config http-basic.pypi, gh config get -h HOST
//     oauth_token): any of the query's next words naming a secret key. `config set|unset|
//     delete|edit …` write, they print nothing.
//
// Whole listings (git config --list, npm config list, pip config list) stay allowed: they are
// the ordinary diagnostic, npm redacts its tokens, and a pattern that names nothing secret
// (git config --get-regexp '^user\.', --get remote.origin.url) is a setting. FPR cost: none
// measured on the corpora; a CI checkout's listing is the escape that remains.

// secretKeyRE: a configuration key whose value is a credential.
var secretKeyRE = regexp.MustCompile(`(?i)(extraheader|token|passw|_pass\b|\.pass$|smtppass|secret|api[_-]?key|apikey|oauth|bearer|authorization|_auth\b|auth[_-]?token|http-basic|bitbucket-oauth|gitlab-token|github-oauth|credentials?\.[a-z0-9.-]*password|://[^/@\s]+:[^/@\s]+@)`)

// gitSecretKeyExemplars: canonical git keys (lower case) whose values are credentials, to run
// a --get-regexp pattern against.
var gitSecretKeyExemplars = []string{
	"http.extraheader", "http.https://github.com/.extraheader", "http.https://gitlab.example.com/.extraheader",
	"github.token", "hub.oauthtoken", "gitlab.token", "gitea.token",
	"sendemail.smtppass", "imap.pass", "credential.https://github.com.password",
	"url.https://x-access-token:ghp_token@github.com/.insteadof", "url.https://oauth2:glpat-token@gitlab.com/.insteadof",
	"secret.key", "api.key", "apikey", "auth.token", "password",
}

// gitConfigSecretQuery: the git config argv (its parsed flags and operands) reads a secret key.
func gitConfigSecretQuery(pa parsedArgs, ops words) (string, bool) {
	if pa.has("--name-only") {
		return "", false
	}
	argv := ops.argv
	regex, query := pa.has("--get-regexp"), pa.has("--get", "--get-all", "--get-urlmatch")
	if len(argv) > 0 && argv[0] == "get" { // git config get [--all] [--regexp] KEY (git 2.46)
		argv = argv[1:]
		query, regex = true, regex || pa.has("--regexp")
	}
	if !regex && !query || len(argv) == 0 {
		return "", false
	}
	key := argv[0]
	if len(key) > 512 {
		return key[:64], true
	}
	if ops.dyn[len(ops.argv)-len(argv)] && isUnresolvedText(key) {
		return key, true // a key computed at run time: fail closed
	}
	if secretKeyRE.MatchString(key) {
		return key, true
	}
	if !regex {
		return "", false
	}
	re, err := regexp.Compile("(?i)" + key)
	if err != nil {
		return key, true
	}
	for _, k := range gitSecretKeyExemplars {
		if re.MatchString(k) {
			return key, true
		}
	}
	return "", false
}

// configQueryVerbs: words after "config" that read.
var configQueryVerbs = set("get", "show", "view", "--get", "-g", "--global", "--local", "--user", "--site", "--json", "--list",
	"-l", "--show", "read", "print", "value", "get-value", "--unset-safe")

// configWriteVerbs: words after "config" that write or edit.
var configWriteVerbs = set("set", "unset", "delete", "rm", "remove", "edit", "add", "--unset", "--add", "--edit", "-e", "set-value",
	"unset-value", "--remove", "del")

// configSecretQuery: the operand words (options dropped) of a command query a secret key with a
// `config` sub-command. The caller exempts git (gitConfigSecretQuery) and text programs.
func configSecretQuery(ws []string) bool {
	for i := 0; i < len(ws) && i < 3; i++ {
		if ws[i] != "config" && ws[i] != "configs" {
			continue
		}
		rest := ws[i+1:]
		if len(rest) == 0 || configWriteVerbs[rest[0]] {
			return false
		}
		for k, w := range rest {
			if k >= 4 {
				break
			}
			if configWriteVerbs[w] {
				return false
			}
			if secretKeyRE.MatchString(w) && !configQueryVerbs[w] {
				// config KEY VALUE sets (composer config KEY VALUE, poetry config KEY VALUE): only
				// the key with no value after it is a query.
				if k+1 < len(rest) && !configQueryVerbs[rest[k+1]] {
					return false
				}
				return true
			}
		}
		return false
	}
	return false
}
