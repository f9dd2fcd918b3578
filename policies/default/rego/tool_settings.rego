# Settings that change what runs or how packages are fetched later (shield/normalize/tool_settings.go).
package shield

import rego.v1

tool_setting_deny := {
	"tool_setting:code_path_outside": "every later run of the tool starts a program outside the workspace",
	"tool_setting:trust_off": "turns off TLS or checksum verification for every later fetch",
	"tool_setting:remote_manifest": "installs a plugin from an arbitrary manifest URL",
}

tool_setting_escalate := {
	"tool_setting:code_path": "changes the program every later run of the tool starts",
	"tool_setting:registry": "changes where every later install fetches packages from",
}

deny contains finding("effects.tool-setting", sprintf("%s: %s (%s)", [e.program, tool_setting_deny[e.target], e.detail])) if {
	some e in input.effects
	e.kind == "write"
	tool_setting_deny[e.target]
}

escalate contains finding("effects.tool-setting-change", sprintf("%s: %s (%s)", [e.program, tool_setting_escalate[e.target], e.detail])) if {
	some e in input.effects
	e.kind == "write"
	tool_setting_escalate[e.target]
}
