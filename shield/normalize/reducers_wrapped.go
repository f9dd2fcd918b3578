package normalize

// Reducers through wrappers (issue 11, wave 8): a wrapper that runs its argv with the same
// standard output — command, builtin, exec, time, nice, taskset, stdbuf, nohup, timeout, ionice,
// chrt, setsid — leaves what the pipeline after it receives unchanged. `command time -p env | cut
// -d= -f1 | sort` prints the names `env | cut -d= -f1 | sort` prints, so the reducer reading of
// reducers.go applies to the wrapped source as if it stood at the head of the pipeline. A
// privilege wrapper (sudo, doas: another user's environment), a wrapper with assignments or
// redirects of its own, xargs and watch (they build the command from input or a shell line) are
// not transparent: the source stays a secret read.

// transparentWrappers: wrappers whose inner command's standard output is theirs.
var transparentWrappers = set("command", "builtin", "exec", "time", "nice", "taskset", "stdbuf", "nohup", "timeout",
	"ionice", "chrt", "setsid")

// wrappedPipelineHead: for a command nested in transparent wrappers at the head of a pipeline,
// the index of the outermost wrapper; ok false when cmds[i] is not so nested.
func wrappedPipelineHead(cmds []Command, i int) (int, bool) {
	head := i
	for j := i - 1; j >= 0; j-- {
		w, inner := cmds[j], cmds[j+1]
		if w.Depth != inner.Depth-1 || !transparentWrappers[w.Name] || !w.Pipe || w.PipeIndex != 0 || w.Dynamic || w.Sudo ||
			len(w.Env) > 0 || !stderrOnly(w) {
			break
		}
		head = j
	}
	return head, head != i
}

// unwrapSource: cmds with the wrappers from head to src-1 removed and the source put in the
// head's place (its depth), so reducedAfter reads the pipeline as `SOURCE | …`.
func unwrapSource(cmds []Command, head, src int) []Command {
	out := make([]Command, 0, len(cmds)-(src-head))
	out = append(out, cmds[:head]...)
	c := cmds[src]
	c.Depth = cmds[head].Depth
	out = append(out, c)
	return append(out, cmds[src+1:]...)
}
