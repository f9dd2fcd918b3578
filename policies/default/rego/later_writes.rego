# Tier 1: what a shell command writes into files that instruct agents later is judged like a file
# tool's write of the same text (shield/normalize/shell_writes.go records the text jq, yq,
# sponge, tee, sed -i, perl -i, dd, ed and redirected echo/printf/cat write, and adds it to the
# call's strings). The file lists are data (data.json agent_instruction_files).
#
# - An exec call that writes an agent instruction file contributes its strings (the command and
#   the text it writes) to agent_text, which shield.rego and workspace_files.rego read for file
#   tools: safety bypasses, downloads run, credentials published.
# - A standing grant in an instruction file: text telling agents to always (automatically, every
#   time) run something without asking, confirming or approval removes the human check for every
#   later session; a human decides. "Never run anything without asking" grants nothing (no
#   "always" form). FPR cost: instruction files that let agents run their tests without asking
#   escalate; instruction-file changes are rare and worth a look.
package shield

import rego.v1

agent_text contains lower(s) if {
	input.class == "exec"
	some p in written_path
	agent_instruction_file(p)
	some s in input.strings
}

agent_text contains lower(s) if {
	input.class != "exec"
	some p in input.paths
	p.role in {"write", "dest"}
	agent_instruction_file(p.clean)
	some s in [object.get(input.args, "new_string", ""), object.get(input.args, "new_str", ""), object.get(input.args, "diff", "")]
	s != ""
}

standing_consent_re := `(?i)\b(always|automatically|every\s+time|whenever|each\s+time|by\s+default)\b(?:[^.\n]|\.\S){0,160}\b(without\s+(asking|confirm|confirmation|confirming|approval|prompting|permission|checking|review)|no\s+need\s+to\s+(ask|confirm|check)|(skip|bypass)\s+(the\s+)?(confirmation|approval|permission)s?)`

escalate contains finding("agent.instructions-standing-consent", "writes agent instructions that grant running commands without asking, for every later session") if {
	some t in agent_text
	regex.match(standing_consent_re, t)
}
