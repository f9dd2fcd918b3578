package normalize

import (
	"path"
	"regexp"
	"strings"
)

// What a glob can match. A file or search tool given a glob (read_many_files
// ["~/.config/*/credentials*"], Glob "**/id_*" under the home, grep_search with include_pattern
// "/home/user/**") reads whatever the glob matches; it is judged on the credential files it can
// reach. globSecretKind intersects the glob with the secret rows of the sensitive table (two
// globs intersect when one string matches both: a product of their automata) and with the
// credential names of secret_names.go; a glob whose last element is generic (*, *.json, *.md)
// reaches a secret only through its directory (~/.ssh/*, ~/.aws/*), so that reading a
// directory's documents by extension is not taken for a credential hunt.
//
// Bounds: globs over maxGlobLen bytes or with more than maxGlobAlternatives brace alternatives
// are judged by their literal prefix only; the product is at most (len+1)² states per table row.

const (
	maxGlobLen          = 512
	maxGlobAlternatives = 16
)

// globTok: one element of a glob: a literal byte, '*' (any run without '/'), 'S' (any run), '?'
// (one byte other than '/'; character classes are read as '?', which can only widen the match).
type globTok struct {
	kind byte // 'l', '*', 'S', '?'
	c    byte
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[{") }

// parseGlob reads a gobwas-style glob ('/' separator).
func parseGlob(p string) []globTok {
	var out []globTok
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if i+1 < len(p) && p[i+1] == '*' {
				out = append(out, globTok{kind: 'S'})
				for i+1 < len(p) && p[i+1] == '*' {
					i++
				}
			} else {
				out = append(out, globTok{kind: '*'})
			}
		case '?':
			out = append(out, globTok{kind: '?'})
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				out = append(out, globTok{kind: 'l', c: c})
				continue
			}
			out = append(out, globTok{kind: '?'})
			i += j + 1
		case '\\':
			if i+1 < len(p) {
				i++
				out = append(out, globTok{kind: 'l', c: p[i]})
			}
		default:
			out = append(out, globTok{kind: 'l', c: c})
		}
	}
	return out
}

// globsIntersect reports whether some string matches both globs.
func globsIntersect(a, b []globTok) bool {
	w := len(b) + 1
	seen := make([]bool, (len(a)+1)*w)
	stack := []int{0}
	seen[0] = true
	push := func(i, j int) {
		if k := i*w + j; !seen[k] {
			seen[k] = true
			stack = append(stack, k)
		}
	}
	star := func(t globTok) bool { return t.kind == '*' || t.kind == 'S' }
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j := k/w, k%w
		if i == len(a) && j == len(b) {
			return true
		}
		if i < len(a) && star(a[i]) {
			push(i+1, j)
		}
		if j < len(b) && star(b[j]) {
			push(i, j+1)
		}
		if i == len(a) || j == len(b) {
			continue
		}
		x, y := a[i], b[j]
		if !charCompatible(x, y) {
			continue
		}
		ni, nj := i+1, j+1
		if star(x) {
			ni = i
		}
		if star(y) {
			nj = j
		}
		if ni != i || nj != j {
			push(ni, nj)
		}
	}
	return false
}

// charCompatible: one byte exists that both tokens accept.
func charCompatible(x, y globTok) bool {
	switch {
	case x.kind == 'l' && y.kind == 'l':
		return x.c == y.c
	case x.kind == 'l':
		return y.kind == 'S' || x.c != '/'
	case y.kind == 'l':
		return x.kind == 'S' || y.c != '/'
	}
	return true
}

// genericNames: documents any directory may hold; a last element that matches one of them is no
// credential name.
var genericNames = []string{"x", "x.json", "x.txt", "x.yaml", "x.yml", "x.toml", "x.md", "x.py", "x.js", "x.ts", "x.go", "x.conf",
	"x.log", "x.xml", "x.ini", "x.cfg", "x.csv", "x.html", "x.sh", "x.rs", "x.java", "x.c", "x.h"}

// genericExtGlobRE: a last element that takes every file of a type (*, *.lua, *.tar.gz).
var genericExtGlobRE = regexp.MustCompile(`^\*+(\.[A-Za-z0-9_-]+)*$`)

// secretExtRE: extensions of key, keystore and credential files.
var secretExtRE = regexp.MustCompile(`(?i)\.(pem|key|p12|pfx|jks|keystore|ppk|p8|keytab|agekey|ovpn|kdbx?|psafe3|gpg|asc|env|pgpass|netrc|htpasswd|secrets?|credentials?|token|wallet|keyring)$`)

// globSecretKind returns the secret kind of a credential file the glob can match, or "".
func (m *sensitiveMatcher) globSecretKind(g string, secretKind func(string) bool) string {
	if !hasGlobMeta(g) {
		return ""
	}
	alts := []string{g}
	if strings.Contains(g, "{") {
		alts = expandBraces(g)
	}
	if len(g) > maxGlobLen || len(alts) > maxGlobAlternatives {
		// Judged by the literal directory before the first wildcard.
		i := strings.IndexAny(g, "*?[{")
		if k := m.classify(path.Dir(g[:i]+"x") + "/x"); k != "" && secretKind(k) {
			return k
		}
		return ""
	}
	for _, alt := range alts {
		if k := m.globAltSecretKind(alt, secretKind); k != "" {
			return k
		}
	}
	return ""
}

func (m *sensitiveMatcher) globAltSecretKind(g string, secretKind func(string) bool) string {
	dir, base := path.Split(g)
	dir = strings.TrimSuffix(dir, "/")
	if !hasGlobMeta(dir) && dir != "" {
		if k := m.classify(dir + "/x"); k != "" && secretKind(k) {
			return k // ~/.ssh/*, ~/.aws/*
		}
	}
	if base == "" || base == "**" {
		return ""
	}
	if genericExtGlobRE.MatchString(base) && !secretExtRE.MatchString(base) {
		return "" // *.lua, *.json.gz: every file of a type
	}
	bt := parseGlob(base)
	for _, n := range genericNames {
		if globsIntersect(bt, parseGlob(n)) {
			return ""
		}
	}
	gt := parseGlob(g)
	if k := intersectRows(gt, m.all, secretKind); k != "" {
		return k
	}
	// A credential name (secret_names.go) in a place services or tools keep their state.
	lit := strings.NewReplacer("*", "", "?", "", "[", "", "]", "").Replace(base)
	if secretFileNameRE.MatchString(lit) && secretByName(path.Join(strings.ReplaceAll(dir, "*", "x"), lit), m.home) != "" {
		return "credentials"
	}
	return ""
}

func intersectRows(gt []globTok, rows []compiledPattern, secretKind func(string) bool) string {
	for _, cp := range rows {
		if cp.src == "" || !secretKind(cp.kind) {
			continue
		}
		// A row that takes a whole directory (**/.config/sops/**) would meet any glob with ** in
		// it at some nested path; only rows that name the file are intersected (a directory row
		// is found through the glob's literal directory).
		if last := cp.src[strings.LastIndexByte(cp.src, '/')+1:]; last == "**" || last == "*" {
			continue
		}
		if globsIntersect(gt, parseGlob(cp.src)) {
			return cp.kind
		}
	}
	return ""
}

// globSecret: the secret kind of a credential file a glob path can match, or "".
func (s *state) globSecret(g string) string {
	return s.n.sens.globSecretKind(g, func(k string) bool { return hasKind(s.n.pathEffectKinds(k), EffectSecret) })
}

// searchRoots adds, as listed roots, the literal directories of absolute or home-relative search
// patterns (grep_search include_pattern "/home/user/**", Glob pattern "~/.config/**/*.json"): a
// search reaches wherever its pattern points, whatever its working directory.
func (s *state) searchRoots(patterns []string) {
	for i, p := range patterns {
		if i >= 16 {
			break
		}
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") && p != "~" {
			continue
		}
		prefix := p
		if j := strings.IndexAny(p, "*?[{"); j >= 0 {
			prefix = path.Dir(p[:j] + "x")
		}
		before := len(s.act.Paths)
		s.addPath(prefix, RoleList)
		for _, np := range s.act.Paths[before:] {
			s.pathEffects(np)
		}
	}
}
