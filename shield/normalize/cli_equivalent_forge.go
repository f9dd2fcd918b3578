package normalize

import (
	"encoding/json"
	"strings"
)

// Forge administration tools are the forge's API in disguise (cli_equivalent.go): the GitHub MCP
// server's and other forge servers' repository, protection, collaborator and membership tools
// take the parts of an API request as fields. Each is normalised as the gh command or `gh api`
// request it stands for, so the same effects and rules apply as to the shell form (a repository
// deleted is a remote delete, branch protection rewritten or removed, a collaborator or an
// organisation role granted, a repository transferred or a deploy key added are forge privilege
// changes). A call without its owner, repository or subject stays unknown (ESCALATE).

// forgeToolBuilders: tool name (lower case) → command line.
var forgeToolBuilders = map[string]func(*cliWords){
	"delete_repository": func(w *cliWords) {
		w.lit("gh", "repo", "delete")
		w.word(w.repoPath())
		w.lit("--yes")
	},
	"update_branch_protection": func(w *cliWords) { w.forgeAPI("PUT", "repos/%r/branches/%b/protection") },
	"set_branch_protection":    func(w *cliWords) { w.forgeAPI("PUT", "repos/%r/branches/%b/protection") },
	"delete_branch_protection": func(w *cliWords) { w.forgeAPI("DELETE", "repos/%r/branches/%b/protection") },
	"remove_branch_protection": func(w *cliWords) { w.forgeAPI("DELETE", "repos/%r/branches/%b/protection") },
	"add_collaborator":         func(w *cliWords) { w.forgeAPI("PUT", "repos/%r/collaborators/%u") },
	"add_repository_collaborator": func(w *cliWords) {
		w.forgeAPI("PUT", "repos/%r/collaborators/%u")
	},
	"update_repository":   func(w *cliWords) { w.forgeAPI("PATCH", "repos/%r") },
	"update_repo":         func(w *cliWords) { w.forgeAPI("PATCH", "repos/%r") },
	"transfer_repository": func(w *cliWords) { w.forgeAPI("POST", "repos/%r/transfer") },
	"add_deploy_key":      func(w *cliWords) { w.forgeAPI("POST", "repos/%r/keys") },
	"create_deploy_key":   func(w *cliWords) { w.forgeAPI("POST", "repos/%r/keys") },
	"set_org_membership":  func(w *cliWords) { w.forgeAPI("PUT", "orgs/%o/memberships/%u") },
	"update_org_membership": func(w *cliWords) {
		w.forgeAPI("PUT", "orgs/%o/memberships/%u")
	},
	"disable_workflow": func(w *cliWords) { w.forgeAPI("PUT", "repos/%r/actions/workflows/%w/disable") },
}

// forgeKeys are the fields that name the request's target, not its body.
var forgeKeys = set("owner", "repo", "repository", "branch", "username", "user", "collaborator", "org", "organization", "workflow_id", "workflow")

// repoPath: OWNER/REPO from owner and repo (or a repo already of that form).
func (w *cliWords) repoPath() string {
	repo := w.str("repo", "repository")
	if owner := w.str("owner"); owner != "" && repo != "" && !strings.Contains(repo, "/") {
		repo = owner + "/" + repo
	}
	if repo == "" || !strings.Contains(repo, "/") {
		w.bad = true
	}
	return repo
}

// forgeAPI adds `gh api -X METHOD PATH` and every other field as -F key=value (objects, lists and
// null as JSON). %r is OWNER/REPO, %b the branch, %u the user, %o the organisation, %w the workflow.
func (w *cliWords) forgeAPI(method, tmpl string) {
	path := tmpl
	for _, r := range []struct {
		mark string
		keys []string
	}{{"%b", []string{"branch"}}, {"%u", []string{"username", "user", "collaborator"}}, {"%o", []string{"org", "organization", "owner"}}, {"%w", []string{"workflow_id", "workflow"}}} {
		if strings.Contains(path, r.mark) {
			v := w.str(r.keys...)
			if v == "" || strings.ContainsAny(v, "/ ") {
				w.bad = true
				return
			}
			path = strings.ReplaceAll(path, r.mark, v)
		}
	}
	if strings.Contains(path, "%r") {
		path = strings.ReplaceAll(path, "%r", w.repoPath())
	}
	if w.bad {
		return
	}
	w.lit("gh", "api", "-X", method)
	w.word(path)
	for _, k := range sortedKeys(w.args) {
		if forgeKeys[k] {
			continue
		}
		var v string
		switch x := w.args[k].(type) {
		case string:
			v = x
		default:
			j, err := json.Marshal(x)
			if err != nil {
				w.bad = true
				return
			}
			v = string(j)
		}
		w.lit("-F")
		w.word(k + "=" + v)
	}
}
