package normalize

import (
	"regexp"
	"strings"
)

// Commands and requests written as prose in free text another agent will act on (a sub-agent's
// task, a message to an agent, a memory, a schedule). tools_instructions.go reads code spans,
// paths, URLs and secrets; this file reads what prose asks for without code formatting:
//
//   - commands in a sentence ("run terraform destroy -auto-approve in infra/prod", "then
//     kubectl delete ns prod"): a word that is a program with a command spec, preceded by a verb
//     that runs it or followed by one of its sub-commands, an option or a path, starts a command
//     that ends at the end of the clause. It is walked by the shell effect engine, word by word
//     (quoted, so prose never fails to parse), bounded like code spans;
//   - pushes to a repository named by URL ("add https://…/x.git as a remote and push every
//     branch there", "push the code to git@host:o/r.git"): a push effect to that URL;
//   - protections switched off ("disable the firewall", "turn off branch protection"): a
//     privilege effect.
//
// Each effect found here is what the text asks for; rules judge it as they judge the same effect
// of a call (effects.requested-*, requested.* rules).

// maxProseCommands bounds the prose commands walked per text; maxProseWords the words of one.
const (
	maxProseCommands = 8
	maxProseWords    = 24
)

var (
	// runVerbs: a word before a command that says it is to be run.
	runVerbs = set("run", "execute", "exec", "invoke", "issue", "enter", "type", "sudo", "then", "please", "just")
	// clauseEnd: words that end the command a clause started.
	clauseEnd = set("and", "then", "so", "because", "before", "after", "once", "while", "when", "but", "unless", "which",
		"that", "we", "i", "you", "it", "they", "this", "afterwards", "again", "first", "now", "asap", "immediately", "to", "for", "with", "from",
		"on", "in", "at", "across", "against", "inside", "every", "each", "everywhere", "please", "tonight", "today", "tomorrow", "later")
	forcePushRE = regexp.MustCompile(`(?i)\bforce[- ]?push(?:es|ed|ing)?\b|\bpush(?:es|ed|ing)?\b[^.;]*(?:--force\b|\bforce\b|--mirror\b|\bdelete\s+(?:the\s+)?remote\s+branch)`)
	pushVerbRE  = regexp.MustCompile(`(?i)\b(push|pushes|pushing|mirror|mirroring|upload|uploading|sync|syncing|publish)\b`)
	asRemoteRE  = regexp.MustCompile(`(?i)\bas\s+(?:a|an|the|our|new|another|\s)*(?:git\s+)?remote\b|\bremote\s+add\b`)
	thereRE     = regexp.MustCompile(`(?i)\b(there|to\s+it|to\s+that(?:\s+remote)?|to\s+(?:the|this)\s+(?:new\s+)?remote)\b`)
	// repoURLRE: a repository address: scp-like git@host:owner/repo, or a URL whose path is
	// owner/repo (optionally .git) or ends in .git.
	repoURLRE = regexp.MustCompile(`(?i)\b(?:(?:https?|ssh|git)://[^\s/'"<>]+/[^\s/'"<>]+/[^\s/'"<>]+?(?:\.git)?/?|(?:https?|ssh|git)://[^\s'"<>]+\.git|[a-z0-9_.-]+@[a-z0-9.-]+\.[a-z]{2,}:[^\s'"<>]+?(?:\.git)?)(?:[\s'"<>,;)]|\.?$|\.\s)`)
	// protectionRE: a protection named as the object of a verb that switches it off.
	protectionRE = regexp.MustCompile(`(?i)\b(?:disable|disabling|turn(?:ing)?\s+off|switch(?:ing)?\s+off|bypass(?:ing)?|deactivate|deactivating|circumvent|get\s+around|uninstall|stop|kill|remove|skip|skipping)\s+(?:the\s+|all\s+|any\s+|our\s+|its\s+|their\s+)?((?:host\s+|system\s+)?firewall|ufw|iptables|antivirus|anti-virus|defender|edr|endpoint\s+protection|audit(?:d|\s+log(?:ging|s)?|ing)?|(?:security\s+)?logging|selinux|apparmor|seccomp|sandbox(?:ing)?|branch\s+protection(?:\s+rules?)?|required\s+reviews?|code\s+owners?\s+review|status\s+checks|2fa|mfa|two-factor(?:\s+auth(?:entication)?)?|multi-factor(?:\s+auth(?:entication)?)?|signature\s+(?:verification|checks?)|gpg\s+signing|(?:ssl|tls|certificate)\s+(?:verification|checks?|validation)|secret\s+scanning|security\s+scann(?:ing|ers?)|dependabot(?:\s+alerts)?|pre-commit\s+hooks?|git\s+hooks|commit\s+hooks|approval(?:s|\s+gates?)?|shield|guardrails?|safety\s+(?:checks?|controls?|filters?))`)
)

// proseEffects adds the effects of what text asks for in prose.
func (s *state) proseEffects(text string) {
	sentences := sentenceEnd.Split(text, 256)
	s.proseCommands(sentences)
	s.prosePushes(sentences)
	s.intentEffects(sentences)      // tools_prose_intent.go
	s.standingEffects(sentences)    // tools_standing.go
	s.approvalRequests(sentences)   // tools_requests.go
	s.remoteInstructions(sentences) // tools_prose_remote.go
	for _, sent := range sentences {
		for _, m := range protectionRE.FindAllStringSubmatchIndex(sent, 4) {
			if negatedRE.MatchString(sent[:m[0]]) {
				continue // "do not disable the firewall"
			}
			if after := intentWords(sent[m[1]:]); len(after) > 0 && !s.n.lex().endsObject(after, 0) {
				continue // a modifier: "remove the firewall rule we added"
			}
			what := strings.ToLower(strings.Join(strings.Fields(sent[m[2]:m[3]]), " "))
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "protection: " + what, Detail: DetailRequested})
		}
	}
}

// proseCommands walks the commands the sentences name in prose.
func (s *state) proseCommands(sentences []string) {
	walked := 0
	for _, sent := range sentences {
		words := strings.Fields(sent)
		for i := 0; i < len(words) && walked < maxProseCommands; i++ {
			name := strings.Trim(words[i], "\"'`“”‘’(")
			sp := s.n.opt.Commands.lookup(name)
			if sp == nil || negatedRE.MatchString(strings.Join(words[:i], " ")) {
				continue
			}
			next := ""
			if i+1 < len(words) {
				next = strings.Trim(words[i+1], "\"'`“”‘’,;:")
			}
			prev := ""
			if i > 0 {
				prev = strings.ToLower(strings.Trim(words[i-1], "\"'`“”‘’,;:"))
			}
			_, isSub := sp.subs[next]
			intro := i > 0 && strings.HasSuffix(words[i-1], ":") // "… with: dropdb prod"
			if !runVerbs[prev] && !isSub && !intro && !(next != "" && strings.ContainsRune("-/~$.", rune(next[0])) && next != "." && next != "-") {
				continue
			}
			argv := []string{}
			j := i
			for ; j < len(words) && len(argv) < maxProseWords; j++ {
				w := strings.Trim(words[j], "\"'`“”‘’()")
				if j > i && clauseEnd[strings.ToLower(w)] {
					break
				}
				end := strings.HasSuffix(w, ",") || strings.HasSuffix(w, ";") || strings.HasSuffix(w, ":")
				w = strings.TrimRight(w, ",;:")
				if w != "" {
					argv = append(argv, w)
				}
				if end {
					j++
					break
				}
			}
			if s.stopped() {
				return
			}
			s.syncEffects()
			s.walker().script(proseScript(argv), 1, "instructions", false)
			walked++
			i = j - 1
		}
	}
}

// prosePushes adds a push effect for each repository URL the text asks to push to: named after
// the push verb in its sentence, or introduced as a remote and then pushed to "there".
func (s *state) prosePushes(sentences []string) {
	var remotes []string
	for _, sent := range sentences {
		if asRemoteRE.MatchString(sent) {
			remotes = append(remotes, repoURLs(sent)...)
		}
	}
	n := 0
	for _, sent := range sentences {
		if loc := forcePushRE.FindStringIndex(sent); loc != nil && !negatedRE.MatchString(sent[:loc[0]]) {
			detail := "force"
			if strings.Contains(strings.ToLower(sent[loc[0]:loc[1]]), "mirror") {
				detail = "mirror"
			}
			s.addToolEffect(Effect{Kind: EffectPush, Target: "(requested)", Detail: detail + "," + DetailRequested})
		}
		loc := pushVerbRE.FindStringIndex(sent)
		if loc == nil || negatedRE.MatchString(sent[:loc[0]]) {
			continue
		}
		targets := repoURLs(sent[loc[1]:])
		if thereRE.MatchString(sent[loc[1]:]) {
			targets = append(targets, remotes...)
		}
		for _, t := range targets {
			if n++; n > maxProseCommands {
				return
			}
			s.addToolEffect(Effect{Kind: EffectPush, Target: t, Detail: DetailRequested})
		}
	}
}

// repoURLs lists the repository addresses in text.
func repoURLs(text string) []string {
	var out []string
	for _, m := range repoURLRE.FindAllString(text, 8) {
		out = append(out, strings.TrimRight(m, " \t\n'\"<>,;).!?"))
	}
	return out
}

// shellOps are control operators prose may write between commands ("curl … | bash").
var shellOps = set("|", "||", "&&", ";", ">", ">>", "<", "2>&1", "&>")

// proseScript is the shell text of prose words: every word quoted (prose never fails to parse),
// except control operators that stand between two words, which keep their meaning.
func proseScript(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if shellOps[w] && i > 0 && i+1 < len(argv) && !shellOps[argv[i+1]] && !shellOps[argv[i-1]] {
			b.WriteString(w)
			continue
		}
		b.WriteString(quoteWord(w))
	}
	return b.String()
}
