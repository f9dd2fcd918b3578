package normalize

import (
	"regexp"
	"strings"
)

// Forge CLI semantics the spec table cannot say (commands/forge.spec, handler "forge"): which
// API method and path a `gh api`/`glab api`/`hub api` call uses, whether a new repository is
// pushed or public, whether a repository is made public, an admin merge, a deploy key.

// forgePrivilegePathRE: API paths whose writes change who may do what on the forge.
var forgePrivilegePathRE = regexp.MustCompile(`(?i)(^|/)(collaborators|members|invitations|teams|protection|rulesets|keys|deploy_keys|hooks|secrets|variables|actions/permissions|permissions|environments|access_tokens|personal_access_tokens|tokens|admins|settings|security-and-analysis|vulnerability-alerts|memberships|outside_collaborators|pages)(/|$|\?)`)

// forgeSecretPathRE: API paths whose reads return secret values.
var forgeSecretPathRE = regexp.MustCompile(`(?i)(^|/)(variables|secrets/public-key|access_tokens|tokens|deploy_tokens)(/|$|\?)`)

// forge applies the forge handler; it reports whether it was one.
func (w *walker) forge(pa parsedArgs, name string, args, ops words) bool {
	w.uploadsAndMutations(pa, name, args, ops) // effects_upload.go
	w.bucketUploads(pa, name, ops)             // cloud_uploads.go
	w.httpDeletes(pa, name, ops)               // http_deletes.go
	w.privilegedGroups(name, ops)              // privileged_groups.go
	w.publicGrants(pa, name, args, ops)        // public_grants.go
	if pa.spec.handler != "forge" {
		return false
	}
	s := w.s
	add := func(kind, target, detail string) {
		s.addEffect(Effect{Kind: kind, Target: target, Program: name, Detail: detail})
	}
	visibility, _, _ := pa.val("--visibility", "-v")
	public := pa.has("--public") || pa.has("-p") && name == "hub" || strings.EqualFold(visibility, "public")
	switch pa.name {
	case "gh api", "glab api", "hub api":
		method, dyn, ok := pa.val("-X", "--method")
		method = strings.ToUpper(method)
		if !ok {
			method = "GET"
			for _, v := range pa.vals {
				if v.opt == "-f" || v.opt == "-F" || v.opt == "--field" || v.opt == "--raw-field" || v.opt == "--input" {
					method = "POST" // gh sends fields as a POST unless told otherwise
				}
			}
		}
		path := ""
		if len(ops.argv) > 0 {
			path = ops.argv[0]
			if ops.dyn[0] {
				dyn = true
			}
		}
		target := "forge:" + strings.TrimPrefix(path, "/")
		// The operation itself, judged by method and endpoint (rego/operations.rego: writes
		// are inside only on the content endpoints of shield/ops forge_content_paths).
		opMethod := method
		if strings.TrimPrefix(path, "/") == "graphql" && graphqlQueryOnly(pa.vals) {
			opMethod = "GET" // a GraphQL query reads; a mutation or a query from a file is a write
		}
		detail := "forge_api"
		if keys := forgeFieldKeys(pa.vals); keys != "" {
			detail += ",fields:" + keys
		}
		s.addEffect(Effect{Kind: EffectOperate, Target: opMethod + " " + strings.TrimPrefix(path, "/"), Program: name, Detail: detail, Unresolved: dyn})
		switch {
		case dyn:
			s.addUnresolved("forge API method or path (" + pa.name + ")")
			s.addEffect(Effect{Kind: EffectPrivilege, Target: target, Program: name, Detail: "forge api " + method, Unresolved: true})
		case method == "DELETE":
			add(EffectDelete, target, "forge api DELETE")
			if forgePrivilegePathRE.MatchString(path) {
				add(EffectPrivilege, target, "forge api DELETE")
			}
		case method == "GET" || method == "HEAD":
			if forgeSecretPathRE.MatchString(path) {
				add(EffectSecret, target, "forge_variable")
			}
		default:
			if forgePrivilegePathRE.MatchString(path) || forgeSettingsWrite(path, pa.vals) {
				add(EffectPrivilege, target, "forge api "+method)
			}
		}
	case "gh extension install":
		// An extension is code from a repository (OWNER/REPO, a URL) or a local directory.
		if len(ops.argv) > 0 {
			src, dyn := ops.argv[0], ops.dyn[0]
			switch {
			case dyn:
				s.addUnresolved("gh extension source " + src)
				s.addEffect(Effect{Kind: EffectInstall, Target: src, Program: name, Detail: "vcs", Unresolved: true})
			case src == "." || strings.HasPrefix(src, "./") || strings.HasPrefix(src, "/"):
				w.pathEffect(EffectExec, name, src, false)
			case strings.Contains(src, "://"):
				add(EffectInstall, "git+"+src, "vcs")
			default:
				add(EffectInstall, "git+https://github.com/"+src, "vcs")
			}
		}
	case "gh pr merge":
		if pa.has("--admin") {
			add(EffectPrivilege, "forge:pull request", "merge bypassing review (--admin)")
		}
	case "gh repo create", "glab repo create", "tea repos create", "hub create":
		// A new repository filled from the workspace is a push to a remote that is not one of
		// the repository's own; public, it publishes the workspace.
		if pa.has("--push") || pa.has("-s") || pa.has("--source") || name == "hub" {
			d := "new repository"
			if public {
				d = "new public repository"
			}
			add(EffectPush, "forge:new repository", d)
		} else if public {
			add(EffectPush, "forge:new public repository", "new public repository")
		}
	case "gh repo edit", "glab repo edit":
		if strings.EqualFold(visibility, "public") || strings.EqualFold(visibility, "internal") {
			add(EffectPush, "forge:repository visibility", "repository made "+strings.ToLower(visibility))
		}
	case "gh repo deploy-key add":
		if !pa.has("-w") && !pa.has("--allow-write") {
			add(EffectPersistence, "forge:deploy-key", "read-only deploy key")
		} else {
			add(EffectPersistence, "forge:deploy-key", "deploy key with write access")
		}
	}
	return true
}

// forgeOwnerPathRE: an organization, enterprise or repository itself (its settings).
var forgeOwnerPathRE = regexp.MustCompile(`(?i)^/?(orgs|enterprises|organizations)/[^/]+/?$|^/?repos/[^/]+/[^/]+/?$|^/?projects/[^/]+/?$|^/?groups/[^/]+/?$`)

// forgeAccessFieldRE: settings of an organization or repository that decide who may do what
// (default_repository_permission=admin, members_can_create_public_repositories, visibility,
// private=false, two_factor_requirement_enabled, allow_forking, web_commit_signoff_required).
var forgeAccessFieldRE = regexp.MustCompile(`(?i)^(default_repository_permission|default_branch_protection|members_can_\w+|members_allowed_\w+|visibility|private|two_factor_requirement_enabled|allow_forking|web_commit_signoff_required|advanced_security_enabled_for_new_repositories|secret_scanning\w*|dependabot\w*|request_access_enabled|shared_runners_enabled|lfs_enabled|project_creation_level|subgroup_creation_level|require_two_factor_authentication|default_branch_protection_defaults)\b`)

// forgeSettingsWrite: a write to an organization's or repository's own settings that changes
// access (gh api -X PATCH orgs/ORG -f default_repository_permission=admin).
func forgeSettingsWrite(path string, vals []optVal) bool {
	if !forgeOwnerPathRE.MatchString(path) {
		return false
	}
	for _, v := range vals {
		switch v.opt {
		case "-f", "-F", "--field", "--raw-field":
			if forgeAccessFieldRE.MatchString(v.val) {
				return true
			}
		}
	}
	return false
}

// graphqlQueryOnly: the GraphQL document of a forge api call is given in fields and none of them
// is a mutation (or a subscription).
func graphqlQueryOnly(vals []optVal) bool {
	seen := false
	for _, v := range vals {
		switch v.opt {
		case "--input":
			return false
		case "-f", "-F", "--field", "--raw-field":
			k, val, _ := strings.Cut(v.val, "=")
			if v.dyn || strings.HasPrefix(val, "@") {
				return false
			}
			l := strings.ToLower(val)
			if strings.Contains(l, "mutation") || strings.Contains(l, "subscription") {
				return false
			}
			if k == "query" {
				seen = true
			}
		}
	}
	return seen
}

// forgeFieldKeys: the field names of a forge api call, '+'-joined ("description+homepage"); "?"
// stands for a body from a file or an expansion.
func forgeFieldKeys(vals []optVal) string {
	var keys []string
	for _, v := range vals {
		switch v.opt {
		case "--input":
			keys = append(keys, "?")
		case "-f", "-F", "--field", "--raw-field":
			k, _, _ := strings.Cut(v.val, "=")
			if v.dyn {
				k = "?"
			}
			keys = append(keys, strings.TrimSuffix(k, "[]"))
		}
	}
	return strings.Join(keys, "+")
}
