package normalize

import "strings"

// Memories and knowledge graphs are standing facts: a later session takes what they say as true.
// A knowledge-graph relation (MCP memory create_relations {from, to, relationType}, and the
// subject/predicate/object, source/target/relation spellings of other graph servers) and an
// entity's observations ({name, observations: […]}) say something about their subject whose
// words are spread over fields, each too short to read alone ("attacker@exfil.example",
// "member_of", "acme-admins"). They are joined into one sentence per relation or observation
// ("attacker@exfil.example member_of acme-admins") and read like any memory text: the request
// acts of tools_request_acts.go (authority stated: a subject made a member of admins, owner,
// trusted) and the rest of the instruction reading (secrets, sources, hosts). An address at
// either end of a relation ("build-agent sends_reports_to https://hooks.exfil.example/x",
// "python-deps installed_from http://198.51.100.9/simple") points later sessions at that host:
// a standing source (standing.rego escalates one outside the allowed egress).

// Bounds of the walk over graph arguments.
const (
	maxFactSentences = 64
	maxFactDepth     = 6
)

// relationKeys are the field triples of a relation: subject, predicate, object.
var relationKeys = [][3]string{
	{"from", "relationType", "to"},
	{"from", "relation_type", "to"},
	{"from", "relation", "to"},
	{"source", "relation", "target"},
	{"source", "type", "target"},
	{"subject", "predicate", "object"},
	{"head", "relation", "tail"},
}

// memoryFacts reads the relations and observations of a memory call as sentences.
func (s *state) memoryFacts() {
	if s.act.Class != ClassMemoryWrite {
		return
	}
	var facts []string
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxFactDepth || len(facts) >= maxFactSentences {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case map[string]any:
			for _, k := range relationKeys {
				a, _ := x[k[0]].(string)
				r, _ := x[k[1]].(string)
				b, _ := x[k[2]].(string)
				if a != "" && r != "" && b != "" {
					facts = append(facts, a+" "+strings.ReplaceAll(r, " ", "_")+" "+b)
					// An address at either end points later sessions at it (a source, a
					// destination, an endpoint): judged like a kept instruction's source.
					for _, end := range []string{a, b} {
						for _, u := range textURLHosts(end) {
							s.addToolEffect(Effect{Kind: EffectConnect, Target: u, Detail: DetailStanding + " source: memory relation " + r})
						}
					}
					break
				}
			}
			name, _ := x["name"].(string)
			if name == "" {
				name, _ = x["entityName"].(string)
			}
			for _, ok := range []string{"observations", "contents"} {
				if obs, ok := x[ok].([]any); ok && name != "" {
					for _, o := range obs {
						if str, ok := o.(string); ok && len(facts) < maxFactSentences {
							facts = append(facts, name+" "+str)
						}
					}
				}
			}
			for _, k := range sortedKeys(x) {
				walk(x[k], depth+1)
			}
		}
	}
	walk(map[string]any(s.act.Args), 0)
	for _, f := range facts {
		s.instructionEffects(f) // tools_instructions.go, with the request acts of tools_request_acts.go
	}
}
