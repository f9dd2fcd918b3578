# Tier 1: container images are judged by who publishes them, however the reference is spelt.
#
# Principle: an image reference names a registry, a namespace, a repository and a tag or digest;
# Docker's own defaults fill what is left out (no registry host: Docker Hub; no namespace on
# Docker Hub: the official "library" images). Every image a call runs, pulls or creates
# (docker/podman/nerdctl run, create, pull; compose and Kubernetes image: keys and Dockerfile
# FROM lines that a call writes, shield/normalize/manifest_writes.go) is read through one
# canonical form, image_canon, and judged with the same trust list (shield/ops
# trusted_image_prefixes): postgres:16 is docker.io/library/postgres:16 (official), bitnami/redis
# is docker.io/bitnami/redis (a verified publisher listed there), attacker-example/miner is
# docker.io/attacker-example/miner, an unknown namespace: someone's code run unreviewed, escalated.
# References with an explicit registry host are judged by ops.untrusted-source (ops_supply.rego);
# a registry the configuration does not list (a team's own, localhost:5000) is not judged here.
#
# An image the same call builds and tags (docker build -t acme/api . && docker run acme/api) is
# the project's own. FPR cost: running a team's own image by a bare Docker Hub name that this
# call did not build escalates until the team's namespace is added to trusted_image_prefixes.
package shield

import rego.v1

docker_hub_hosts := {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}

image_registry_host(first) if contains(first, ".")

image_registry_host(first) if contains(first, ":")

image_registry_host("localhost")

# image_canon: registry/namespace/repository[:tag|@digest], Docker Hub's defaults filled in.
image_canon(ref) := concat("", ["docker.io/library/", ref]) if {
	not contains(ref, "/")
} else := concat("/", ["docker.io", rest]) if {
	parts := split(ref, "/")
	not image_registry_host(parts[0])
	rest := ref
	count(parts) > 1
} else := image_hub_canon(array.slice(split(ref, "/"), 1, count(split(ref, "/")))) if {
	split(ref, "/")[0] in docker_hub_hosts
} else := ref

image_hub_canon(rest) := concat("/", ["docker.io/library", rest[0]]) if {
	count(rest) == 1
} else := concat("/", array.concat(["docker.io"], rest))

image_trusted(canon) if strings.any_prefix_match(canon, ops_cfg.trusted_image_prefixes)

# Built and tagged by the same call: the project's own image.
image_built_here(ref) if {
	some c in input.commands
	c.name in {"docker", "podman", "nerdctl", "buildah"}
	some i, a in c.args
	a in {"-t", "--tag"}
	tag := c.args[i + 1]
	lower(tag) == ref
}

image_built_here(ref) if {
	some c in input.commands
	c.name in {"docker", "podman", "nerdctl", "buildah"}
	some a in c.args
	some p in ["-t", "--tag="]
	startswith(a, p)
	count(a) > count(p)
	lower(substring(a, count(p), -1)) == ref
}

image_bare_ref(ref) if not contains(ref, "/")

image_bare_ref(ref) if not image_registry_host(split(ref, "/")[0])

escalate contains finding("supply.image-untrusted", sprintf("runs the image %s (%s), of a Docker Hub namespace the configuration does not know", [e.target, canon])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "container_image"
	not e.unresolved
	image_bare_ref(e.target)
	canon := image_canon(e.target)
	not image_trusted(canon)
	not image_built_here(e.target)
}
