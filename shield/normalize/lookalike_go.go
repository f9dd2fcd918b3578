package normalize

import "strings"

// Go module typosquats. The Go ecosystem has no central registry of names: a module path is a
// code host, an owner and a repository (github.com/stretchr/testify) or a vanity root
// (golang.org/x/crypto, go.uber.org/zap). A path imitates a popular module (popular_packages.txt,
// [go]) when it is not under that module's root and differs from it in exactly one element of the
// same host, by one typing edit (an insertion, deletion, substitution or transposition:
// stretchr/testfiy, gin-gonlc/gin, golang.org/x/crpyto) in an element of four or more
// characters, or by homoglyphs and separators (str3tchr, go_chi). Another owner's repository
// of the same name (a fork) is not one edit away unless the owner's name is. FPR cost: a real
// module one letter from a popular one escalates (never blocks).

// goModuleLookalike returns the popular module root raw imitates, or "".
func goModuleLookalike(raw string) string {
	popularOnce.Do(loadPopular)
	mod, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(raw)), "@")
	mod = strings.TrimSuffix(mod, "/...")
	if mod == "" || len(mod) > 300 || !strings.Contains(mod, "/") {
		return ""
	}
	mc := strings.Split(mod, "/")
	roots := popular["go"]
	for p := range roots {
		pc := strings.Split(p, "/")
		if len(mc) >= len(pc) && strings.Join(mc[:len(pc)], "/") == p {
			return "" // the module itself or one of its packages
		}
	}
	best := ""
	for p := range roots {
		pc := strings.Split(p, "/")
		if len(mc) < len(pc) || mc[0] != pc[0] {
			continue
		}
		diff := -1
		for i := 1; i < len(pc); i++ {
			if mc[i] != pc[i] {
				if diff >= 0 {
					diff = -2
					break
				}
				diff = i
			}
		}
		if diff < 0 {
			continue
		}
		a, b := mc[diff], pc[diff]
		if len(b) >= 4 && withinOneEdit(a, b) || len(b) >= 3 && packageSkeleton(a) == packageSkeleton(b) {
			if best == "" || p < best {
				best = p
			}
		}
	}
	return best
}

// goModEdits: go mod edit -require=PATH@V and -replace=OLD=NEW@V name modules the next build
// takes, like go get: the same lookalike check.
func (w *walker) goModEdits(name string, args words) {
	argv := args.argv
	if name != "go" || len(argv) < 2 || argv[0] != "mod" || argv[1] != "edit" {
		return
	}
	for i, a := range argv[2:] {
		if i >= 64 {
			break
		}
		var mod string
		switch {
		case strings.HasPrefix(a, "-require="):
			mod = strings.TrimPrefix(a, "-require=")
		case strings.HasPrefix(a, "-replace="):
			_, mod, _ = strings.Cut(strings.TrimPrefix(a, "-replace="), "=")
		default:
			continue
		}
		if p := goModuleLookalike(mod); p != "" {
			w.s.addEffect(Effect{Kind: EffectInstall, Target: mod, Program: "go mod edit", Detail: "lookalike:" + p})
		}
	}
}
