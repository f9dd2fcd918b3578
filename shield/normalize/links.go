package normalize

import (
	"path"
	"path/filepath"
	"strings"
)

// Symbolic links on disk. With Options.ResolveLinks, a path inside the workspace that exists on
// this host (or whose longest existing prefix does) is classified where its links lead: a link in
// the workspace pointing at ~/.ssh makes a read through it a secret read, a link leaving the
// workspace makes a write through it a write outside the envelope. Paths outside the workspace are
// left as written: the system's own links (/bin → usr/bin) are not the agent's doing, and the
// sensitive table names them as written.
//
// Only an appliance sharing the file system with the workspace should set ResolveLinks: one that
// serves runtimes on other hosts would read its own disk, not theirs. The work is bounded: at most
// maxLinkComponents prefixes are tried per path, and the kernel's own bound on links per lookup
// applies to each.

const maxLinkComponents = 64

// onDisk returns where clean leads through the symbolic links that exist on disk, when links are
// resolved and clean lies in the workspace; clean otherwise.
func (n *Normalizer) onDisk(clean string) string {
	if !n.opt.ResolveLinks || !inDir(clean, n.opt.Workspace) {
		return clean
	}
	p := clean
	var rest []string
	for i := 0; i < maxLinkComponents; i++ {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			real = path.Join(append([]string{filepath.ToSlash(real)}, rest...)...)
			// The workspace root may itself be reached through a link (/home/u/p → /data/p):
			// what lies under its real location is in the workspace.
			if n.wsReal != "" && n.wsReal != n.opt.Workspace && inDir(real, n.wsReal) {
				real = path.Join(n.opt.Workspace, strings.TrimPrefix(real, n.wsReal))
			}
			return real
		}
		if p == "/" || p == "." {
			break
		}
		rest = append([]string{path.Base(p)}, rest...)
		p = path.Dir(p)
	}
	return clean
}
