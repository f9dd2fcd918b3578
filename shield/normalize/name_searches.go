package normalize

import "strings"

// Searches by credential file name. A locate, fd or find whose name pattern matches a credential
// of the sensitive table (wallet.dat, id_rsa, *.kdbx, .env, *.pem, keystore.json …) anywhere
// outside the workspace is reconnaissance for key files: it prints names only, but those names are
// the list an attacker reads next. nameSearchEffects adds a secret effect (Detail "name search"),
// which keeps the call outside the positive-security envelope (a human decides); reading what
// was found is already a read (find_secrets.go). The pattern is matched as ROOT/**/PATTERN against
// the table by the glob matcher of glob_reach.go, so the table, not this file, says what a
// credential name is. Searches inside the workspace (fd -e py, find . -name '*.pem') are the
// workspace's business.

// DetailNameSearch marks a search for credential files by name.
const DetailNameSearch = "name search"

// nameSearchProgs: programs whose operands are name patterns searched over the whole disk (no
// roots) or under roots (fd PATTERN [ROOT…]).
var nameSearchProgs = map[string]string{"locate": "disk", "mlocate": "disk", "plocate": "disk", "slocate": "disk",
	"fd": "roots", "fdfind": "roots", "bfs": "find", "find": "find", "gfind": "find"}

// fdValueOpts: fd options that take a value.
var fdValueOpts = set("-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "-E", "--exclude",
	"-x", "--exec", "-X", "--exec-batch", "-j", "--threads", "-S", "--size", "--changed-within", "--changed-before",
	"-o", "--owner", "--base-directory", "--path-separator", "--search-path", "-c", "--color", "--max-results", "--ignore-file",
	"-d", "-l", "--limit", "-n", "-D", "--database", "--format")

// nameSearchEffects: see the file comment.
func (s *state) nameSearchEffects() {
	for i, c := range s.act.Commands {
		if i >= 256 {
			return
		}
		mode, ok := nameSearchProgs[c.Name]
		if !ok || len(c.Args) == 0 || len(c.Args) > 128 {
			continue
		}
		var pats, roots []string
		switch mode {
		case "disk":
			roots = []string{"/"}
			for k := 0; k < len(c.Args); k++ {
				a := c.Args[k]
				if strings.HasPrefix(a, "-") {
					if fdValueOpts[a] && k+1 < len(c.Args) {
						k++
					}
					continue
				}
				pats = append(pats, a)
			}
		case "roots":
			var ops []string
			for k := 0; k < len(c.Args); k++ {
				a := c.Args[k]
				if (a == "-g" || a == "--glob") && k+1 < len(c.Args) {
					continue
				}
				if a == "--search-path" && k+1 < len(c.Args) {
					roots = append(roots, c.Args[k+1])
					k++
					continue
				}
				if strings.HasPrefix(a, "-") {
					if fdValueOpts[a] && k+1 < len(c.Args) {
						k++
					}
					continue
				}
				ops = append(ops, a)
			}
			if len(ops) == 0 {
				continue
			}
			pats = ops[:1]
			roots = append(roots, ops[1:]...)
			if len(roots) == 0 {
				roots = []string{"."}
			}
		case "find":
			k := 0
			for k < len(c.Args) && !strings.HasPrefix(c.Args[k], "-") && c.Args[k] != "(" && c.Args[k] != "!" {
				roots = append(roots, c.Args[k])
				k++
			}
			if len(roots) == 0 {
				roots = []string{"."}
			}
			for ; k+1 < len(c.Args); k++ {
				if a := c.Args[k]; a == "-name" || a == "-iname" {
					pats = append(pats, c.Args[k+1])
					k++
				}
			}
		}
		for _, r := range roots {
			if r == "" || isUnresolvedText(r) {
				continue
			}
			clean, ok := resolvePath(r, s.cwd, s.n.opt.Home)
			if !ok || inDir(clean, s.n.opt.Workspace) {
				continue
			}
			for j, p := range pats {
				if j >= 8 || len(p) > 256 {
					continue
				}
				// An anchored literal regex (fd '^\.env$') or an exact basename (locate -b '\id_rsa')
				// names the file as a glob would.
				p = strings.ReplaceAll(strings.TrimSuffix(strings.TrimLeft(p, "\\^"), "$"), "\\.", ".")
				if p == "" || strings.Contains(p, "/") || isUnresolvedText(p) {
					continue
				}
				g := strings.TrimSuffix(clean, "/") + "/**/" + p
				if k := s.globSecret(g); k != "" {
					s.addToolEffect(Effect{Kind: EffectSecret, Target: g, Program: c.Name, Detail: DetailNameSearch + " " + k, Sensitive: true})
				}
			}
		}
	}
}
