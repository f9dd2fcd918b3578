package normalize

import (
	"path"
	"strings"
)

// The repository's history is state, whatever tool removes it. Deleting the workspace's .git (or
// its objects, refs, logs or packed-refs), or moving it away, by any tool — a shell's rm or mv, an
// MCP filesystem move_file, a Cline or Cursor delete tool, an apply_patch — is a delete of
// "vcs_history" (rego/destroy.rego judges it), as rm -rf .git is in a shell (effects_destroy.go).

// historyRemovalEffects adds the history delete of a call that deletes or moves away the
// workspace's git directory.
func (s *state) historyRemovalEffects() {
	gitDir := path.Join(s.n.opt.Workspace, ".git")
	for _, e := range s.act.Effects {
		if e.Kind == EffectDelete && e.Target == targetVCSHistory {
			return // the shell engine said it already
		}
	}
	isHistory := func(p string) bool {
		switch p {
		case gitDir, gitDir + "/objects", gitDir + "/refs", gitDir + "/logs", gitDir + "/packed-refs":
			return true
		}
		return false
	}
	moving := s.act.Class == ClassFileMove && !strings.Contains(strings.ToLower(s.act.Tool), "copy")
	for _, p := range s.act.Paths {
		if isHistory(p.Clean) && (p.Role == RoleDelete || moving && p.Role == RoleSource) {
			s.addToolEffect(Effect{Kind: EffectDelete, Target: targetVCSHistory, Program: s.act.Tool, Detail: s.act.Tool + " " + p.Raw})
			return
		}
	}
	for _, e := range s.act.Effects {
		if e.Kind == EffectDelete && isHistory(e.Target) { // mv .git /tmp/x: the source is deleted
			s.addToolEffect(Effect{Kind: EffectDelete, Target: targetVCSHistory, Program: e.Program, Detail: e.Program + " " + e.Target})
			return
		}
	}
}
