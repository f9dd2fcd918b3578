# Tags and releases are protected refs (shield/normalize/push_tags.go): a push that deletes or
# force-moves a tag (refs/tags/…, or a version-looking name such as v1.2.0) rewrites what a
# released version means for every consumer and pipeline; it is judged like deleting a protected
# branch. gh release delete and structured release deletes are judged in their own rules.
package shield

import rego.v1

deny contains finding("effects.tag-rewrite", sprintf("push %s rewrites released tags (%s)", [e.target, e.detail])) if {
	some e in input.effects
	e.kind == "push"
	some d in split(e.detail, ",")
	d in {"tag-delete", "tag-force"}
}
