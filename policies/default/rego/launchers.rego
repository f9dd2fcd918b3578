# Launchers by kind (shield/normalize/launchers.go): what a launcher adds to the command it runs.
#
# - A tracer (strace, ltrace, perf, valgrind, rr, uftrace …) that runs a privileged or
#   credential-handling program, or one that reads a secret, captures the password typed into it
#   or the secret it handles in its trace: a secret read (Detail traced_credentials).
# - A launcher that loads an environment (a secret manager's run/exec, a dotenv loader, a version
#   manager's [env], a project environment) running an environment dump prints the values it
#   loaded: a secret read (Detail injected_env). An environment dump without such a launcher stays
#   escalated (effects.rego, ordinary.rego).
#
# Both are BLOCKed like a credential file read: nothing ordinary needs either.
package shield

import rego.v1

captured_secret_details := {"traced_credentials", "injected_env"}

deny contains finding("exec.captured-secret", sprintf("%s captures a secret of the command it runs (%s: %s)", [e.program, e.detail, e.target])) if {
	some e in input.effects
	e.kind == "secret"
	e.detail in captured_secret_details
}
