package normalize

import "testing"

// TestForgeToolEquivalent: forge administration tools are the gh request they stand for; a call
// missing its owner, repository or subject, or with a subject that would change the request
// path, has none (it stays unknown).
func TestForgeToolEquivalent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"delete_repository", map[string]any{"owner": "acme", "repo": "infra"}, "gh repo delete acme/infra --yes"},
		{"delete_repository", map[string]any{"repository": "acme/infra"}, "gh repo delete acme/infra --yes"},
		{"delete_repository", map[string]any{"repo": "infra"}, ""},
		{"update_branch_protection", map[string]any{"owner": "acme", "repo": "app", "branch": "main", "required_pull_request_reviews": nil, "enforce_admins": false},
			"gh api -X PUT repos/acme/app/branches/main/protection -F enforce_admins=false -F required_pull_request_reviews=null"},
		{"delete_branch_protection", map[string]any{"owner": "acme", "repo": "app"}, ""},
		{"add_collaborator", map[string]any{"owner": "acme", "repo": "app", "username": "x", "permission": "admin"},
			"gh api -X PUT repos/acme/app/collaborators/x -F permission=admin"},
		{"add_collaborator", map[string]any{"owner": "acme", "repo": "app", "username": "../../orgs/acme"}, ""},
		{"set_org_membership", map[string]any{"org": "acme", "username": "x", "role": "admin"}, "gh api -X PUT orgs/acme/memberships/x -F role=admin"},
		{"update_repository", map[string]any{"owner": "acme", "repo": "app", "topics": []any{"a", "b"}}, `gh api -X PATCH repos/acme/app -F 'topics=["a","b"]'`},
	}
	for _, tc := range cases {
		if got := cliEquivalent(tc.tool, tc.args); got != tc.want {
			t.Errorf("%s %v:\n got %q\nwant %q", tc.tool, tc.args, got, tc.want)
		}
	}
}
