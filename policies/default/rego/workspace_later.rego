# Tier 1: files that run later, continued (workspace_files.rego; shield/normalize/autorun_build.go).
#
# - Code a file that runs later loads from outside the workspace, the system and the build tools'
#   caches ("exec-foreign": a -javaagent in .mvn/jvm.config or gradle.properties, a JDK named by
#   org.gradle.java.home, a script run from /tmp by a package script): from a directory anyone
#   can write to it is blocked, elsewhere a human decides.
# - CI definitions that run a pull request's code with the base repository's rights: a
#   pull_request_target or workflow_run trigger with a checkout of the pull request's head (any
#   spelling: head.sha/ref, head_ref, merge_commit_sha, refs/pull/N, gh pr checkout, the head
#   repository), or with a self-hosted runner.
package shield

import rego.v1

deny contains finding("workspace.autorun-scratch-code", sprintf("writes %s, which runs later and runs %s, a file anyone on the host can replace", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "exec-foreign"
	regex.match(`^/(tmp|var/tmp|dev/shm|run/shm)/`, e.target)
}

escalate contains finding("workspace.autorun-foreign-code", sprintf("writes %s, which runs later and loads code from %s, outside the workspace", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "exec-foreign"
	not regex.match(`^/(tmp|var/tmp|dev/shm|run/shm)/`, e.target)
}

# A distribution or download named by a URL the normaliser could not read as one.
escalate contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code from a source that cannot be read", [autorun_file(e)])) if {
	some e in autorun_effect
	e.detail in {"fetch-run", "fetch-exec"}
	e.unresolved
}

ci_workflow_write contains p if {
	some p in autorun_write
	regex.match(`/\.(github|gitea|forgejo)/workflows/`, p)
}

ci_privileged_trigger(t) if regex.match(`(?m)(^|[\s\[,{'"])(pull_request_target|workflow_run)\b`, t)

# The pull request's code, however the workflow names it.
ci_checks_out_head(t) if regex.match(`github\.event\.pull_request\.(head\.(sha|ref|repo)|merge_commit_sha|number)|github\.head_ref|github\.event\.workflow_run\.(head_sha|head_branch|head_repository)|refs/pull/|pull/\$\{\{|\bgh\s+pr\s+checkout\b|\bgit\s+fetch\b[^\n]*\bpull/`, t)

escalate contains finding("workspace.ci-untrusted-input", sprintf("writes %s, which runs a pull request's code with the repository's secrets and write access", [p])) if {
	some p in ci_workflow_write
	some t in written_text
	ci_privileged_trigger(t)
	ci_checks_out_head(t)
}

# A privileged trigger that also hands secrets to a step that runs something: anyone who opens a
# pull request reaches the job.
deny contains finding("workspace.ci-secret-to-untrusted", sprintf("writes %s, which runs a pull request's code with the repository's secrets", [p])) if {
	some p in ci_workflow_write
	some t in written_text
	ci_privileged_trigger(t)
	ci_checks_out_head(t)
	regex.match(`\$\{\{\s*secrets\.|secrets:\s*inherit`, t)
}

# A self-hosted runner (a machine of the organisation's network) in a privileged pull-request run.
# Self-hosted runners on ordinary push or pull_request triggers are an organisation's choice.
escalate contains finding("workspace.ci-self-hosted-untrusted", sprintf("writes %s, which runs pull requests with the repository's rights on a self-hosted runner", [p])) if {
	some p in ci_workflow_write
	some t in written_text
	ci_privileged_trigger(t)
	regex.match(`runs-on:[^\n]*self-hosted`, t)
}
