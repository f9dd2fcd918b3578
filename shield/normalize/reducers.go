package normalize

import (
	"regexp"
	"strings"
)

// Reducers: names, counts and metadata are not contents. The principle, by kind of stage rather
// than by program: when the whole output of a secret source goes into a REDUCER, and what the
// reducer prints goes nowhere but into further reducers or the call's own output, the call shows
// the shape of the secret, not the secret. A reducer is a stage that prints one of
//
//   - a count: wc with counting flags; grep/egrep/fgrep/rg -c/--count (one pattern, no file);
//     jq 'length';
//   - names: cut -d= -f1; grep -o of a NAME-ONLY pattern (anchored at the start of the line and
//     made only of letters, digits, '_' and '-', classes of those, [^=] and \w, optionally ending
//     in '=', so it can never match past the first '='); jq keys / keys[] / keys_unsorted /
//     to_entries[].key; awk -F= '{print $1}'; sed 's/=.*//';
//   - an exit status: grep -q.
//
// A pattern is an oracle: `grep -c 'TOKEN=ab'` asked often enough spells a value out. So a count
// or exit status is a reducer only when its pattern cannot test a value: a match-all pattern
// ('.', '^', '$', ''), or, for an environment dump (NAME=VALUE lines), a name-only pattern. The
// name extractors (cut/awk/sed on '=', grep -o of a name pattern) likewise only reduce an
// environment dump: on a key file or a token they would print its text. jq's keys and length
// reduce any JSON.
//
// Between the source and the reducer only line filters may stand (sort, uniq, head, tail, and
// grep without -o/-c/file operands: they pass lines through unchanged); after it, only the
// names-tail stages of count_only.go (sort, uniq, head, tail, wc with plain options). No stage may
// redirect its output anywhere but stderr to /dev/null; no tee; the source's program appears
// once in the call (effects do not say which command they came from).
//
// Sources: a program whose secret effect is its standard output (env/printenv without operands,
// token printers, terraform output, a CLI printing settings: secret effects without a file
// target) loses that secret effect; a plain file reader (cat, tac, head, tail, sort, grep,
// cut, strings, nl without recursion) has its reads marked count, as count_only.go does for wc.
// Everything else about the call (other effects, other commands) is judged as before.

// reducerPassFilters: stages that pass some of their input lines through unchanged.
var reducerPassFilters = set("sort", "uniq", "head", "tail", "grep", "egrep", "fgrep")

// reducerFileReaders: readers whose output is the content of their file operands.
var reducerFileReaders = set("cat", "tac", "head", "tail", "sort", "grep", "egrep", "fgrep", "cut", "strings", "nl")

// grepPlainFlags: grep options that change only which lines match, never what is printed.
var grepPlainFlags = set("-i", "-v", "-E", "-F", "-w", "-x", "-s", "-P", "-G", "--ignore-case", "--invert-match",
	"--extended-regexp", "--fixed-strings", "--word-regexp", "--line-regexp", "--no-messages", "-a", "--text")

// namePatternRE: a grep -o pattern that can only match a leading name (see above).
var namePatternRE = regexp.MustCompile(`^\^(?:(?:\[(?:\^=|[A-Za-z0-9_-]+)\]|\\w|[A-Za-z0-9_-])(?:[*+?]|\{[0-9]{1,3}(?:,[0-9]{0,3})?\})?)+=?$`)

// matchAllPatterns: grep patterns that match every line (or every non-empty one).
var matchAllPatterns = set(".", "^", "$", "", "^.*", ".*", "^.*$")

// jqNameFilters: jq programs that print keys or a length (whitespace removed).
var jqNameFilters = set("keys", "keys[]", "keys_unsorted", "keys_unsorted[]", ".|keys", ".|keys[]", "keys|length", "length",
	".|length", "to_entries[].key", "to_entries|map(.key)", "keys|.[]", "[keys[]]", "keys|join(\",\")", "keys|join(\"\\n\")")

var (
	awkFirstFieldRE = regexp.MustCompile(`^\{\s*print\s+\$1\s*;?\s*\}$`)
	sedCutValueRE   = regexp.MustCompile(`^s([/|#,])=\.\*\$?([/|#,])([/|#,])?g?$`)
)

// markReducedSources applies the principle above to every pipeline of the call.
func (s *state) markReducedSources() {
	cmds := s.act.Commands
	for i, src := range cmds {
		if !src.Pipe || src.PipeIndex != 0 || src.Dynamic || len(src.Env) > 0 || !stderrOnly(src) {
			continue
		}
		env := (src.Name == "env" || src.Name == "printenv") && len(src.Args) == 0
		list, at := cmds, i
		if head, ok := wrappedPipelineHead(cmds, i); ok { // reducers_wrapped.go
			list, at = unwrapSource(cmds, head, i), head
		}
		if !reducedAfter(list, at, env, s.workspaceSink) || countNamed(cmds, src.Name) != 1 {
			continue
		}
		switch {
		case reducerFileReaders[src.Name] && hasFileOperand(src):
			if recursiveArgs(src) {
				continue
			}
			s.countEffects(map[string]bool{src.Name: true})
		default:
			name := src.Name
			s.dropEffects(func(e Effect) bool {
				return e.Kind == EffectSecret && e.Program == name && !strings.HasPrefix(e.Target, "/")
			})
		}
	}
}

// reducedAfter: the stages after cmds[src] in its pipeline are pass filters, one reducer, then
// names-tail stages only.
func reducedAfter(cmds []Command, src int, env bool, sink func(Command) bool) bool {
	depth := cmds[src].Depth
	reduced := false
	for k := src + 1; k < len(cmds); k++ {
		c := cmds[k]
		if !c.Pipe || c.PipeIndex != k-src || c.Depth != depth {
			break
		}
		if c.Dynamic || c.Sudo || len(c.Env) > 0 {
			return false
		}
		// Once reduced, the count or names may also be kept in a file (> f, tee f: the write is
		// judged by its path); before that, only stderr may go anywhere (stage_sinks.go).
		if !onlyStderrRedirects(c) && !(reduced || reducerStage(c, env)) || !reducedRedirects(c) || !sink(c) {
			return false
		}
		switch {
		case reduced && c.Name == "tee" && teeFilesOnly(c):
		case reduced:
			if !namesTailPrograms[c.Name] {
				return false
			}
			for _, a := range c.Args {
				if !namesTailRE.MatchString(a) || a == "-o" {
					return false
				}
			}
		case reducerStage(c, env):
			reduced = true
		case passFilter(c, env):
		default:
			return false
		}
	}
	return reduced
}

// reducerStage: c prints a count, names or nothing of its standard input (see above); env: the
// input is an environment dump.
func reducerStage(c Command, env bool) bool {
	switch c.Name {
	case "wc":
		for _, a := range c.Args {
			if !wcFlagRE.MatchString(a) {
				return false
			}
		}
		return true
	case "cut":
		return env && cutNamesOnly(c, c.Depth)
	case "grep", "egrep", "fgrep", "rg":
		mode, pats, ok := grepShape(c.Args)
		if !ok || len(pats) != 1 {
			return false
		}
		switch mode {
		case "count", "quiet":
			return matchAllPatterns[pats[0]] || env && namePatternRE.MatchString(pats[0])
		case "only":
			return env && namePatternRE.MatchString(pats[0])
		}
		return false
	case "jq", "gojq", "jaq":
		prog := ""
		for _, a := range c.Args {
			switch a {
			case "-r", "-c", "-M", "-S", "-j", "-e", "--raw-output", "--compact-output", "--monochrome-output", "--sort-keys":
				continue
			}
			if strings.HasPrefix(a, "-") || prog != "" {
				return false
			}
			prog = a
		}
		return jqNameFilters[strings.Join(strings.Fields(prog), "")]
	case "awk", "gawk", "mawk":
		return env && awkFirstField(c.Args)
	case "sed":
		args := c.Args
		if len(args) > 0 && (args[0] == "-E" || args[0] == "-r") {
			args = args[1:]
		}
		if len(args) == 2 && args[0] == "-e" {
			args = args[1:]
		}
		return env && len(args) == 1 && sedCutValueRE.MatchString(args[0])
	}
	return false
}

// passFilter: c passes lines of its input through unchanged and reads no file. A grep selects
// lines by a pattern, which is an oracle before a count (see above): only a name-only pattern
// over an environment dump.
func passFilter(c Command, env bool) bool {
	if !reducerPassFilters[c.Name] {
		return false
	}
	if c.Name == "grep" || c.Name == "egrep" || c.Name == "fgrep" {
		mode, pats, ok := grepShape(c.Args)
		return ok && mode == "" && len(pats) == 1 && (matchAllPatterns[pats[0]] || env && namePatternRE.MatchString(pats[0]))
	}
	for _, a := range c.Args {
		if !namesTailRE.MatchString(a) || a == "-o" {
			return false // an operand is a file; -o of sort writes one
		}
	}
	return true
}

// grepShape: the output mode of a grep argv ("count", "quiet", "only" or "" for matching lines)
// and its patterns; ok is false for any option outside the plain ones or a file operand.
func grepShape(args []string) (string, []string, bool) {
	mode := ""
	var pats []string
	set := func(m string) bool {
		if mode != "" && mode != m {
			return false
		}
		mode = m
		return true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pats = append(pats, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--regexp":
			if i+1 >= len(args) {
				return "", nil, false
			}
			i++
			pats = append(pats, args[i])
		case strings.HasPrefix(a, "--regexp="):
			pats = append(pats, strings.TrimPrefix(a, "--regexp="))
		case a == "-c" || a == "--count":
			if !set("count") {
				return "", nil, false
			}
		case a == "-q" || a == "--quiet" || a == "--silent":
			if !set("quiet") {
				return "", nil, false
			}
		case a == "-o" || a == "--only-matching":
			if !set("only") {
				return "", nil, false
			}
		case grepPlainFlags[a]:
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			// clustered short flags: -oE, -ci
			for _, f := range a[1:] {
				switch f {
				case 'c':
					if !set("count") {
						return "", nil, false
					}
				case 'q':
					if !set("quiet") {
						return "", nil, false
					}
				case 'o':
					if !set("only") {
						return "", nil, false
					}
				case 'i', 'v', 'E', 'F', 'w', 'x', 's', 'P', 'G', 'a':
				default:
					return "", nil, false
				}
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return "", nil, false
		default:
			pats = append(pats, a)
		}
	}
	return mode, pats, true
}

// awkFirstField: awk -F= '{print $1}' (also -F '=' and -F'=' after quote removal).
func awkFirstField(args []string) bool {
	switch {
	case len(args) == 2 && args[0] == "-F=":
		return awkFirstFieldRE.MatchString(args[1])
	case len(args) == 3 && args[0] == "-F" && args[1] == "=":
		return awkFirstFieldRE.MatchString(args[2])
	}
	return false
}

// onlyStderrRedirects: c redirects nothing but its standard error (2>/dev/null, 2>&1 is not).
func onlyStderrRedirects(c Command) bool {
	for _, r := range c.Redirects {
		if r.Fd != "2" || r.Path != "/dev/null" {
			return false
		}
	}
	return true
}

func countNamed(cmds []Command, name string) int {
	n := 0
	for _, c := range cmds {
		if c.Name == name {
			n++
		}
	}
	return n
}

// hasFileOperand: c has an argument that is not an option (for grep, beyond its pattern).
func hasFileOperand(c Command) bool {
	if c.Name == "grep" || c.Name == "egrep" || c.Name == "fgrep" {
		_, pats, ok := grepShape(c.Args)
		return ok && len(pats) > 1
	}
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

func recursiveArgs(c Command) bool {
	for _, a := range c.Args {
		if a == "--recursive" || a == "--dereference-recursive" || a == "-d" || a == "--directories" ||
			(len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, "rR")) {
			return true
		}
	}
	return false
}

// dropEffects removes the effects drop selects and the flows that touch them, renumbering the
// other flows.
func (s *state) dropEffects(drop func(Effect) bool) {
	index := make([]int, len(s.act.Effects))
	out := s.act.Effects[:0]
	for i, e := range s.act.Effects {
		if drop(e) {
			index[i] = -1
			continue
		}
		index[i] = len(out)
		out = append(out, e)
	}
	if len(out) == len(index) {
		return
	}
	s.act.Effects = out
	flows := s.act.Flows[:0]
	for _, f := range s.act.Flows {
		if f.From < 0 || f.From >= len(index) || f.To < 0 || f.To >= len(index) {
			continue
		}
		if index[f.From] < 0 || index[f.To] < 0 {
			continue
		}
		f.From, f.To = index[f.From], index[f.To]
		flows = append(flows, f)
	}
	s.act.Flows = flows
}
