package normalize

import (
	"strings"
)

// Cache homes (issue 11, wave 8, principle "caches are disposable wherever they live"): the XDG
// base-directory specification defines $XDG_CACHE_HOME (~/.cache by default) as the place for
// "user-specific non-essential (cached) data", and Apple's file-system guide says the same of
// ~/Library/Caches. So a program's directory there, or anything below it, is a cache whatever the
// program: deleting it loses what the program re-creates. userCacheRoots (local_targets.go)
// still names the tool caches kept elsewhere (~/.npm/_cacache, ~/.gradle/caches …).
//
// Not a cache, although it lies there:
//   - the cache home itself (~/.cache): it holds every program's entry, some of which are not
//     caches (below);
//   - an entry that holds a credential: a path the sensitive table classifies, or any directory
//     above one (~/.cache/huggingface holds the Hugging Face token). The exclusions are derived
//     from the sensitive table (sensitive.go), so a credential file added there is excluded here
//     too; nothing else lists them;
//   - a path that climbs out (the path is cleaned first: ~/.cache/../.ssh is ~/.ssh).
//
// $XDG_CACHE_HOME written as an expansion is not resolved (the agent's environment is unknown):
// such a delete stays unresolved, outside the envelope.

// cacheHomes: the cache homes, relative to a home directory.
var cacheHomes = []string{".cache", "Library/Caches"}

// cacheCredentialDirs: the literal paths, relative to a home directory, of the credentials the
// sensitive table places under a cache home (".cache/huggingface/token").
var cacheCredentialDirs = func() []string {
	var out []string
	for _, r := range sensitiveTable {
		for _, p := range r.Patterns {
			for _, x := range expandBraces(p) {
				for _, h := range cacheHomes {
					i := strings.Index(x, "/"+h+"/")
					if i < 0 {
						continue
					}
					lit := x[i+1:]
					if j := strings.IndexAny(lit, "*?[{\\"); j >= 0 {
						lit = lit[:j]
					}
					out = append(out, strings.TrimSuffix(lit, "/"))
				}
			}
		}
	}
	return out
}()

// inCacheHome: rel (a path relative to a home directory, cleaned) is a program's entry in a cache
// home or below one, and neither holds nor is a credential the sensitive table names.
func inCacheHome(rel string) bool {
	in := false
	for _, h := range cacheHomes {
		if strings.HasPrefix(rel, h+"/") && len(rel) > len(h)+1 {
			in = true
		}
	}
	if !in {
		return false
	}
	for _, c := range cacheCredentialDirs {
		if c == rel || strings.HasPrefix(c, rel+"/") || strings.HasPrefix(rel, c+"/") {
			return false
		}
	}
	return true
}
