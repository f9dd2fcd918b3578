# Ordinary developer work on local and disposable targets (issue 11, the false alarms of
# red-team set 4). Each decision widens the envelope of exec.known-effects for one class of
# effect; the attack next to it stays outside (corpus: policies/testdata/corpus/families.jsonl,
# W4F-*). The lists are data: shield/local/data.yaml. Where the normaliser decides what is local
# (a cluster context, a development database, a cache root, a public key) it says so in the
# effect (shield/normalize/local_targets.go) and these rules read that mark.
package shield

import rego.v1

local_cfg := data.shield.local

# ---------------------------------------------------------------------------------------------
# Decision: a local cluster (kind, minikube, k3d, Docker Desktop … context named explicitly by
# every cluster command of the call, no other kubeconfig, server or credentials) is the
# developer's disposable cluster, like a local container: applying, deleting and running a
# command in its pods is inside the envelope. The command run in a pod is judged like one run in
# a local container: no inline code, nothing that reaches the network. Secrets read from it stay
# secret effects (judged by the secret rules); a call without --context uses whatever the
# kubeconfig's current context is and stays outside.
inside(e) if {
	e.kind in {"write", "delete"}
	e.target == "cluster"
	startswith(object.get(e, "remote", ""), "local-cluster:")
	not e.unresolved
}

inside(e) if {
	e.kind == "exec"
	not e.unresolved
	startswith(object.get(e, "remote", ""), "local-cluster:pod:")
	not inline_code_capable(e.detail)
	not regex.match(`://|@-|/dev/(tcp|udp)|\b(curl|wget|nc|ncat|netcat|socat|ssh|scp|rsync|ftp|telnet|pg_dumpall|mysqldump|mongodump)\b`, e.detail)
}

inside(e) if {
	e.kind == "read"
	not e.unresolved
	startswith(object.get(e, "remote", ""), "local-cluster:pod:")
	not secret_target(e.target)
}

# ---------------------------------------------------------------------------------------------
# Decision: a destroying statement (TRUNCATE, DELETE without WHERE, DROP) run against a
# development or test database named on an explicit loopback host (psql -h localhost app_test)
# resets the developer's own data, which the project's setup re-creates. The normaliser marks
# it (Remote "local-db:NAME"); the default socket, a database not named as a development one, or
# any other host stays outside (a tunnel to a shared server listens on loopback too).
inside(e) if {
	e.kind == "delete"
	startswith(e.target, "database:")
	startswith(object.get(e, "remote", ""), "local-db:")
	loopback_host(trim_prefix(e.target, "database:"))
	not e.unresolved
}

# ---------------------------------------------------------------------------------------------
# Decision: a cache root of a package manager or build tool (~/.cache/go-build, ~/.npm/_cacache,
# ~/.gradle/caches …, the normaliser's list) holds only what the next build downloads or builds
# again; deleting it, or something under it, is what `go clean -cache` does. The parents
# (~/.cache, ~/.npm, ~/.cargo) and anything a path climbs to stay outside.
inside(e) if {
	e.kind == "delete"
	e.detail == "user_cache"
	not e.unresolved
	not e.sensitive
}

# ---------------------------------------------------------------------------------------------
# Decision: an SSH public key (~/.ssh/*.pub, id_*.pub) is made to be handed out; reading it is no
# secret read (the normaliser does not classify it sensitive) and is inside the envelope. The
# private key next to it, known_hosts and config stay sensitive.
inside(e) if public_key_read(e)

# The same read through a file tool (Read, read_file, view).
structured_readable(e) if {
	input.class == "file_read"
	public_key_read(e)
}

public_key_read(e) if {
	e.kind == "read"
	not e.unresolved
	not e.sensitive
	regex.match(`^(/home/[^/]+|/root|/Users/[^/]+)/\.ssh/[^/]+\.pub$`, e.target)
}

# ---------------------------------------------------------------------------------------------
# Decision: listing a directory under a home directory without recursion (`ls -la ~/.ssh`,
# `ls ~/.config`) shows the names of its entries, never their contents: inside the envelope.
# Recursive listings (ls -R) and every other program reading there stay outside.
inside(e) if {
	e.kind == "read"
	not e.unresolved
	recursion := local_cfg.listing_programs[e.program]
	regex.match(`^(/home/[^/]+|/root|/Users/[^/]+)/`, e.target)
	every c in input.commands {
		not recursive_listing(c, e.program, recursion)
	}
}

recursive_listing(c, p, recursion) if {
	c.name == p
	some a in c.args
	a in recursion
}

recursive_listing(c, p, _) if {
	c.name == p
	some a in c.args
	regex.match(`^-[a-zA-Z]*R`, a)
}

# ---------------------------------------------------------------------------------------------
# Decision: `docker image prune` without -a/--all removes dangling images only: untagged layers
# no name refers to, left behind by rebuilds. Inside, like removing a named image; `prune -a`,
# system prune, volume prune and a remote daemon stay outside.
inside(e) if {
	e.kind == "delete"
	e.target == "image"
	e.program in {"docker", "podman", "nerdctl"}
	not remote_container_runtime(e.program)
	every c in input.commands {
		dangling_prune_only(c, e.program)
	}
}

dangling_prune_only(c, p) if c.name != p

dangling_prune_only(c, p) if {
	c.name == p
	c.args[0] == "image"
	c.args[1] == "prune"
	every i, a in c.args {
		prune_word_ok(c.args, i, a)
	}
}

prune_word_ok(_, i, _) if i < 2

prune_word_ok(_, i, a) if {
	i >= 2
	a in {"-f", "--force"}
}

# --filter only narrows what is pruned (label=, label!=, until=); it never widens a dangling
# prune to tagged images (only -a does).
prune_word_ok(_, i, a) if {
	i >= 2
	a == "--filter"
}

prune_word_ok(args, i, a) if {
	i >= 3
	args[i - 1] == "--filter"
	prune_filter_ok(a)
}

prune_word_ok(_, i, a) if {
	i >= 2
	startswith(a, "--filter=")
	prune_filter_ok(substring(a, 9, -1))
}

prune_filter_ok(v) if regex.match(`^(label!?=[A-Za-z0-9._/=:-]+|until=[A-Za-z0-9.:-]+)$`, v)

# ---------------------------------------------------------------------------------------------
# Decision: installing a package from the distribution's configured repositories with sudo
# (`sudo apt-get install -y libpq-dev`, dnf, apk, zypper) is how build dependencies are added on
# a development machine; the privilege is the package manager's own. Inside when every sudo in the
# call runs one of these package managers directly with an install/refresh verb, plain package
# names and the listed flags, and every install effect comes from the registry. A .deb/.rpm file
# or URL, -o/-c options, another release or repository, sudo options and any other root command
# stay outside.
inside(e) if {
	e.kind == "privilege"
	e.detail in {"package_manager", "sudo"}
	system_package_call
}

system_package_call if {
	some c in input.commands
	c.sudo
	local_cfg.system_package_managers[c.name]
	every c in input.commands {
		system_package_ok(c)
	}
	every x in input.effects {
		system_package_effect_ok(x)
	}
}

system_package_effect_ok(x) if x.kind != "install"

system_package_effect_ok(x) if {
	x.kind == "install"
	x.detail == "registry"
	not x.unresolved
}

system_package_ok(c) if {
	c.name != "sudo"
	not c.sudo
}

# sudo itself: its first word is the package manager or one of the listed assignments.
system_package_ok(c) if {
	c.name == "sudo"
	count(c.redirects) == 0
	some i, a in c.args
	local_cfg.system_package_managers[a]
	every j, b in c.args {
		sudo_word_ok(j, b, i)
	}
}

sudo_word_ok(j, _, i) if j >= i

sudo_word_ok(j, b, i) if {
	j < i
	b in local_cfg.system_package_env
}

system_package_ok(c) if {
	c.sudo
	pm := local_cfg.system_package_managers[c.name]
	every v in c.env {
		v in local_cfg.system_package_env
	}
	verbs := [a | some a in c.args; not startswith(a, "-")]
	count(verbs) > 0
	verbs[0] in pm.verbs
	every a in c.args {
		system_package_word_ok(a, pm)
	}
}

system_package_word_ok(a, pm) if a in pm.verbs

system_package_word_ok(a, pm) if a in pm.flags

system_package_word_ok(a, _) if {
	not startswith(a, "-")
	regex.match(`^[a-z0-9][a-z0-9+._-]*(:[a-z0-9]+)?(=[A-Za-z0-9.:~+_-]+)?$`, a)
	not regex.match(`\.(deb|rpm|apk)$`, a)
}

# ---------------------------------------------------------------------------------------------
# Decision: sourcing a toolchain manager's init script from a home directory (the list in
# shield/local/data.yaml) is what the developer's login shell does; the read and the sourcing are
# inside. Any other file sourced from outside the workspace stays outside.
inside(e) if {
	e.kind in {"read", "exec"}
	not e.unresolved
	not e.sensitive
	e.program in {".", "source"}
	toolchain_init_script(e.target)
}

toolchain_init_script(p) if {
	some s in local_cfg.toolchain_init_scripts
	regex.match(concat("", [`^(/home/[^/]+|/root|/Users/[^/]+)/`, replace(s, ".", `\.`), `$`]), p)
}

# ---------------------------------------------------------------------------------------------
# Decision: a tunnel program asked only for its version or help (`ngrok version`, `cloudflared
# --version`) prints text and opens nothing. Any other word (`ngrok http 3000`, `ngrok help
# http` with a topic, a config file) stays a tunnel. The command spec gives these sub-commands
# no effect; this exempts them from the name-based tunnel rules (rules/exec.yaml exec.tunnel has
# the same exemption).
tunnel_info_only(c) if {
	count(c.args) == 1
	c.args[0] in {"version", "--version", "help", "--help"}
}

# ---------------------------------------------------------------------------------------------
# Decision: a local cluster tool deleting its own cluster (shield/local/data.yaml
# local_cluster_deletes: kind delete cluster, k3d cluster delete, minikube delete) removes
# containers or a VM on this machine that its create command re-creates, like removing a local
# container. Cloud clusters (gcloud container clusters delete, eksctl delete cluster, az aks
# delete) and a remote container daemon stay outside.
inside(e) if {
	e.kind == "delete"
	e.target == "cloud"
	not e.unresolved
	some d in local_cfg.local_cluster_deletes[e.program]
	startswith(concat("", [e.detail, " "]), concat("", [d, " "]))
	not regex.match(`DOCKER_HOST|CONTAINER_HOST|DOCKER_CONTEXT|PODMAN_HOST`, input.command)
	every c in input.commands {
		not remote_container_env(c)
		not every_local_cluster(c, e.program)
	}
}

every_local_cluster(c, p) if {
	c.name == p
	some a in c.args
	a in {"--all", "-a", "clusters"}
}

remote_container_env(c) if {
	some v in c.env
	regex.match(`^(DOCKER_HOST|CONTAINER_HOST|DOCKER_CONTEXT|PODMAN_HOST)=`, v)
}

# ---------------------------------------------------------------------------------------------
# Decision: `cargo clean` run in the workspace removes the workspace's own target directory, the
# build output the next `cargo build` re-creates. Another manifest, target directory, -C
# directory or configuration (--manifest-path, --target-dir, CARGO_TARGET_DIR, --config) names
# another tree and stays outside.
inside(e) if {
	e.kind == "delete"
	e.target == "build_output"
	e.program == "cargo"
	not e.unresolved
	under(input.cwd, input.workspace)
	not contains(input.command, "CARGO_")
	every c in input.commands {
		not cargo_retarget(c)
	}
}

cargo_retarget(c) if {
	c.name == "cargo"
	some a in c.args
	regex.match(`^(--manifest-path|--target-dir|--config|-C|-Z)`, a)
}

cargo_retarget(c) if {
	c.name == "cargo"
	some v in c.env
	startswith(v, "CARGO_")
}

# A directory change in the call moves cargo to another tree.
cargo_retarget(c) if c.name in {"cd", "pushd", "popd"}

# ---------------------------------------------------------------------------------------------
# Decision: a read whose content reaches only a counter (`wc -l ~/.ssh/known_hosts`, `cat
# ~/.ssh/known_hosts | wc -l`; the normaliser marks it Detail "count", count_only.go) prints
# numbers, not the file: inside the envelope, like a listing. Any other consumer of the content
# (tee, a redirection, a further stage, a second reader) leaves the read unmarked.
inside(e) if {
	e.kind == "read"
	e.detail == "count"
	not e.unresolved
}

# ---------------------------------------------------------------------------------------------
# Decision: re-creating a development database (createdb app_test after dropdb app_test; the
# normaliser marks the whole-database commands on a dev-named database, local_dbs.go) is part of
# the same test set-up as dropping it. Mongo and Redis test databases on loopback are marked by
# the normaliser the same way and judged by the delete rule above.
inside(e) if {
	e.kind == "write"
	e.program == "createdb"
	startswith(e.target, "database:")
	startswith(object.get(e, "remote", ""), "local-db:")
	loopback_host(trim_prefix(e.target, "database:"))
	not e.unresolved
}
