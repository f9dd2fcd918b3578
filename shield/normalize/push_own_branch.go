package normalize

import "strings"

// Rewriting or deleting a branch is judged by the branch. A lease-protected force push
// (--force-with-lease, bare or naming one of the pushed branches, optionally with
// --force-if-includes) or a deletion (--delete/-d, or ":BRANCH") whose every pushed ref is a plain
// feature branch — not a default, release or deployment branch (defaultBranchRE) — rewrites only
// the agent's own branches: the update after a rebase, the cleanup of a merged branch. Such a push
// is marked Detail "lease" (a lease) or "delete-own" (a deletion), followed by one "branch=NAME"
// per ref, so that the bundle's protected_branches list (data.json, rego push_to_protected) still
// decides on the names. Anything else stays "force"/"delete": plain -f/--force or a "+refspec"
// (overwrites what others pushed without a check), --mirror/--all/--tags/--prune (every ref),
// a "SRC:DST" refspec, a lease naming another branch, a dynamic word, no ref at all (the upstream
// is not known here). Whether the remote is the repository's own is decided apart (own_remotes,
// gitPushTarget). Rules: rules/vcs.yaml vcs.push-rewrite, rego push_rewrites.
const detailDeleteOwn = "delete-own"

// ownBranchRewrite returns the detail for a forced or deleting push confined to feature branches,
// or "" when the push is not such a push.
func ownBranchRewrite(pa parsedArgs, args words, refs []string, force, del bool) string {
	if len(refs) == 0 || !force && !del {
		return ""
	}
	for _, f := range pa.flags {
		switch f {
		case "-f", "--force", "--mirror", "--all", "--tags", "--prune", "--repo", "--receive-pack", "--exec":
			return ""
		}
	}
	for _, d := range args.dyn {
		if d {
			return ""
		}
	}
	var branches []string
	for _, r := range refs {
		b := r
		if strings.HasPrefix(b, ":") {
			if !del {
				return ""
			}
			b = b[1:]
		}
		b = strings.TrimPrefix(b, "refs/heads/")
		if !plainBranchRE.MatchString(b) || defaultBranchRE.MatchString(b) || strings.Contains(b, "..") {
			return ""
		}
		branches = append(branches, b)
	}
	lease := false
	for _, a := range args.argv {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--force-with-lease") {
			continue
		}
		lease = true
		if a == "--force-with-lease" {
			continue
		}
		v, ok := strings.CutPrefix(a, "--force-with-lease=")
		if !ok {
			return ""
		}
		ref, _, _ := strings.Cut(v, ":")
		if indexOf(branches, strings.TrimPrefix(ref, "refs/heads/")) < 0 {
			return ""
		}
	}
	kind := detailDeleteOwn
	switch {
	case force && del:
		return ""
	case force:
		if !lease {
			return "" // --force-if-includes alone, or a force this function does not know
		}
		kind = detailLease
	}
	out := kind
	for _, b := range branches {
		out += ",branch=" + b
	}
	return out
}
