package normalize

import (
	"path"
	"strings"
)

// Where a download lands. A downloader that names its output after the URL (curl -O, wget
// without -O, aria2c without -o) or puts it in a directory (curl --output-dir, wget -P,
// aria2c -d, gh release download -D) writes a file the specs' write roles do not name: the
// walker records that write, so the rules that judge what runs later (rego/later_downloads.rego,
// workspace_files.rego) see that the downloaded bytes replace gradle/wrapper/gradle-wrapper.jar
// or land in .git/hooks. gh release download also connects to the forge it downloads from.

// curlValueShort: curl's short options that take a value (the rest of a combined flag word or
// the next word).
const curlValueShort = "dFToDcbHwxXuAemrCYyzUEQK"

// downloadDests records the files a downloader writes into a directory or under the URL's name.
func (w *walker) downloadDests(name string, args words) {
	argv := args.argv
	if len(argv) > 256 {
		argv = argv[:256]
	}
	var urls []int
	dir, dirDyn, out, remoteName := "", false, -1, false
	switch name {
	case "curl":
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "--output-dir":
				if i+1 < len(argv) {
					i++
					dir, dirDyn = argv[i], args.dyn[i]
				}
			case strings.HasPrefix(a, "--output-dir="):
				dir, dirDyn = strings.TrimPrefix(a, "--output-dir="), args.dyn[i]
			case a == "--remote-name" || a == "--remote-name-all":
				remoteName = true
			case a == "--output":
				i++
				out = i
			case a == "--url":
				if i+1 < len(argv) {
					i++
					urls = append(urls, i)
				}
			case strings.HasPrefix(a, "--"):
			case strings.HasPrefix(a, "-") && len(a) > 1:
				for j := 1; j < len(a); j++ {
					c := a[j]
					if c == 'O' {
						remoteName = true
					}
					if strings.IndexByte(curlValueShort, c) >= 0 {
						if j == len(a)-1 {
							i++
						}
						if c == 'o' {
							out = i
						}
						break
					}
				}
			case strings.Contains(a, "://"):
				urls = append(urls, i)
			}
		}
		if out >= 0 && out < len(argv) && dir != "" && !strings.HasPrefix(argv[out], "/") {
			w.pathEffect(EffectWrite, name, path.Join(dir, argv[out]), dirDyn || args.dyn[out])
		}
		if !remoteName {
			return
		}
	case "wget":
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "-P" || a == "--directory-prefix":
				if i+1 < len(argv) {
					i++
					dir, dirDyn = argv[i], args.dyn[i]
				}
			case strings.HasPrefix(a, "--directory-prefix="):
				dir, dirDyn = strings.TrimPrefix(a, "--directory-prefix="), args.dyn[i]
			case strings.HasPrefix(a, "-P") && len(a) > 2:
				dir, dirDyn = a[2:], args.dyn[i]
			case a == "-O" || a == "--output-document" || strings.HasPrefix(a, "--output-document="),
				len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'O'):
				return // the spec's write role names the file (-O FILE, -qO-, -O-)
			case strings.Contains(a, "://") && !strings.HasPrefix(a, "-"):
				urls = append(urls, i)
			}
		}
	case "aria2c":
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "-d" || a == "--dir":
				if i+1 < len(argv) {
					i++
					dir, dirDyn = argv[i], args.dyn[i]
				}
			case strings.HasPrefix(a, "--dir="):
				dir, dirDyn = strings.TrimPrefix(a, "--dir="), args.dyn[i]
			case a == "-o" || a == "--out":
				if i+1 < len(argv) {
					i++
					out = i
				}
			case strings.HasPrefix(a, "--out="):
				out = i
				argv = append([]string{}, argv...)
				argv[i] = strings.TrimPrefix(a, "--out=")
			case strings.Contains(a, "://") && !strings.HasPrefix(a, "-"):
				urls = append(urls, i)
			}
		}
		if out >= 0 {
			if dir != "" {
				w.pathEffect(EffectWrite, name, path.Join(dir, argv[out]), dirDyn || args.dyn[out])
			}
			return
		}
	case "gh":
		w.ghReleaseDownload(args)
		return
	default:
		return
	}
	if dir == "" {
		dir = "."
	}
	for _, i := range urls {
		if base := urlBaseName(argv[i]); base != "" {
			w.pathEffect(EffectWrite, name, path.Join(dir, base), dirDyn || args.dyn[i])
		}
	}
}

// urlBaseName: the last path element of a URL ("" when it has none).
func urlBaseName(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return ""
	}
	base := path.Base(rest[slash:])
	if base == "/" || base == "." || base == ".." {
		return ""
	}
	return base
}

// ghReleaseDownload: gh release download [TAG] -R OWNER/REPO -p PATTERN -D DIR -O FILE connects
// to the forge and writes the assets it names.
func (w *walker) ghReleaseDownload(args words) {
	argv := args.argv
	ops := nonOptions(argv)
	if len(ops) < 2 || ops[0] != "release" || ops[1] != "download" {
		return
	}
	dir, dirDyn, file, fileDyn := ".", false, "", false
	var patterns []int
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		next := func() int {
			if i+1 < len(argv) {
				i++
				return i
			}
			return -1
		}
		switch a {
		case "-D", "--dir":
			if j := next(); j >= 0 {
				dir, dirDyn = argv[j], args.dyn[j]
			}
		case "-O", "--output":
			if j := next(); j >= 0 {
				file, fileDyn = argv[j], args.dyn[j]
			}
		case "-p", "--pattern":
			if j := next(); j >= 0 {
				patterns = append(patterns, j)
			}
		case "-R", "--repo", "-A", "--archive":
			next()
		}
	}
	w.hostEffect("gh", "github.com", "443", "https", false)
	switch {
	case file != "" && file != "-":
		w.pathEffect(EffectWrite, "gh", file, fileDyn)
	case len(patterns) > 0:
		for _, j := range patterns {
			w.pathEffect(EffectWrite, "gh", path.Join(dir, argv[j]), dirDyn || args.dyn[j] || hasGlob(argv[j]))
		}
	default:
		w.pathEffect(EffectWrite, "gh", path.Join(dir, "*"), true)
	}
}

// downloadRedirects: a downloader's output redirected into a file (curl -s URL > gradlew,
// wget -qO- URL >> .envrc) is the download written there: the write is recorded as the
// downloader's, so the rules that pair a download with its destination see it. Only workspace
// files that are not sensitive: the others are judged by the rules of their kind.
func (w *walker) downloadRedirects(effStart int, redirs []truncRedir) {
	if len(redirs) == 0 {
		return
	}
	s := w.s
	prog := ""
	for i := effStart; i < len(s.act.Effects); i++ {
		if e := s.act.Effects[i]; e.Kind == EffectConnect && s.fx().origin[i] != "redirect" {
			prog = e.Program
			break
		}
	}
	if prog == "" {
		return
	}
	for _, t := range redirs {
		for i := t.from; i < t.to && i < len(s.act.Effects); i++ {
			// Sensitive targets (known_hosts, hooks, rc files) are judged by their own rules.
			if e := s.act.Effects[i]; e.Kind == EffectWrite && e.InWorkspace && !e.Sensitive {
				s.addEffect(Effect{Kind: EffectWrite, Target: e.Target, Program: prog, Detail: "download", InWorkspace: e.InWorkspace, Sensitive: e.Sensitive, Unresolved: e.Unresolved})
			}
		}
	}
}
