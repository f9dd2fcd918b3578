package normalize

import (
	"context"
	"encoding/json"
	"path"
	"strings"
)

// Code that runs by itself and reaches the network. Some files that run later run without
// anyone asking for them: npm lifecycle scripts (preinstall, install, postinstall, prepare …
// run by every npm install, of the project or of anyone who installs it), git and husky
// hooks, .envrc, setup.py and .pth/sitecustomize files. A connection such code makes is made
// on every install, commit or cd, unwatched: a beacon or a channel out, whatever the rest of
// the code does. Each host such code connects to is an EffectAutorun effect with Detail
// "connect" (rego/later_downloads.rego judges the host against the allowed egress). Scripts
// run only when asked for (test, build, Makefile targets, CI steps) are not judged here.

// npmLifecycle: the package.json scripts npm runs by itself.
var npmLifecycle = set("preinstall", "install", "postinstall", "preprepare", "prepare", "postprepare", "prepublish",
	"prepublishonly", "prepack", "postpack", "dependencies", "preuninstall", "uninstall", "postuninstall")

// autorunConnects adds the hosts that self-running code written to clean connects to.
func (s *state) autorunConnects(ctx context.Context, kind, clean, content, prog string) {
	var cmds []string
	base := strings.ToLower(path.Base(clean))
	switch kind {
	case autorunNPM:
		var doc map[string]any
		if json.Unmarshal([]byte(content), &doc) != nil {
			return
		}
		scripts, _ := doc["scripts"].(map[string]any)
		for _, k := range sortedKeys(scripts) {
			if npmLifecycle[strings.ToLower(k)] && len(cmds) < maxAutorunSnippets {
				cmds = append(cmds, stringsOf(scripts[k])...)
			}
		}
	case autorunShell:
		cmds = []string{content}
	case autorunPy:
		if base == "setup.py" || base == "sitecustomize.py" || base == "usercustomize.py" || strings.HasSuffix(base, ".pth") {
			cmds = []string{"python3 -c " + shellQuoteArg(content)}
		}
	}
	seen := map[string]bool{}
	for _, cmd := range cmds {
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		inner := s.n.NormalizeContext(ctx, "Bash", map[string]any{"command": cmd}, s.act.Cwd)
		for _, e := range inner.Effects {
			if e.Kind != EffectConnect {
				continue
			}
			h := effectHost(e.Target)
			if h == "" || seen[h] {
				continue
			}
			seen[h] = true
			s.addToolEffect(Effect{Kind: EffectAutorun, Target: h, Program: prog, Detail: "connect"})
		}
	}
}
