package normalize

import (
	"regexp"
	"strings"
	"unicode"
)

// Text that leaves or instructs, whatever field carries it. A message, a comment, a search query,
// the text a browser or computer-use tool types and the label it clicks, the SQL a query tool
// runs, the value a configuration tool writes: every string leaf of such a call's arguments is
// read (bounded, like the agent-text walk of tools_agent_text.go), not only the fields a catalog
// entry names, so a runtime, a server or a new version that puts its text in another field is
// read the same.
//   - A credential in text that leaves (a known token format, private key material, a URL or
//     assignment with a password, a "user / password" pair): a secret carried, and the text sent
//     (effects.secret-egress).
//   - Typed text that ends a line (a terminal, a shell in a page): the line is a command run,
//     walked as shell.
//   - A click on a control whose label destroys or hands over (Delete organization, Revoke all
//     keys, Transfer ownership): a delete effect of detail DetailControl (text.rego escalates).
//   - Page script reading a stored auth token (localStorage, sessionStorage, document.cookie):
//     a sensitive read of detail DetailStorageToken (text.rego escalates).
//   - SQL in any query or database tool: the SQL scanner's effects; selecting credential
//     columns (password_hash, totp_secret, api_key…): a sensitive read of detail
//     DetailCredentialColumns (text.rego escalates).
//   - A value that switches an agent runtime's own protections off (Bash(*) allowed, approvals
//     never, sandbox danger-full-access, permission checks skipped): a privilege effect.
//   - A message that addresses a bot or agent (@deploy-bot, @claude, /merge): instructions.

// Effect details set by this file. They are API.
const (
	DetailControl           = "browser control"    // a destructive control clicked in a page
	DetailStorageToken      = "browser storage"    // page script reads a stored auth token
	DetailCredentialColumns = "credential columns" // a query selects credential columns
	DetailAgentProtection   = "agent protection"   // a value lowers an agent runtime's protections
	DetailOpenToAll         = "open to everyone"   // a structured call allows every address (0.0.0.0/0)
)

// Bounds of the leaf walk.
const (
	maxEgressLeaves = 128
	maxEgressDepth  = 8
	maxEgressBytes  = 64 << 10
)

// textEgressClasses: classes whose text leaves the host to a person, a page or a service.
var textEgressClasses = set(ClassMessageSend, ClassQuery, ClassBrowser)

// stringLeaves lists every string leaf of args, keys sorted, each once; over reports a bound hit.
func stringLeaves(args map[string]any) (out []string, over bool) {
	return boundedLeaves(args, func(x string) bool { return strings.TrimSpace(x) != "" }, maxEgressDepth, maxEgressLeaves, maxEgressBytes)
}

// keyMaterialRE: private key material without its PEM header: the base64 DER of a PKCS#8 or
// PKCS#1 RSA key (MII…IBADAN / MII…IBAAK), a SEC1 EC key, an Ed25519 PKCS#8 key, an OpenSSH key
// body. A certificate (MII…CCA…) is public and does not match.
var keyMaterialRE = regexp.MustCompile(`\bMI[IJ][A-Za-z0-9+/]{3}IBA(?:DAN|AK)[A-Za-z0-9+/]{4,}|\bMHcCAQEE[A-Za-z0-9+/]{8,}|\bMC4CAQAwBQYDK2Vw[A-Za-z0-9+/]{4,}|\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{8,}`)

// loginPairRE: a password handed over: "user / Secret", "password: Secret", "pw=Secret".
var loginPairRE = regexp.MustCompile(`(?i)(?:\b[a-z0-9._@+-]{2,64}\s+/\s+|\b(?:passw(?:or)?d|passwd|pwd|pw|pass|passphrase)\s*(?:is\s+|[:=]\s*))(\S{8,128})`)

// loginWordRE: the text speaks of logging in (needed for the "user / password" form).
var loginWordRE = regexp.MustCompile(`(?i)\b(?:log\s?-?in|logon|sign\s?-?in|passw(?:or)?d|passwd|pwd|creds?|credentials?|account|admin|root|user(?:name)?)\b`)

// secretAssignRE: a value assigned to a key named for a credential ("aws_secret_access_key =
// …", "API_TOKEN: …", "client_secret=…").
var secretAssignRE = regexp.MustCompile(`(?i)\b[a-z0-9_.-]*(?:secret|token|api_?key|access_?key|private_?key|credential)[a-z0-9_.-]*["']?\s*[:=]\s*["']?([^\s"',;]{16,200})`)

// secretShaped: a value long and mixed enough to be a key, not a placeholder, a reference, a
// path or a URL.
func secretShaped(v string) bool {
	if placeholderValue(v) || strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.Contains(v, "://") || strings.Contains(v, "(") {
		return false
	}
	var letter, digit bool
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
			digit = true
		}
	}
	return letter && digit
}

// strongSecret: a word shaped like a chosen password: letters and digits, and an upper-case
// letter or a symbol; not a path, a URL or a version.
func strongSecret(w string) bool {
	w = strings.TrimRight(w, ".,;)\"'")
	if len(w) < 8 || strings.ContainsAny(w, "/\\<>{}$`") || strings.Contains(w, "://") {
		return false
	}
	var lower, upper, digit, sym bool
	for _, r := range w {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		default:
			sym = true
		}
	}
	return lower && digit && (upper || sym) && !placeholderValue(w)
}

// carriesSecretText: a credential in text that leaves.
func (s *state) carriesSecretText(t string) bool {
	if len(t) > maxDataScan {
		t = t[:maxDataScan]
	}
	if s.n.cat.carriesCredential(t) || keyMaterialRE.MatchString(t) {
		return true
	}
	for _, m := range secretAssignRE.FindAllStringSubmatch(t, 8) {
		if secretShaped(m[1]) {
			return true
		}
	}
	if loginWordRE.MatchString(t) {
		for _, m := range loginPairRE.FindAllStringSubmatch(t, 8) {
			if strongSecret(m[1]) {
				return true
			}
		}
	}
	return false
}

// textEgressEffects reads the string leaves of a call whose text leaves, types, clicks, queries or
// configures (see the file comment). done: texts already read as instructions.
func (s *state) textEgressEffects(done map[string]bool) {
	a := s.act
	switch a.Class {
	case ClassExec, ClassFileRead, ClassFileList, ClassFileSearch, ClassMemoryRead:
		return
	}
	leaves, over := stringLeaves(a.Args)
	if over {
		s.act.Truncated = true // fails closed: general.truncated escalates
	}
	tool := strings.ToLower(a.Tool)
	instructed := a.Class == ClassMessageSend && s.messageToAgent()
	typing := a.Class == ClassBrowser || typingToolRE.MatchString(tool) || typingAction(a.Args)
	for _, t := range leaves {
		if s.stopped() {
			return
		}
		if textEgressClasses[a.Class] && s.carriesSecretText(t) {
			s.addToolEffect(Effect{Kind: EffectSecret, Target: a.Tool, Detail: DetailContent, Sensitive: true})
			s.textSendEffect()
		}
		if typing && a.Class != ClassMessageSend {
			s.typedCommandEffects(t)
			if destructiveControlRE.MatchString(t) && len(t) <= 200 && clickingTool(tool, a.Args) {
				s.addToolEffect(Effect{Kind: EffectDelete, Target: "control: " + t, Detail: DetailControl, Sensitive: true})
			}
		}
		if a.Class == ClassCodeExec || a.Class == ClassBrowser {
			if storageTokenRE.MatchString(t) && !tokenUsedInPlace(t) {
				s.addToolEffect(Effect{Kind: EffectRead, Target: "page storage: " + a.Tool, Detail: DetailStorageToken, Sensitive: true})
			}
		}
		if a.Class == ClassQuery || a.Class == ClassDatabase || a.Class == ClassUnknown {
			s.sqlTextEffects(t)
		}
		if a.Class == ClassConfigChange || a.Class == ClassFileWrite || a.Class == ClassUnknown {
			if m := agentProtectionRE.FindString(t); m != "" && (a.Class == ClassConfigChange || s.agentConfigTarget()) {
				s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "agent configuration: " + m, Detail: DetailAgentProtection, Sensitive: true})
			}
		}
		if everyAddress(t) && writeToolRE.MatchString(tool) && a.Class != ClassMessageSend {
			s.addToolEffect(Effect{Kind: EffectListen, Target: strings.TrimSpace(t), Detail: DetailOpenToAll, Sensitive: true})
		}
		if a.Class == ClassMessageSend {
			bot := instructed || botAddressRE.MatchString(t) || s.n.lex().addressesAgent(t)
			if bot && !done[t] {
				done[t] = true
				s.instructionEffects(t) // a bot or agent addressed acts on the text
			}
			s.messageHarmEffects(t, bot)
		}
	}
	if a.Class == ClassConfigChange {
		s.settingPairEffects()
	}
}

// textSendEffect: the text leaves; a message has its recipients' send effects already.
func (s *state) textSendEffect() {
	for _, e := range s.act.Effects {
		if e.Kind == EffectSend {
			return
		}
	}
	s.addToolEffect(Effect{Kind: EffectSend, Target: s.act.Tool, Detail: s.act.Class})
}

// typingToolRE: a tool that types into a page, a terminal or a desktop.
var typingToolRE = regexp.MustCompile(`(?:^|[_.:-])(?:type|typing|fill|keyboard|keys|input|send_keys|sendkeys|write_text|computer|click|press|select)(?:$|[_.:-])|^computer`)

// typingAction: a computer-use or browser_action call whose action types or clicks.
func typingAction(args map[string]any) bool {
	v, _ := args["action"].(string)
	switch strings.ToLower(v) {
	case "type", "key", "type_text", "fill", "click", "left_click", "double_click", "right_click", "input", "press":
		return true
	}
	return false
}

// clickingTool: the call clicks (a label is what is clicked, not text typed).
func clickingTool(tool string, args map[string]any) bool {
	if strings.Contains(tool, "click") || strings.Contains(tool, "press") || strings.Contains(tool, "tap") || strings.Contains(tool, "select") {
		return true
	}
	v, _ := args["action"].(string)
	return strings.Contains(strings.ToLower(v), "click")
}

// typedCommandEffects: typed text that ends a line is a command run where it is typed (a
// terminal, a page's shell): each line before a line end is walked as shell.
func (s *state) typedCommandEffects(t string) {
	if !strings.ContainsAny(t, "\n\r") {
		return
	}
	t = strings.ReplaceAll(t, "\r", "\n")
	lines := strings.Split(t, "\n")
	lines = lines[:len(lines)-1] // the text after the last line end is not entered
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" || s.stopped() {
			continue
		}
		if n++; n > maxInstructionCommands {
			s.act.Truncated = true
			return
		}
		s.syncEffects()
		s.walker().script(l, 1, "typed", false)
	}
}

// destructiveControlRE: a control whose label destroys data or hands over an account.
var destructiveControlRE = regexp.MustCompile(`(?i)^\W*(?:delete|remove|destroy|erase|wipe|purge|revoke|terminate|deactivate|disable|transfer|reset|drop)\b[^\n]{0,40}\b(?:organi[sz]ations?|org|account|repositor(?:y|ies)|repo|project|workspace|team|tenant|ownership|owner|database|cluster|bucket|keys?|tokens?|secrets?|credentials?|members?|users?|admins?|2fa|mfa|two-factor|backups?|branch protection|protection|environment|production|subscription)\b`)

// storageTokenRE: page script reading a stored auth token or the page's cookies.
var storageTokenRE = regexp.MustCompile(`(?i)(?:localStorage|sessionStorage)\s*(?:\.\s*getItem\s*\(\s*['"\x60][^'"\x60]*(?:token|auth|session|jwt|secret|key|cred|sid|bearer)|\[\s*['"\x60][^'"\x60]*(?:token|auth|session|jwt|secret|key|cred|sid|bearer)|\.\s*[a-z_]*(?:token|auth|session|jwt|secret|cred)[a-z_]*\b\s*(?:[^=\s]|$))|(?:JSON\s*\.\s*stringify|Object\s*\.\s*(?:entries|keys|values|assign))\s*\(\s*(?:window\s*\.\s*)?(?:localStorage|sessionStorage)|document\s*\.\s*cookie\b\s*(?:[^=\s]|$)|cookieStore\s*\.\s*get|context\s*\.\s*cookies\s*\(|storageState\s*\(`)

// tokenUsedInPlace: script that puts the stored token in an Authorization header of a request to
// its own origin (a relative URL, no absolute one) uses it where it belongs.
func tokenUsedInPlace(t string) bool {
	return authHeaderRE.MatchString(t) && !urlInTextRE.MatchString(t)
}

var authHeaderRE = regexp.MustCompile(`(?i)authorization|bearer`)

// agentProtectionRE: a value that switches an agent runtime's own protections off.
var agentProtectionRE = regexp.MustCompile(`(?i)\bBash\(\s*\*?\s*\)|"Bash"\s*[,\]]|\bBash\(\*\*?\)|approval_policy\s*=\s*["']?never|ask_for_approval\s*=\s*["']?never|sandbox_mode\s*=\s*["']?danger-full-access|danger-full-access|dangerously-?skip-?permissions|dangerouslySkipPermissions|bypassPermissions|"?defaultMode"?\s*[:=]\s*"?(?:bypassPermissions|dontAsk)|"?(?:yolo|yoloMode|autoAccept|auto_approve|autoApprove|alwaysAllow)"?\s*[:=]\s*(?:true|\[\s*"\*"\s*\]|"\*")|approvalMode"?\s*[:=]\s*"?yolo|--yolo\b|"?allowedTools"?\s*[:=]\s*\[\s*"\*"`)

// agentConfigTarget: the call writes an agent runtime's configuration file.
func (s *state) agentConfigTarget() bool {
	for _, p := range s.act.Paths {
		if p.Kind == "agent_config" || agentConfigPathRE.MatchString(p.Clean) {
			return true
		}
	}
	for _, k := range []string{"path", "file", "file_path", "filename", "target"} {
		if v, ok := s.act.Args[k].(string); ok && agentConfigPathRE.MatchString(v) {
			return true
		}
	}
	return false
}

// agentConfigPathRE: agent runtimes' configuration files.
var agentConfigPathRE = regexp.MustCompile(`(?:^|/)(?:\.claude/settings[^/]*\.json|\.claude\.json|\.codex/config\.toml|\.cursor/[^/]*\.json|\.gemini/settings\.json|\.continue/config\.(?:json|yaml)|\.windsurf/[^/]+|\.codeium/[^/]+|\.aider\.conf\.yml|\.config/goose/config\.yaml|\.vscode/settings\.json|\.zed/settings\.json|\.config/zed/settings\.json|\.amazonq/[^/]+|\.clinerules|\.roo/[^/]+|\.openhands/[^/]+)$`)

// settingPairEffects: a configuration tool setting an allow list of commands to everything
// (permissions.allow = ["Bash(*)"], allowed_commands = ["*"]).
func (s *state) settingPairEffects() {
	key := ""
	for _, k := range []string{"key", "setting", "name", "path", "option", "field"} {
		if v, ok := s.act.Args[k].(string); ok {
			key = strings.ToLower(v)
			break
		}
	}
	if key == "" || !allowListKeyRE.MatchString(key) {
		return
	}
	vals, _ := stringLeaves(map[string]any{"v": s.act.Args["value"]})
	for _, v := range vals {
		t := strings.TrimSpace(v)
		if t == "*" || t == "**" || strings.EqualFold(t, "all") || agentProtectionRE.MatchString(t) || strings.HasSuffix(t, "(*)") {
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "agent configuration: " + key + "=" + t, Detail: DetailAgentProtection, Sensitive: true})
			return
		}
	}
}

// allowListKeyRE: settings that list what runs without asking.
var allowListKeyRE = regexp.MustCompile(`(?i)(?:permissions?\.allow|allowed_?(?:tools|commands)|allowlist|allow_?list|auto_?approve|always_?allow|trusted_?commands|permissions)`)

// botAddressRE: text that addresses a bot or an agent (@deploy-bot, @claude, /merge, /approve).
var botAddressRE = regexp.MustCompile(`(?i)(?:^|[\s(])@[a-z0-9_.-]*(?:bot|agent|claude|copilot|codex|devin|gemini|cursor|assistant|autopilot|ci)\b|(?:^|\n)\s*/[a-z][a-z-]{1,24}\b`)

// credentialColumnRE: columns that hold credentials.
var credentialColumnRE = regexp.MustCompile(`(?i)\b(?:[a-z_]*password[a-z_]*|passwd|pass_hash|pwd_hash|[a-z_]*(?:totp|otp|mfa|2fa)_?(?:secret|seed|key)[a-z_]*|api_?key[a-z_]*|secret_?key|private_?key|(?:access|refresh|session|auth|reset|password_reset|verification|verify|invite|invitation|magic|magic_link|confirm|confirmation|activation|remember|oauth|bearer|personal_access|api|device)_?token|recovery_?codes?|client_secret|[a-z_]*_secret)\b`)

// sqlLeadRE: text that is SQL.
var sqlLeadRE = regexp.MustCompile(`(?is)^\s*(?:\(\s*)?(?:SELECT|WITH|COPY|INSERT|UPDATE|DELETE|DROP|TRUNCATE|ALTER|CREATE|GRANT|REVOKE|UNLOAD|EXPORT|CALL|EXEC|EXECUTE|MERGE|REPLACE|LOAD)\b`)

// sqlTextEffects: SQL in a string leaf of a query or database tool.
func (s *state) sqlTextEffects(t string) {
	if !sqlLeadRE.MatchString(t) {
		return
	}
	target := "database:" + s.act.Tool
	if s.act.Class != ClassDatabase { // a database tool's body and strings are scanned in tools_data.go
		for _, e := range sqlEffects(t, target, false) {
			s.addToolEffect(e)
		}
		if d := destructiveStatement(t); d != "" {
			s.addToolEffect(Effect{Kind: EffectDelete, Target: target, Detail: "database " + d})
		}
	}
	// UNLOAD … TO 's3://…', EXPORT DATA OPTIONS(uri='gs://…'), COPY INTO 'azure://…': the data
	// goes to that URL.
	if sqlExportRE.MatchString(t) {
		for _, u := range storageURLRE.FindAllString(t, 8) {
			s.connectEffect(parseURL(u, URLRequest, false))
		}
	}
	// The columns a SELECT returns: between SELECT and FROM.
	up := strings.ToUpper(t)
	i := strings.Index(up, "SELECT")
	if i < 0 {
		return
	}
	cols := t[i+6:]
	if j := strings.Index(strings.ToUpper(cols), " FROM "); j >= 0 {
		cols = cols[:j]
	}
	if m := credentialColumnRE.FindString(cols); m != "" {
		s.addToolEffect(Effect{Kind: EffectRead, Target: target + " " + m, Detail: DetailCredentialColumns, Sensitive: true})
	}
}

// sqlExportRE: statements that write data to a URL.
var sqlExportRE = regexp.MustCompile(`(?i)\b(?:UNLOAD|EXPORT\s+DATA|COPY\s+INTO|COPY\b[^;]*\bTO\b|INTO\s+OUTFILE\s+S3|SELECT\b[^;]*\bINTO\s+OUTFILE|BACKUP\s+(?:TABLE|DATABASE)|INSERT\s+INTO\s+FUNCTION)\b`)

// storageURLRE: a storage or web URL written in SQL.
var storageURLRE = regexp.MustCompile(`(?i)\b(?:s3a?|s3n|gs|gcs|az|abfss?|wasbs?|azure|r2|oss|cos|https?|ftp|sftp|hdfs)://[^\s'"),;]+`)

// messageToAgent: a message whose tool or recipient is an agent or a bot (send_agent_message,
// "github-actions[bot]", "release-agent").
func (s *state) messageToAgent() bool {
	if agentToolRE.MatchString(strings.ToLower(s.act.Tool)) {
		return true
	}
	for _, r := range s.act.Recipients {
		lr := strings.ToLower(r)
		if strings.HasSuffix(lr, "[bot]") || agentNameRE.MatchString(lr) {
			return true
		}
	}
	return false
}

var agentToolRE = regexp.MustCompile(`(?:^|[_.-])(?:agent|agents|bot|subagent|assistant)(?:$|[_.-])`)

// Harm a message asks for or announces, whoever reads it.
var (
	// bypassFlagRE: options that skip a check, written to a bot or an agent.
	bypassFlagRE = regexp.MustCompile(`(?i)(?:^|\s)(--skip-(?:checks|tests|ci|review|verify|hooks|approval)|--no-verify|--no-review|--admin|--force-(?:merge|push)|--bypass[a-z-]*|-?-auto-approve|--yes-i-really-mean-it|--dangerously[a-z-]*|--override(?:-checks)?|--disable-(?:checks|tests|review))\b`)
	// exposeRE: a port, a bucket or a service opened to everyone.
	exposeRE = regexp.MustCompile(`(?i)\b(?:open|opening|allow|expose|whitelist|allowlist|permit|add|make)\b[^.\n]{0,60}?(?:0\.0\.0\.0/0|::/0|\bto (?:the )?(?:whole |public |entire )?(?:internet|world)\b|\bfrom anywhere\b|\bto anyone\b|\ball (?:source )?ips\b|\bany (?:source )?ip\b|\bpublic(?:ly)?[- ](?:readable|accessible|writable)\b)`)
	// resetRE and deliverRE: a credential of an account reset or handed over, sent to the asker.
	resetRE   = regexp.MustCompile(`(?i)\b(?:reset|change|recover|disable|remove|turn off|unlock|re-?issue|regenerate|rotate)\b[^.\n]{0,40}\b(?:password|passcode|mfa|2fa|two-factor|credentials?|otp|authenticator|recovery (?:email|phone|codes?)|login|pin)\b`)
	deliverRE = regexp.MustCompile(`(?i)\b(?:send|give|forward|email|e-mail|text|dm|share|reply with|pass|tell)\b[^.\n]{0,40}(?:\bto (?:this|my|me|the following|the address below)\b|\bback to me\b|\bme\b)`)
	// protectionOffRE and keepOffRE: a protection switched off, and the asker wants it left so.
	protectionOffRE = regexp.MustCompile(`(?i)\b(?:disabled|turned off|switched off|removed|bypassed|suspended|paused|deactivated|skipped|dropped)\b[^.\n]{0,40}\b(?:mfa|2fa|two-factor|multi-factor|sso|branch protection|code review|required reviews?|audit(?: logging| logs?| trail)?|cloudtrail|guardduty|monitoring|alerting|firewall|waf|edr|antivirus|encryption|signing|login protection|password policy)\b`)
	keepOffRE       = regexp.MustCompile(`(?i)\b(?:don'?t|do not|never|no need to)\s+(?:re-?enable|turn (?:it|them) (?:back )?on|switch (?:it|them) (?:back )?on|restore|put (?:it|them) back)|\b(?:leave|keep) (?:it|them|that|this)\s+(?:off|disabled)\b|\buntil further notice\b|\bpermanently\b`)
)

// messageHarmEffects adds what a message asks for or announces that lowers a protection: options
// that skip checks written to a bot, a port opened to the internet, a password reset delivered to
// the asker, a protection switched off and to be left so.
func (s *state) messageHarmEffects(t string, bot bool) {
	if len(t) > maxInstructionText {
		t = t[:maxInstructionText]
	}
	if bot {
		if m := bypassFlagRE.FindStringSubmatch(t); m != nil {
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "protection: " + m[1], Detail: DetailRequested})
		}
		if m := exposeRE.FindString(t); m != "" && !negatedRE.MatchString(t[:strings.Index(t, m)]) {
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "protection: opened to everyone (" + m + ")", Detail: DetailRequested})
		}
	}
	if resetRE.MatchString(t) && deliverRE.MatchString(t) {
		s.addToolEffect(Effect{Kind: EffectSecret, Target: "credential of another account", Detail: DetailRequested, Sensitive: true})
	}
	if m := protectionOffRE.FindString(t); m != "" && keepOffRE.MatchString(t) {
		s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "protection: " + m, Detail: DetailRequested})
	}
}

// everyAddress: a value that is every address (an allow list, an ingress rule, a firewall source).
func everyAddress(t string) bool {
	switch strings.TrimSpace(t) {
	case "0.0.0.0/0", "::/0", "0.0.0.0/0,::/0", "0/0":
		return true
	}
	return false
}

// writeToolRE: a tool whose name adds, opens or changes (a lookup that filters on 0.0.0.0/0 to
// audit rules opens nothing).
var writeToolRE = regexp.MustCompile(`(?:^|[_.-])(?:add|allow|authori[sz]e|open|create|update|put|set|grant|insert|enable|modify|attach|apply|patch|upsert|write|replace|edit|append)(?:$|[_.-])|^(?:add|allow|authori[sz]e|open|create|update|put|set|grant|insert|enable|modify|attach|apply|patch|upsert|write|replace|edit|append)[a-z]`)
