package normalize

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Effects of structured tools: every runtime's file, search, HTTP, git, message, agent and memory
// tools are normalised to the same effects as the shell commands that would do the same thing, so
// rules judge what a call does whatever tool carries it. The shell engine fills the effects of exec
// calls; this file fills those of every other call from what the catalog entry declares (its paths,
// URLs, recipients, `effects:`, `instructions:` and `search:`), plus the apply_patch documents a
// shell call hands to Codex's patch tool.

// EffectSend: a message leaves through a messaging tool (Target: a recipient; Detail: the class).
const EffectSend = "send"

// Effect details set by this file. They are API.
const (
	DetailRequested = "requested"  // named in free text another agent, schedule or memory will act on
	DetailAgentLoad = "agent_load" // a private key loaded into the local ssh agent (ssh-add KEY)
	DetailContent   = "content"    // a secret carried in the content or body the call sends or writes
)

// defaultPathEffects applies when the catalog declares no path_effects (a nil catalog in tests).
var defaultPathEffects = map[string][]string{
	EffectSecret: {"ssh_key", "cloud_credentials", "kube_config", "k8s_service_account", "docker_config", "credentials",
		"dotenv", "gpg_keyring", "private_key", "shadow", "proc_environ", "proc_mem", "shell_history",
		"browser_credentials", "password_store"},
	EffectPersistence: {"ssh_authorized_keys", "shell_rc", "cron", "service_unit", "autostart", "git_hooks",
		"agent_config", "ld_preload", "pam", "boot"},
	EffectPrivilege: {"sudoers"},
	EffectEscape:    {"container_socket", "proc_root"},
}

// pathEffectKinds returns the effect kinds a sensitive path kind carries.
func (n *Normalizer) pathEffectKinds(kind string) []string {
	if kind == "" {
		return nil
	}
	if n.cat != nil && n.cat.pathEffects != nil {
		return n.cat.pathEffects[kind]
	}
	var out []string
	for ek, kinds := range defaultPathEffects {
		for _, k := range kinds {
			if k == kind {
				out = append(out, ek)
			}
		}
	}
	return out
}

func hasKind(kinds []string, k string) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// toolEffects derives the effects of the call. Exec calls get theirs from the shell engine; only
// the apply_patch documents they carry are read here.
func (s *state) toolEffects(e *Entry, known bool) {
	a := s.act
	if a.Class == ClassExec {
		s.execPatchEffects()
		s.structuredEffects()    // tools_data.go: credentials in the URLs a command requests
		s.nestedConnectEffects() // urls_nested.go: where a redirect or a link-follower goes
		for _, t := range sortedKeys(s.written) {
			s.autorunEffects(t, s.written[t])  // autorun_code.go: files that run later
			s.envFileEffects(t, s.written[t])  // shell_writes.go: env files' loader variables
			s.manifestEffects(t, s.written[t]) // manifest_writes.go: dependencies and images written
		}
		s.writtenStrings()        // shell_writes.go: written text read like a file tool's content
		s.historyRemovalEffects() // tools_history.go
		return
	}
	start := len(s.act.Effects)
	if known && len(e.Patch) > 0 {
		for _, k := range e.Patch {
			for _, v := range lookupKey(a.Args, k) {
				if str, ok := v.(string); ok {
					s.patchEffects(str)
				}
			}
		}
	}
	for _, p := range a.Paths {
		s.pathEffects(p)
	}
	for _, u := range a.URLs {
		if u.Role == URLText {
			continue // a URL inside a body or content is data, not a target
		}
		if u.Scheme == "javascript" {
			// Navigating to javascript:CODE runs CODE in the page (tools_code.go).
			code := u.Raw[strings.IndexByte(u.Raw, ':')+1:]
			if dec, err := url.PathUnescape(code); err == nil {
				code = dec
			}
			s.codePayloadEffects(a.Tool, code)
			s.codeURLTargets(code) // tools_code_targets.go
			continue
		}
		s.connectEffect(u)
	}
	s.moveAwayEffects()             // effects_state.go
	defer s.historyRemovalEffects() // tools_history.go: after every path effect
	toAgent := false
	if a.Class == ClassMessageSend {
		for _, r := range a.Recipients {
			s.addToolEffect(Effect{Kind: EffectSend, Target: r, Detail: a.Class})
			lr := strings.ToLower(r)
			toAgent = toAgent || strings.HasPrefix(lr, "agent:") || strings.HasPrefix(lr, "agent/") || agentNameRE.MatchString(lr)
		}
		// A message addressed to an agent ("agent:deployer") is instructions it will act on,
		// whatever tool carries it.
		if toAgent && (!known || len(e.Instructions) == 0) {
			s.instructionEffects(a.Body)
		} else if !known || len(e.Instructions) == 0 {
			s.personRequestEffects(a.Body) // tools_requests.go: a request to a person is judged by its act
		}
	}
	read := map[string]bool{} // texts read as instructions
	if known {
		for _, es := range e.Effects {
			s.specEffect(es)
		}
		var patterns []string
		for _, k := range e.Search {
			for _, v := range lookupKey(a.Args, k) {
				patterns = append(patterns, stringsOf(v)...)
			}
		}
		s.searchRoots(patterns) // glob_reach.go
		for _, str := range patterns {
			s.searchEffects(str)
		}
		for _, k := range e.Instructions {
			for _, v := range lookupKey(a.Args, k) {
				for _, str := range stringsOf(v) {
					read[str] = true
					s.instructionEffects(str)
				}
			}
		}
	}
	// tools_agent_text.go: every other string an agent will act on (a message to an agent: its
	// subject and every other field too).
	s.agentTextEffects(read, toAgent || a.Class == ClassMessageSend && known && len(e.Instructions) > 0)
	s.textEgressEffects(read) // tools_text_egress.go: text that leaves, types, clicks, queries or configures
	s.memoryFacts()           // tools_memory_facts.go: relations and observations read as sentences
	if a.Class == ClassCodeExec {
		s.codePayloadEffects(a.Tool, a.Content) // tools_code.go
		s.codeURLTargets(a.Content)             // tools_code_targets.go: the URLs code connects to are targets
	}
	if a.Content != "" && a.Class != ClassFileRead && a.Class != ClassFileList && a.Class != ClassFileSearch {
		for _, p := range a.Paths {
			if p.Role == RoleWrite || p.Role == RoleDest {
				s.autorunEffects(p.Clean, s.editedText(a.Content, p.Clean))  // autorun_code.go, autorun_build.go: files that run later
				s.envFileEffects(p.Clean, s.editedText(a.Content, p.Clean))  // shell_writes.go: env files' loader variables
				s.manifestEffects(p.Clean, s.editedText(a.Content, p.Clean)) // manifest_writes.go: dependencies and images written
			}
		}
	}
	s.bodyFileEffects()    // urls_nested.go: file contents templated into a body
	s.typedSecretEffects() // tools_structured.go: secrets typed into a page
	s.forgeFileWrites()    // autorun_build.go: files a forge tool commits
	s.structuredEffects()  // tools_data.go: SQL, secrets in URLs and bodies, settings, browser schemes
	s.secretFieldEffects() // secret_fields.go: secret-named or secret-shaped fields that leave
	s.argumentEffects()    // tools_arguments.go: what the arguments of a class-default tool ask for
	if a.Class == ClassFileWrite {
		s.instructionFileEffects() // tools_prose_intent.go
	}
	// A secret in what the call sends or writes is carried by it.
	if a.Class != ClassFileRead && a.Class != ClassFileList && a.Class != ClassFileSearch {
		for _, t := range []string{a.Body, a.Content} {
			if t != "" && secretTextRE.MatchString(t) {
				s.addToolEffect(Effect{Kind: EffectSecret, Target: a.Tool, Detail: DetailContent})
				break
			}
		}
	}
	for i := start; i < len(s.act.Effects); i++ {
		if s.act.Effects[i].Program == "" {
			s.act.Effects[i].Program = a.Tool
		}
	}
}

// agentNameRE: a recipient named as an agent or bot ("deploy-agent", "@release-bot", "user:ci_assistant"):
// what it is sent is instructions it acts on.
var agentNameRE = regexp.MustCompile(`(?:^|[-_.:/@])(?:agent|agents|bot|assistant|copilot|autopilot|devin|codex|claude)(?:$|[-_.:/]|\d)`)

// addToolEffect appends an effect once, bounded like the other lists.
func (s *state) addToolEffect(e Effect) {
	for _, x := range s.act.Effects {
		if x == e {
			return
		}
	}
	if len(s.act.Effects) >= s.n.opt.MaxStrings {
		s.act.Truncated = true
		return
	}
	s.act.Effects = append(s.act.Effects, e)
}

// pathRoleEffect maps a path role to the effect it has.
var pathRoleEffect = map[string]string{RoleRead: EffectRead, RoleList: EffectRead, RoleSource: EffectRead,
	RoleArg: EffectRead, RoleWrite: EffectWrite, RoleDest: EffectWrite, RoleDelete: EffectDelete, RoleExec: EffectExec}

// mirrorRoots are where a path inside the workspace that repeats a system location most likely
// leads through a symbolic link ("vendor/link_to_root/etc/shadow"): Shield does not touch the file
// system on the decision path, so such a path is classified as the location it mirrors.
var mirrorRoots = []string{"/etc/", "/root/", "/home/", "/proc/", "/var/", "/run/", "/boot/", "/usr/lib/systemd/"}

// mirroredKind returns the sensitive kind of the system location a workspace path mirrors.
func (s *state) mirroredKind(clean string) string {
	rel := strings.TrimPrefix(clean, s.n.opt.Workspace)
	for _, root := range mirrorRoots {
		if i := strings.Index(rel, root); i > 0 {
			if k := s.n.sens.classify(rel[i:]); k != "" {
				return k
			}
		}
	}
	return ""
}

// pathEffects adds the effects of one classified path: the role's effect, and what its sensitive
// kind carries (a secret read, a persistence or privilege write, an escape).
func (s *state) pathEffects(p Path) {
	if p.Kind == "" && p.InWorkspace {
		if k := s.mirroredKind(p.Clean); k != "" {
			p.Kind, p.Sensitive, p.InWorkspace = k, true, false // where the link most likely leads
		}
	}
	kind := pathRoleEffect[p.Role]
	if kind == "" {
		kind = EffectRead
	}
	s.addToolEffect(Effect{Kind: kind, Target: p.Clean, InWorkspace: p.InWorkspace, Sensitive: p.Sensitive, Detail: p.Kind})
	if p.Role == RoleSource { // a move or copy source is also removed or duplicated: both read
		s.addToolEffect(Effect{Kind: EffectRead, Target: p.Clean, InWorkspace: p.InWorkspace, Sensitive: p.Sensitive, Detail: p.Kind})
	}
	kinds := s.n.pathEffectKinds(p.Kind)
	// Listing a secret directory shows names, not contents: a read, not a secret.
	reads := (kind == EffectRead && p.Role != RoleList) || kind == EffectExec
	writes := kind == EffectWrite || kind == EffectDelete
	for _, ek := range kinds {
		switch {
		case ek == EffectSecret && reads,
			ek == EffectSecret && p.Role == RoleSource:
			s.addToolEffect(Effect{Kind: EffectSecret, Target: p.Clean, Detail: p.Kind, InWorkspace: p.InWorkspace, Sensitive: true})
		case (ek == EffectPersistence || ek == EffectPrivilege) && writes:
			s.addToolEffect(Effect{Kind: ek, Target: p.Clean, Detail: p.Kind, InWorkspace: p.InWorkspace, Sensitive: true})
		case ek == EffectEscape:
			s.addToolEffect(Effect{Kind: ek, Target: p.Clean, Detail: p.Kind, InWorkspace: p.InWorkspace, Sensitive: true})
		}
	}
	// A glob read (read_many_files ["~/.config/*/credentials*"]) reads what it can match.
	if p.Kind == "" && !p.InWorkspace && reads && hasGlobMeta(p.Clean) {
		if k := s.globSecret(p.Clean); k != "" {
			s.addToolEffect(Effect{Kind: EffectSecret, Target: p.Clean, Detail: k, Sensitive: true})
		}
	}
}

// connectEffect adds the connection a request URL makes. Sensitive marks a metadata, link-local,
// private, cluster-internal or unparsable host; loopback is left to the egress configuration.
func (s *state) connectEffect(u URL) {
	if u.Host == "" && u.Scheme == "file" {
		return
	}
	target := u.Host
	if u.Port != 0 {
		target = fmt.Sprintf("%s:%d", hostForTarget(u.Host), u.Port)
	}
	sens := false
	switch u.IPClass {
	case IPMetadata, IPLinkLocal, IPPrivate, IPInternal, IPInvalid:
		sens = true
	}
	s.addToolEffect(Effect{Kind: EffectConnect, Target: target, Detail: u.Scheme, Sensitive: sens})
}

func hostForTarget(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// specEffect adds an effect a catalog entry declares.
func (s *state) specEffect(es EffectSpec) {
	args := s.act.Args
	target := es.Default
	for _, k := range es.Target {
		if t := scalarString(lookupKey(args, k)); t != "" {
			target = t
			break
		}
	}
	var details []string
	held := false
	for _, d := range es.DetailIf {
		v := scalarString(lookupKey(args, d.Key))
		if !truthy(v) {
			continue
		}
		hold := true
		if d.Prefix != "" && !strings.HasPrefix(v, d.Prefix) {
			hold = false
		}
		if len(d.Equals) > 0 {
			hold = false
			for _, x := range d.Equals {
				if strings.EqualFold(x, v) {
					hold = true
				}
			}
		}
		if !hold {
			continue
		}
		det := d.Detail
		if strings.Contains(det, "%s") {
			det = strings.ReplaceAll(det, "%s", v)
		}
		details = append(details, det)
		held = true
	}
	if es.Conditional && !held {
		return
	}
	if es.Detail != "" {
		details = append([]string{es.Detail}, details...)
	}
	s.addToolEffect(Effect{Kind: es.Kind, Target: target, Detail: strings.Join(details, ",")})
}

// scalarString renders the first value as a string: strings as they are, booleans and numbers
// printed; "" when absent or not a scalar.
func scalarString(vs []any) string {
	if len(vs) == 0 {
		return ""
	}
	switch x := vs[0].(type) {
	case string:
		return x
	case bool:
		return fmt.Sprint(x)
	case float64, int, int64:
		return fmt.Sprint(x)
	case []any:
		if len(x) > 0 {
			return scalarString(x)
		}
	}
	return ""
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "0", "no", "off", "null":
		return false
	}
	return true
}

// secretNameRE finds secret locations named in a search pattern or free text by their file names.
var secretNameRE = regexp.MustCompile(`(?i)(id_(rsa|dsa|ecdsa|ed25519)|private[ _.-]*key|\.pem\b|\.p12\b|\.pfx\b|\.key\b|\.kdbx\b|authorized_keys|\.aws/credentials|\.netrc|\.pgpass|\.git-credentials|\.vault-token|kubeconfig|\.kube/config|(^|[^a-z])shadow$|\.env\b)`)

// secretContentRE finds search patterns that look for credentials by their content (key headers,
// token prefixes, password assignments).
var secretContentRE = regexp.MustCompile(`(?i)AKIA|ASIA\[|PRIVATE[ .*_-]*KEY|BEGIN[ .*]+(RSA|OPENSSH|EC|DSA|PGP)|passw(or)?d|secret|token|api[_-]?key|ghp_|gho_|xox[abpr]|sk-|hvs\.`)

// searchEffects: a search pattern run under the call's directories. A pattern naming a secret
// location (a glob or regex for keys, credentials, .env files) is a secret read there.
func (s *state) searchEffects(pattern string) {
	if pattern == "" {
		return
	}
	dirs := []Path{}
	for _, p := range s.act.Paths {
		dirs = append(dirs, p)
	}
	if len(dirs) == 0 {
		dirs = append(dirs, Path{Clean: s.cwd, InWorkspace: inDir(s.cwd, s.n.opt.Workspace)})
	}
	for _, d := range dirs {
		// The pattern as a path under the directory, matched against the secret table; an
		// absolute or home-relative pattern is its own root (searchRoots).
		cand := path.Join(d.Clean, strings.TrimPrefix(pattern, "**/"))
		if strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "~/") {
			c, ok := resolvePath(pattern, s.cwd, s.n.opt.Home)
			if !ok {
				continue
			}
			cand = c
			d = Path{Clean: path.Dir(c), InWorkspace: inDir(c, s.n.opt.Workspace)}
		}
		kind := s.n.sens.classify(cand)
		if kind == "" && !d.InWorkspace && hasGlobMeta(cand) {
			g := path.Join(d.Clean, pattern) // glob_reach.go: what the glob can match
			if strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "~/") {
				g = cand
			}
			kind = s.globSecret(g)
		}
		if kind == "" {
			kind = s.n.sens.classify(path.Join(d.Clean, "x", path.Base(pattern)))
		}
		isSecret := hasKind(s.n.pathEffectKinds(kind), EffectSecret) || secretNameRE.MatchString(pattern) ||
			!d.InWorkspace && secretContentRE.MatchString(pattern)
		if isSecret && !(d.InWorkspace && kind != "" && !hasKind(s.n.pathEffectKinds(kind), EffectSecret)) {
			if kind == "" {
				kind = "pattern"
			}
			s.addToolEffect(Effect{Kind: EffectSecret, Target: cand, Detail: kind, InWorkspace: d.InWorkspace, Sensitive: true})
		}
	}
}

// execPatchEffects reads apply_patch documents inside an exec call (Codex runs `apply_patch` as a
// program, with the patch as its argument or a here-document): their files are written or deleted.
func (s *state) execPatchEffects() {
	// The argument strings as sent (an argv element, a bash -lc script with its here-document),
	// before any quoting: the patch text is in one of them.
	for _, str := range s.act.Strings {
		for rest := str; ; {
			i := strings.Index(rest, "*** Begin Patch")
			if i < 0 {
				break
			}
			rest = rest[i:]
			doc := rest
			if j := strings.Index(rest, "*** End Patch"); j >= 0 {
				doc = rest[:j+len("*** End Patch")]
			}
			rest = rest[len(doc):]
			s.patchEffects(doc)
		}
	}
}

// patchEffects adds the write, delete and move effects of an apply_patch document, as Codex reads
// it (tools_patch.go), and the content each added or updated file receives.
func (s *state) patchEffects(doc string) {
	ops := parseCodexPatch(doc)
	for _, op := range ops {
		role := RoleWrite
		if op.kind == patchDelete {
			role = RoleDelete
		}
		s.addPath(op.path, role)
		if op.moveTo != "" {
			s.addPath(op.path, RoleDelete)
			s.addPath(op.moveTo, RoleWrite)
		}
	}
	// Paths added here become effects below (exec calls) or in toolEffects (structured calls).
	if s.act.Class == ClassExec {
		for _, op := range ops {
			for _, raw := range []string{op.path, op.moveTo} {
				if raw == "" {
					continue
				}
				clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
				if !ok {
					continue
				}
				for _, p := range s.act.Paths {
					if p.Clean == clean && p.Role != RoleArg {
						s.pathEffects(p)
					}
				}
			}
		}
	}
}
