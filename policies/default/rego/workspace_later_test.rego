# Tests of the later-running file rules (workspace_later.rego).
package shield.workspace_later_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

write(path, content, effects) := {
	"tool": "Write", "class": "file_write", "commands": [], "urls": [], "strings": [content], "args": {},
	"paths": [{"raw": path, "clean": path, "role": "write", "in_workspace": true, "sensitive": false, "kind": "", "dotdot": false}],
	"recipients": [], "body": "", "content": content, "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w",
}

autorun(file, detail, target) := {"kind": "autorun", "target": target, "detail": detail, "program": concat("", ["autorun:", file]),
	"in_workspace": false, "sensitive": false, "unresolved": false}

test_scratch_code_denied if {
	inp := write("/w/.mvn/jvm.config", "-javaagent:/tmp/a.jar", [autorun("/w/.mvn/jvm.config", "exec-foreign", "/tmp/a.jar")])
	"workspace.autorun-scratch-code" in rules(shield.deny) with input as inp
}

test_foreign_code_escalated if {
	inp := write("/w/gradle.properties", "org.gradle.jvmargs=-javaagent:/opt2/a.jar", [autorun("/w/gradle.properties", "exec-foreign", "/opt2/a.jar")])
	"workspace.autorun-foreign-code" in rules(shield.escalate) with input as inp
	not "workspace.autorun-scratch-code" in rules(shield.deny) with input as inp
}

test_prt_head_checkout_with_secret if {
	c := "on: pull_request_target\njobs:\n  t:\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n      - run: make\n        env:\n          T: ${{ secrets.T }}\n"
	inp := write("/w/.github/workflows/pr.yml", c, [])
	"workspace.ci-secret-to-untrusted" in rules(shield.deny) with input as inp
}

test_workflow_run_head_checkout if {
	c := "on:\n  workflow_run:\n    workflows: [CI]\njobs:\n  d:\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.workflow_run.head_sha }}\n"
	inp := write("/w/.github/workflows/after.yml", c, [])
	"workspace.ci-untrusted-input" in rules(shield.escalate) with input as inp
}

test_pull_request_ci_allowed if {
	c := "on: [pull_request]\njobs:\n  b:\n    runs-on: self-hosted\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n"
	inp := write("/w/.github/workflows/ci.yml", c, [])
	count(shield.deny) == 0 with input as inp
	count(shield.escalate) == 0 with input as inp
}

test_prt_self_hosted if {
	c := "on: pull_request_target\njobs:\n  l:\n    runs-on: [self-hosted, linux]\n    steps:\n      - run: ./label.sh\n"
	inp := write("/w/.github/workflows/label.yml", c, [])
	"workspace.ci-self-hosted-untrusted" in rules(shield.escalate) with input as inp
}
