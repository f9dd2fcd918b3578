# Uploads to object storage (shield/normalize/cloud_uploads.go: push effects "bucket:SCHEME://NAME").
# The project's own buckets are configured in data.json (effects.egress_buckets); an upload to
# any other bucket leaves the envelope, unless what is sent is a build's output, (exec.outside-envelope escalates it), and one that copies
# the whole workspace there is exfiltration of the project.
package shield

import rego.v1

bucket_configured(e) if {
	startswith(e.target, "bucket:")
	cfg.egress_buckets[trim_prefix(e.target, "bucket:")]
}

inside(e) if {
	e.kind == "push"
	bucket_configured(e)
}

# Build outputs (dist/, build/, a release archive) published to a bucket: ordinary release work.
inside(e) if {
	e.kind == "push"
	startswith(e.target, "bucket:")
	"artifact" in split(e.detail, ",")
}

deny contains finding("effects.workspace-to-bucket", sprintf("copies the workspace to %s, a bucket the configuration does not name", [trim_prefix(e.target, "bucket:")])) if {
	some e in input.effects
	e.kind == "push"
	startswith(e.target, "bucket:")
	"workspace" in split(e.detail, ",")
	not bucket_configured(e)
}
