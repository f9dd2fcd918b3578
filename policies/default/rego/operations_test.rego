# Tests of operations.rego and ops_supply.rego: cloud operations by verb, forge API writes by
# endpoint, lock files, redirected dependencies, supply sources, releases.
package shield.operations_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

act(effects, command) := {
	"tool": "t", "class": "exec", "commands": [], "paths": [], "urls": [], "strings": [], "args": {},
	"recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [],
	"workspace": "/w", "command": command, "cwd": "/w",
}

op(program, target, detail) := {"kind": "operate", "target": target, "program": program, "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "program": program, "detail": detail,
	"in_workspace": false, "sensitive": false, "unresolved": false, "remote": ""}

allowed(effects) if "exec.known-effects" in rules(shield.allow) with input as act(effects, "x")

test_read_verbs_inside if {
	allowed([op("aws", "ec2 describe-instances", "")])
	allowed([op("gcloud", "projects get-iam-policy acme-dev", "")])
	allowed([op("az", "vm run-command list", "")])
	allowed([op("gcloud", "run services list", "")])
	allowed([op("aws", "s3 cp dist/a s3://b/a", "")])
}

test_destroy_words_blocked if {
	"ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "kms schedule-key-deletion alias/p", "")], "x")
	"ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "ecr batch-delete-image api", "")], "x")
	"ops.cloud-destroy" in rules(shield.deny) with input as act([op("az", "keyvault key delete", "")], "x")
	"ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "kms disable-key", "")], "x")
}

test_scale_to_zero_blocked if {
	"ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "autoscaling update-auto-scaling-group", "zero:--desired-capacity")], "x")
	not "ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "sqs set-queue-attributes", "zero:--delay-seconds")], "x")
}

test_change_and_unknown_verbs_escalate if {
	not allowed([op("aws", "iam put-user-policy", "")])
	not allowed([op("hcloud", "server poweroff web-1", "")])
	not allowed([op("aws", "raw-in-base64-out lambda", "")])
}

test_local_endpoint_inside if {
	allowed([op("aws", "s3 rb s3://t", "endpoint:local")])
	not "ops.cloud-destroy" in rules(shield.deny) with input as act([op("aws", "s3 rb s3://t", "endpoint:local")], "x")
}

test_cli_not_judged_by_verb if {
	allowed([op("vercel", "deploy --prod", "")])
}

test_forge_writes if {
	allowed([op("gh", "GET repos/a/b/branches/main/protection", "forge_api")])
	allowed([op("gh", "POST repos/a/b/issues/4/comments", "forge_api,fields:body")])
	allowed([op("gh", "PATCH repos/a/b", "forge_api,fields:description+homepage")])
	"ops.forge-settings" in rules(shield.escalate) with input as act([op("glab", "PUT projects/12/protected_branches/main", "forge_api,fields:allowed_to_push")], "x")
	"ops.forge-settings" in rules(shield.escalate) with input as act([op("gh", "PATCH repos/a/b", "forge_api,fields:description+private")], "x")
	not allowed([op("gh", "POST repos/a/b/issues/4/comments/../../hooks", "forge_api,fields:config")])
}

test_lockfile_edits if {
	"ops.lockfile-verification-stripped" in rules(shield.deny) with input as act([eff("write", "/w/package-lock.json", "sed", "")], "sed -i '/integrity/d' package-lock.json")
	"ops.lockfile-edit" in rules(shield.escalate) with input as act([eff("write", "/w/yarn.lock", "awk", "")], "awk x yarn.lock > yarn.lock")
	not "ops.lockfile-edit" in rules(shield.escalate) with input as act([eff("write", "/w/package-lock.json", "npm", "")], "npm install")
	not "ops.lockfile-edit" in rules(shield.escalate) with input as act([eff("write", "/w/yarn.lock", "git", "")], "git checkout -- yarn.lock")
}

test_dependency_redirect if {
	"ops.dependency-redirected" in rules(shield.escalate) with input as object.union(act([eff("write", "/w/go.mod", "apply_patch", "")], ""), {"class": "file_write", "content": "+replace github.com/sirupsen/logrus => github.com/sirupsen-dev/logrus v1.9.4"})
	not "ops.dependency-redirected" in rules(shield.escalate) with input as object.union(act([eff("write", "/w/go.mod", "apply_patch", "")], ""), {"class": "file_write", "content": "replace github.com/acme/x => github.com/acme/x v1.2.0"})
}

test_supply_sources if {
	"ops.untrusted-source" in rules(shield.escalate) with input as act([eff("install", "github.com/unknown-dev0/t@latest", "go", "module")], "x")
	not "ops.untrusted-source" in rules(shield.escalate) with input as act([eff("install", "github.com/golangci/golangci-lint/cmd/golangci-lint@v1", "go", "module")], "x")
	"ops.untrusted-source" in rules(shield.escalate) with input as act([eff("install", "ghcr.io/unknown0/miner:latest", "docker", "container_image")], "x")
	not "ops.untrusted-source" in rules(shield.escalate) with input as act([eff("install", "postgres:16", "docker", "container_image")], "x")
	not "ops.untrusted-source" in rules(shield.escalate) with input as act([eff("install", "docker.io/redis:7", "docker", "container_image")], "x")
	"ops.release-published" in rules(shield.escalate) with input as act([eff("push", "release:gh", "gh", "release marked latest")], "x")
}

test_exec_without_command_escalates if {
	"exec.no-command" in rules(shield.escalate) with input as object.union(act([], ""), {"command": ""})
}
