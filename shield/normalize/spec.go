package normalize

import (
	"fmt"
	"sort"
	"strings"
)

// Command specs: what each program does with its operands and option values. They are reviewable
// data in the policy bundle (policies/default/commands/*.spec, one file per family; a bundle's own
// commands/*.spec extend or replace them per program), parsed once per bundle; the engine in
// effects_shell.go turns a parsed argv into Effects.
//
// Format, one program (or program + sub-command) per line, '#' comments:
//
//	NAME[ SUB…]: TOKEN…   (the name ends at ": "; a sub-command may contain ':', heroku apps:destroy)
//	NAME = OTHER          NAME behaves as OTHER, sub-commands included (pip3 = pip)
//
// Tokens:
//
//	-o,--output=ROLE   an option taking a value (separate, attached "-ofile" or "--output=file");
//	                   ROLE is what the value is (see roles below; "_" ignores it)
//	--bind=ROLE/N      an option taking N separate values (bwrap --bind SRC DEST); the last has ROLE
//	-f,--force!TAG     a flag without value whose presence sets TAG for the program's handler
//	ROLE ROLE* ROLE    operand roles in order; one role may end in '*' and takes the operands left
//	                   over (cp: "read* write" — every operand but the last is read)
//	+EFFECT[:DETAIL]   an effect the program always has (+secret:env, +privilege, +listen)
//	+EFFECT[:DETAIL]?TAG  the effect only when a flag set TAG (sops -d,--decrypt!decrypt
//	                   +secret:sops?decrypt)
//	%posix             options end at the first operand (wrappers, sub-command dispatchers)
//	%sub               the first operand selects a sub-command spec ("git push"); unknown ones are
//	                   reported as unknown programs ("git frob")
//	%opensub           with %sub: an unknown sub-command takes the program's own spec (pnpm
//	                   SCRIPT runs a package script) instead of being an unknown program
//	%reach             the program reads every file under its directory operands (grep -r, rg, an
//	                   archiver, a secret scanner): a directory above credential locations reads
//	                   them (reach.go); the flag tag !reach says the same for one flag (grep -r)
//	%trace             the program observes the command it runs (strace, ltrace, perf, valgrind):
//	                   what that command reads, decrypts or is typed is captured (launchers.go)
//	%h:NAME            a Go handler for semantics the table cannot say (sed -i, tar -x, git push -f)
//	%verbs             the words that select what a cloud or platform CLI does are classified
//	                   (spec_effects.go): a destroy/delete/remove/prune/terminate… verb is a delete
//	                   of "cloud" state, a token/credential printer a secret, whatever the CLI's
//	                   sub-command grammar ("heroku apps:destroy", "flyctl apps destroy")
//
// Options not listed are flags without value; a listed single-dash long option (find -name) is
// matched whole before short-flag clustering.
//
// Roles: read write delete move (read + delete) list code (inline code run by the program) script
// (a file run by the program) cmd (the rest of argv is a command: a wrapper) url host (host[:port] or
// user@host[:path]) port pkg (a package to install) remote (a VCS remote) data (curl -d: "@file" is
// a read) send (a file whose content the program sends: curl -T, mail -a; "@file", "<file" and
// "file" are read and flow into the program's connections, reach.go) cred (a password, passphrase or
// PIN that unlocks what the program reads: credential_options.go) _ (ignored).
//
// Roles whose value is code or a command (spec_effects.go), each judged as the code it contains:
//
//	sh      a shell command line the program runs (flock -c, tar --to-command, zip -TT, git
//	        --upload-pack, man -P): walked as shell, recursively
//	shcmd   like cmd: the rest of argv is a command; one word is a shell command line (tmux
//	        new-session 'a; b', entr -s, watchexec 'make test'), several are an argv. As an option
//	        role (fd -x, xterm -e; also cmd) the words after the option, up to a ";" word, are the
//	        command, and parsing goes on after the ";"
//	prog    a program the program runs (scp -S, tar --rsh-command, aria2c --on-download-complete):
//	        a path is an exec of that file, a name is run as a command; unknown → unresolved
//	src     a script file or URL the program runs (k6 run URL): a URL is code fetched and run
//	opaque  code in a language the engine does not read (make --eval): unresolved (fail closed)
//	vim     an Ex command (vim -c, --cmd, +CMD): :!, :r !, :w !, :terminal, system(), :py/:lua/
//	        :perl/:ruby, :source, :w FILE, :r FILE
//	sed     a sed script: the e command and s///e run shell, w/W write files, r/R read files
//	tarcp   a tar --checkpoint-action: exec=CMD runs CMD
//	sshopt  an ssh -o option: ProxyCommand/LocalCommand/KnownHostsCommand run shell, ProxyJump is a host
//	gdb     a gdb/lldb command: shell, !, pipe, python, script, source, call system()
//	tcl     expect/Tcl code: spawn, exec and system run commands
//	wgetrc  a wget -e command: post_file/body_file/input read, output_document write, use_askpass prog
//	cookie  curl -b: a value without '=' is a cookie file read
//	item    an HTTPie request item: NAME@FILE (upload), NAME=@FILE, NAME:=@FILE read FILE
//	pipeout an output file, or "|CMD": a shell command fed the output (psql -o)
//	xfer    a file-transfer script (sftp -b, lftp -c, smbclient -c; "-": standard input):
//	        put reads and sends, get writes, ! runs shell (xfer_commands.go)
//	names   a file listing names of files the program reads ("-": standard input; name_lists.go)
//	expr    code of a language read without a grammar (gnuplot -e, nix eval --expr): its shell
//	        escapes are walked, its path literals read, its URLs connected (inline_escapes.go)

type cmdSpec struct {
	name     string
	opts     map[string]string // option → role of its value
	flags    map[string]string // flag → tag
	operands []string
	arity    map[string]int // option → number of separate values it takes (bwrap --bind SRC DEST); 1 when absent
	fx       []string
	condFx   [][2]string // effect, tag: "+EFFECT?TAG"
	verbs    bool        // %verbs: classify the sub-command words (spec_effects.go)
	reach    bool        // %reach: reads every file under its directory operands (reach.go)
	trace    bool        // %trace: observes the command it runs (launchers.go)
	posix    bool
	sub      bool
	openSub  bool // an unknown sub-command is not an unknown program (pnpm SCRIPT runs a package script)
	handler  string
	subs     map[string]*cmdSpec
	// longSingle: the spec lists single-dash long options (find -name), so an unknown "-xyz" is
	// one flag, not a cluster.
	longSingle bool
}

// CommandSpecs is a parsed set of command specs. It is immutable once parsed (Merge returns a new
// set) and safe for concurrent use. A Normalizer without specs knows no program: every command is
// an unknown program (fail closed).
type CommandSpecs struct {
	table map[string]*cmdSpec
}

// Len is the number of programs specified.
func (c *CommandSpecs) Len() int {
	if c == nil {
		return 0
	}
	return len(c.table)
}

// Merge returns the programs of c with those of o added; a program o specifies replaces c's spec
// of it, sub-commands included.
func (c *CommandSpecs) Merge(o *CommandSpecs) *CommandSpecs {
	out := &CommandSpecs{table: make(map[string]*cmdSpec, c.Len()+o.Len())}
	if c != nil {
		for k, v := range c.table {
			out.table[k] = v
		}
	}
	if o != nil {
		for k, v := range o.table {
			out.table[k] = v
		}
	}
	return out
}

func (c *CommandSpecs) lookup(name string) *cmdSpec {
	if c == nil {
		return nil
	}
	return c.table[name]
}

// ParseCommandSpecs parses spec files (name → content, names used in messages); it reports every
// bad line with file:line, not just the first. Aliases ("pip3 = pip") resolve across the files.
func ParseCommandSpecs(files map[string][]byte) (*CommandSpecs, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	table := map[string]*cmdSpec{}
	var problems []string
	aliases := map[string]string{}
	for _, n := range names {
		b := files[n]
		for i, line := range strings.Split(string(b), "\n") {
			if name, target, ok := parseAlias(line); ok {
				aliases[name] = target
				continue
			}
			if err := parseSpecLine(table, line); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", n, i+1, err))
			}
		}
	}
	for name, target := range aliases {
		sp, ok := table[target]
		if !ok {
			problems = append(problems, fmt.Sprintf("alias %s: no program %q", name, target))
			continue
		}
		table[name] = sp
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("%w: %s", ErrCommandSpecs, strings.Join(problems, "; "))
	}
	return &CommandSpecs{table: table}, nil
}

// parseAlias reads "NAME = OTHER": NAME behaves as OTHER (pip3 = pip).
func parseAlias(line string) (string, string, bool) {
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(line)
	if len(f) == 3 && f[1] == "=" && !strings.Contains(line, ":") {
		return f[0], f[2], true
	}
	return "", "", false
}

var specRoles = set("read", "write", "delete", "move", "list", "code", "script", "cmd", "url", "host", "port", "pkg", "remote", "data", "send", "agentkey", "pid", "_",
	"sh", "shcmd", "prog", "src", "opaque", "vim", "sed", "tarcp", "sshopt", "gdb", "tcl", "wgetrc", "cookie", "item", "pipeout",
	"bind", "relay", "cred", "expr", "names", "xfer")

func parseSpecLine(table map[string]*cmdSpec, line string) error {
	if i := strings.Index(line, "#"); i >= 0 {
		if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' {
			// "-#,--shift" would silently cut the rest of the line off as a comment.
			return fmt.Errorf("'#' inside a token starts a comment; put a blank before comments")
		}
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	// The name ends at the first ':' followed by a blank or the end of the line: sub-command
	// names may contain ':' ("heroku apps:destroy").
	head, body, ok := "", "", false
	for i := 0; i < len(line); i++ {
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			head, body, ok = line[:i], line[i+1:], true
			break
		}
	}
	if !ok {
		return fmt.Errorf("no ':' after the program name")
	}
	names := strings.Fields(head)
	if len(names) == 0 {
		return fmt.Errorf("no program name")
	}
	sp := &cmdSpec{name: strings.Join(names, " "), opts: map[string]string{}, flags: map[string]string{}}
	stars := 0
	for _, tok := range strings.Fields(body) {
		switch {
		case strings.HasPrefix(tok, "%"):
			switch {
			case tok == "%posix":
				sp.posix = true
			case tok == "%sub":
				sp.sub = true
			case tok == "%opensub":
				sp.openSub = true
			case tok == "%verbs":
				sp.verbs = true
			case tok == "%reach":
				sp.reach = true
			case tok == "%trace":
				sp.trace = true
			case strings.HasPrefix(tok, "%h:"):
				sp.handler = tok[3:]
			default:
				return fmt.Errorf("unknown directive %q", tok)
			}
		case strings.HasPrefix(tok, "+"):
			if fx, tag, ok := strings.Cut(tok[1:], "?"); ok {
				if tag == "" {
					return fmt.Errorf("effect %q: no tag after '?'", tok)
				}
				sp.condFx = append(sp.condFx, [2]string{fx, tag})
				continue
			}
			sp.fx = append(sp.fx, tok[1:])
		case strings.HasPrefix(tok, "-"):
			if names, role, ok := strings.Cut(tok, "="); ok {
				n := 1
				if r, cnt, ok := strings.Cut(role, "/"); ok {
					if len(cnt) != 1 || cnt[0] < '2' || cnt[0] > '9' {
						return fmt.Errorf("option %q: bad value count %q", names, cnt)
					}
					role, n = r, int(cnt[0]-'0')
					if role == "cmd" || role == "shcmd" {
						return fmt.Errorf("option %q: a command takes the rest of argv, not %d values", names, n)
					}
				}
				if !specRoles[role] {
					return fmt.Errorf("option %q: unknown role %q", names, role)
				}
				for _, o := range strings.Split(names, ",") {
					sp.opts[o] = role
					sp.longSingle = sp.longSingle || (len(o) > 2 && o[1] != '-')
					if n > 1 {
						if sp.arity == nil {
							sp.arity = map[string]int{}
						}
						sp.arity[o] = n
					}
				}
				continue
			}
			names, tag, _ := strings.Cut(tok, "!")
			for _, o := range strings.Split(names, ",") {
				sp.flags[o] = tag
				sp.longSingle = sp.longSingle || (len(o) > 2 && o[1] != '-')
			}
		default:
			r := strings.TrimSuffix(tok, "*")
			if !specRoles[r] {
				return fmt.Errorf("unknown operand role %q", tok)
			}
			if r != tok {
				stars++
			}
			sp.operands = append(sp.operands, tok)
		}
	}
	if stars > 1 {
		return fmt.Errorf("more than one repeated operand role")
	}
	if len(names) == 1 {
		if prev, ok := table[names[0]]; ok && prev.subs != nil {
			sp.subs = prev.subs
		}
		table[names[0]] = sp
		return nil
	}
	parent := table[names[0]]
	if parent == nil {
		return fmt.Errorf("sub-command %q before its program", sp.name)
	}
	for _, n := range names[1 : len(names)-1] {
		p := parent.subs[n]
		if p == nil {
			return fmt.Errorf("sub-command %q before its parent", sp.name)
		}
		parent = p
	}
	if parent.subs == nil {
		parent.subs = map[string]*cmdSpec{}
	}
	parent.subs[names[len(names)-1]] = sp
	return nil
}

// parsedArgs is an argv read with a spec: option values with their roles, flags set, operands.
type parsedArgs struct {
	spec     *cmdSpec
	name     string // "git push"
	vals     []optVal
	tags     map[string]bool
	flags    []string // every option seen, as written (before '=')
	operands []int    // indexes into the argv words
	rest     int      // index of the first word of a "cmd" operand, or -1
	shRest   int      // index of the first word of a "shcmd" operand, or -1
	// optRest: the words after an option whose role is cmd or shcmd (fd -x CMD…, xterm -e CMD…),
	// up to a ";" word; optRole is that role.
	optRest words
	optRole string
	subName string // an unknown sub-command
	base    int    // index in the argv words of the first word after the sub-command
}

type optVal struct {
	opt, role, val string
	dyn            bool
}

// parseArgs reads args (argv without argv[0]) with sp, getopt style: "--" ends options, short
// flags cluster ("-rf"), a value option takes the rest of its cluster or the next word, long
// options take "--opt=value" or the next word. Sub-commands dispatch on the first operand.
func parseArgs(sp *cmdSpec, name string, args words) parsedArgs {
	pa := parsedArgs{spec: sp, name: name, rest: -1, shRest: -1}
	hasCmd := false
	for _, r := range sp.operands {
		if r := strings.TrimSuffix(r, "*"); r == "cmd" || r == "shcmd" {
			hasCmd = true
		}
	}
	posix := sp.posix || sp.sub || hasCmd
	noMore, dashDash := false, false
	for i := 0; i < len(args.argv); i++ {
		a := args.argv[i]
		if noMore && !dashDash && hasCmd && len(a) > 1 && a[0] == '-' {
			// A wrapper's own code option after its leading operands (flock FILE -c CMD, su USER
			// -c CMD): the option, not the first word of a command.
			opt, val, hasEq := a, "", false
			if strings.HasPrefix(a, "--") {
				opt, val, hasEq = strings.Cut(a, "=")
			}
			if role := sp.opts[opt]; role == "sh" || role == "code" {
				pa.flags = append(pa.flags, opt)
				if !hasEq {
					if i+1 >= len(args.argv) {
						continue
					}
					i++
					val = args.argv[i]
				}
				pa.vals = append(pa.vals, optVal{opt: opt, role: role, val: val, dyn: args.dyn[i]})
				continue
			}
		}
		if a == "--" && noMore && !dashDash && hasCmd {
			dashDash = true // timeout 5 -- CMD, aws-vault exec PROFILE -- CMD
			continue
		}
		if noMore || len(a) < 2 || a[0] != '-' {
			if sp.sub && len(pa.operands) == 0 && !args.dyn[i] {
				if sub, ok := sp.subs[a]; ok {
					inner := parseArgs(sub, name+" "+a, args.sub(i+1))
					inner.vals = append(pa.vals, inner.vals...)
					inner.flags = append(pa.flags, inner.flags...)
					for t := range pa.tags {
						if inner.tags == nil {
							inner.tags = map[string]bool{}
						}
						inner.tags[t] = true
					}
					for k := range inner.operands {
						inner.operands[k] += i + 1
					}
					if inner.rest >= 0 {
						inner.rest += i + 1
					}
					if inner.shRest >= 0 {
						inner.shRest += i + 1
					}
					inner.base += i + 1
					return inner
				}
				if len(sp.subs) > 0 && !sp.openSub {
					pa.subName = name + " " + a
				}
			}
			pa.operands = append(pa.operands, i)
			if hasCmd {
				switch pa.roleAt(len(pa.operands)-1, len(pa.operands)) {
				case "cmd":
					pa.operands = pa.operands[:len(pa.operands)-1]
					pa.rest = i
					return pa
				case "shcmd":
					pa.operands = pa.operands[:len(pa.operands)-1]
					pa.shRest = i
					return pa
				}
			}
			if posix {
				noMore = true
			}
			continue
		}
		if a == "--" {
			noMore, dashDash = true, true
			continue
		}
		// Whole-word match first: long options, single-dash long options (find -name).
		opt, val, hasEq := a, "", false
		if strings.HasPrefix(a, "--") {
			opt, val, hasEq = strings.Cut(a, "=")
		}
		if role, ok := sp.opts[opt]; ok {
			pa.flags = append(pa.flags, opt)
			if (role == "cmd" || role == "shcmd") && !hasEq {
				i = pa.takeCommand(role, args, i+1)
				continue
			}
			if !hasEq {
				if i+1 >= len(args.argv) {
					continue
				}
				i += max(sp.arity[opt], 1)
				if i >= len(args.argv) {
					break
				}
				val = args.argv[i]
			}
			pa.vals = append(pa.vals, optVal{opt: opt, role: role, val: val, dyn: args.dyn[i]})
			continue
		}
		if tag, ok := sp.flags[opt]; ok || strings.HasPrefix(a, "--") || (sp.longSingle && len(a) > 2) {
			pa.flags = append(pa.flags, opt)
			pa.tag(tag)
			continue
		}
		// Short cluster.
		for k := 1; k < len(a); k++ {
			o := "-" + string(a[k])
			if role, ok := sp.opts[o]; ok {
				pa.flags = append(pa.flags, o)
				if (role == "cmd" || role == "shcmd") && k == len(a)-1 {
					i = pa.takeCommand(role, args, i+1)
					break
				}
				v := a[k+1:]
				if v == "" {
					if i+1 >= len(args.argv) {
						break
					}
					i++
					v = args.argv[i]
				}
				pa.vals = append(pa.vals, optVal{opt: o, role: role, val: v, dyn: args.dyn[i]})
				break
			}
			pa.flags = append(pa.flags, o)
			pa.tag(sp.flags[o])
		}
	}
	return pa
}

// takeCommand records the words from start up to a ";" word as the command of a cmd/shcmd option
// and returns the index of the ";" (or the last word): parsing goes on after it.
func (pa *parsedArgs) takeCommand(role string, args words, start int) int {
	j := start
	for j < len(args.argv) && !(args.argv[j] == ";" && !args.dyn[j]) {
		j++
	}
	if pa.optRole == "" {
		pa.optRest = words{argv: args.argv[start:j], dyn: args.dyn[start:j]}
		pa.optRole = role
	}
	return j
}

func (pa *parsedArgs) tag(t string) {
	if t == "" {
		return
	}
	if pa.tags == nil {
		pa.tags = map[string]bool{}
	}
	pa.tags[t] = true
}

func (pa *parsedArgs) has(flags ...string) bool {
	for _, f := range pa.flags {
		for _, g := range flags {
			if f == g {
				return true
			}
		}
	}
	return false
}

// roleAt is the role of operand k of n operands: fixed roles before the repeated one from the
// start, fixed roles after it from the end, the repeated role in between; operands beyond a spec
// without a repeated role are ignored ("_").
func (pa *parsedArgs) roleAt(k, n int) string {
	ops := pa.spec.operands
	star := -1
	for i, r := range ops {
		if strings.HasSuffix(r, "*") {
			star = i
		}
	}
	if star < 0 {
		if k < len(ops) {
			return ops[k]
		}
		return "_"
	}
	if k < star {
		return ops[k]
	}
	after := len(ops) - star - 1
	if n-k <= after && n-after > star-1 {
		idx := len(ops) - (n - k)
		if idx > star {
			return ops[idx]
		}
	}
	return strings.TrimSuffix(ops[star], "*")
}
