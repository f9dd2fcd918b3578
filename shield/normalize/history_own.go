package normalize

import "regexp"

// The agent's own shell history. The history builtin (no file: not `history -r FILE`, not
// `fc -l`, which secret_sources.go keeps) lists the commands of the shell it runs in: the agent's
// own commands, each of which Shield has already seen and judged; a non-interactive shell keeps
// none. Listing them (history, history 20, history | tail -20 | tee build/last-run.log) is
// therefore not a secret read. What stays: the listing when the call also talks to the network
// (a connect, send or push effect, or a remote command: the whole listing may go to a sink),
// any option (-r/-n/-a/-w read or write the history file, -p/-s/-d/-c change it), a dynamic word,
// and the history files themselves (~/.bash_history …: sensitive.go). Decision: the listing
// may contain a secret the agent itself typed earlier (export TOKEN=…); kept in a workspace file
// it is judged again if a later call sends that file.
var historyCountRE = regexp.MustCompile(`^[0-9]{1,6}$`)

// ownHistory drops the secret effect of plain history listings in calls without a network sink.
func (s *state) ownHistory() {
	found := false
	for _, c := range s.act.Commands {
		if c.Name != "history" {
			continue
		}
		if c.Dynamic || c.Sudo || len(c.Args) > 1 || len(c.Args) == 1 && !historyCountRE.MatchString(c.Args[0]) {
			return
		}
		found = true
	}
	if !found {
		return
	}
	for _, e := range s.act.Effects {
		switch e.Kind {
		case EffectConnect, EffectSend, EffectPush, EffectListen:
			return
		}
		if e.Remote != "" || e.Unresolved {
			return
		}
	}
	s.dropEffects(func(e Effect) bool {
		return e.Kind == EffectSecret && e.Program == "history" && e.Target == "history"
	})
}
