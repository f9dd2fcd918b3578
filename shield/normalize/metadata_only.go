package normalize

import (
	"path"
	"regexp"
	"strings"
)

// Inspection modes: options that turn a program which writes its file operand into one that only
// reads it. `ssh-keygen -l -f KEY` (and -B) prints the key's fingerprint; the -f value is read,
// not rewritten as in `ssh-keygen -p -f KEY` or key generation. The mode counts only when every
// other option is one that changes nothing but the output format (-E hash, -v, -q): ssh-keygen
// runs its signing, KRL and host-file modes before the fingerprint one, so any other option keeps
// the -f value a write.
var inspectModes = map[string]struct {
	modes, harmless map[string]bool
}{
	"ssh-keygen": {modes: set("-l", "-B"), harmless: set("-f", "-E", "-v", "-q", "-l", "-B")},
}

// inspectOnly: the parsed argv of name selects an inspection mode and nothing else (see above).
func inspectOnly(pa parsedArgs, name string) bool {
	m, ok := inspectModes[name]
	if !ok {
		return false
	}
	mode := false
	for _, f := range pa.flags {
		if !m.harmless[f] {
			return false
		}
		mode = mode || m.modes[f]
	}
	for _, v := range pa.vals {
		if !m.harmless[v.opt] {
			return false
		}
	}
	return mode && len(pa.operands) == 0
}

// Names, counts and metadata are not contents (reducers.go holds the pipeline form). The forms
// here are single commands whose mode prints only public parts or settings that are no secret:
//
//   - key inspection that prints public parts only (publicInspect): keytool -list/-printcert
//     prints certificates and their fingerprints, never a private key, whatever the store;
//     ssh-keygen -l prints a fingerprint. The store or key read is marked count (like a wc of
//     it): no secret read;
//   - a privilege tool asked what it would allow (sudo -l, -ll, -n -l, --list; -V): it runs no
//     command, so it raises no privilege effect (privilegeListing);
//   - a credential CLI asked for a setting that is no secret (aws configure get region; gcloud
//     config get-value project): settingQueries lists, per CLI, the query words and the keys that
//     are settings; any other key (aws_secret_access_key, credential_process …) keeps the
//     secret effect;
//   - appending what ssh-keyscan prints (host public keys) to a known_hosts file, which ssh does
//     itself on a first connection with StrictHostKeyChecking=accept-new (knownHostsAppend): the
//     write is marked Detail "known_hosts" and the path kind "known_hosts", not a key file.
//     Truncating it (>), writing it with another program or reading it stays what it was.
func init() {
	inspectModes["keytool"] = struct{ modes, harmless map[string]bool }{
		modes: set("-list", "-printcert", "-printcertreq", "-printcrl"),
		harmless: set("-list", "-printcert", "-printcertreq", "-printcrl", "-v", "-rfc", "-keystore", "-storepass", "-keypass",
			"-alias", "-storetype", "-file", "-jarfile", "-cacerts", "-protected", "-sslserver"),
	}
}

// publicInspect: programs whose inspection mode prints only public parts of what it reads.
var publicInspect = set("keytool", "ssh-keygen")

// markPublicInspect marks the reads of programs run in a public inspection mode (see above).
func (s *state) markPublicInspect() {
	progs := map[string]bool{}
	for p, ok := range s.inspected {
		if ok {
			progs[p] = true
		}
	}
	if len(progs) > 0 {
		s.countEffects(progs)
	}
}

// sudoListingArgs: sudo arguments that list the caller's rights or print the version.
var sudoListingRE = regexp.MustCompile(`^(-[ln]*l[ln]*|--list|--non-interactive|-V|--version)$`)

// privilegeListing drops the privilege effect of sudo when every sudo of the call only lists.
func (s *state) privilegeListing() {
	seen := false
	for _, c := range s.act.Commands {
		if c.Sudo {
			return // a command run through sudo (the walker lists it under its own name)
		}
		if c.Name != "sudo" {
			continue
		}
		if c.Dynamic || len(c.Args) == 0 || len(c.Env) > 0 {
			return
		}
		for _, a := range c.Args {
			if !sudoListingRE.MatchString(a) {
				return // a command, -u USER, -U USER, -v …
			}
		}
		seen = true
	}
	if seen {
		s.dropEffects(func(e Effect) bool { return e.Kind == EffectPrivilege && e.Program == "sudo" })
	}
}

// settingQuery: a CLI's query of one setting: the words that select it and the keys that are
// settings (matched against the last dot- or slash-separated part of the key).
type settingQuery struct {
	verb      []string
	valueOpts map[string]bool // global options that take a value
	keys      map[string]bool
}

var settingQueries = map[string]settingQuery{
	"aws": {
		verb:      []string{"configure", "get"},
		valueOpts: set("--profile", "--region", "--output", "--endpoint-url", "--query", "--color", "--ca-bundle", "--cli-connect-timeout", "--cli-read-timeout"),
		keys: set("region", "output", "sso_region", "sso_start_url", "sso_session", "sso_account_id", "sso_role_name",
			"sso_registration_scopes", "role_arn", "source_profile", "role_session_name", "mfa_serial", "duration_seconds",
			"credential_source", "ca_bundle", "cli_pager", "cli_binary_format", "cli_timestamp_format", "cli_auto_prompt",
			"max_attempts", "retry_mode", "endpoint_url", "parameter_validation", "account_id", "web_identity_token_file",
			"use_fips_endpoint", "use_dualstack_endpoint", "defaults_mode", "s3", "addressing_style", "signature_version"),
	},
	"gcloud": {
		verb:      []string{"config", "get-value"},
		valueOpts: set("--project", "--account", "--configuration", "--format", "--verbosity"),
		keys:      set("project", "account", "region", "zone", "cluster", "location", "verbosity", "disable_usage_reporting"),
	},
}

// settingsOnly drops the secret effects of a CLI whose every command in the call is a query of
// a setting (see above).
func (s *state) settingsOnly() {
	for prog, q := range settingQueries {
		seen, ok := false, true
		for _, c := range s.act.Commands {
			if c.Name != prog {
				continue
			}
			seen = true
			if c.Dynamic || !q.matches(c.Args) {
				ok = false
				break
			}
		}
		if seen && ok {
			s.dropEffects(func(e Effect) bool {
				return e.Kind == EffectSecret && e.Program == prog && !strings.HasPrefix(e.Target, "/")
			})
		}
	}
}

func (q settingQuery) matches(args []string) bool {
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, _, hasVal := strings.Cut(a, "=")
		switch {
		case q.valueOpts[opt]:
			if !hasVal {
				i++
			}
		case strings.HasPrefix(a, "-"):
			return false
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) != len(q.verb)+1 {
		return false
	}
	for i, v := range q.verb {
		if ops[i] != v {
			return false
		}
	}
	key := ops[len(ops)-1]
	if k := strings.LastIndexAny(key, "./"); k >= 0 {
		key = key[k+1:]
	}
	return q.keys[key]
}

const detailKnownHosts = "known_hosts"

// knownHostsAppend marks the append of ssh-keyscan's output to a known_hosts file (see above).
func (s *state) knownHostsAppend() {
	targets := map[string]bool{}
	for _, c := range s.act.Commands {
		for _, r := range c.Redirects {
			if !isKnownHosts(r.Path) {
				continue
			}
			if c.Name != "ssh-keyscan" || r.Op != ">>" || (r.Fd != "" && r.Fd != "1") || c.Dynamic || c.Sudo {
				return // written by anything else, or truncated
			}
			targets[r.Path] = true
		}
	}
	if len(targets) == 0 {
		return
	}
	for _, c := range s.act.Commands {
		if c.Name == "ssh-keyscan" {
			continue
		}
		for _, a := range c.Args {
			if strings.Contains(a, "known_hosts") {
				return // another command names the file too (tee, cp, sed -i …)
			}
		}
	}
	for i := range s.act.Effects {
		e := &s.act.Effects[i]
		if e.Kind == EffectWrite && targets[e.Target] && e.Program == "redirect" {
			e.Detail, e.Sensitive = detailKnownHosts, false
		}
	}
	for i := range s.act.Paths {
		p := &s.act.Paths[i]
		if targets[p.Clean] && p.Role == "write" {
			p.Kind = detailKnownHosts
		}
	}
}

// isKnownHosts: a cleaned path that is an SSH known_hosts file of a home directory.
func isKnownHosts(p string) bool {
	base := path.Base(p)
	return (base == "known_hosts" || base == "known_hosts2") && path.Base(path.Dir(p)) == ".ssh"
}

// opensslInspectSubs and opensslInspectOpts: `openssl x509|crl|req -in FILE` with only options
// that print parts of a certificate, CRL or request (all public: what a TLS handshake or a CA
// publishes), never a private key. An output file, a signing key, a CA key, -new or -x509
// (making a certificate) and any other option keep the read what it was.
var (
	opensslInspectSubs = set("x509", "crl", "req")
	opensslInspectOpts = set("-noout", "-text", "-fingerprint", "-sha1", "-sha256", "-sha512", "-md5", "-subject", "-issuer",
		"-dates", "-enddate", "-startdate", "-serial", "-pubkey", "-modulus", "-purpose", "-email", "-ocsp_uri", "-hash",
		"-subject_hash", "-issuer_hash", "-verify", "-nocert", "-lastupdate", "-nextupdate", "-ocspid", "-alias", "-trustout")
	opensslInspectVals = set("-in", "-inform", "-nameopt", "-certopt", "-ext", "-checkend", "-reqopt")
)

// opensslInspect marks the reads of openssl as count when every openssl of the call inspects.
func (s *state) opensslInspect() {
	seen := false
	for _, c := range s.act.Commands {
		if c.Name != "openssl" {
			continue
		}
		if c.Dynamic || c.Sudo || len(c.Args) == 0 || !opensslInspectSubs[c.Args[0]] || len(c.Redirects) > 0 {
			return
		}
		for i := 1; i < len(c.Args); i++ {
			a := c.Args[i]
			switch {
			case opensslInspectOpts[a]:
			case opensslInspectVals[a] && i+1 < len(c.Args):
				i++
			default:
				return
			}
		}
		seen = true
	}
	if seen {
		s.countEffects(map[string]bool{"openssl": true})
	}
}
