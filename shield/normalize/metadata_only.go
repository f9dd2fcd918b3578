package normalize

// Inspection modes: options that turn a program which writes its file operand into one that only
// reads it. `ssh-keygen -l -f KEY` (and -B) prints the key's fingerprint; the -f value is read,
// not rewritten as in `ssh-keygen -p -f KEY` or key generation. The mode counts only when every
// other option is one that changes nothing but the output format (-E hash, -v, -q): ssh-keygen
// runs its signing, KRL and host-file modes before the fingerprint one, so any other option keeps
// the -f value a write.
var inspectModes = map[string]struct {
	modes, harmless map[string]bool
}{
	"ssh-keygen": {modes: set("-l", "-B"), harmless: set("-f", "-E", "-v", "-q", "-l", "-B")},
}

// inspectOnly: the parsed argv of name selects an inspection mode and nothing else (see above).
func inspectOnly(pa parsedArgs, name string) bool {
	m, ok := inspectModes[name]
	if !ok {
		return false
	}
	mode := false
	for _, f := range pa.flags {
		if !m.harmless[f] {
			return false
		}
		mode = mode || m.modes[f]
	}
	for _, v := range pa.vals {
		if !m.harmless[v.opt] {
			return false
		}
	}
	return mode && len(pa.operands) == 0
}
