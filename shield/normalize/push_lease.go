package normalize

import (
	"regexp"
	"strings"
)

// A lease on the pushed branch: `git push --force-with-lease=BRANCH[:EXPECT] REMOTE BRANCH`
// rewrites one branch, and only if the remote branch is still where the lease says (nobody else
// pushed to it): the update of the agent's own feature branch after a rebase. Such a push is
// marked Detail "lease" instead of "force" when it names exactly one plain branch, the lease
// names that same branch, the branch is not a default, release or deployment branch
// (defaultBranchRE), and nothing else forces (-f, --force, --mirror, a +refspec, a bare
// --force-with-lease that covers every pushed ref, --force-if-includes on its own). Rules:
// rules/vcs.yaml vcs.push-rewrite (the same condition), rego push_rewrites (a lease is no
// rewrite of shared history).
const detailLease = "lease"

var (
	plainBranchRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
	defaultBranchRE = regexp.MustCompile(`^(refs/heads/)?(main|master|trunk|develop|development|dev|stable|staging|production|prod|live|gh-pages|HEAD)$|^(refs/heads/)?(release|releases|hotfix|prod|production|stable)[/-]`)
)

// leaseOnOwnBranch: the push's only forcing is a lease on the one branch it updates (see above).
func leaseOnOwnBranch(pa parsedArgs, args words, refs []string) bool {
	if len(refs) != 1 || !plainBranchRE.MatchString(refs[0]) || defaultBranchRE.MatchString(refs[0]) {
		return false
	}
	for _, f := range pa.flags {
		switch f {
		case "-f", "--force", "--mirror", "--all", "--tags", "--delete", "-d", "--prune":
			return false
		}
	}
	lease := false
	for k, a := range args.argv {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--force-with-lease") {
			continue
		}
		if args.dyn[k] {
			return false
		}
		v, ok := strings.CutPrefix(a, "--force-with-lease=")
		if !ok {
			return false // bare: a lease on every pushed ref, whatever it is
		}
		if ref, _, _ := strings.Cut(v, ":"); ref != refs[0] {
			return false
		}
		lease = true
	}
	return lease
}
