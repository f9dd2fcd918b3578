package normalize

import "regexp"

// A lease on the pushed branch: `git push --force-with-lease[=BRANCH[:EXPECT]] REMOTE BRANCH`
// rewrites the branch only if the remote branch is still where the lease says (nobody else pushed
// to it): the update of the agent's own feature branch after a rebase. Such a push is marked
// Detail "lease" instead of "force" when every pushed ref is a plain branch that is not a default,
// release or deployment branch (defaultBranchRE); see push_own_branch.go for the whole condition.
const detailLease = "lease"

var (
	plainBranchRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
	defaultBranchRE = regexp.MustCompile(`^(refs/heads/)?(main|master|trunk|develop|development|dev|stable|staging|production|prod|live|gh-pages|HEAD)$|^(refs/heads/)?(release|releases|hotfix|prod|production|stable)[/-]`)
)
