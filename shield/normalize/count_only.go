package normalize

import (
	"regexp"
	"strings"
)

// Count-only and names-only output: a secret read whose content reaches nothing but a counter or
// a name extractor reveals no secret.
//
//   - wc prints counts (and the file names it was given), whatever it reads: its reads are
//     marked Detail "count" and raise no secret effect;
//   - a pipeline `cat|tac FILE… | wc [-lwcmL]` ending there (the reader with no option and no
//     redirection, the call's only cat/tac) counts FILE: the same;
//   - `env | cut -d= -f1 [| sort | uniq | head | tail | wc]` (env or printenv without operands, the
//     call's only one) prints the names of the environment variables, not their values: the
//     environment secret of env is dropped. `cut -f2`, `cut -f1-`, a tee or a redirection in
//     the pipeline keep it.
//
// The read paths are marked Role "count" (the rules' secret-file conditions skip that role);
// rules: rego/local.rego.
const detailCount = "count"

var wcFlagRE = regexp.MustCompile(`^-[lwcmL]+$|^--(lines|words|bytes|chars|max-line-length)$`)

// namesTailRE: the argv words a stage after the name extractor may have (sort -u, head -n 20).
var namesTailRE = regexp.MustCompile(`^(-[a-zA-Z]+|[0-9]{1,6}|-n[0-9]{1,6})$`)

var namesTailPrograms = set("sort", "uniq", "head", "tail", "wc")

func (s *state) markCountOnly() {
	cmds := s.act.Commands
	countProg := map[string]bool{}
	if s.wcOnlyCounts() {
		countProg["wc"] = true
	}
	if r := s.countedReader(); r != "" {
		countProg[r] = true
	}
	if len(countProg) > 0 {
		s.countEffects(countProg)
	}
	if s.envNamesOnly(cmds) {
		out := s.act.Effects[:0]
		for _, e := range s.act.Effects {
			if e.Kind == EffectSecret && (e.Program == "env" || e.Program == "printenv") {
				continue
			}
			out = append(out, e)
		}
		s.act.Effects = out
	}
	s.markReducedSources() // reducers.go
	s.ownHistory()         // history_own.go
	s.markPublicInspect()  // metadata_only.go
	s.privilegeListing()
	s.settingsOnly()
	s.knownHostsAppend()
	s.opensslInspect()
}

// wcOnlyCounts: every wc of the call takes only counting flags and file operands.
func (s *state) wcOnlyCounts() bool {
	seen := false
	for _, c := range s.act.Commands {
		if c.Name != "wc" {
			continue
		}
		seen = true
		if c.Dynamic || c.Sudo {
			return false
		}
		for _, a := range c.Args {
			if strings.HasPrefix(a, "-") && !wcFlagRE.MatchString(a) {
				return false // --files0-from and anything else
			}
		}
	}
	return seen
}

// countedReader: the cat or tac whose whole output goes into a final wc (see above), or "".
func (s *state) countedReader() string {
	cmds := s.act.Commands
	reader := -1
	for i, c := range cmds {
		if c.Name == "cat" || c.Name == "tac" {
			if reader >= 0 {
				return ""
			}
			reader = i
		}
	}
	if reader < 0 || reader+1 >= len(cmds) {
		return ""
	}
	r, next := cmds[reader], cmds[reader+1]
	if !r.Pipe || r.PipeIndex != 0 || r.Dynamic || r.Sudo || len(r.Redirects) > 0 || len(r.Env) > 0 {
		return ""
	}
	for _, a := range r.Args {
		if strings.HasPrefix(a, "-") {
			return ""
		}
	}
	if next.Name != "wc" || !next.Pipe || next.PipeIndex != 1 || next.Depth != r.Depth || len(next.Redirects) > 0 || next.Dynamic {
		return ""
	}
	for _, a := range next.Args {
		if !wcFlagRE.MatchString(a) {
			return ""
		}
	}
	if reader+2 < len(cmds) {
		if after := cmds[reader+2]; after.Pipe && after.PipeIndex == 2 && after.Depth == r.Depth {
			return ""
		}
	}
	return r.Name
}

// countEffects marks the reads of the counting programs and drops their secret effects; their
// read paths get Role "count".
func (s *state) countEffects(progs map[string]bool) {
	out := s.act.Effects[:0]
	for _, e := range s.act.Effects {
		if progs[e.Program] {
			if e.Kind == EffectSecret && strings.HasPrefix(e.Target, "/") {
				continue
			}
			if e.Kind == EffectRead {
				e.Detail = detailCount
			}
		}
		out = append(out, e)
	}
	s.act.Effects = out
	for i := range s.act.Paths {
		p := &s.act.Paths[i]
		if p.Role != "read" && p.Role != "arg" { // arg: the generic scan saw the path first
			continue
		}
		counted, other := false, false
		for _, c := range s.act.Commands {
			named := hasWord(c.Args, p.Raw) || redirectsFrom(c, p) || strings.Contains(c.Raw, p.Raw)
			switch {
			case progs[c.Name] && named:
				counted = true
			case named && !isShellWrapper(c):
				other = true // the same file read by another command too: not count-only
			}
		}
		if counted && !other {
			p.Role = detailCount
		}
	}
}

func redirectsFrom(c Command, p *Path) bool {
	for _, r := range c.Redirects {
		if r.Op == "<" && (r.Path == p.Raw || r.Path == p.Clean) {
			return true
		}
	}
	return false
}

// envNamesOnly: the call's only env/printenv, without operands, feeds `cut -d= -f1` and then only
// the listed filters (see above).
func (s *state) envNamesOnly(cmds []Command) bool {
	src := -1
	for i, c := range cmds {
		if c.Name == "env" || c.Name == "printenv" {
			if src >= 0 {
				return false
			}
			src = i
		}
	}
	if src < 0 || src+1 >= len(cmds) {
		return false
	}
	e := cmds[src]
	if !e.Pipe || e.PipeIndex != 0 || len(e.Args) > 0 || len(e.Env) > 0 || len(e.Redirects) > 0 || e.Dynamic || e.Sudo {
		return false
	}
	if !cutNamesOnly(cmds[src+1], e.Depth) {
		return false
	}
	for k := src + 2; k < len(cmds); k++ {
		c := cmds[k]
		if !c.Pipe || c.PipeIndex != k-src || c.Depth != e.Depth {
			break
		}
		if !namesTailPrograms[c.Name] || c.Dynamic || len(c.Redirects) > 0 {
			return false
		}
		for _, a := range c.Args {
			if !namesTailRE.MatchString(a) || a == "-o" {
				return false
			}
		}
	}
	return true
}

// cutNamesOnly: `cut -d= -f1` (also -d '=' -f 1, --delimiter==, --fields=1), no file operand.
func cutNamesOnly(c Command, depth int) bool {
	if c.Name != "cut" || !c.Pipe || c.PipeIndex != 1 || c.Depth != depth || c.Dynamic || len(c.Redirects) > 0 {
		return false
	}
	delim, field := false, false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case a == "-d" || a == "--delimiter" || a == "-f" || a == "--fields":
			if i+1 >= len(c.Args) {
				return false
			}
			i++
			if a == "-d" || a == "--delimiter" {
				delim = c.Args[i] == "="
			} else {
				field = c.Args[i] == "1"
			}
		case a == "-d=" || a == "--delimiter==":
			delim = true
		case a == "-f1" || a == "--fields=1":
			field = true
		case a == "-s" || a == "--only-delimited":
		default:
			return false
		}
	}
	return delim && field
}

// isShellWrapper: a shell given one command string (bash -lc '…'), whose commands are listed
// separately.
func isShellWrapper(c Command) bool {
	switch c.Name {
	case "bash", "sh", "zsh", "dash":
		return len(c.Args) == 2 && strings.HasPrefix(c.Args[0], "-") && strings.HasSuffix(c.Args[0], "c")
	}
	return false
}
