package shield

import rego.v1

we_path(p) := [{"raw": p, "clean": p, "role": "write", "in_workspace": true}]

we_wf := "/home/user/project/.github/workflows/ci.yml"

test_edit_to_privileged_trigger_escalates if {
	inp := {"class": "file_write", "tool": "Edit", "args": {"old_string": "pull_request:", "new_string": "pull_request_target:"}, "content": "on:\n  pull_request_target:\n", "paths": we_path(we_wf), "effects": []}
	r1 := escalate with input as inp
	ra_has(r1, "workspace.ci-edit-privileged")
}

test_whole_write_trigger_alone_not_edit_rule if {
	inp := {"class": "file_write", "tool": "Write", "args": {"content": "x"}, "content": "on:\n  workflow_run:\n    workflows: [ci]\njobs: {}\n", "paths": we_path(we_wf), "effects": []}
	r2 := escalate with input as inp
	not ra_has(r2, "workspace.ci-edit-privileged")
}

test_edit_head_checkout_escalates if {
	inp := {"class": "file_write", "tool": "replace", "args": {"old_string": "a", "new_string": "b"}, "content": "      with:\n        ref: ${{ github.event.pull_request.head.sha }}\n", "paths": we_path(we_wf), "effects": []}
	r3 := escalate with input as inp
	ra_has(r3, "workspace.ci-edit-privileged")
}

test_edit_head_ref_concurrency_allowed if {
	inp := {"class": "file_write", "tool": "Edit", "args": {"old_string": "a", "new_string": "b"}, "content": "concurrency:\n  group: ${{ github.head_ref || github.run_id }}\n", "paths": we_path(we_wf), "effects": []}
	r4 := escalate with input as inp
	not ra_has(r4, "workspace.ci-edit-privileged")
}

test_edit_outside_workflows_ignored if {
	inp := {"class": "file_write", "tool": "Edit", "args": {"old_string": "a", "new_string": "b"}, "content": "pull_request_target is dangerous\n", "paths": we_path("/home/user/project/docs/ci.md"), "effects": []}
	r5 := escalate with input as inp
	not ra_has(r5, "workspace.ci-edit-privileged")
}

test_write_all_escalates if {
	inp := {"class": "file_write", "tool": "Write", "args": {}, "content": "permissions: write-all\n", "paths": we_path(we_wf), "effects": []}
	r6 := escalate with input as inp
	ra_has(r6, "workspace.ci-write-all")
}

test_scoped_write_allowed if {
	inp := {"class": "file_write", "tool": "Write", "args": {}, "content": "permissions:\n  pull-requests: write\n", "paths": we_path(we_wf), "effects": []}
	r7 := escalate with input as inp
	not ra_has(r7, "workspace.ci-write-all")
}
