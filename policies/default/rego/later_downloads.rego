# Tier 1: content fetched from the network into a file that runs later is remote code.
#
# Principle: a downloader (curl -o/-O/--output-dir, wget -O/-P, aria2c, httpie/xh --download,
# gh release download …) that writes its download into a file the project runs later — build
# wrappers (gradlew, gradle/wrapper/*.jar, mvnw, .mvn/wrapper), git and husky hooks,
# node_modules/.bin, Makefiles, CI workflows, .envrc (shield/later runs_later_pattern and the
# autorun files of data.json) — replaces code that runs at the next build, commit or cd with
# bytes nobody has read. From a host outside the allowed egress it is blocked; from an allowed
# host that is not the tool's own distribution (shield/later distribution_hosts: a wrapper from
# services.gradle.org is the ordinary update) a human decides. The write and the connection are
# the same program's: its output is the download. Files under bin/ or scripts/ are escalated
# only (tools are vendored there by hand).
# FPR cost: refreshing a hook or wrapper from a project's own GitHub release escalates.
package shield

import rego.v1

later_download contains [w, h] if {
	input.class == "exec"
	some w in input.effects
	w.kind == "write"
	startswith(w.target, "/")
	some c in input.effects
	c.kind == "connect"
	c.program == w.program
	h := effect_host(c.target)
	not loopback_host(h)
	not h in later_cfg.distribution_hosts
}

later_runs(p) if regex.match(later_cfg.runs_later_pattern, p)

later_runs(p) if regex.match(data.shield_derived.match.shield.lists.autorun_files, p)

deny contains finding("workspace.download-runs-later", sprintf("writes a download from %s into %s, which runs later", [h, w.target])) if {
	some [w, h] in later_download
	later_runs(w.target)
	not source_host_allowed(h)
}

escalate contains finding("workspace.download-runs-later", sprintf("writes a download from %s into %s, which runs later", [h, w.target])) if {
	some [w, h] in later_download
	later_runs(w.target)
}

escalate contains finding("workspace.download-runs-later", sprintf("writes a download from %s into %s, which the project runs", [h, w.target])) if {
	some [w, h] in later_download
	regex.match(later_cfg.runs_later_soft_pattern, w.target)
	w.in_workspace
	not source_host_allowed(h)
}

# Code that runs by itself (npm lifecycle scripts, git and husky hooks, .envrc, setup.py, .pth)
# connecting to a host outside the allowed egress: a beacon on every install, commit or cd
# (shield/normalize/autorun_beacon.go). npm lifecycle scripts run on every install, also on
# other machines: blocked; other self-running files: a human decides.
# FPR cost: a hook that notifies a chat or status host escalates (blocked from an install script).
deny contains finding("workspace.autorun-connects", sprintf("writes %s, whose install script connects to %s, outside the allowed egress", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "connect"
	autorun_foreign(e)
	endswith(autorun_file(e), "/package.json")
}

escalate contains finding("workspace.autorun-connects", sprintf("writes %s, which runs by itself and connects to %s, outside the allowed egress", [autorun_file(e), e.target])) if {
	some e in autorun_effect
	e.detail == "connect"
	autorun_foreign(e)
}
