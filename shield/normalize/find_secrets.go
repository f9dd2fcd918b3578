package normalize

import "strings"

// Credential files found by name and then read. find's name tests select files anywhere under
// its roots: `find ~ -name keystore.json -o -name '*.wallet' | xargs cat`, `find / -name '*.pem'
// -exec cat {} +`, `find ~/.config -path '*/gh/hosts.yml' | xargs -I{} cat {}`. The reader gets
// what matched, so the read reaches every file the glob ROOT/**/NAME can match: when that glob
// meets a credential pattern of the sensitive table (glob_reach.go), findSecretReads adds a
// secret effect. Roots inside the workspace are left to the workspace's own rules; a find that
// only prints names reads no content.

// maxFindGlobs bounds the globs one find contributes.
const maxFindGlobs = 16

// findNameGlobs: the globs find's name tests select under its roots (clean, absolute).
func (s *state) findNameGlobs(roots []string, args []string) []string {
	var cleanRoots []string
	for _, r := range roots {
		if r == "" || isUnresolvedText(r) {
			continue
		}
		c, ok := resolvePath(r, s.cwd, s.n.opt.Home)
		if !ok || inDir(c, s.n.opt.Workspace) {
			continue
		}
		cleanRoots = append(cleanRoots, c)
	}
	if len(cleanRoots) == 0 {
		return nil
	}
	var globs []string
	for i := 0; i+1 < len(args) && len(globs) < maxFindGlobs; i++ {
		v := args[i+1]
		if v == "" || len(v) > 256 || isUnresolvedText(v) {
			continue
		}
		switch args[i] {
		case "-name", "-iname":
			if strings.Contains(v, "/") {
				continue
			}
			for _, r := range cleanRoots {
				globs = append(globs, strings.TrimSuffix(r, "/")+"/**/"+v)
			}
			i++
		case "-path", "-ipath", "-wholename", "-iwholename":
			if strings.HasPrefix(v, "/") {
				globs = append(globs, v)
			} else {
				for _, r := range cleanRoots {
					globs = append(globs, strings.TrimSuffix(r, "/")+"/**/"+strings.TrimLeft(v, "*/"))
				}
			}
			i++
		}
	}
	if len(globs) > maxFindGlobs {
		globs = globs[:maxFindGlobs]
	}
	return globs
}

// findSecretReads: prog reads what a find's name tests matched (globs).
func (s *state) findSecretReads(prog string, globs []string) {
	for _, g := range globs {
		if k := s.globSecret(g); k != "" {
			s.addEffect(Effect{Kind: EffectSecret, Target: g, Program: prog, Detail: k, Sensitive: true})
		}
	}
}
