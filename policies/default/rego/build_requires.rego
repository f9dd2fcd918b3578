# Tier 1: build requirements are code every build runs (shield/normalize/manifest_writes.go).
#
# Principle: a name added to a pyproject.toml [build-system] requires list — by a file tool, a
# shell write (printf >> pyproject.toml), sed or a setter — is installed and run by every build
# (pip install ., python -m build, uv build) before any lock file applies, as the build backend
# or its plugin. The build backends and build-time helpers are few and well known (shield/later
# build_requirements); any other name (an internal package's lookalike, a typosquat, someone's
# plugin) needs a human. Lookalikes of popular packages are escalated as installs are
# (effects.package-lookalike). FPR cost: a project adding an unusual build plugin escalates once.
package shield

import rego.v1

build_requirement_known(n) if {
	norm := replace(replace(lower(n), "_", "-"), ".", "-")
	norm in {lower(b) | some b in later_cfg.build_requirements}
}

escalate contains finding("supply.build-requirement", sprintf("adds %s to the build requirements, code every build runs (not a known build backend)", [e.target])) if {
	some e in input.effects
	e.kind == "install"
	e.detail == "build_requirement"
	not build_requirement_known(e.target)
}
