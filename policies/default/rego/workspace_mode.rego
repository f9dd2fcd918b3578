# A workspace script made executable and run is the workspace's own program (issue 11, wave 8).
# effects.rego lets a script file of the workspace run when the call did not write it (the
# workspace's own programs, like `make` or `npm test`). Changing a file's mode or owner (chmod +x,
# chown, chgrp) writes its metadata, not its content: what runs is what the workspace already
# held, exactly as when the same script is run without the chmod, which is already inside. So a
# mode-only write does not count as "written in this call". Any write of content by another
# program of the call (a redirect, curl -o, cp, mv, ln, tee, sed -i, touch creating the file)
# still does: `curl -o s.sh … && chmod +x s.sh && ./s.sh` and `echo … > run.sh && chmod +x run.sh
# && ./run.sh` stay outside, and so does a script outside the workspace (chmod +x /tmp/x &&
# /tmp/x). FPR cost: none; recall cost: none beyond running the unchanged script, already inside.
package shield

import rego.v1

mode_only_write(w) if {
	w.program in ws_code_cfg.mode_writers
	not w.unresolved
}
