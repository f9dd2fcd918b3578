# Tests of the local-target decisions (local.rego) on actions as the normaliser builds them.
package shield.local_test

import rego.v1

import data.shield

rules(set) := {f.rule | some f in set}

exec(command, cmds, effects) := {
	"tool": "Bash", "class": "exec", "command": command, "commands": cmds, "paths": [], "urls": [], "strings": [command],
	"args": {"command": command}, "recipients": [], "body": "", "content": "", "prompt": "", "method": "", "parse_error": "",
	"truncated": false, "effects": effects, "flows": [], "unresolved": [], "unknown_programs": [], "workspace": "/w",
}

cmd(name, args) := {"name": name, "args": args, "env": [], "redirects": [], "pipe": false, "pipe_index": 0, "sudo": false}

scmd(name, args, env) := {"name": name, "args": args, "env": env, "redirects": [], "pipe": false, "pipe_index": 0, "sudo": true}

eff(kind, target, program, detail, remote) := {
	"kind": kind, "target": target, "program": program, "detail": detail, "in_workspace": false,
	"sensitive": false, "unresolved": false, "remote": remote,
}

allowed(inp) if "exec.known-effects" in rules(shield.allow) with input as inp

# ---- local clusters

test_local_cluster_delete_allowed if {
	allowed(exec("k", [cmd("kubectl", ["--context", "kind-dev", "delete", "po", "x"])], [eff("delete", "cluster", "kubectl", "cluster", "local-cluster:kind-dev")]))
}

test_unmarked_cluster_delete_not_allowed if {
	not allowed(exec("k", [cmd("kubectl", ["delete", "po", "x"])], [eff("delete", "cluster", "kubectl", "cluster", "")]))
}

test_local_pod_network_command_not_allowed if {
	not allowed(exec("k", [cmd("kubectl", [])], [eff("exec", "pod:api", "kubectl", "curl http://203.0.113.1/x", "local-cluster:pod:api")]))
}

# ---- development databases

test_local_dev_db_truncate_allowed if {
	allowed(exec("p", [cmd("psql", [])], [eff("delete", "database:localhost", "psql", "database TRUNCATE", "local-db:app_test")]))
}

test_unmarked_loopback_truncate_not_allowed if {
	not allowed(exec("p", [cmd("psql", [])], [eff("delete", "database:localhost", "psql", "database TRUNCATE", "")]))
}

test_marked_remote_db_not_allowed if {
	not allowed(exec("p", [cmd("psql", [])], [eff("delete", "database:db.example", "psql", "database TRUNCATE", "local-db:app_test")]))
}

# ---- caches, public keys, listings

test_cache_delete_allowed if {
	allowed(exec("r", [cmd("rm", [])], [eff("delete", "/home/u/.cache/go-build", "rm", "user_cache", "")]))
}

test_home_delete_not_allowed if {
	not allowed(exec("r", [cmd("rm", [])], [eff("delete", "/home/u/.cache", "rm", "", "")]))
}

test_public_key_read_allowed if {
	allowed(exec("c", [cmd("cat", [])], [eff("read", "/home/u/.ssh/id_ed25519.pub", "cat", "", "")]))
}

test_sensitive_key_read_not_allowed if {
	e := object.union(eff("read", "/home/u/.ssh/id_ed25519.pub", "cat", "ssh_key", ""), {"sensitive": true})
	not allowed(exec("c", [cmd("cat", [])], [e]))
}

test_home_listing_allowed if {
	allowed(exec("l", [cmd("ls", ["-la", "/home/u/.ssh"])], [eff("read", "/home/u/.ssh", "ls", "ssh_key", "")]))
}

test_recursive_home_listing_not_allowed if {
	not allowed(exec("l", [cmd("ls", ["-laR", "/home/u/.ssh"])], [eff("read", "/home/u/.ssh", "ls", "ssh_key", "")]))
}

test_home_read_by_cat_not_allowed if {
	not allowed(exec("c", [cmd("cat", ["/home/u/.config/x"])], [eff("read", "/home/u/.config/x", "cat", "", "")]))
}

# ---- dangling images

test_dangling_prune_allowed if {
	allowed(exec("d", [cmd("docker", ["image", "prune", "-f"])], [eff("delete", "image", "docker", "image", "")]))
}

test_prune_all_not_allowed if {
	not allowed(exec("d", [cmd("docker", ["image", "prune", "-a", "-f"])], [eff("delete", "image", "docker", "image", "")]))
}

# ---- distro packages under sudo

apt_effects := [
	eff("privilege", "root", "apt-get", "package_manager", ""), eff("install", "libpq-dev", "apt-get", "registry", ""),
	eff("privilege", "root", "sudo", "sudo", ""),
]

test_sudo_apt_install_allowed if {
	allowed(exec("s", [cmd("sudo", ["apt-get", "install", "-y", "libpq-dev"]), scmd("apt-get", ["install", "-y", "libpq-dev"], [])], apt_effects))
}

test_sudo_apt_install_option_not_allowed if {
	not allowed(exec("s", [cmd("sudo", ["apt-get", "install", "-o", "Dpkg::Pre-Invoke::=x", "libpq-dev"]), scmd("apt-get", ["install", "-o", "Dpkg::Pre-Invoke::=x", "libpq-dev"], [])], apt_effects))
}

test_sudo_apt_install_deb_not_allowed if {
	effs := [eff("privilege", "root", "apt-get", "package_manager", ""), eff("install", "/w/x.deb", "apt-get", "path", ""), eff("privilege", "root", "sudo", "sudo", "")]
	not allowed(exec("s", [cmd("sudo", ["apt-get", "install", "./x.deb"]), scmd("apt-get", ["install", "./x.deb"], [])], effs))
}

test_sudo_with_options_not_allowed if {
	not allowed(exec("s", [cmd("sudo", ["-E", "apt-get", "install", "libpq-dev"]), scmd("apt-get", ["install", "libpq-dev"], [])], apt_effects))
}

test_second_root_command_not_allowed if {
	cmds := [
		cmd("sudo", ["apt-get", "install", "libpq-dev"]), scmd("apt-get", ["install", "libpq-dev"], []),
		cmd("sudo", ["chmod", "4755", "/bin/bash"]), scmd("chmod", ["4755", "/bin/bash"], []),
	]
	not allowed(exec("s", cmds, apt_effects))
}

# ---- toolchain init scripts

test_nvm_init_allowed if {
	allowed(exec(". ~/.nvm/nvm.sh", [cmd(".", ["/home/u/.nvm/nvm.sh"])], [eff("read", "/home/u/.nvm/nvm.sh", ".", "", ""), eff("exec", "/home/u/.nvm/nvm.sh", ".", "file", "")]))
}

test_tmp_init_not_allowed if {
	not allowed(exec(". /tmp/nvm.sh", [cmd(".", ["/tmp/nvm.sh"])], [eff("read", "/tmp/nvm.sh", ".", "", ""), eff("exec", "/tmp/nvm.sh", ".", "file", "")]))
}

# ---- wave 5: counters, local cluster tools, cargo clean, tunnels' version, filtered prune

test_count_read_allowed if {
	e := object.union(eff("read", "/home/u/.ssh/known_hosts", "wc", "count", ""), {"sensitive": true})
	allowed(exec("wc -l ~/.ssh/known_hosts", [cmd("wc", ["-l", "~/.ssh/known_hosts"])], [e]))
}

test_secret_read_not_allowed if {
	e := object.union(eff("read", "/home/u/.ssh/id_rsa", "cat", "ssh_key", ""), {"sensitive": true})
	not allowed(exec("cat ~/.ssh/id_rsa", [cmd("cat", ["~/.ssh/id_rsa"])], [e]))
}

test_kind_delete_allowed if {
	allowed(exec("kind delete cluster --name dev", [cmd("kind", ["delete", "cluster", "--name", "dev"])], [eff("delete", "cloud", "kind", "kind delete", "")]))
}

test_kind_delete_all_not_allowed if {
	not allowed(exec("kind delete clusters --all", [cmd("kind", ["delete", "clusters", "--all"])], [eff("delete", "cloud", "kind", "kind delete", "")]))
}

test_kind_delete_remote_daemon_not_allowed if {
	c := object.union(cmd("kind", ["delete", "cluster"]), {"env": ["DOCKER_HOST=tcp://10.0.0.5:2375"]})
	not allowed(exec("DOCKER_HOST=tcp://10.0.0.5:2375 kind delete cluster", [c], [eff("delete", "cloud", "kind", "kind delete", "")]))
}

test_cloud_cluster_delete_not_allowed if {
	not allowed(exec("eksctl delete cluster --name prod", [cmd("eksctl", ["delete", "cluster", "--name", "prod"])], [eff("delete", "cloud", "eksctl", "eksctl delete", "")]))
}

test_cargo_clean_allowed if {
	inp := object.union(exec("cargo clean", [cmd("cargo", ["clean"])], [eff("delete", "build_output", "cargo", "build_output", "")]), {"cwd": "/w"})
	allowed(inp)
}

test_cargo_clean_target_dir_not_allowed if {
	inp := object.union(exec("cargo clean --target-dir /srv/t", [cmd("cargo", ["clean", "--target-dir", "/srv/t"])], [eff("delete", "build_output", "cargo", "build_output", "")]), {"cwd": "/w"})
	not allowed(inp)
}

test_cargo_clean_outside_cwd_not_allowed if {
	inp := object.union(exec("cargo clean", [cmd("cargo", ["clean"])], [eff("delete", "build_output", "cargo", "build_output", "")]), {"cwd": "/srv/app"})
	not allowed(inp)
}

test_tunnel_version_not_escalated if {
	inp := exec("ngrok version", [cmd("ngrok", ["version"])], [])
	not "net.tunnel-expose" in rules(shield.escalate) with input as inp
}

test_tunnel_http_escalated if {
	inp := exec("ngrok http 3000", [cmd("ngrok", ["http", "3000"])], [])
	"net.tunnel-expose" in rules(shield.escalate) with input as inp
}

test_prune_filter_label_allowed if {
	allowed(exec("docker image prune -f --filter label=stage=builder", [cmd("docker", ["image", "prune", "-f", "--filter", "label=stage=builder"])], [eff("delete", "image", "docker", "image", "")]))
}

test_prune_filter_all_not_allowed if {
	not allowed(exec("docker image prune -a --filter label=x", [cmd("docker", ["image", "prune", "-a", "--filter", "label=x"])], [eff("delete", "image", "docker", "image", "")]))
}

test_createdb_local_allowed if {
	allowed(exec("createdb app_test", [cmd("createdb", ["app_test"])], [eff("write", "database:localhost", "createdb", "database", "local-db:app_test")]))
}

test_createdb_unmarked_not_allowed if {
	not allowed(exec("createdb app", [cmd("createdb", ["app"])], [eff("write", "database", "createdb", "database", "")]))
}

# local_emulators.rego: a cloud CLI on a loopback endpoint acts on an emulator.
test_local_emulator_delete_inside if {
	allowed(exec("aws", [cmd("aws", [])], [
		eff("delete", "cloud:s3://test-bucket", "aws", "bulk delete (aws s3 rb)", "local-emulator:localhost:4566"),
		eff("connect", "aws api", "aws", "cloud_api", "local-emulator:localhost:4566"),
	]))
}

test_cloud_delete_without_emulator_not_allowed if {
	not allowed(exec("aws", [cmd("aws", [])], [eff("delete", "cloud:s3://test-bucket", "aws", "bulk delete (aws s3 rb)", "")]))
}

test_local_emulator_file_path_not_inside if {
	not allowed(exec("aws", [cmd("aws", [])], [eff("read", "/home/user/.aws/credentials", "aws", "", "local-emulator:localhost:4566")]))
}

# Recon of loopback (shield.rego scan_of_loopback_only).
test_loopback_scan_not_denied if {
	inp := exec("nmap", [cmd("nmap", ["127.0.0.1"])], [
		eff("read", "system:nmap", "nmap", "network_scan,loopback", ""),
		eff("connect", "127.0.0.1", "nmap", "", ""),
	])
	not "recon.network-scan" in rules(shield.deny) with input as inp
}

test_scan_with_other_target_denied if {
	inp := exec("nmap", [cmd("nmap", ["127.0.0.1", "10.0.0.5"])], [
		eff("read", "system:nmap", "nmap", "network_scan,loopback", ""),
		eff("connect", "10.0.0.5", "nmap", "", ""),
	])
	"recon.network-scan" in rules(shield.deny) with input as inp
}

test_unmarked_scan_denied if {
	inp := exec("nmap", [cmd("nmap", ["127.0.0.1"])], [eff("read", "system:nmap", "nmap", "network_scan", "")])
	"recon.network-scan" in rules(shield.deny) with input as inp
}
