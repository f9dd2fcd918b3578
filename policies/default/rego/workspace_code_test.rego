# Tests of the workspace-code decisions (workspace_code.rego) on actions as the normaliser builds
# them.
package shield.workspace_code_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

exec(command, cmds, effects) := {
	"tool": "Bash", "class": "exec", "command": command, "commands": cmds, "paths": [], "urls": [], "strings": [command],
	"args": {"command": command}, "recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [], "workspace": "/w/project",
}

cmd(name, args) := {"name": name, "args": args, "env": [], "redirects": [], "pipe": false, "pipe_index": 0, "sudo": false}

eff(kind, target, program, detail, in_ws) := {
	"kind": kind, "target": target, "program": program, "detail": detail, "in_workspace": in_ws,
	"sensitive": false, "unresolved": false, "remote": "",
}

allowed(inp) if "exec.known-effects" in rules(shield.allow) with input as inp

escalated(inp, rule) if rule in rules(shield.escalate) with input as inp

# ---- programs the call built

built_and_run := [
	eff("write", "/w/project/bin/api", "go", "", true),
	eff("exec", "go", "go", "build", true),
	eff("exec", "/w/project/bin/api", "/w/project/bin/api", "file", true),
]

test_built_binary_run_allowed if {
	allowed(exec("go build -o bin/api ./cmd/api && ./bin/api", [cmd("go", ["build"]), cmd("./bin/api", [])], built_and_run))
}

test_built_binary_with_source_written_not_allowed if {
	not allowed(exec("x", [cmd("go", ["build"]), cmd("./bin/api", [])], array.concat(built_and_run, [eff("write", "/w/project/main.go", "redirect", "", true)])))
}

test_file_written_by_other_program_not_allowed if {
	not allowed(exec("x", [cmd("./bin/api", [])], [
		eff("write", "/w/project/bin/api", "curl", "", true),
		eff("exec", "/w/project/bin/api", "/w/project/bin/api", "file", true),
	]))
}

# ---- the repository's hooks directory

hooks := eff("persistence", "/w/project/.githooks", "git", "git_hooks_path", true)

test_repo_hooks_dir_allowed if {
	allowed(exec("git config core.hooksPath .githooks", [cmd("git", ["config", "core.hooksPath", ".githooks"])], [hooks]))
}

test_repo_hooks_dir_with_hook_written_escalated if {
	inp := exec("x", [cmd("git", ["config", "core.hooksPath", ".githooks"])], [hooks, eff("write", "/w/project/.githooks/pre-commit", "redirect", "", true)])
	escalated(inp, "effects.persistence-in-workspace")
	not allowed(inp)
}

test_global_hooks_dir_escalated if {
	inp := exec("x", [cmd("git", ["config", "--global", "core.hooksPath", "/w/project/.githooks"])], [hooks])
	escalated(inp, "effects.persistence-in-workspace")
}

# ---- compose project containers

prune := eff("delete", "container", "docker", "container", false)

test_project_prune_allowed if {
	allowed(exec("x", [cmd("docker", ["container", "prune", "-f", "--filter", "label=com.docker.compose.project=project"])], [prune]))
}

test_other_project_prune_not_allowed if {
	not allowed(exec("x", [cmd("docker", ["container", "prune", "-f", "--filter", "label=com.docker.compose.project=billing"])], [prune]))
}

test_unfiltered_prune_not_allowed if {
	not allowed(exec("x", [cmd("docker", ["container", "prune", "-f"])], [prune]))
}

# ---- known_hosts appends

test_known_hosts_append_allowed if {
	allowed(exec("x", [cmd("ssh-keyscan", ["github.com"])], [eff("write", "/home/u/.ssh/known_hosts", "redirect", "known_hosts", false)]))
}

test_known_hosts_other_program_not_allowed if {
	not allowed(exec("x", [cmd("tee", [])], [eff("write", "/home/u/.ssh/known_hosts", "tee", "known_hosts", false)]))
}
