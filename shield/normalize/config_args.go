package normalize

import "strings"

// Configuration read from stdin or a file is arguments. curl -K FILE, wget -i FILE / --config,
// aria2c -i FILE take their URLs, uploads and outputs from the file as if they were on the command
// line. When the text is a literal of the same command (a here-document, a here-string, or echo /
// printf piped in), it is parsed with the program's config grammar and walked as the options it
// stands for; when it cannot be read (a file, a variable, another program's output), the
// program's network targets are unknown: an unresolved connect, never ALLOWed by positive
// security.

// configReader: how a program reads options or URLs from a file.
type configReader struct {
	opts    []string // the options that name the file ("-" = stdin)
	grammar string   // "curlrc" (option = value lines) or "urls" (one URL per line)
}

// configReaders is the table of programs whose configuration is arguments.
var configReaders = map[string]configReader{
	"curl":   {opts: []string{"-K", "--config"}, grammar: "curlrc"},
	"wget":   {opts: []string{"-i", "--input-file"}, grammar: "urls"},
	"wget2":  {opts: []string{"-i", "--input-file"}, grammar: "urls"},
	"aria2c": {opts: []string{"-i", "--input-file"}, grammar: "urls"},
}

// configOperand returns the value of one of opts in argv (-K FILE, -KFILE, --config=FILE, and a
// short option at the end of a cluster: -sK FILE).
func configOperand(argv []string, opts []string) (string, bool) {
	for i, a := range argv {
		if a == "--" {
			break
		}
		for _, o := range opts {
			switch {
			case a == o && i+1 < len(argv):
				return argv[i+1], true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"="):
				return a[len(o)+1:], true
			case len(o) == 2 && len(a) > 1 && a[0] == '-' && !strings.HasPrefix(a, "--"):
				if k := strings.IndexByte(a[1:], o[1]); k >= 0 {
					if rest := a[k+2:]; rest != "" {
						return rest, true
					}
					if i+1 < len(argv) {
						return argv[i+1], true
					}
				}
			}
		}
	}
	return "", false
}

// configArgs handles name's config operand: stdin text is parsed now (here-doc or here-string;
// piped echo text comes through pipedConfig); anything else leaves the targets unknown.
func (w *walker) configArgs(f frame, name string, args words, stdin string, pipe bool, idx int) {
	cr := configReaders[name]
	val, ok := configOperand(args.argv, cr.opts)
	if !ok {
		return
	}
	if val == "-" || val == "/dev/stdin" {
		if stdin != "" {
			w.configText(f, name, stdin)
			return
		}
		if pipe && idx > 0 {
			return // piped: pipedConfig reads a literal producer, or marks the targets unknown
		}
	}
	w.s.addEffect(Effect{Kind: EffectConnect, Target: "(config " + val + ")", Program: name, Detail: "config", Unresolved: true})
}

// maxConfigText bounds the config text parsed per call.
const maxConfigText = 64 << 10

// configText walks text as the options (curlrc) or URLs (urls) of name.
func (w *walker) configText(f frame, name, text string) {
	if len(text) > maxConfigText || f.depth+1 > w.s.n.opt.MaxDepth {
		w.s.addEffect(Effect{Kind: EffectConnect, Target: "(config over limit)", Program: name, Detail: "config", Unresolved: true})
		return
	}
	argv := []string{name}
	if configReaders[name].grammar == "curlrc" {
		argv = append(argv, parseCurlrc(text)...)
	} else {
		for _, l := range configLines(text) {
			argv = append(argv, l)
		}
	}
	if len(argv) == 1 {
		return
	}
	child := frame{src: "", depth: f.depth + 1, via: name + " config", sudo: f.sudo}
	w.emit(child, words{argv: argv, dyn: make([]bool, len(argv))}, strings.Join(argv, " "), nil, nil, false, 0, false, "")
}

// configLines splits text into trimmed, non-comment lines; printf's literal \n separates too.
func configLines(text string) []string {
	text = strings.ReplaceAll(text, `\n`, "\n")
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		out = append(out, l)
	}
	return out
}

// parseCurlrc turns curl config lines (`url = "x"`, `data: "@f"`, `-d @f`, `silent`) into argv.
func parseCurlrc(text string) []string {
	var argv []string
	for _, l := range configLines(text) {
		key, val := l, ""
		if i := strings.IndexAny(l, " \t=:"); i >= 0 {
			key, val = l[:i], strings.TrimSpace(l[i:])
			val = strings.TrimSpace(strings.TrimLeft(val, "=:"))
		}
		if strings.HasPrefix(key, "-") {
			argv = append(argv, key)
		} else {
			argv = append(argv, "--"+key)
		}
		switch {
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			argv = append(argv, strings.ReplaceAll(val[1:len(val)-1], `\"`, `"`))
		default:
			// An unquoted value ends at white space; what follows is walked as more words, so
			// nothing on the line goes unseen.
			argv = append(argv, strings.Fields(val)...)
		}
	}
	return argv
}

// pipedConfig: `printf '…' | curl -K -`: a literal producer's text is the config; any other
// producer leaves the targets unknown.
func (w *walker) pipedConfig(f frame, c, prev *Command) {
	val, ok := configOperand(c.Args, configReaders[c.Name].opts)
	if !ok || (val != "-" && val != "/dev/stdin") {
		return
	}
	if prev != nil && !prev.Dynamic && isEcho(prev.Name) {
		w.configText(f, c.Name, echoText(prev))
		return
	}
	w.s.addEffect(Effect{Kind: EffectConnect, Target: "(config from stdin)", Program: c.Name, Detail: "config", Unresolved: true})
}
