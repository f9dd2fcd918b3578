package normalize

import (
	"regexp"
	"strings"
)

// Tags and releases are protected refs. A tag names a release that consumers, package registries
// and deployment pipelines resolve; deleting it or moving it to another commit rewrites what a
// version means for everyone, like deleting a protected branch. A pushed ref is a tag when it says
// so (refs/tags/…) or when its name reads as a version (v1.2.3, 2.0, 1.0.0-rc.1, release-2024.1).
// A deleting or forcing push of such a ref adds the detail "tag-delete" or "tag-force" followed by
// one "tag=NAME" per tag (rego/protected_tags.rego blocks both); such a push is never "delete-own".

var versionRefRE = regexp.MustCompile(`^(?i)(v|version[-_]?|release[-_/]?|rel[-_/]?)?\d+(\.\d+)+([-+._][0-9A-Za-z.+-]*)?$`)

// tagRef reports the tag name of a pushed ref ("" when it is not a tag).
func tagRef(r string) string {
	r = strings.TrimLeft(r, "+:")
	if _, dst, ok := strings.Cut(r, ":"); ok {
		r = dst
	}
	if t, ok := strings.CutPrefix(r, "refs/tags/"); ok {
		return t
	}
	if strings.HasPrefix(r, "refs/") {
		return ""
	}
	if versionRefRE.MatchString(r) {
		return r
	}
	return ""
}

// tagRewrite returns the detail of a push that deletes or forces tags, or "".
func tagRewrite(refs []string, force, del bool) string {
	if !force && !del {
		return ""
	}
	var tags []string
	for _, r := range refs {
		// A "+ref" forces that ref; a ":ref" deletes it; other refs follow the flags.
		if t := tagRef(r); t != "" && (force || del || strings.HasPrefix(r, "+") || strings.HasPrefix(r, ":")) {
			tags = append(tags, t)
		}
	}
	if len(tags) == 0 {
		return ""
	}
	kind := "tag-force"
	if del {
		kind = "tag-delete"
	}
	return kind + ",tag=" + strings.Join(tags, ",tag=")
}
