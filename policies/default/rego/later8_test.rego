# Tests of images.rego, emptied.rego and later_downloads.rego.
package shield.later8_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

exec(effects) := {
	"tool": "Bash", "class": "exec", "commands": [], "urls": [], "strings": [], "args": {"command": "x"},
	"paths": [], "recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "command": "x", "flows": [], "unresolved": [], "unknown_programs": [], "workspace": "/w",
	"effects": effects,
}

eff(kind, target, program, detail) := {"kind": kind, "target": target, "program": program, "detail": detail, "in_workspace": startswith(target, "/w/"), "sensitive": false, "unresolved": false, "port": 0, "remote": ""}

image(ref) := exec([eff("install", ref, "docker", "container_image")])

test_image_canon if {
	shield.image_canon("postgres:16") == "docker.io/library/postgres:16"
	shield.image_canon("bitnami/redis") == "docker.io/bitnami/redis"
	shield.image_canon("docker.io/nginx") == "docker.io/library/nginx"
	shield.image_canon("index.docker.io/someone/x:1") == "docker.io/someone/x:1"
	shield.image_canon("ghcr.io/o/r:1") == "ghcr.io/o/r:1"
	shield.image_canon("localhost:5000/app") == "localhost:5000/app"
}

test_unknown_namespace_escalated if {
	"supply.image-untrusted" in rules(shield.escalate) with input as image("attacker-example/miner:latest")
	"supply.image-untrusted" in rules(shield.escalate) with input as image("random-user/app")
}

test_official_and_verified_not_escalated if {
	not "supply.image-untrusted" in rules(shield.escalate) with input as image("postgres:16")
	not "supply.image-untrusted" in rules(shield.escalate) with input as image("bitnami/redis:7.2")
	not "supply.image-untrusted" in rules(shield.escalate) with input as image("localhost:5000/app:dev")
}

test_image_built_by_the_call_not_escalated if {
	inp := object.union(image("acme/api:dev"), {"commands": [{"name": "docker", "args": ["build", "-t", "acme/api:dev", "."]}]})
	not "supply.image-untrusted" in rules(shield.escalate) with input as inp
}

test_sources_emptied_recursively_blocked if {
	"destroy.files-emptied" in rules(shield.deny) with input as exec([eff("write", "/w/src/**/*.go", "truncate", "emptied glob")])
	"destroy.files-emptied" in rules(shield.deny) with input as exec([eff("write", "/w", "redirect", "emptied tree")])
}

test_files_emptied_by_glob_escalated if {
	inp := exec([eff("write", "/w/src/*.ts", "truncate", "emptied glob")])
	"destroy.files-emptied" in rules(shield.escalate) with input as inp
	not "destroy.files-emptied" in rules(shield.deny) with input as inp
}

test_scratch_and_single_files_emptied_allowed if {
	not "destroy.files-emptied" in rules(shield.escalate) with input as exec([eff("write", "/w/logs/*.log", "truncate", "emptied glob")])
	not "destroy.files-emptied" in rules(shield.deny) with input as exec([eff("write", "/w/logs", "truncate", "emptied tree")])
	not "destroy.files-emptied" in rules(shield.escalate) with input as exec([eff("write", "/w/src/main.go", "redirect", "emptied file")])
}

test_download_into_wrapper_blocked if {
	inp := exec([eff("write", "/w/gradle/wrapper/gradle-wrapper.jar", "curl", ""), eff("connect", "files.exfil.example", "curl", "https")])
	"workspace.download-runs-later" in rules(shield.deny) with input as inp
}

test_download_from_distribution_allowed if {
	inp := exec([eff("write", "/w/gradle/wrapper/gradle-wrapper.jar", "curl", ""), eff("connect", "services.gradle.org", "curl", "https")])
	not "workspace.download-runs-later" in rules(shield.deny) with input as inp
	not "workspace.download-runs-later" in rules(shield.escalate) with input as inp
}

test_download_from_allowed_host_escalated if {
	inp := exec([eff("write", "/w/.git/hooks/pre-commit", "gh", ""), eff("connect", "github.com", "gh", "https")])
	"workspace.download-runs-later" in rules(shield.escalate) with input as inp
	not "workspace.download-runs-later" in rules(shield.deny) with input as inp
}

test_download_into_data_allowed if {
	inp := exec([eff("write", "/w/data/iris.csv", "curl", ""), eff("connect", "files.example.org", "curl", "https")])
	not "workspace.download-runs-later" in rules(shield.escalate) with input as inp
}

test_install_script_beacon_blocked if {
	inp := exec([eff("autorun", "c2.exfil.example", "autorun:/w/package.json", "connect")])
	"workspace.autorun-connects" in rules(shield.deny) with input as inp
}

test_hook_beacon_escalated if {
	inp := exec([eff("autorun", "status.example.com", "autorun:/w/.git/hooks/post-commit", "connect")])
	"workspace.autorun-connects" in rules(shield.escalate) with input as inp
	not "workspace.autorun-connects" in rules(shield.deny) with input as inp
}

test_install_script_to_registry_allowed if {
	inp := exec([eff("autorun", "registry.npmjs.org", "autorun:/w/package.json", "connect")])
	not "workspace.autorun-connects" in rules(shield.escalate) with input as inp
}

test_unknown_build_requirement_escalated if {
	inp := exec([eff("install", "acme-helpr", "write:/w/pyproject.toml", "build_requirement")])
	"supply.build-requirement" in rules(shield.escalate) with input as inp
}

test_known_build_backend_not_escalated if {
	inp := exec([eff("install", "setuptools_scm", "write:/w/pyproject.toml", "build_requirement"), eff("install", "Hatchling", "write:/w/pyproject.toml", "build_requirement")])
	not "supply.build-requirement" in rules(shield.escalate) with input as inp
}

test_install_over_plain_http_blocked if {
	inp := exec([eff("connect", "198.51.100.30", "pip", "http"), eff("install", "requests", "pip", "registry")])
	"supply.insecure-package-source" in rules(shield.deny) with input as inp
}

test_install_from_local_http_index_not_blocked if {
	inp := exec([eff("connect", "localhost", "pip", "http"), eff("install", "mypkg", "pip", "registry")])
	not "supply.insecure-package-source" in rules(shield.deny) with input as inp
	inp2 := exec([eff("connect", "10.0.0.12", "pip", "http"), eff("install", "lib", "pip", "registry")])
	not "supply.insecure-package-source" in rules(shield.deny) with input as inp2
}

test_plain_http_download_without_install_not_this_rule if {
	inp := exec([eff("connect", "example.org", "curl", "http")])
	not "supply.insecure-package-source" in rules(shield.deny) with input as inp
}

test_trusted_host_with_foreign_source_blocked if {
	inp := exec([eff("install", "--trusted-host pypi.exfil.example", "pip", "verification_off"), eff("connect", "pypi.exfil.example", "pip", "https"), eff("install", "flask", "pip", "registry")])
	"supply.insecure-package-source" in rules(shield.deny) with input as inp
}
