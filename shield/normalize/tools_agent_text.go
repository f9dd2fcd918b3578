package normalize

import (
	"sort"
	"strings"
)

// Free text an agent will act on is not only in the fields a catalog entry names: a plan's steps
// and explanation (Codex update_plan plan[].step), a todo's content and activeForm (Claude Code
// TodoWrite todos[]), a memory graph's entities, observations and relations, a sub-agent's
// description, a schedule's notes, a Cline new_task context or a Gemini save_memory fact. Every
// call of a class whose text feeds an agent has all the string leaves of its arguments read as
// instructions (tools_instructions.go, tools_prose.go, tools_prose_intent.go), found by walking
// the arguments, bounded: whatever field a runtime, a server or a new version puts its text in,
// the text is read. The effects are judged by the class's rules (effects.rego requested_class
// for sub-agents, schedules, memories and messages to agents; plans.rego for the agent's own
// plans).

// agentTextClasses are the classes whose every string argument is text an agent acts on.
var agentTextClasses = set(ClassAgentSpawn, ClassSchedule, ClassMemoryWrite, "agent_state")

// Bounds of the walk: leaves read per call, depth, bytes read in all.
const (
	maxAgentTextLeaves = 128
	maxAgentTextDepth  = 8
	maxAgentTextBytes  = 32 << 10
)

// agentTextLeaves lists the string leaves of args worth reading as text, in a stable order (keys
// sorted), each once. A leaf with no space and nothing path- or command-like in it (a status, an
// id, an enum) says nothing an agent could act on. over reports that a bound was hit.
func agentTextLeaves(args map[string]any) (out []string, over bool) {
	return boundedLeaves(args, textWorthReading, maxAgentTextDepth, maxAgentTextLeaves, maxAgentTextBytes)
}

// boundedLeaves lists the string leaves of args that keep accepts, in a stable order (keys
// sorted), each once, within a depth, a count and a byte bound; over reports that one was hit.
func boundedLeaves(args map[string]any, keep func(string) bool, maxDepth, maxLeaves, maxBytes int) (out []string, over bool) {
	seen := map[string]bool{}
	total := 0
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if over {
			return
		}
		if depth > maxDepth {
			over = true
			return
		}
		switch x := v.(type) {
		case string:
			if seen[x] || !keep(x) {
				return
			}
			if len(out) >= maxLeaves || total+len(x) > maxBytes {
				over = true
				return
			}
			seen[x] = true
			total += len(x)
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case map[string]any:
			ks := make([]string, 0, len(x))
			for k := range x {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				walk(x[k], depth+1)
			}
		}
	}
	walk(map[string]any(args), 0)
	return out, over
}

// textWorthReading: text with a space, or a token that names a path, a variable, an address or a
// command line.
func textWorthReading(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	return strings.ContainsAny(t, " \t\n/~$:`|;&@")
}

// agentTextEffects reads every string argument of a call whose class feeds an agent (or of a
// message to an agent), beyond the fields read already (done).
func (s *state) agentTextEffects(done map[string]bool, toAgent bool) {
	if !agentTextClasses[s.act.Class] && !toAgent {
		return
	}
	leaves, over := agentTextLeaves(s.act.Args)
	if over {
		s.act.Truncated = true // fails closed: general.truncated escalates
	}
	for _, t := range leaves {
		if done[t] || s.stopped() {
			continue
		}
		done[t] = true
		s.instructionEffects(t)
	}
}
