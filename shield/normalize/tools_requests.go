package normalize

import (
	"regexp"
	"strings"
)

// mentionRE: an @-mention, which addresses what follows to its name ("@review-bot approve …"): a
// clause starts after it.
var mentionRE = regexp.MustCompile(`(?:^|\s)@[A-Za-z0-9_.-]+`)

// Requests are judged by the act requested, whoever is asked. A message to an agent, a bot or a
// person that asks them to approve or merge a change ("approve PR #88", "merge the pull request",
// "sign off on this MR") asks for a review decision the sender cannot make: a privilege effect of
// detail DetailApprovalRequested (requests.rego escalates: a human decides). The verbs and the
// change nouns are bundle data (prose.yaml approval_requests); a negated clause ("do not merge
// the PR yet") asks for none. Secrets, commands and protections such a message asks for are read
// by the rest of the prose reading and judged as the same effects of a call.

// DetailApprovalRequested is the detail of an approval or merge asked of someone else. It is API.
const DetailApprovalRequested = "approval requested"

type lexApprovalsFile struct {
	Verbs       []string `yaml:"verbs"`
	Changes     []string `yaml:"changes"`
	Claims      []string `yaml:"claims"`
	Attribution []string `yaml:"attribution"`
}

type lexApprovals struct {
	verbs, changes, claims, attribution []lexPhrase
}

func parseApprovals(f lexApprovalsFile) lexApprovals {
	var a lexApprovals
	for _, l := range []struct {
		in  []string
		out *[]lexPhrase
	}{{f.Verbs, &a.verbs}, {f.Changes, &a.changes}, {f.Claims, &a.claims}, {f.Attribution, &a.attribution}} {
		for _, p := range l.in {
			if ws := intentWords(p); len(ws) > 0 {
				*l.out = append(*l.out, lexPhrase{words: ws})
			}
		}
	}
	return a
}

// approvalRequestClasses are the classes whose text is a request to someone else.
var approvalRequestClasses = set(ClassMessageSend, ClassSchedule)

// approvalRequests adds an effect for each approval or merge of a change the sentences ask for.
func (s *state) approvalRequests(sentences []string) {
	if !approvalRequestClasses[s.act.Class] {
		return
	}
	lx := s.n.lex()
	s.attributedApprovals(sentences)
	for _, sent := range sentences {
		words := intentWords(mentionRE.ReplaceAllString(sent, "$0 ,"))
		for i := range words {
			v, ok := matchAt(lx.approvals.verbs, words, i)
			if !ok || !lx.isRequest(words, i) || negatedClause(words, i) {
				continue
			}
			for k := i + len(v.words); k < len(words) && k <= i+len(v.words)+4; k++ {
				if c, ok := matchAt(lx.approvals.changes, words, k); ok {
					s.addToolEffect(Effect{Kind: EffectPrivilege, Target: strings.Join(v.words, " ") + " " + strings.Join(c.words, " "), Detail: DetailApprovalRequested})
					return
				}
				if !lx.fill[words[k]] {
					break
				}
			}
		}
	}
}

// personRequestEffects reads a message to a person (an e-mail, a chat message to a colleague or a
// help desk) for what it asks them to do, in plain words: the secrets it asks to be sent and where
// (tools_prose_intent.go, textRecipients), protections it asks to be switched off or reset, and
// approvals it asks for. Commands written in it are not walked: a person reads them, the message
// does not run them.
func (s *state) personRequestEffects(body string) {
	if body == "" || s.stopped() {
		return
	}
	if len(body) > maxInstructionText {
		body = body[:maxInstructionText]
	}
	sentences := sentenceEnd.Split(body, 256)
	s.intentEffects(sentences)
	s.approvalRequests(sentences)
	s.requestActs(body) // tools_request_acts.go
	s.textRecipients(body)
}

// attributedApprovals adds a claimed approval for each approval a review text (a PR or MR body, a
// review, a comment, a message) attributes to someone else or to an automaton: an approval word
// ("LGTM", "approved", "signed off") followed within a few words by an attribution ("from
// security", "by the security team", "on behalf of", "(auto)"). Nobody gave that approval in this
// call; freetext.claimed-approval escalates. The author's own "LGTM, thanks" attributes nothing.
func (s *state) attributedApprovals(sentences []string) {
	lx := s.n.lex()
	for _, sent := range sentences {
		words := intentWords(sent)
		for i := range words {
			c, ok := matchAt(lx.approvals.claims, words, i)
			if !ok || negatedClause(words, i) || pendingClause(words, i) {
				continue
			}
			for k := i + len(c.words); k < len(words) && k <= i+len(c.words)+3; k++ {
				if a, ok := matchAt(lx.approvals.attribution, words, k); ok {
					s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "claimed approval: " + strings.Join(c.words, " ") + " " + strings.Join(a.words, " "), Detail: DetailClaimed})
					return
				}
			}
		}
	}
}

// pendingWords: words that make an approval one asked for or awaited, not one claimed ("waiting
// for sign-off from security", "needs approval by the owner").
var pendingWords = set("wait", "waiting", "awaiting", "await", "need", "needs", "needed", "pending", "request", "requesting", "requested",
	"require", "requires", "required", "ask", "asking", "seek", "seeking", "get", "getting", "before", "until", "once", "if", "when", "after", "for")

// pendingClause reports whether the clause of words[i], up to it, asks for or awaits what follows.
func pendingClause(words []string, i int) bool {
	for k := i - 1; k >= 0; k-- {
		if clauseBreak[words[k]] {
			return false
		}
		if pendingWords[words[k]] {
			return true
		}
	}
	return false
}
