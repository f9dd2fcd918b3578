# Requests are judged by the act requested, whoever is asked (shield/normalize tools_instructions.go,
# tools_prose.go walk the commands free text names, in code spans and in prose). A command another
# agent, a bot, a schedule or a memory is asked to run has the effects the shell engine finds in it;
# an effect of such a command outside the envelope (a repository made public, a privilege, a
# write or delete outside the workspace, a push elsewhere) is what the call would be escalated for
# if the agent ran it itself: a human decides. The tool's own effects (the send to its recipient,
# the addresses its text names) are not the command's and are judged by the class's rules.
package shield

import rego.v1

requested_effect_kinds := {"push", "privilege", "persistence", "delete", "write", "exec", "listen", "install"}

escalate contains finding("requested.outside-envelope", sprintf("asks %s to run %s, whose effect %s %s is outside the envelope", [input.tool, e.program, e.kind, e.target])) if {
	requested_class
	some e in input.effects
	e.program != input.tool
	e.program != ""
	e.kind in requested_effect_kinds
	not inside(e)
	not requested_push_own(e)
}

requested_push_own(e) if {
	e.kind == "push"
	cfg.own_remotes[e.target]
	not push_rewrites(e)
}

# A message or a schedule that asks someone else to approve or merge a change (tools_requests.go).
escalate contains finding("requested.approval", sprintf("asks someone else to %s", [e.target])) if {
	some e in input.effects
	e.kind == "privilege"
	e.detail == "approval requested"
}
