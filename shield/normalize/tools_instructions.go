package normalize

import (
	"regexp"
	"strings"
)

// Free text that another agent, a schedule or a memory will act on (a sub-agent's task, a message
// to an agent, a memory the agent will recall) is a deferred call: its effects are those of what
// it asks for. Three things are read from it, each bounded:
//   - paths it names (absolute, ~/…, $HOME/…): a delete, write or read effect by the verb of the
//     sentence, classified like any other path (a secret location is a secret read);
//   - URLs it names: a connection;
//   - secrets it asks for by name (private keys, access tokens, passwords, variables such as
//     GITHUB_TOKEN) in a sentence whose verb gets, shows or sends them: a secret read.
// Effects found here carry Detail "requested" when the path has no sensitive kind of its own.

const maxInstructionText = 16 << 10 // bytes of one text looked at

var (
	textPathRE = regexp.MustCompile(`(?:^|[\s"'(\x60=:,])((?:~|\$HOME|\$\{HOME\})(?:/[^\s"'\x60),;]*)?|/(?:etc|home|root|var|usr|opt|srv|proc|dev|boot|tmp|mnt|run|sys|lib)(?:/[^\s"'\x60),;]*)?)`)
	// A sentence's verb: deleting, writing, or getting/showing/sending.
	deleteVerbRE = regexp.MustCompile(`(?i)\b(delete|remove|wipe|erase|rm|purge|destroy|shred|truncate|clean\s*up|empty)\b`)
	writeVerbRE  = regexp.MustCompile(`(?i)\b(write|append|overwrite|add\s+(?:a\s+)?(?:line|key|entry)|modify|edit|replace|install|create)\b`)
	getVerbRE    = regexp.MustCompile(`(?i)\b(read|cat|print|show|display|dump|return|paste|send|post|upload|share|sharing|e-?mail|forward|copy|exfiltrate|collect|gather|extract|reveal|output|give|giving|find|look(?:ing)?\s+(?:in|for|at)|list|summari[sz]e|leak|include\s+(?:the|their|its)\s+(?:contents?|values?))(?:s|es|ed|ing)?\b`)
	// Secrets asked for by name.
	secretNounRE = regexp.MustCompile(`(?i)\b((?:ssh|gpg|pgp|private|signing|deploy|secret|access|api|aws|gcp|azure|cloud)[ _-]?(?:private[ _-]?)?(?:keys?|tokens?|secrets?|credentials?)|passwords?|passphrases?|credentials|session\s+cookies?|vault\s+token|kubeconfig|[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)[A-Z0-9_]*)\b`)
	negatedRE    = regexp.MustCompile(`(?i)\b(do\s+not|don't|never|without)\b[^.]*$`)
	sentenceEnd  = regexp.MustCompile(`[.!?;](?:\s+|$)|\n`) // a dot inside a path ("~/.ssh") ends nothing
)

// codeSpanRE finds commands written as code in free text: ```fenced``` blocks and `inline` spans.
var codeSpanRE = regexp.MustCompile("(?s)```[a-zA-Z]*\\n?(.*?)```|`([^`\n]+)`")

// maxInstructionCommands bounds the code spans of one text walked as shell.
const maxInstructionCommands = 8

// instructionEffects adds the effects free text asks for.
func (s *state) instructionEffects(text string) {
	if len(text) > maxInstructionText {
		text = text[:maxInstructionText]
		s.act.Truncated = true
	}
	// Commands the text asks to run, written as code: their effects are the text's, walked as a
	// shell command would be (printenv | curl … in a message is the same exfiltration as in a
	// shell call).
	for _, m := range codeSpanRE.FindAllStringSubmatch(text, maxInstructionCommands) {
		code := m[1] + m[2]
		if strings.TrimSpace(code) == "" || s.stopped() {
			continue
		}
		s.syncEffects()
		s.walker().script(code, 1, "instructions", false)
	}
	s.proseEffects(text)   // tools_prose.go
	s.requestActs(text)    // tools_request_acts.go
	s.textRecipients(text) // tools_claims.go
	for _, sent := range sentenceEnd.Split(text, 256) {
		role := RoleRead
		switch {
		case deleteVerbRE.MatchString(sent):
			role = RoleDelete
		case writeVerbRE.MatchString(sent):
			role = RoleWrite
		}
		for _, m := range textPathRE.FindAllStringSubmatch(sent, 32) {
			raw := strings.TrimRight(m[1], ".:")
			clean, ok := resolvePath(raw, s.cwd, s.n.opt.Home)
			if !ok {
				continue
			}
			kind := s.n.sens.classify(clean)
			if kind == "" {
				kind = s.n.sens.classify(clean + "/x") // a directory that holds secret locations
			}
			in := inDir(clean, s.n.opt.Workspace)
			p := Path{Raw: raw, Clean: clean, Role: role, InWorkspace: in, Sensitive: kind != "", Kind: kind}
			before := len(s.act.Effects)
			s.pathEffects(p)
			for i := before; i < len(s.act.Effects); i++ {
				if s.act.Effects[i].Detail == "" {
					s.act.Effects[i].Detail = DetailRequested
				}
			}
		}
		if s.n.lex().requestedGet(sent) {
			for _, m := range secretNounRE.FindAllStringIndex(sent, 8) {
				if negatedRE.MatchString(sent[:m[0]]) {
					continue // "do not include any key values"
				}
				if after := intentWords(sent[m[1]:]); len(after) > 0 && !s.n.lex().endsObject(after, 0) {
					continue // a modifier: "the credentials section of the docs"
				}
				s.addToolEffect(Effect{Kind: EffectSecret, Target: sent[m[0]:m[1]], Detail: DetailRequested, Sensitive: true})
			}
		}
		for _, u := range urlInTextRE.FindAllString(sent, 16) {
			s.connectEffect(parseURL(strings.TrimRight(u, ".,:;!?"), URLRequest, false))
		}
	}
}

// secretTextRE finds credentials carried in text (the same shapes the bundle's policies look for).
var secretTextRE = regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\b(?:hvs|hvb)\.[A-Za-z0-9_-]{10,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bsk-(?:live-|proj-|ant-)?[A-Za-z0-9_-]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@'"]+:[^\s:/@'"]{3,}@`) // the last: a password in a URL

// syncEffects aligns the shell walker's per-effect bookkeeping with effects added outside it
// (addToolEffect), before the walker runs on a call that already has tool effects.
func (s *state) syncEffects() {
	x := s.fx()
	for len(x.effCmd) < len(s.act.Effects) {
		x.effCmd = append(x.effCmd, -1)
	}
	for len(x.origin) < len(s.act.Effects) {
		x.origin = append(x.origin, "")
	}
}
