package normalize

import "testing"

// Rewriting or deleting a branch is judged by the branch (push_own_branch.go): leases and
// deletions confined to feature branches are marked as such; anything reaching a default or
// release branch, every ref, a plain force or an unknown ref stays a rewrite.
func TestPushOwnBranch(t *testing.T) {
	runEffectCases(t, []effectCase{
		{name: "bare lease on a feature branch", cmd: "git push --force-with-lease origin feat/invoice-pdf",
			want: []fx{{kind: "push", target: "origin", detail: "lease,branch=feat/invoice-pdf"}}},
		{name: "lease with -u and if-includes", cmd: "git push -u --force-with-lease --force-if-includes origin bugfix/x",
			want: []fx{{kind: "push", target: "origin", detail: "lease,branch=bugfix/x"}}},
		{name: "lease on two feature branches", cmd: "git push --force-with-lease origin feat/a feat/b",
			want: []fx{{kind: "push", target: "origin", detail: "lease,branch=feat/a,branch=feat/b"}}},
		{name: "delete a feature branch", cmd: "git push origin --delete feat/invoice-pdf-old",
			want: []fx{{kind: "push", target: "origin", detail: "delete-own,branch=feat/invoice-pdf-old"}}},
		{name: "delete with -d", cmd: "git push -d upstream chore/deps",
			want: []fx{{kind: "push", target: "upstream", detail: "delete-own,branch=chore/deps"}}},
		{name: "delete by empty refspec", cmd: "git push origin :refs/heads/fix/typo",
			want: []fx{{kind: "push", target: "origin", detail: "delete-own,branch=fix/typo"}}},
		// Stay rewrites.
		{name: "bare lease on main", cmd: "git push --force-with-lease origin main", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "lease on a release branch", cmd: "git push --force-with-lease origin release/2.0", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "lease with a feature and main", cmd: "git push --force-with-lease origin feat/a main", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "lease without a ref", cmd: "git push --force-with-lease", want: []fx{{kind: "push", target: "(upstream)", detail: "force"}}},
		{name: "lease with src:dst", cmd: "git push --force-with-lease origin HEAD~3:feat/x", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "plain force on a feature", cmd: "git push --force origin feat/x", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "plus refspec", cmd: "git push origin +feat/x", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "lease and --all", cmd: "git push --force-with-lease --all origin", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "lease naming another branch", cmd: "git push --force-with-lease=feat/x origin feat/y", want: []fx{{kind: "push", target: "origin", detail: "force"}}},
		{name: "delete main", cmd: "git push origin --delete feat/old main", want: []fx{{kind: "push", target: "origin", detail: "delete"}}},
		{name: "delete develop", cmd: "git push origin :develop", want: []fx{{kind: "push", target: "origin", detail: "delete"}}},
		{name: "delete a dynamic branch", cmd: `git push origin --delete "$B"`, want: []fx{{kind: "push", target: "origin", detail: "delete"}}},
		{name: "delete every tag", cmd: "git push origin --delete $(git tag -l)", want: []fx{{kind: "push", target: "origin", detail: "delete"}}},
	})
}
