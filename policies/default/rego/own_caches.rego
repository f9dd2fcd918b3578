# Caches are disposable wherever they live (issue 11, wave 8). Deleting a path under a cache home
# is marked by the normaliser (effect detail user_cache, shield/normalize/cache_homes.go) and judged
# in local.rego; this file covers a tool's own command that cleans its local cache when the CLI's
# words read as a destroy verb ("huggingface-cli delete-cache", "hf cache rm"): the list is
# shield/local/data.yaml own_cache_cleans. Another cache directory named by an option stays
# outside; a CLI's cache of remote state (gh cache delete: the forge's Actions caches,
# aws elasticache delete-cache-cluster) is not in the list and is judged as the delete it is.
package shield

import rego.v1

inside(e) if {
	e.kind == "delete"
	e.target == "cloud"
	not e.unresolved
	some d in local_cfg.own_cache_cleans[e.program]
	startswith(concat("", [e.detail, " "]), concat("", [d, " "]))
	not regex.match(`\b(HF_HOME|HF_HUB_CACHE|HUGGINGFACE_HUB_CACHE|XDG_CACHE_HOME|UV_CACHE_DIR|PIP_CACHE_DIR|POETRY_CACHE_DIR|YARN_CACHE_FOLDER)\b`, input.command)
	every c in input.commands {
		not cache_dir_redirect(c, e.program)
	}
}

cache_dir_redirect(c, p) if {
	c.name == p
	some a in c.args
	regex.match(`^--(dir|cache-dir|cache_dir)(=|$)`, a)
}
