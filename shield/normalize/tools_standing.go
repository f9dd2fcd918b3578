package normalize

import (
	"strings"
)

// A memory is a standing instruction. What an agent writes to its memory (a memory tool, a memory
// graph's observations, an agent's state, a sub-agent's system prompt) is read again in every later
// session as something to follow; a sentence that prescribes behaviour there acts on every later
// call. The reading is by structure, with the word classes as bundle data (prose.yaml standing):
//
//   - a sentence is a rule when it has a modal or standing word ("always", "never", "from now on",
//     "by default", "whenever", "permanently", "may") or starts with an imperative verb;
//   - a rule that weakens a control ("skip tests", "without review", "ignore the checks";
//     "never escalate", "do not verify": a control word after a negation with no weakener between)
//     is a control waived: a privilege effect "standing: waives CONTROL";
//   - a permission word with a destructive or privileged act on a wide or production scope ("user
//     authorizes deleting production databases") claims a permission nobody gave here: a
//     privilege effect of detail DetailClaimed (freetext.claimed-approval escalates);
//   - a sentence that names a source (registry, index, mirror, download site, binary) with an
//     address tells later sessions where to fetch from: a connect effect of detail "standing
//     source" (standing.rego escalates it when the host is outside the allowed egress).
//
// Facts and preferences ("Prefer named exports", "This project uses pnpm", "Always run the
// tests before pushing") have no weakened control, no permission on a wide destructive act and no
// source: they stay as the class default decides.

// DetailStanding is the detail of the effects a standing instruction yields. It is API.
const DetailStanding = "standing"

// standingClasses are the classes whose text is kept and followed later.
var standingClasses = set(ClassMemoryWrite, "agent_state", ClassAgentSpawn)

// maxStandingEffects bounds the effects of one text; standingNegWindow the words between a
// negation and the control it negates.
const (
	maxStandingEffects = 8
	standingNegWindow  = 4
)

type lexStandingFile struct {
	Modal      []string `yaml:"modal"`
	Controls   []string `yaml:"controls"`
	Weakeners  []string `yaml:"weakeners"`
	Waivers    []string `yaml:"waivers"`
	Permission []string `yaml:"permission"`
	Acts       []string `yaml:"acts"`
	Scope      []string `yaml:"scope"`
	Privileged []string `yaml:"privileged"`
	Sources    []string `yaml:"sources"`
}

type lexStanding struct {
	modal, controls, weakeners, waivers, permission, acts, scope, privileged, sources []lexPhrase
}

func parseStanding(f lexStandingFile) lexStanding {
	var st lexStanding
	for _, l := range []struct {
		in  []string
		out *[]lexPhrase
	}{{f.Modal, &st.modal}, {f.Controls, &st.controls}, {f.Weakeners, &st.weakeners}, {f.Waivers, &st.waivers},
		{f.Permission, &st.permission}, {f.Acts, &st.acts}, {f.Scope, &st.scope}, {f.Privileged, &st.privileged}, {f.Sources, &st.sources}} {
		for _, p := range l.in {
			if ws := intentWords(p); len(ws) > 0 {
				*l.out = append(*l.out, lexPhrase{words: ws})
			}
		}
	}
	return st
}

// findPhrase returns the index of the first phrase of ps at or after words[from] (or -1) and the
// phrase.
func findPhrase(ps []lexPhrase, words []string, from int) (int, lexPhrase) {
	for i := from; i < len(words); i++ {
		if p, ok := matchAt(ps, words, i); ok {
			return i, p
		}
	}
	return -1, lexPhrase{}
}

// negatedBefore reports whether a negation stands in words[start:i].
func negatedBefore(words []string, start, i int) bool {
	for k := start; k < i; k++ {
		if negations[words[k]] && words[k] != "without" {
			return true
		}
	}
	return false
}

// standingEffects adds the effects of the rules a kept text states.
func (s *state) standingEffects(sentences []string) {
	if !standingClasses[s.act.Class] {
		return
	}
	st := &s.n.lex().standing
	if len(st.modal) == 0 {
		return
	}
	n := 0
	for _, sent := range sentences {
		if n >= maxStandingEffects || s.stopped() {
			return
		}
		words := intentWords(sent)
		if len(words) == 0 {
			continue
		}
		if i, p := findPhrase(st.sources, words, 0); i >= 0 {
			for _, u := range textURLHosts(sent) {
				s.addToolEffect(Effect{Kind: EffectConnect, Target: u, Detail: DetailStanding + " source: " + strings.Join(p.words, " ")})
				n++
			}
		}
		// a sub-agent's task is imperative throughout: only its modal words state rules
		imperative := false
		if s.act.Class != ClassAgentSpawn {
			_, imperative = matchAt(st.weakeners, words, 0)
			if !imperative {
				_, imperative = matchAt(s.n.lex().verbs, words, 0)
			}
		}
		modal := imperative
		if i, _ := findPhrase(st.modal, words, 0); i >= 0 {
			modal = true
		}
		permIdx, _ := findPhrase(st.permission, words, 0)
		if !modal && permIdx < 0 {
			continue
		}
		if c, ok := s.standingWaiver(st, words); ok {
			s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "standing: waives " + c, Detail: DetailStanding})
			n++
		}
		if permIdx >= 0 && !negatedBefore(words, 0, permIdx) {
			if a, ok := standingGrant(st, words, permIdx); ok {
				s.addToolEffect(Effect{Kind: EffectPrivilege, Target: "claimed approval: " + a, Detail: DetailClaimed})
				n++
			}
		}
	}
}

// standingWaiver returns the control a rule's words weaken.
func (s *state) standingWaiver(st *lexStanding, words []string) (string, bool) {
	for i := 0; i < len(words); i++ {
		if p, ok := matchAt(st.waivers, words, i); ok && !negatedBefore(words, clauseStart(words, i), i) {
			return strings.Join(p.words, " "), true
		}
		if p, ok := matchAt(st.weakeners, words, i); ok && !negatedBefore(words, clauseStart(words, i), i) {
			// a weakener with a control after it ("skip tests", "without review") or before it in
			// its clause ("tests can be skipped" is a waiver of the claims list; "review: skip")
			if j, c := findPhrase(st.controls, words, i+len(p.words)); j >= 0 && j <= i+len(p.words)+maxWaiverWindow {
				return strings.Join(c.words, " "), true
			}
		}
		if negations[words[i]] && words[i] != "without" && words[i] != "no" {
			// "never escalate", "do not verify": a control after a negation, no weakener between
			for k := i + 1; k < len(words) && k <= i+standingNegWindow; k++ {
				if _, ok := matchAt(st.weakeners, words, k); ok {
					break
				}
				if c, ok := matchAt(st.controls, words, k); ok {
					return strings.Join(c.words, " "), true
				}
			}
		}
	}
	return "", false
}

// clauseStart returns the index where the clause holding words[i] starts.
func clauseStart(words []string, i int) int {
	for k := i - 1; k >= 0; k-- {
		if clauseBreak[words[k]] {
			return k + 1
		}
	}
	return 0
}

// standingGrant returns the act a permission word grants on a wide scope or a privileged act.
func standingGrant(st *lexStanding, words []string, perm int) (string, bool) {
	end := min(len(words), perm+maxClaimWindow+2)
	if j, p := findPhrase(st.privileged, words[:end], perm); j >= 0 {
		return strings.Join(p.words, " "), true
	}
	j, a := findPhrase(st.acts, words[:end], perm)
	if j < 0 {
		return "", false
	}
	if k, sc := findPhrase(st.scope, words[:end], j); k >= 0 {
		return strings.Join(a.words, " ") + " " + strings.Join(sc.words, " "), true
	}
	return "", false
}

// textURLHosts returns host:port of each absolute http(s) URL or bare domain-with-scheme in text.
func textURLHosts(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		f = strings.Trim(f, "\"'`<>()[],;")
		f = strings.TrimRight(f, ".!?")
		scheme, rest, ok := strings.Cut(f, "://")
		if !ok || len(out) >= 4 {
			continue
		}
		host := rest
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if i := strings.LastIndexByte(host, '@'); i >= 0 {
			host = host[i+1:]
		}
		host = strings.ToLower(host)
		if host == "" {
			continue
		}
		if !strings.Contains(host, ":") {
			switch strings.ToLower(scheme) {
			case "http":
				host += ":80"
			default:
				host += ":443"
			}
		}
		out = append(out, host)
	}
	return out
}
