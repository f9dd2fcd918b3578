package normalize

import "sort"

// Typosquats across ecosystems: a name misspelt from a popular package of another registry
// (npm install reqeusts imitates PyPI's requests; pip install expresss imitates npm's express).
// Squatters register the misspellings of famous names wherever they can, and an agent that
// mixes up ecosystems reaches for them. A name that is not popular on its own registry, and is
// one typing edit (substitution, transposition, insertion, deletion) from a popular name of
// six or more characters of another registry (five-letter names collide: npm serve, crates serde), is a possible typosquat; the exact name of
// another registry's package is not (many projects publish under the same name everywhere).
// FPR cost: a real, unlisted package one letter away from another ecosystem's famous name
// escalates (never blocks).

// crossRegistryLookalike returns the popular name of another registry that n (normalised for
// reg) imitates, or "".
func crossRegistryLookalike(reg, n string) string {
	if len(n) < 6 {
		return ""
	}
	regs := make([]string, 0, len(popular))
	for r := range popular {
		if r != reg {
			regs = append(regs, r)
		}
	}
	sort.Strings(regs)
	for _, r := range regs {
		m := normPackageName(r, n)
		if popular[r][m] {
			return "" // the same name as a popular package elsewhere: not a misspelling
		}
		best := ""
		for p := range popular[r] {
			if len(p) < 6 || abs(len(p)-len(m)) > 1 {
				continue
			}
			if withinOneEdit(m, p) && (best == "" || p < best) {
				best = p
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}
