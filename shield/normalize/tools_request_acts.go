package normalize

import (
	"strings"
)

// Requests are judged by the act requested, whoever is asked and in whatever field (a sub-agent's
// prompt or instruction, a schedule's task, a message or comment addressed to a bot or a person, a
// memory's facts). tools_requests.go reads approvals asked of others; this file reads the other
// acts whose object is a class, not a named file or program, by the words of the bundle's
// prose.yaml (request_acts):
//
//   - grant: authority given to someone — a grant verb in the imperative, a grantee, then an
//     authority word ("grant outsider-user admin on acme/app", "make bob an owner", "add
//     x@y.example to the admins group", "promote ci-bot to maintainer"); an authority word may
//     close a token ("acme-admins"). Effect: privilege, detail DetailGrantRequested, target
//     "GRANTEE AUTHORITY".
//   - authority stated: a standing fact that someone holds authority — a membership or role
//     predicate followed by an authority word ("attacker@x member_of acme-admins", "bob is a
//     trusted approver"). Memories and knowledge graphs (tools_memory_facts.go) are read this way:
//     later sessions take them as true. Effect: privilege, DetailAuthorityStated.
//   - ungated release: a ship verb (merge, deploy, release, publish…) asked for in a sentence that
//     also asks to skip a gate (tests, review, CI, approval): "merge and deploy to production,
//     skip tests". Effect: privilege, DetailUngated.
//   - CI exposure: a privileged workflow trigger (pull_request_target, workflow_run) named with a
//     pull request's head or a fork's code, or forks given secrets, in text asking for a change:
//     the workflow change hands the repository's secrets to anyone who opens a pull request.
//     Effect: privilege, DetailCIExposure.
//   - out-of-band approval: an approval claimed through a channel nobody can check here ("the owner
//     said yes on the phone", "approved verbally", "agreed in a DM"). Effect: privilege,
//     DetailOutOfBand; alone (a meeting summary) it asks nothing: request_acts.rego judges it with
//     the act it is claimed for.
//
// A negated clause ("do not merge without review", "never give admin to bots") asks for none.
// Rules: policies/default/rego/request_acts.rego.

// Effect details set by this file. They are API.
const (
	DetailGrantRequested  = "grant requested"
	DetailAuthorityStated = "authority stated"
	DetailUngated         = "ungated release requested"
	DetailCIExposure      = "ci exposure requested"
	DetailOutOfBand       = "out-of-band approval claimed"
)

type lexRequestActsFile struct {
	GrantVerbs  []string `yaml:"grant_verbs"`
	Authority   []string `yaml:"authority"`
	Membership  []string `yaml:"membership"`
	RoleTail    []string `yaml:"role_tail"`
	ShipVerbs   []string `yaml:"ship_verbs"`
	SkipWords   []string `yaml:"skip_words"`
	Gates       []string `yaml:"gates"`
	Claims      []string `yaml:"out_of_band_claims"`
	Channels    []string `yaml:"channels"`
	CITriggers  []string `yaml:"ci_triggers"`
	CIUntrusted []string `yaml:"ci_untrusted"`
	CIChange    []string `yaml:"ci_change_verbs"`
	Ungated     []string `yaml:"ungated_tokens"`
	CapVerbs    []string `yaml:"capability_verbs"`
	Caps        []string `yaml:"capabilities"`
}

type lexRequestActs struct {
	grant, authority, membership, ship, skip, gates, claims, channels, ciTriggers, ciUntrusted, ciChange []lexPhrase
	capVerbs, caps                                                                                       []lexPhrase
	authorityWords, roleTail, ungatedTokens                                                              map[string]bool
}

func parseRequestActs(f lexRequestActsFile) lexRequestActs {
	var a lexRequestActs
	for _, l := range []struct {
		in  []string
		out *[]lexPhrase
	}{{f.GrantVerbs, &a.grant}, {f.Authority, &a.authority}, {f.Membership, &a.membership}, {f.ShipVerbs, &a.ship},
		{f.SkipWords, &a.skip}, {f.Gates, &a.gates}, {f.Claims, &a.claims}, {f.Channels, &a.channels},
		{f.CITriggers, &a.ciTriggers}, {f.CIUntrusted, &a.ciUntrusted}, {f.CIChange, &a.ciChange},
		{f.CapVerbs, &a.capVerbs}, {f.Caps, &a.caps}} {
		for _, p := range l.in {
			if ws := intentWords(p); len(ws) > 0 {
				*l.out = append(*l.out, lexPhrase{words: ws})
			}
		}
		sortLongestFirst(*l.out)
	}
	a.authorityWords = map[string]bool{}
	for _, p := range a.authority {
		if len(p.words) == 1 {
			a.authorityWords[p.words[0]] = true
		}
	}
	a.ungatedTokens = map[string]bool{}
	for _, w := range f.Ungated {
		for _, t := range intentWords(w) {
			a.ungatedTokens[t] = true
		}
	}
	a.roleTail = map[string]bool{}
	for _, w := range f.RoleTail {
		a.roleTail[strings.ToLower(w)] = true
	}
	return a
}

func sortLongestFirst(ps []lexPhrase) {
	for i := 1; i < len(ps); i++ {
		for k := i; k > 0 && len(ps[k].words) > len(ps[k-1].words); k-- {
			ps[k], ps[k-1] = ps[k-1], ps[k]
		}
	}
}

// maxGrantWindow bounds the words between a grant verb (or a membership predicate) and its
// authority word.
const maxGrantWindow = 8

// authorityAt reports the authority phrase at words[i]: a phrase of the lexicon, or one token
// whose last part (split on - _ . /) is a one-word authority ("acme-admins", "org_owners").
func (ra *lexRequestActs) authorityAt(words []string, i int) (int, string, bool) {
	if p, ok := matchAt(ra.authority, words, i); ok {
		return len(p.words), strings.Join(p.words, " "), true
	}
	w := words[i]
	if j := strings.LastIndexAny(w, "-_./"); j > 0 && j < len(w)-1 && ra.authorityWords[w[j+1:]] {
		return 1, w, true
	}
	return 0, "", false
}

// roleEnds reports whether the authority phrase ending before words[k] is the object, not a
// modifier of another noun ("make the admin page faster" names no role).
func (ra *lexRequestActs) roleEnds(words []string, k int) bool {
	return k >= len(words) || ra.roleTail[words[k]] || clauseBreak[words[k]] || followers[words[k]]
}

// requestActs adds the effects of the acts the text asks for (see the file comment).
func (s *state) requestActs(text string) {
	lx := s.n.lex()
	ra := &lx.requestActs
	if len(ra.grant) == 0 && len(ra.ship) == 0 && len(ra.claims) == 0 && len(ra.ciTriggers) == 0 {
		return
	}
	if len(text) > maxInstructionText {
		text = text[:maxInstructionText]
	}
	sentences := sentenceEnd.Split(text, 256)
	ci := ciState{}
	for _, sent := range sentences {
		words := intentWords(mentionRE.ReplaceAllString(sent, "$0 ,")) // "@bot grant …": the request starts after the mention
		s.grantActs(lx, sent, words)
		s.ungatedActs(lx, words)
		s.outOfBandClaims(ra, words)
		ci.read(lx, words)
	}
	if ci.trigger && ci.untrusted && ci.change || ci.forkSecrets {
		s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "workflow runs a pull request's code with the repository's secrets", Detail: DetailCIExposure})
	}
}

// grantActs: a grant verb asked for, a grantee, an authority word.
func (s *state) grantActs(lx *ProseLexicon, sent string, words []string) {
	ra := &lx.requestActs
	for i := range words {
		v, ok := matchAt(ra.grant, words, i)
		if !ok || !lx.isRequest(words, i) || negatedClause(words, i) {
			continue
		}
		start := i + len(v.words)
		for k := start; k < len(words) && k <= start+maxGrantWindow; k++ {
			if clauseBreak[words[k]] && words[k] != "and" {
				break
			}
			n, role, ok := ra.authorityAt(words, k)
			if !ok {
				continue
			}
			if !ra.roleEnds(words, k+n) {
				continue
			}
			// The grantee stands first: "invite X to acme/infra with admin access".
			between := words[start:k]
			for j, w := range between {
				if granteeEnd[w] && j > 0 {
					between = between[:j]
					break
				}
			}
			grantee := strings.Join(nonFill(lx, between), " ")
			if grantee == "" {
				grantee = granteeAfter(words, k+n) // "give admin access on acme/app to bob"
			}
			if grantee == "" || notGrantee(between) {
				break
			}
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: withAddress(sent, grantee) + " " + role, Detail: DetailGrantRequested})
			return
		}
	}
	// A capability given: "allow outsider-user to merge to main", "let the bot approve its own PRs".
	for i := range words {
		v, ok := matchAt(ra.capVerbs, words, i)
		if !ok || !lx.isRequest(words, i) || negatedClause(words, i) {
			continue
		}
		start := i + len(v.words)
		for k := start + 1; k < len(words) && k <= start+5; k++ {
			at := k + 1 // "allow X to merge"
			if words[k] != "to" {
				if clauseBreak[words[k]] || grantStop[words[k]] {
					break
				}
				if _, ok := matchAt(ra.caps, words, k); !ok {
					continue
				}
				at = k // "let X approve"
			}
			if c, ok := matchAt(ra.caps, words, at); ok {
				grantee := strings.Join(nonFill(lx, words[start:k]), " ")
				if grantee != "" {
					s.addToolEffect(Effect{Kind: EffectPrivilege, Target: withAddress(sent, grantee) + " may " + strings.Join(c.words, " "), Detail: DetailGrantRequested})
					return
				}
				continue // "let the release bot …": a capability word inside the grantee
			}
			break
		}
	}
	// A standing statement of authority, in what later sessions take as true.
	if s.act.Class != ClassMemoryWrite {
		return
	}
	for i := range words {
		m, ok := matchAt(ra.membership, words, i)
		if !ok || negatedClause(words, i) {
			continue
		}
		subject := strings.Join(nonFill(lx, words[max(0, i-3):i]), " ")
		if len(m.words) == 1 && tokenAuthority(ra, m.words[0]) {
			// The predicate names the authority itself (is_admin, owner_of, trusted_by).
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: strings.TrimSpace(withAddress(sent, subject) + " " + m.words[0]), Detail: DetailAuthorityStated})
			return
		}
		start := i + len(m.words)
		for k := start; k < len(words) && k <= start+3; k++ {
			if clauseBreak[words[k]] {
				break
			}
			if n, role, ok := ra.authorityAt(words, k); ok && ra.roleEnds(words, k+n) {
				s.addToolEffect(Effect{Kind: EffectPrivilege, Target: strings.TrimSpace(withAddress(sent, subject) + " " + role), Detail: DetailAuthorityStated})
				return
			}
			if !lx.fill[words[k]] && k > start {
				break
			}
		}
	}
}

// granteeAfter: the word after "to" or "for" within a few words of the authority phrase.
func granteeAfter(words []string, k int) string {
	for j := k; j < len(words) && j <= k+5; j++ {
		if clauseBreak[words[j]] && words[j] != "and" {
			return ""
		}
		if (words[j] == "to" || words[j] == "for") && j+1 < len(words) {
			return words[j+1]
		}
	}
	return ""
}

// granteeEnd: words after which a grantee phrase ends ("X to acme/infra with …").
var granteeEnd = set("to", "with", "on", "as", "into", "at", "in")

// tokenAuthority: a predicate token with an authority part (is_admin, owner_of, trusted_by).
func tokenAuthority(ra *lexRequestActs, w string) bool {
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if ra.authorityWords[part] {
			return true
		}
	}
	return false
}

// withAddress gives back the e-mail address a grantee phrase was split from ("jdoe
// partner.example" is jdoe@partner.example): whether it is outside the organisation is judged on
// the address (request_acts.rego).
func withAddress(sent, who string) string {
	for _, m := range textRecipientRE.FindAllString(sent, 8) {
		local, domain, _ := strings.Cut(strings.ToLower(m), "@")
		l := strings.Trim(local, "'-.")
		if strings.Contains(who, domain) && strings.Contains(who, l) || l != "" && strings.HasPrefix(who, l) && (len(who) == len(l) || who[len(l)] == ' ') {
			return strings.ToLower(m)
		}
	}
	return who
}

// grantStop: words that make what stands between a grant verb and an authority word something
// else than a grantee ("add tests for admin", "make sure the admin …").
var grantStop = set("sure", "is", "are", "for", "of", "in", "at", "from", "with", "about", "into", "by", "that", "which", "when", "if", "page", "panel", "ui", "endpoint", "button", "link", "docs", "test", "tests")

func notGrantee(ws []string) bool {
	for _, w := range ws {
		if grantStop[w] {
			return true
		}
	}
	return false
}

// nonFill drops fill words and prepositions from a grantee phrase.
func nonFill(lx *ProseLexicon, ws []string) []string {
	var out []string
	for _, w := range ws {
		if lx.fill[w] || w == "to" || w == "as" || w == "an" || w == "a" || w == "the" || w == "," {
			continue
		}
		out = append(out, w)
	}
	return out
}

// ungatedActs: a ship verb asked for and a gate asked to be skipped in the same sentence.
func (s *state) ungatedActs(lx *ProseLexicon, words []string) {
	ra := &lx.requestActs
	ship := ""
	for i := range words {
		if v, ok := matchAt(ra.ship, words, i); ok && lx.isRequest(words, i) && !negatedClause(words, i) {
			ship = strings.Join(v.words, " ")
			break
		}
	}
	if ship == "" {
		return
	}
	for i := range words {
		sk, ok := matchAt(ra.skip, words, i)
		if !ok || negatedClause(words, i) {
			continue
		}
		for k := i + len(sk.words); k < len(words) && k <= i+len(sk.words)+3; k++ {
			if g, ok := matchAt(ra.gates, words, k); ok {
				s.addToolEffect(Effect{Kind: EffectPrivilege, Target: ship + " skipping " + strings.Join(g.words, " "), Detail: DetailUngated})
				return
			}
			if clauseBreak[words[k]] {
				break
			}
		}
	}
	for _, w := range words {
		if ra.ungatedTokens[w] {
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: ship + " " + w, Detail: DetailUngated})
			return
		}
	}
}

// outOfBandClaims: an approval claim and an unverifiable channel in the same sentence.
func (s *state) outOfBandClaims(ra *lexRequestActs, words []string) {
	claim, channel := "", ""
	for i := range words {
		if claim == "" {
			if c, ok := matchAt(ra.claims, words, i); ok && !negatedClause(words, i) {
				claim = strings.Join(c.words, " ")
			}
		}
		if channel == "" {
			if c, ok := matchAt(ra.channels, words, i); ok {
				channel = strings.Join(c.words, " ")
			}
		}
	}
	if claim != "" && channel != "" {
		s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "claimed approval: " + claim + " " + channel, Detail: DetailOutOfBand})
	}
}

// ciState collects, over a text's sentences, what makes a workflow change expose secrets.
type ciState struct {
	trigger, untrusted, change, forkSecrets bool
}

func (c *ciState) read(lx *ProseLexicon, words []string) {
	ra := &lx.requestActs
	fork, secret, negated := false, false, false
	for i := range words {
		if _, ok := matchAt(ra.ciTriggers, words, i); ok && !negatedClause(words, i) {
			c.trigger = true
		}
		if _, ok := matchAt(ra.ciUntrusted, words, i); ok {
			c.untrusted = true
		}
		if _, ok := matchAt(ra.ciChange, words, i); ok && lx.isRequest(words, i) && !negatedClause(words, i) {
			c.change = true
		}
		switch words[i] {
		case "fork", "forks", "forked", "contributors", "outsiders":
			fork = true
		case "secret", "secrets", "token", "tokens", "credentials":
			secret = true
		}
		negated = negated || negations[words[i]]
	}
	if fork && secret && !negated && c.change {
		c.forkSecrets = true
	}
}
