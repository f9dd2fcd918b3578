package normalize

import (
	_ "embed"
	"strings"
	"sync"
)

// Typosquats: an install from a default registry of a name that imitates a popular package of the
// same registry. The popular names are data (popular_packages.txt). A name imitates a popular one
// when it is not itself popular and
//   - it is one edit away (an insertion, deletion, substitution or transposition of adjacent
//     characters: reqeusts, loadsh, expresss) from a popular name of five or more characters, or
//   - it spells the same name with other separators, a scope or homoglyphs (python_dateutil for
//     a registry that does not fold them, types-node for @types/node, 1odash, rnoment).
// The install effect stays as it is; a second install effect with Detail "lookalike:NAME"
// names the imitated package (rego/destroy.rego escalates it).

//go:embed popular_packages.txt
var popularPackagesText string

var (
	popularOnce sync.Once
	popular     map[string]map[string]bool // registry → normalised names
	popularSkel map[string]map[string]string
)

func loadPopular() {
	popular = map[string]map[string]bool{}
	popularSkel = map[string]map[string]string{}
	reg := ""
	for _, line := range strings.Split(popularPackagesText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			reg = line[1 : len(line)-1]
			popular[reg] = map[string]bool{}
			popularSkel[reg] = map[string]string{}
			continue
		}
		if reg == "" {
			continue
		}
		for _, n := range strings.Fields(line) {
			n = normPackageName(reg, n)
			popular[reg][n] = true
		}
	}
	for reg, names := range popular {
		for n := range names {
			popularSkel[reg][packageSkeleton(n)] = n
		}
	}
}

// installRegistry is the registry a package manager installs names from by default.
func installRegistry(prog string) string {
	switch prog {
	case "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx":
		return "npm"
	case "pip", "pipx", "uv", "uvx", "poetry", "pdm", "pipenv", "easy_install", "hatch", "rye":
		return "pypi"
	case "cargo", "cargo-binstall", "binstall":
		return "crates"
	case "gem", "bundle", "bundler":
		return "rubygems"
	case "go":
		return "go" // lookalike_go.go
	}
	if strings.HasPrefix(prog, "pip") {
		return "pypi" // pip3, pip3.12
	}
	return ""
}

// packageBaseName strips what an install operand adds to the name: a version or range, extras,
// markers.
func packageBaseName(reg, raw string) string {
	switch reg {
	case "npm":
		n := raw
		if strings.HasPrefix(n, "@") {
			if at := strings.IndexByte(n[1:], '@'); at >= 0 {
				n = n[:at+1]
			}
		} else if at := strings.IndexByte(n, '@'); at >= 0 {
			n = n[:at]
		}
		return n
	case "pypi":
		if i := strings.IndexAny(raw, "[=<>!~;@ ,"); i >= 0 {
			return raw[:i]
		}
		return raw
	case "crates", "rubygems":
		if i := strings.IndexAny(raw, "@=:"); i >= 0 {
			return raw[:i]
		}
	}
	return raw
}

// normPackageName is the registry's own identity of a name: PyPI folds case and treats '-', '_'
// and '.' alike (PEP 503); crates.io folds case and '-' with '_'; npm and RubyGems compare as
// written (npm names are lower case).
func normPackageName(reg, n string) string {
	switch reg {
	case "pypi":
		n = strings.ToLower(n)
		return strings.NewReplacer("_", "-", ".", "-").Replace(n)
	case "crates":
		return strings.ReplaceAll(strings.ToLower(n), "-", "_")
	}
	return strings.ToLower(n)
}

// packageSkeleton folds what a reader does not tell apart: separators and scope punctuation,
// and the common homoglyphs.
func packageSkeleton(n string) string {
	n = strings.ToLower(n)
	n = strings.NewReplacer("rn", "m", "vv", "w").Replace(n)
	var b strings.Builder
	for _, r := range n {
		switch r {
		case '-', '_', '.', '@', '/':
			continue
		case '0':
			r = 'o'
		case '1', 'i', '|':
			r = 'l'
		case '5':
			r = 's'
		case '3':
			r = 'e'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lookalikeOf returns the popular name that n imitates on reg, or "".
func lookalikeOf(reg, raw string) string {
	popularOnce.Do(loadPopular)
	if reg == "go" {
		return goModuleLookalike(raw) // lookalike_go.go: module paths, not names
	}
	names := popular[reg]
	if names == nil || raw == "" || len(raw) > 214 {
		return ""
	}
	n := normPackageName(reg, packageBaseName(reg, raw))
	if n == "" || names[n] || strings.ContainsAny(n, ":/\\") && !strings.HasPrefix(n, "@") {
		return ""
	}
	if p, ok := popularSkel[reg][packageSkeleton(n)]; ok && p != n {
		return p
	}
	if p := affixLookalike(reg, n); p != "" {
		return p
	}
	best := ""
	for p := range names {
		if len(p) < 5 || abs(len(p)-len(n)) > 1 {
			continue
		}
		if withinOneEdit(n, p) && (best == "" || p < best) {
			best = p // the smallest name: the same answer on every run
		}
	}
	if best == "" {
		best = crossRegistryLookalike(reg, n) // lookalike_cross.go
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// withinOneEdit: a and b differ by exactly one insertion, deletion, substitution or
// transposition of adjacent bytes.
func withinOneEdit(a, b string) bool {
	if a == b {
		return false
	}
	la, lb := len(a), len(b)
	if la == lb {
		i := 0
		for i < la && a[i] == b[i] {
			i++
		}
		if a[i+1:] == b[i+1:] {
			return true // substitution
		}
		return i+1 < la && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // transposition
	}
	if la > lb {
		a, b = b, a
		la, lb = lb, la
	}
	if lb-la != 1 {
		return false
	}
	i := 0
	for i < la && a[i] == b[i] {
		i++
	}
	return a[i:] == b[i+1:]
}

// lookalikeInstall records that an install from a default registry names a typosquat of a
// popular package. installEffect calls it for registry installs.
func (w *walker) lookalikeInstall(prog, raw string) {
	reg := installRegistry(prog)
	if reg == "" {
		return
	}
	if p := lookalikeOf(reg, raw); p != "" {
		w.s.addEffect(Effect{Kind: EffectInstall, Target: raw, Program: prog, Detail: "lookalike:" + p})
	}
}

// lookalikeAffixes: what typosquats add to a popular name so that it reads as a variant of the
// same package (cross-env.js, node-lodash, requests-py, axios-official).
var lookalikeAffixes = []string{"js", "node", "nodejs", "py", "python", "python3", "lib", "official", "dev", "pkg", "cli", "io", "ts", "core", "plus", "pro", "2", "3"}

// affixLookalike: n is a popular name of reg with an affix added (suffix or prefix, any
// separator), or a scope that spells a popular scoped name (@types-node/x imitates @types/node).
func affixLookalike(reg, n string) string {
	skel := packageSkeleton(n)
	for _, a := range lookalikeAffixes {
		for _, cut := range []string{strings.TrimSuffix(skel, a), strings.TrimPrefix(skel, a)} {
			if cut == skel || len(cut) < 4 {
				continue
			}
			if p, ok := popularSkel[reg][cut]; ok && p != n {
				return p
			}
		}
	}
	if scope, _, ok := strings.Cut(strings.TrimPrefix(n, "@"), "/"); ok && strings.HasPrefix(n, "@") {
		if p, ok := popularSkel[reg][packageSkeleton(scope)]; ok && strings.HasPrefix(p, "@") {
			return p
		}
	}
	return ""
}
