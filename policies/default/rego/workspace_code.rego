# Workspace code and local targets (issue 11, wave 6: false alarms of ordinary work). The lists
# are data: shield/workspace_code/data.yaml.
package shield

import rego.v1

ws_code_cfg := data.shield.workspace_code

# ---------------------------------------------------------------------------------------------
# Decision: the workspace's own programs. A workspace executable is code of the workspace, like
# `make` or `npm test` (effects.rego already lets a script file of the workspace run when the
# call did not write it). A file the same call writes is the workspace's own program too when a
# build program wrote it (go build -o bin/api … && ./bin/api --help) and no other program of the
# call writes anything: the build compiled sources that were already there. Anything else that
# writes in the call (echo > main.go, curl -o, cp, tee) keeps the run outside, as before.
inside(e) if {
	e.kind == "exec"
	e.detail == "file"
	e.in_workspace
	not e.unresolved
	not e.sensitive
	object.get(e, "remote", "") == ""
	built_here(e.target)
	every w in input.effects {
		not non_build_write(w)
	}
}

built_here(p) if {
	some w in input.effects
	w.kind == "write"
	w.target == p
	w.in_workspace
	not w.unresolved
	w.program in ws_code_cfg.build_programs
}

non_build_write(w) if {
	w.kind in {"write", "move"}
	not w.program in ws_code_cfg.build_programs
}

# ---------------------------------------------------------------------------------------------
# Decision: the repository's own hooks directory. `git config [--local] core.hooksPath .githooks`
# (what husky and lefthook set up) makes git run the hooks the project committed: workspace code,
# as above. It stays escalated (effects.persistence-in-workspace) when the call also writes,
# moves or deletes anything under that directory (the hooks being planted now), when git's
# configuration is not the repository's own (--global, --system, --file: every repository would
# run them), or when the directory is the workspace itself.
own_hooks_dir(e) if {
	e.kind == "persistence"
	e.detail == "git_hooks_path"
	e.in_workspace
	not e.unresolved
	e.target != input.workspace
	every w in input.effects {
		not changes_under(w, e.target)
	}
	every c in input.commands {
		not outer_git_config(c)
	}
}

inside(e) if own_hooks_dir(e)

changes_under(w, dir) if {
	w.kind in {"write", "delete", "move", "exec"}
	w.target != dir
	under(w.target, dir)
}

outer_git_config(c) if {
	c.name == "git"
	some a in c.args
	a in ws_code_cfg.git_config_outer_scopes
}

outer_git_config(c) if {
	c.name == "git"
	some a in c.args
	startswith(a, "--file=")
}

# ---------------------------------------------------------------------------------------------
# Decision: containers of the workspace's compose project. `docker container prune --filter
# label=com.docker.compose.project=NAME`, where NAME is the workspace directory's name (compose's
# default project name, lower-cased), removes only that project's stopped containers, which
# `compose up` re-creates. A prune without that filter (every stopped container of every project),
# -a, volumes, another project's label and a remote daemon stay outside.
inside(e) if {
	e.kind == "delete"
	e.target == "container"
	e.program in {"docker", "podman", "nerdctl"}
	not remote_container_runtime(e.program)
	not removes_volumes(e.program)
	every c in input.commands {
		project_prune_only(c, e.program)
	}
}

project_prune_only(c, p) if c.name != p

project_prune_only(c, p) if {
	c.name == p
	c.args[0] == "container"
	c.args[1] == "prune"
	some v in c.args
	compose_project_filter(v)
	every i, a in c.args {
		project_prune_word_ok(c.args, i, a)
	}
}

compose_project_filter(v) if v == concat("", ["label=com.docker.compose.project=", workspace_project])

compose_project_filter(v) if v == concat("", ["--filter=label=com.docker.compose.project=", workspace_project])

workspace_project := lower(regex.replace(base, `[^A-Za-z0-9_-]`, "")) if {
	parts := split(trim_suffix(input.workspace, "/"), "/")
	base := parts[count(parts) - 1]
}

project_prune_word_ok(_, i, _) if i < 2

project_prune_word_ok(_, i, a) if {
	i >= 2
	a in {"-f", "--force", "--filter"}
}

project_prune_word_ok(args, i, a) if {
	i >= 3
	args[i - 1] == "--filter"
	project_prune_filter_ok(a)
}

project_prune_word_ok(_, i, a) if {
	i >= 2
	startswith(a, "--filter=")
	project_prune_filter_ok(substring(a, 9, -1))
}

project_prune_filter_ok(v) if compose_project_filter(v)

project_prune_filter_ok(v) if regex.match(`^until=[A-Za-z0-9.:-]+$`, v)

# ---------------------------------------------------------------------------------------------
# Decision: appending host public keys to known_hosts. The normaliser marks `ssh-keyscan HOST >>
# ~/.ssh/known_hosts` (Detail "known_hosts", metadata_only.go): the file gains the public keys
# of the host scanned, as ssh's own accept-new does on a first connection. The connection to the
# host is judged on its own (allowed egress or not).
inside(e) if {
	e.kind == "write"
	e.detail == "known_hosts"
	e.program == "redirect"
	not e.unresolved
	not e.sensitive
}
