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
]

code_cache_write(e) if {
	e.kind == "write"
	startswith(e.target, "/")
	some pat in code_cache_patterns
	regex.match(pat, e.target)
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
