# Places outside the project whose files run later without anyone running them by name: version
# managers' shims and installed toolchains, package managers' caches and global installs whose
# sources are built or run on the next install or `npx`, Python's startup hooks
# (sitecustomize.py, usercustomize.py, *.pth in any site-packages) and the user site directory,
# build tools' init scripts. Reading them is ordinary (the user caches are read roots); writing a
# file there with a shell, an interpreter or a file tool plants code that the next build, install,
# `python` or `npx` runs: persistence. The package managers themselves fill these places through
# their own install effects, which are judged as installs, not as file writes.
#
# In the project's own tree (.venv/lib/python3.x/site-packages/sitecustomize.py,
# node_modules/.bin/x) the write is reviewed: the project runs it on its next test.
#
# The rest of this file holds the decisions of the ordinary side of issue 11: which calls that
# look like changes or secret reads are ordinary developer work, each with the attack next to it
# that stays stopped (corpus: policies/testdata/corpus/families.jsonl, FAM-ord-*). Decided
# elsewhere: read-only cluster sub-commands (commands/ordinary.spec), git clean's and git
# ls-files' directory, kubectl get secrets without values, git configuration keys
# (shield/normalize/ordinary.go, gitconfig_keys.go), publish --dry-run (rules/credentials.yaml),
# Dockerfile installers (rules/files.yaml and below).
#
# Kept as they are, by decision: a force push or deletion that reaches a default, release or
# protected branch, every ref, or an unknown one (leases and deletions confined to feature
# branches are the branch owner's work: shield/normalize/push_own_branch.go, rules/vcs.yaml
# vcs.push-rewrite); reading a private key, even a workspace test key (a secret
# read); deploying to a
# platform (`railway up`: a change of shared infrastructure, like publishing); a host directory
# outside the workspace and the read roots mounted into a container (a read outside the
# envelope, as `ls` of it on the host would be); an e-mail to a domain that is not configured as
# the organisation's (message.external-recipient); shell history filtered by a word (history
# lines carry typed secrets: `docker login -p …`); a clone into a sibling directory (a write
# outside the workspace); tools the catalog does not know (never ALLOWed without review: the
# reason says so).
package shield

import rego.v1

# Regular expressions over the cleaned absolute path of a write. Kept here, next to the rules
# that use them, as reviewable data.
code_cache_patterns := [
	# Version managers' shims and the toolchains they select.
	`/\.(pyenv|rbenv|nodenv|goenv|jenv|plenv|phpenv|scalaenv|swiftenv|tfenv|asdf|local/share/mise|local/share/rtx)/(shims|bin)/`,
	`/\.(pyenv|rbenv|nodenv|goenv|jenv|plenv|phpenv)/versions/`,
	`/\.nvm/(versions/node|alias)/`,
	`/\.(volta|fnm)/`,
	`/\.asdf/installs/`,
	`/\.local/share/(mise|rtx|fnm|pnpm)/`,
	`/\.rustup/(toolchains|update-hashes)/`,
	`/\.cargo/(bin|registry/src|registry/cache|git/checkouts|git/db)/`,
	# Package managers' caches and global installs.
	`/\.npm/(_npx|_cacache)/`,
	`/\.npm-global/`,
	`/\.(bun|deno)/(bin|install)/`,
	`/\.yarn/berry/cache/`,
	`/\.pnpm-store/`,
	`/go/(pkg/mod|bin)/`,
	`/\.m2/repository/`,
	`/\.gradle/(caches|wrapper|init\.d)/`,
	`/\.gradle/init\.gradle(\.kts)?$`,
	`/\.(ivy2|sbt|coursier)/`,
	`/\.cache/(pre-commit|pip|pypoetry|uv|go-build|bazel|coursier|node-gyp|ms-playwright)/`,
	`/\.local/share/virtualenvs/`,
	`/\.gem/`,
	`/\.composer/vendor/`,
	`/\.config/composer/vendor/`,
	`/\.nuget/packages/`,
	`/\.julia/(packages|compiled)/`,
	`/\.conan2?/`,
	`/node_modules/\.bin/`,
	# Python startup: any site-packages' startup hooks, and the user site directory.
	`/(site|dist)-packages/(sitecustomize|usercustomize)\.py$`,
	`/(site|dist)-packages/[^/]+\.pth$`,
	`/\.local/lib/python[^/]*/site-packages/`,
	`/lib/python[^/]*/site-packages/`,
	# A virtual environment's own programs (the project's test run starts them).
	`/\.(venv|tox|nox)/bin/`,
]

code_cache_write(e) if {
	e.kind == "write"
	startswith(e.target, "/")
	regex.match(data.shield_derived.match.shield.code_cache_patterns, e.target) # the list above, as one pattern
}

deny contains finding("effects.code-cache-write", sprintf("writes %s, code that a later build, install or interpreter start runs", [e.target])) if {
	some e in input.effects
	code_cache_write(e)
	not e.in_workspace
}

escalate contains finding("effects.code-cache-write-in-workspace", sprintf("writes %s, code the project's next run loads", [e.target])) if {
	some e in input.effects
	code_cache_write(e)
	e.in_workspace
}

# ---------------------------------------------------------------------------------------------
# Targets that are not paths: the project's own containers and databases.
#
# Decision: containers and images of the local container runtime (no -H/--host/--context/--url
# option, no DOCKER_HOST/CONTAINER_HOST in the call) are the developer's disposable build and
# test objects, re-created by the next build or `compose up`: removing them is inside the
# envelope when they are named or selected by a filter. Volumes (docker volume rm, system prune,
# rm -v) hold data, and prune or "every container" reaches other projects' objects: those stay
# outside; so does anything on a remote daemon.
inside(e) if {
	e.kind == "delete"
	e.target in {"container", "image"}
	e.program in {"docker", "podman", "nerdctl"}
	not remote_container_runtime(e.program)
	not removes_volumes(e.program)
	not removes_everything(e.program)
}

# The volumes of the workspace's own compose project (docker compose down -v): the compose file
# of the workspace defines them, so they are the project's dev data, re-created by the next
# `compose up`; unlike `docker volume rm`, which names any volume of any project.
inside(e) if {
	e.kind == "delete"
	e.target == "container_volume"
	startswith(e.detail, "compose ")
	not remote_container_call
}

# prune, or a list of every container or image ($(docker ps -aq) without a --filter): the
# developer's other projects' objects too.
removes_everything(p) if {
	some c in input.commands
	c.name == p
	"prune" in c.args
}

removes_everything(p) if {
	some c in input.commands
	c.name == p
	some a in c.args
	regex.match("[$`]", a)
	not contains(a, "--filter")
}

remote_container_runtime(p) if {
	some c in input.commands
	c.name == p
	some a in c.args
	regex.match(`^(-H|--host|--context|--url|--connection|--remote)(=.*)?$|^-H.+`, a)
}

# docker -c CONTEXT: the short form only before the sub-command (sh -c inside is a shell's).
remote_container_runtime(p) if {
	some c in input.commands
	c.name == p
	regex.match(`^-c`, c.args[0])
}

remote_container_runtime(_) if regex.match(`(DOCKER_HOST|CONTAINER_HOST|DOCKER_CONTEXT)`, input.command)

removes_volumes(p) if {
	some c in input.commands
	c.name == p
	some a in c.args
	regex.match(`^(--volumes|-[a-zA-Z]*v[a-zA-Z]*)$`, a)
}

# Decision: a migration tool applying the project's own migrations forward (or reporting their
# state) to the database the project's configuration names changes the project's database the
# way its code says; that is ordinary work. A database named on the command line (-x, --url,
# -url) may be anyone's, and destructive verbs (downgrade, reset, clean, drop, rollback) are not
# forward: both stay outside the envelope.
migration_forward := {
	"alembic": {"upgrade", "current", "history", "heads", "branches", "show", "check"},
	"flyway": {"migrate", "info", "validate"},
	"liquibase": {"update", "status", "history", "validate", "update-sql"},
	"prisma": {"generate", "validate", "format", "version"},
}

inside(e) if {
	e.kind == "write"
	e.target == "database"
	forward := migration_forward[e.program]
	some c in input.commands
	c.name == e.program
	every d in input.commands {
		migration_ok(d, e.program, forward)
	}
}

migration_ok(c, p, _) if c.name != p

migration_ok(c, p, forward) if {
	c.name == p
	some a in c.args
	forward[a]
	not migration_location(c)
}

migration_location(c) if {
	some a in c.args
	regex.match(`^(-x|-url|--url|--db-url|--database-url)(=.*)?$`, a)
}

# ---------------------------------------------------------------------------------------------
# Reads the envelope's read roots leave out.
#
# Decision: system logs under /var/log are diagnostic output developers read (a web server's
# error log); the ones that record logins and audit events are sensitive locations
# (shield/normalize/sensitive.go: audit_log) and stay outside. Writes and deletes there are
# judged as before (anti-forensics).
inside(e) if {
	e.kind == "read"
	under(e.target, "/var/log")
	not e.sensitive
	not secret_target(e.target)
}

# Decision: the environment listed through a filter on variable-name prefixes, to the terminal
# (`env | grep -i ^go`, `printenv | grep '^NODE_\|^npm_'`), is a look at a toolchain's settings,
# not a dump: ALLOWed while nothing in the call leaves the host or writes a file, and while no
# prefix names a secret (token, secret, key, pass, auth, cred…). The secret effect stays on the
# session (shield/normalize/sessions.go), so anything sent off the host later in the session is
# judged as a possible carrier. An unfiltered env, a filter without anchored name prefixes, or
# one that could select secret names by their own words stays escalated.
inside(e) if {
	e.kind == "secret"
	e.target in {"env", "printenv"}
	e.detail == "env"
	some c in input.commands
	c.name == e.target
	count(c.args) == 0
	c.pipe
	some g in input.commands
	g.name in {"grep", "egrep", "rg"}
	g.pipe_index == c.pipe_index + 1
	count(g.redirects) == 0
	pats := [a | some a in g.args; not startswith(a, "-")]
	count(pats) == 1
	env_name_filter(pats[0])
	not anything_leaves
	not writes_anything
}

writes_anything if {
	some o in input.effects
	o.kind in {"write", "delete", "exec", "push", "persistence"}
}

# Every alternative is ^ and a literal name prefix, none naming a secret.
env_name_filter(p) if {
	alts := split(replace(p, `\|`, "|"), "|")
	every a in alts {
		regex.match(`^\^[A-Za-z][A-Za-z0-9_]*$`, a)
		not regex.match(`(?i)(tok|secret|key|pass|pwd|auth|cred|sess|cookie|priv|cert|sign|api)`, a)
	}
}

# ---------------------------------------------------------------------------------------------
# Dry runs: a publish or push the program is told only to simulate (--dry-run; cargo's -n) sends
# nothing. Every command of that program in the call must carry it. (kubectl/helm --dry-run are
# read by the specs' dryrun tag; git push --dry-run pushes to the repository's own remotes.)
inside(e) if {
	e.kind == "push"
	e.program in {"npm", "pnpm", "yarn", "cargo", "poetry"}
	some c in input.commands
	c.name == e.program
	every d in input.commands {
		dry_run_command(d, e.program)
	}
}

dry_run_command(d, p) if d.name != p

dry_run_command(d, p) if {
	d.name == p
	some a in d.args
	a == "--dry-run"
}

dry_run_command(d, "cargo") if {
	d.name == "cargo"
	"-n" in d.args
}

# ---------------------------------------------------------------------------------------------
# Decision: a Dockerfile (Containerfile) runs its RUN lines inside the build container, not on
# the host; a toolchain's documented installer piped to a shell there (rustup's
# `curl --proto '=https' … https://sh.rustup.rs | sh -s -- -y`) installs into the image. When the
# line fetches nothing but one of these exact installer URLs, the vendor-script review of
# workspace.autorun-fetch-exec does not apply; any other host, a bare address, plain HTTP, or a
# second download on the line is judged as before, and the same line in a file that runs on the
# host (Makefile, package.json, .envrc, CI) is judged as before. (rules/files.yaml
# files.write-download-exec carries the same URL list.)
documented_installers := [
	"https://sh.rustup.rs",
	"https://astral.sh/uv/install.sh",
	"https://install.python-poetry.org",
	"https://bun.sh/install",
	"https://deno.land/install.sh",
	"https://get.pnpm.io/install.sh",
	"https://get.sdkman.io",
	"https://raw.githubusercontent.com/nvm-sh/nvm/",
]

container_build_installer(p, l) if {
	regex.match(`(?i)(^|/)(docker|container)file[^/]*$|\.(docker|container)file$`, p)
	some u in documented_installers
	contains(lower(l), u)
	rest := replace(lower(l), u, "")
	not contains(rest, "://")
	not regex.match(`(curl|wget)[^|\n]*([a-z0-9-]\.[a-z]|[0-9]+\.[0-9]+\.[0-9]|[$@])[^|\n]*\|`, rest)
}

# ---------------------------------------------------------------------------------------------
# Decision: an Android device or emulator attached to this machine through the local adb server
# (no -H/-L to another server, no `adb connect`, no network serial HOST:PORT, no server address in
# the environment) is the developer's test device, like a local container. Reaching it is no
# connection off the host, and a device shell command that drives the UI or the app under test
# (input, am, screencap, screenrecord, dumpsys, getprop, logcat, wm, monkey, uiautomator,
# pm list/path, settings get) with no shell syntax of its own is ordinary testing. Anything
# else run on the device (rm, su, pm uninstall/clear, setprop, a shell line) stays outside, and
# privilege changes (adb root, remount) are judged as before.
adb_device_commands := {"input", "am", "screencap", "screenrecord", "dumpsys", "getprop", "logcat", "wm", "monkey", "uiautomator"}

local_adb if {
	not regex.match(`ANDROID_ADB_SERVER_(ADDRESS|PORT)|ADB_SERVER_SOCKET`, input.command)
	every c in input.commands {
		not adb_remote(c)
	}
}

adb_remote(c) if {
	c.name == "adb"
	some a in c.args
	regex.match(`^(-H|-L|connect|pair|tcpip|forward|reverse)$|^-[HL].+`, a)
}

adb_remote(c) if {
	c.name == "adb"
	some i, a in c.args
	a == "-s"
	contains(c.args[i + 1], ":")
}

inside(e) if {
	e.kind == "connect"
	e.target == "android device"
	e.program == "adb"
	local_adb
}

inside(e) if {
	e.kind == "exec"
	e.remote == "android:device"
	not e.unresolved
	local_adb
	not regex.match("[;&|$`<>()\\\\]", e.detail)
	words := split(trim_space(e.detail), " ")
	adb_device_ordinary(words)
}

adb_device_ordinary(words) if adb_device_commands[words[0]]

adb_device_ordinary(words) if {
	words[0] == "pm"
	words[1] in {"list", "path"}
}

adb_device_ordinary(words) if {
	words[0] == "settings"
	words[1] == "get"
}

# ---------------------------------------------------------------------------------------------
# Decision: asking sudo whether it would work (`sudo -n true`, `sudo -l`, `sudo -v`, `sudo -k`)
# runs nothing as root: no privilege is used. Any other command under sudo is judged as before.
inside(e) if {
	e.kind == "privilege"
	e.detail == "sudo"
	every c in input.commands {
		sudo_probe_command(c)
	}
}

sudo_probe_command(c) if {
	c.name != "sudo"
	not c.sudo
}

sudo_probe_command(c) if {
	c.sudo
	c.name in {"true", ":"}
	count(c.args) == 0
}

sudo_probe_command(c) if {
	c.name == "sudo"
	every a in c.args {
		a in {"-n", "true", ":", "-l", "-v", "-k", "-K", "--non-interactive", "--list", "--validate", "--reset-timestamp", "--remove-timestamp"}
	}
}

# ---------------------------------------------------------------------------------------------
# Decision: a file read inside a local container (docker exec api ls /app) reads the container's
# file system, not the host's; the envelope's read roots do not apply. Secrets read there (the
# container's environment, /run/secrets, its shadow file) are secret effects and judged as such;
# writes and deletes inside the container stay outside the envelope.
inside(e) if {
	e.kind == "read"
	startswith(object.get(e, "remote", ""), "container:")
	not e.unresolved
	not secret_target(e.target)
	not remote_container_call
}

# The call reaches a container runtime on another host (DOCKER_HOST, -H, --context …): its
# containers are not the developer's local ones.
remote_container_call if {
	some p in {"docker", "podman", "nerdctl"}
	remote_container_runtime(p)
}

# apt-get -s (--simulate, --just-print, --dry-run, --recon, --no-act) prints what it would do and
# needs no root: the package manager's privilege is not used.
inside(e) if {
	e.kind == "privilege"
	e.detail == "package_manager"
	e.program in {"apt-get", "apt"}
	every c in input.commands {
		apt_simulated(c, e.program)
	}
}

apt_simulated(c, p) if c.name != p

apt_simulated(c, p) if {
	c.name == p
	not c.sudo
	some a in c.args
	regex.match(`^(--simulate|--just-print|--dry-run|--recon|--no-act|-[a-zA-Z]*s[a-zA-Z]*)$`, a)
}
