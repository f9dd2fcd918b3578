# Tier 1: files in the workspace that run code later — CI definitions, git hook managers, dev
# containers, editor tasks and settings, package scripts and build files, direnv — package-manager
# configuration that says where code comes from, and agent instruction files. A write to one is
# judged by what it says (the written content; for a shell command, its text): what it would
# run, which secrets it sends where, where packages come from, what it tells agents to do.
# Ordinary edits (a test job, a lint hook, a formatting setting, a dependency) say none of that
# and stay allowed.
#
# The file lists are data (data.json, shield.lists.autorun_files, package_config_files,
# agent_instruction_files); the hosts a secret or a package may go to or come from are the
# configured egress (shield.effects.egress_hosts).
package shield

import rego.v1

# The paths a call writes.
written_path contains p.clean if {
	some p in input.paths
	p.role in {"write", "dest"}
}

written_path contains e.target if {
	some e in input.effects
	e.kind == "write"
	startswith(e.target, "/")
}

autorun_write contains p if {
	some p in written_path
	regex.match(data.shield_derived.match.shield.lists.autorun_files, p)
}

package_config_write contains p if {
	some p in written_path
	regex.match(data.shield_derived.match.shield.lists.package_config_files, p)
}

instruction_write contains p if {
	some p in written_path
	agent_instruction_file(p)
}

# What the call writes: the content of a file tool, the text of a shell command.
written_text contains input.content if {
	input.class != "exec"
	input.content != ""
}

written_text contains s if {
	input.class == "exec"
	some s in input.strings
}

written_lines contains l if {
	some t in written_text
	some l in split(t, "\n")
	l != ""
}

# ---------------------------------------------------------------------------------------------
# Vocabulary

# A secret named in text: CI secrets, secret-named variables, credential files, the environment.
text_secret_re := `(?i)(\$\{\{\s*(secrets\.|tojson\(\s*secrets)|\$\{?[a-z0-9_]*(secret|token|password|passwd|api_?key|access_key|private_key|credential)[a-z0-9_]*|(~|\$home|\$\{home\}|\$\(home\)|\$env:userprofile|%userprofile%|/home/[^/\s]+|/root|/users/[^/\s]+)[/\\]\.(ssh|aws|kube|docker|gnupg|netrc|npmrc|pypirc|git-credentials|config/gh|config/gcloud|azure|vault-token)|(^|[\s"'=@])\.(aws/credentials|ssh/id_[a-z0-9]+|netrc|git-credentials|docker/config\.json|kube/config)\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|/proc/(self|[0-9*]+)/environ|(^|[\s;&|(])(printenv|env)\s*($|[|>;)&])|\bexport\s+-p\b|\bdeclare\s+-x\b|(^|[\s/"'=@])\.env([\s"';|>)]|$)|process\.env\b|os\.environ|os\.getenv\(\s*['"][a-z0-9_]*(secret|token|password|key)|\benv\[['"][a-z0-9_]*(secret|token|password|key))`

# A network sink named in text.
text_sink_re := `(?i)(\b(curl|wget|nc|ncat|netcat|socat|telnet|xh|scp|rsync|sftp|ftp|invoke-webrequest|invoke-restmethod|iwr|irm)\b|\bhttps?\s+(post|put|get)\b|/dev/(tcp|udp)/|requests\.(post|put|get)|\bfetch\s*\(|urllib|http\.request|\bhttps?\.(get|request)\s*\(|require\(\s*['"]https?['"]\s*\)|xmlhttprequest|axios|\bsocket\b|net::http|\bdig\b|\bnslookup\b)`

# Fetching code and running it.
text_fetch_exec_re := `(?i)((curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da|k|fi)?sh\b|(curl|wget|iwr|irm|invoke-webrequest)\b[^|\n]*\|\s*(sudo\s+)?(python[0-9.]*|node|perl|ruby|php|iex|invoke-expression)\b|(ba|z)?sh\s+<\(\s*(curl|wget)|(source|\.)\s+<\(\s*(curl|wget)|(eval|sh\s+-c|bash\s+-c)\s+"?\$\((curl|wget)|python[0-9.]*\s+-c\s+.*(urlopen|requests\.get)\(.*exec)`

# Hosts a text names: URL hosts and bare IPv4 addresses.
text_hosts(t) := (url_hosts(t) | {h | some h in regex.find_n(`\b[0-9]{1,3}(?:\.[0-9]{1,3}){3}\b`, t, 16)}) | sink_domains(t)

url_hosts(t) := {lower(h) | some m in regex.find_all_string_submatch_n(`(?i)\b(?:https?|wss?|ftp)://(?:[^/\s@"']*@)?([a-z0-9.-]+)`, t, 16); h := m[1]}

# A bare domain a network tool is pointed at (dig x.evil.example, nc evil.example 443), not a
# file name (the last label is no file extension).
sink_domains(t) := {lower(d) |
	some m in regex.find_all_string_submatch_n(`(?i)\b(?:dig|nslookup|host|ping|nc|ncat|netcat|telnet|ssh|scp|rsync|socat|curl|wget)\b[^\n;&]*?[\s@.:]([a-z0-9-]+(?:\.[a-z0-9-]+)*\.([a-z]{2,24}))\b`, t, 16)
	not lower(m[2]) in file_extensions
	d := m[1]
}

file_extensions := {"json", "txt", "yml", "yaml", "sh", "py", "js", "ts", "md", "tgz", "gz", "zip", "xml", "html", "htm", "conf", "log",
	"key", "pem", "env", "lock", "toml", "cfg", "ini", "csv", "tar", "bz2", "xz", "whl", "jar", "rb", "go", "rs", "java", "so", "out", "bin",
	"exe", "dll", "png", "jpg", "svg", "css", "map", "mjs", "cjs", "d", "local", "pub", "crt", "cert", "der", "p12", "pfx", "sock", "pid"}

host_allowed(h) if host_in_list(h, cfg.egress_hosts)

host_allowed(h) if cfg.egress_hosts[h]

host_allowed(h) if loopback_host(h)

foreign_hosts(t) := {h | some h in text_hosts(t); not host_allowed(h)}

# A line sends a secret somewhere not configured: a secret and a sink, and a host outside the
# egress (or no visible host: the destination is a variable).
line_sends_secret(l) if {
	regex.match(text_secret_re, l)
	regex.match(text_sink_re, l)
	count(foreign_hosts(l)) > 0
}

# Posted to a forge's public surfaces (gists, issues, comments, discussions) with the secret in
# the data: published, whatever the host.
line_sends_secret(l) if {
	regex.match(text_secret_re, l)
	regex.match(text_sink_re, l)
	regex.match(`(?i)https?://[^\s"']*/(gists|issues|comments|discussions|pulls/[0-9]+/reviews)\b`, l)
}

secret_as_data_or_insecure(l) if {
	regex.match(`(?i)https?://[^\s"']*/(gists|issues|comments|discussions|pulls/[0-9]+/reviews)\b`, l)
	stripped := regex.replace(l, `(?i)\s(-H|--header)\s*=?\s*("authorization[^"]*"|'authorization[^']*')`, " ")
	regex.match(text_secret_re, stripped)
}

# Published where others read it: a gist, an issue or pull-request comment, a release.
line_sends_secret(l) if {
	regex.match(text_secret_re, l)
	regex.match(`(?i)\bgh\s+(gist\s+create|issue\s+(create|comment)|pr\s+(create|comment)|release\s+(create|upload)|api\b[^\n]*(-f|--field|--raw-field|--input))`, l)
}

line_sends_secret(l) if {
	regex.match(text_secret_re, l)
	regex.match(text_sink_re, l)
	count(text_hosts(l)) == 0
	regex.match(`(?i)\b(curl|wget|nc|ncat|netcat|socat|scp|rsync)\b[^\n]*(\s@-|\s-d\s*@|--data[^\s]*\s+@|-F\s*\S+=@|-T\s)`, l)
}

# ---------------------------------------------------------------------------------------------
# Files that run code later

# A secret in the data of a request (body, form, query, a dumped environment), or sent to a bare
# address, plain HTTP or a drop site, is exfiltration. A secret used only to authenticate
# (-u user:token, an Authorization header) to a host outside the egress may be the project's own
# artifact server: a human decides.
deny contains finding("workspace.autorun-secret-egress", sprintf("writes %s, which runs later and sends secrets to a host outside the allowed egress", [p])) if {
	some p in autorun_write
	some l in written_lines
	line_sends_secret(l)
	secret_as_data_or_insecure(l)
}

escalate contains finding("workspace.autorun-secret-send", sprintf("writes %s, which runs later and authenticates with a secret to a host outside the allowed egress", [p])) if {
	some p in autorun_write
	some l in written_lines
	line_sends_secret(l)
	not secret_as_data_or_insecure(l)
}

# The line with its authentication parts removed still names a secret.
secret_as_data_or_insecure(l) if {
	stripped := regex.replace(l, `(?i)(\s(-u|--user|--oauth2-bearer|--proxy-user)\s*=?\s*("[^"]*"|'[^']*'|\S+)|\s(-H|--header)\s*=?\s*("(authorization|private-token|x-api-key|x-auth-token|x-jfrog-art-api|api-key)[^"]*"|'(authorization|private-token|x-api-key|x-auth-token|x-jfrog-art-api|api-key)[^']*'))`, " ")
	regex.match(text_secret_re, stripped)
}

secret_as_data_or_insecure(l) if {
	some h in foreign_hosts(l)
	insecure_host(h, l)
}

secret_as_data_or_insecure(l) if count(text_hosts(l)) == 0

# A secret and a foreign destination in different lines of the same file (read into a file or
# a variable, sent in the next step).
escalate contains finding("workspace.autorun-secret-send", sprintf("writes %s, which runs later and names both secrets and a host outside the allowed egress", [p])) if {
	some p in autorun_write
	some t in written_text
	regex.match(text_secret_re, t)
	regex.match(text_sink_re, t)
	count(foreign_hosts(t)) > 0
}

# Fetch-and-run in a file that runs later: from a bare address, plain HTTP or a drop site it is
# blocked; from elsewhere (a vendor's install script) a human decides.
# Hidden code: decoded and run (base64 -d | sh, eval of a decoded string).
deny contains finding("workspace.autorun-decode-exec", sprintf("writes %s, which runs later and runs code it decodes", [p])) if {
	some p in autorun_write
	some l in written_lines
	regex.match(`(?i)(base64\s+(-d|--decode|-D)|xxd\s+-r|openssl\s+(base64|enc)\s+-d)[^|\n]*\|\s*(sudo\s+)?((ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby|iex)\b|\beval\s+"?\$\((echo|printf)[^)]*\|\s*base64\s+(-d|--decode)`, l)
}

deny contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code it downloads from %s", [p, h])) if {
	some p in autorun_write
	some l in written_lines
	regex.match(text_fetch_exec_re, l)
	some h in foreign_hosts(l)
	insecure_host(h, l)
}

insecure_host(h, _) if regex.match(`^[0-9.]+$`, h)

insecure_host(h, l) if contains(lower(l), concat("", ["http://", h]))

insecure_host(h, _) if host_in_list(h, data.shield.lists.exfil_domains)

insecure_host(h, _) if data.shield.lists.exfil_domains[h]

escalate contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code it downloads", [p])) if {
	some p in autorun_write
	some l in written_lines
	regex.match(text_fetch_exec_re, l)
	count(foreign_hosts(l)) > 0
	not container_build_installer(p, l) # ordinary.rego
}

# Editor files that run code on their own: tasks that start when the folder opens, settings that
# name the executables, shells or interpreters the editor starts, or turn its safeguards off.
# Formatting, linting and layout settings are none of these.
editor_file contains p if {
	some p in autorun_write
	regex.match(`(/\.vscode/|\.code-workspace$|/\.devcontainer)`, p)
}

escalate contains finding("workspace.editor-runs-code", sprintf("writes %s, which makes the editor run code (%s)", [p, why])) if {
	some p in editor_file
	some why in editor_runs_code
}

editor_runs_code contains "a task that runs when the folder opens" if {
	count(editor_file) > 0
	some t in written_text
	regex.match(`(?i)"runOn"\s*:\s*"folderOpen"`, t)
}

editor_runs_code contains "automatic tasks or workspace trust turned off" if {
	count(editor_file) > 0
	some t in written_text
	regex.match(`(?i)"(task\.allowAutomaticTasks"\s*:\s*"on|security\.workspace\.trust\.enabled"\s*:\s*false)`, t)
}

editor_runs_code contains "a terminal environment that loads code" if {
	count(editor_file) > 0
	some t in written_text
	regex.match(`(?i)"terminal\.integrated\.env\.[a-z]+"\s*:\s*\{[^}]*"(LD_PRELOAD|LD_AUDIT|DYLD_INSERT_LIBRARIES|NODE_OPTIONS|PYTHONSTARTUP|BASH_ENV|ENV|PROMPT_COMMAND|PERL5OPT|RUBYOPT|JAVA_TOOL_OPTIONS|GIT_SSH_COMMAND|ZDOTDIR)"`, t)
}

editor_runs_code contains "a terminal shell or profile" if {
	count(editor_file) > 0
	some t in written_text
	regex.match(`(?i)"terminal\.integrated\.(shell|shellArgs|profiles|automationProfile|defaultProfile)[^"]*"\s*:`, t)
}

# An executable setting (*.path, *Path, *.executablePath, *.command, *.serverPath, *.runtime)
# whose value is outside the workspace and the system's directories, a download or shell code.
editor_runs_code contains sprintf("an executable setting %s", [m[1]]) if {
	count(editor_file) > 0
	some t in written_text
	some m in regex.find_all_string_submatch_n(`(?i)"([a-z0-9_.-]*(path|executable|command|runtime|binary|interpreter|shell)[a-z0-9_.-]*)"\s*:\s*"([^"]*)"`, t, 32)
	foreign_executable(m[3])
}

foreign_executable(v) if regex.match(`(?i)(://|\$\(|\x60|\|\s*(sudo\s+)?(ba|z|da)?sh\b|\bcurl\b|\bwget\b|\bnc\b|/tmp/|/dev/shm/|/dev/tcp/)`, v)

foreign_executable(v) if {
	startswith(v, "/")
	not regex.match(`^/(usr|bin|sbin|opt|nix|snap|home/linuxbrew)/`, v)
}

foreign_executable(v) if regex.match(`^(~|\$\{?HOME)`, v)

# Dev container and editor commands run by themselves: judged like any command line they hold.
deny contains finding("workspace.autorun-secret-egress", sprintf("writes %s, whose start command sends the environment or secrets out", [p])) if {
	some p in autorun_write
	regex.match(`(/\.devcontainer|\.code-workspace$|/\.vscode/tasks\.json$|/\.gitpod\.ya?ml$)`, p)
	some t in written_text
	some m in regex.find_all_string_submatch_n(`(?i)"(postCreateCommand|postStartCommand|postAttachCommand|onCreateCommand|updateContentCommand|initializeCommand|command)"\s*:\s*"((?:[^"\\]|\\.)*)"`, t, 16)
	regex.match(text_secret_re, m[2])
	regex.match(text_sink_re, m[2])
}

# A file that runs later filled by a download or copied in from outside the workspace: its
# content cannot be judged here.
escalate contains finding("workspace.autorun-unseen-content", sprintf("fills %s, which runs later, with a download", [p])) if {
	input.class == "exec"
	some p in autorun_write
	some e in input.effects
	e.kind == "connect"
	not loopback_host(effect_host(e.target))
}

escalate contains finding("workspace.autorun-unseen-content", sprintf("fills %s, which runs later, with %s from outside the workspace", [p, e.target])) if {
	input.class == "exec"
	some p in autorun_write
	some e in input.effects
	e.kind == "read"
	startswith(e.target, "/")
	not e.in_workspace
	not regex.match(`^/(usr|lib|lib64|bin|sbin|etc|proc|dev|sys)(/|$)`, e.target)
}

# CI definitions that run text an outsider controls (an issue title, a pull request body or
# branch name) as a script, or check out a fork's code in a privileged pull_request_target run.
escalate contains finding("workspace.ci-untrusted-input", sprintf("writes %s, whose steps run text from %s", [p, m])) if {
	some p in autorun_write
	regex.match(`/\.(github|gitea|forgejo)/workflows/`, p)
	some l in written_lines
	some m in regex.find_n(`\$\{\{\s*github\.event\.(issue|pull_request|comment|review|review_comment|discussion|head_commit|commits|pages)[a-z0-9_.\[\]*]*\.(title|body|message|name|email|label|head_ref|ref|default_branch)\s*\}\}|\$\{\{\s*github\.head_ref\s*\}\}`, l, 1)
	not regex.match(`^\s*(name|if|with|ref|uses)\s*:`, l)
}

escalate contains finding("workspace.ci-untrusted-input", sprintf("writes %s, which checks out a pull request's code in a pull_request_target run", [p])) if {
	some p in autorun_write
	regex.match(`/\.(github|gitea|forgejo)/workflows/`, p)
	some t in written_text
	contains(t, "pull_request_target")
	regex.match(`github\.event\.pull_request\.head\.(sha|ref)|refs/pull/`, t)
}

# ---------------------------------------------------------------------------------------------
# Package-manager configuration: where packages come from and whether they are verified

escalate contains finding("workspace.package-source", sprintf("writes %s, which takes packages from %s, outside the allowed registries", [p, h])) if {
	some p in package_config_write
	some l in written_lines
	regex.match(`(?i)(registry|index[-_]?url|index|extra-index-url|find-links|mirror|source|channels?|channel_alias|url|resolved|tarball|repositories|proxy|--index-url|--extra-index-url|-i\s|-f\s|GOPROXY|npmRegistryServer|@\s*(git\+)?https?://|^\s*["']?(git\+)?https?://|^\s*-e\s)`, l)
	some h in foreign_hosts(l)
}

# package.json dependencies fetched from a URL or a repository (not the registry's semver ranges).
escalate contains finding("workspace.package-source", sprintf("writes %s, which takes a dependency from %s, outside the allowed registries", [p, h])) if {
	some p in written_path
	endswith(p, "/package.json")
	some l in written_lines
	some m in regex.find_all_string_submatch_n(`"([@a-zA-Z0-9/._-]+)"\s*:\s*"((git\+)?(https?|ssh|git)://[^"]+)"`, l, 16)
	not m[1] in {"homepage", "url", "bugs", "repository", "funding", "$schema", "author", "email", "registry"}
	some h in foreign_hosts(m[2])
}

escalate contains finding("workspace.package-verification-off", sprintf("writes %s, which turns package verification off", [p])) if {
	some p in package_config_write
	some l in written_lines
	regex.match(`(?i)(strict-ssl\s*[=:]\s*false|enableStrictSsl\s*:\s*false|trusted-host|--trusted-host|ssl_verify\s*[=:]\s*(false|0|no)|sslverify\s*=\s*false|GOSUMDB\s*=\s*off|GOFLAGS\s*=.*-insecure|GOINSECURE\s*=|GONOSUMDB\s*=\s*\*|disable-tls"?\s*:\s*true|secure-http"?\s*:\s*false|check-revoke\s*=\s*false|unsafeHttpWhitelist|protocol\.file\.allow\s*=\s*always)`, l)
}

# Package-manager configuration that runs code: the shell npm runs scripts with, node options,
# yarn's own binary, bun preloads, cargo runners and compiler wrappers. A value in the workspace
# (.yarn/releases/yarn-4.cjs) is the project's code; one outside it, a download or an option that
# loads code from elsewhere is not.
escalate contains finding("workspace.package-config-runs-code", sprintf("writes %s, which makes the package manager run %s", [p, m[2]])) if {
	some p in written_path
	regex.match(`/(\.npmrc|\.yarnrc(\.yml)?|bunfig\.toml|\.cargo/config(\.toml)?|\.pnpmrc)$`, p)
	some l in written_lines
	some m in regex.find_all_string_submatch_n(`(?i)^\s*["']?(script-shell|node-options|onload-script|init-module|git|shell|yarnPath|preload|runner|rustc-wrapper|rustc-workspace-wrapper|rustc|rustdoc|linker)["']?\s*[=:]\s*\[?\s*["']?([^"'\]\n]+)`, l, 1)
	foreign_executable(m[2])
}

foreign_executable(v) if regex.match(`(--require|--import|--loader|-r)[\s=]+(/|~)`, v)

# ---------------------------------------------------------------------------------------------
# Agent instruction files that tell agents to publish credentials

deny contains finding("agent.instructions-publish-secrets", sprintf("writes %s, telling agents to put credentials where others can read them", [p])) if {
	some p in instruction_write
	some l in written_lines
	instruction_publishes_secret(lower(l))
}

# Instruction files are also what agents act on when spawned: the same text in a sub-agent's
# task or a memory.
deny contains finding("agent.instructions-publish-secrets", "tells an agent to put credentials where others can read them") if {
	input.class in {"agent_spawn", "schedule", "memory_write"}
	some t in agent_text
	some l in split(t, "\n")
	instruction_publishes_secret(l)
}

instruction_publishes_secret(l) if {
	regex.match(`(~/\.|\$home/\.|/home/[^/\s]+/\.)(ssh|aws|kube|docker|gnupg|netrc|npmrc|pypirc|git-credentials|config/gh|config/gcloud|azure|vault-token)|\bid_(rsa|ed25519|ecdsa)\b|\.env\b|credentials|api[ _-]?keys?\b|access[ _-]keys?\b|private[ _-]keys?\b|secret[ _-]?keys?\b|\bsecrets\b|\btokens?\b|passwords?|\$[a-z0-9_]*(secret|token|password|api_?key)`, l)
	regex.match(`\b(export|paste|post|publish|send|upload|share|e-?mail|print|echo|dump|include|add|attach|put|commit|push|write|copy|curl|wget|cat|output|show|reveal|leak|expose|append)\b[^\n]*\b(pr|pull request|issue|comment|description|commit message|gist|pastebin|webhook|slack|discord|channel|chat|readme|changelog|log|logs|output|public|url|https?://|internet|endpoint|server|answer|response|reply|summary|message|report|notes|repo|repository|branch|docs|body|title)\b`, l)
	not negated_publish(l)
}

# "Never commit secrets", "do not paste tokens into issues" (but not "do not forget to paste").
negated_publish(l) if {
	regex.match(`\b(never|don't|do not|dont|must not|mustn't|should not|shouldn't|avoid|no need to|without)\s+(\w+\s+){0,3}?(export|paste|post|publish|send|upload|share|e-?mail|print|echo|dump|include|add|attach|put|commit|push|write|copy|curl|wget|cat|output|show|reveal|leak|expose|append|log|store|keep|check|hardcode|hard-code)\b`, l)
	not regex.match(`\b(never|don't|do not|dont|must not|should not)\s+(forget|fail|hesitate|skip|omit|neglect)\b`, l)
}

negated_publish(l) if regex.match(`\b(keep|kept)\b[^\n]*\b(out of|away from)\b`, l)

negated_publish(l) if regex.match(`\b(never|not)\s+(be\s+)?(committed|published|shared|posted|logged|printed|exposed|pushed)\b`, l)

# Instructions that name a credential file at all (an agent needs no pointer to ~/.ssh/id_rsa to
# do project work): a human looks.
escalate contains finding("agent.instructions-name-credentials", sprintf("writes %s, which points agents at credential files", [p])) if {
	some p in instruction_write
	some t in written_text
	regex.match(`(?i)(~|\$home|\$\{home\}|/home/[^/\s]+|/root)/\.(ssh/|aws/|kube/config|docker/config\.json|gnupg|netrc|npmrc|pypirc|git-credentials|config/gh/|config/gcloud|azure/|vault-token|password-store)|/proc/(self|[0-9*]+)/environ|/etc/(shadow|gshadow|sudoers)|\bid_(rsa|ed25519|ecdsa)\b`, t)
}

# ---------------------------------------------------------------------------------------------
# What an autorun file's code does when it runs (shield/normalize/autorun_code.go): the code the
# file kind runs (package.json scripts, Makefile recipes, .envrc and hooks, setup.py, conftest.py,
# JavaScript configs, CI run steps, dev container commands) walked by the shell and inline-code
# engines; each finding is an "autorun" effect, the file in its program. Downloads from and
# secrets to the allowed egress (the default registries) are ordinary builds.

autorun_effect contains e if {
	some e in input.effects
	e.kind == "autorun"
}

autorun_file(e) := substring(e.program, 8, -1)

autorun_foreign(e) if {
	not host_allowed(e.target)
	not loopback_host(e.target)
}

deny contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code it downloads from %s", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "fetch-exec"
	autorun_foreign(e)
	not autorun_vendor_installer(e)
}

# A vendor's install script piped to a shell in a container build (ordinary.rego) is judged
# by the line rules above, as before.
autorun_vendor_installer(e) if {
	some l in written_lines
	container_build_installer(autorun_file(e), l)
	contains(lower(l), lower(e.target))
}

# A download piped to a shell: from a bare address, plain HTTP or a drop site it is blocked;
# from a named host (a vendor's install script) a human decides, as the line rules above do.
deny contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code it downloads from %s", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "fetch-run"
	autorun_foreign(e)
	some l in written_lines
	insecure_host(e.target, l)
}

escalate contains finding("workspace.autorun-fetch-exec", sprintf("writes %s, which runs later and runs code it downloads from %s", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "fetch-run"
	autorun_foreign(e)
	not autorun_vendor_installer(e)
}

deny contains finding("workspace.autorun-decode-exec", sprintf("writes %s, which runs later and runs code it decodes", [autorun_file(e)])) if {
	some e in autorun_effect
	e.detail == "decode-exec"
}

deny contains finding("workspace.autorun-secret-egress", sprintf("writes %s, which runs later and sends secrets to %s, outside the allowed egress", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "secret-send"
	autorun_foreign(e)
}

escalate contains finding("workspace.autorun-secret-send", sprintf("writes %s, which runs later and authenticates with a secret to %s, outside the allowed egress", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "secret-auth"
	autorun_foreign(e)
}

escalate contains finding("workspace.package-source", sprintf("writes %s, which runs later and installs packages from %s, outside the allowed registries", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "install"
	autorun_foreign(e)
}

escalate contains finding("workspace.autorun-persistence", sprintf("writes %s, which runs later and writes %s, where code runs later outside the workspace", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "persistence"
}

escalate contains finding("workspace.autorun-unseen-content", sprintf("writes %s, which runs later, with more code than can be judged", [autorun_file(e)])) if {
	some e in autorun_effect
	e.detail == "over-size"
}
