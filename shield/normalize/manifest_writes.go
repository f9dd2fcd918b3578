package normalize

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Dependencies and images named by a write are taken as if installed. A name added to a
// manifest runs at the next install or build, whoever wrote it: a shell redirection or printf,
// sed -i, jq, a setter (npm pkg set dependencies.X), or a file tool's write or edit. So the
// text written into a dependency manifest or a container definition gets the checks an install
// gets:
//
//   - dependency manifests (requirements*.txt and constraints, pyproject.toml build requirements
//     and dependencies, setup.cfg install_requires, Pipfile, package.json dependency maps,
//     go.mod require and replace, Cargo.toml dependency tables, Gemfile gem lines): each name
//     is checked against the popular names of its registry (effects_lookalike.go,
//     lookalike_go.go); an imitation adds an install effect with Detail "lookalike:NAME";
//   - container definitions (Dockerfile/Containerfile FROM, compose and Kubernetes "image:"):
//     each image reference adds an install effect with Detail "container_image", judged with
//     the image trust data like docker run (rego/images.rego).
//
// Only the text written is read (an edit's new text, an appended fragment): names already in
// the file were judged when they were added. FPR cost: none for ordinary names; an image of an
// unknown Docker Hub namespace written into a Dockerfile escalates like running it.

// maxManifestNames bounds the names read from one written text.
const maxManifestNames = 64

var (
	pyReqLineRE      = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@,].*)?$`)
	quotedReqRE      = regexp.MustCompile(`["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;,][^"']*)?["']`)
	tomlKeyRE        = regexp.MustCompile(`^\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)["']?\s*=`)
	tomlHeaderRE     = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$`)
	gemLineRE        = regexp.MustCompile(`^\s*gem\s*\(?\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']`)
	goReqLineRE      = regexp.MustCompile(`^\s*(?:require\s+|replace\s+\S+(?:\s+\S+)?\s+=>\s+)?\(?\s*([a-z0-9.-]+\.[a-z]{2,}(?:/[A-Za-z0-9._~-]+)+)\s+v[0-9]`)
	goReplRE         = regexp.MustCompile(`=>\s*([a-z0-9.-]+\.[a-z]{2,}(?:/[A-Za-z0-9._~-]+)+)`)
	fromLineRE       = regexp.MustCompile(`(?im)^\s*FROM\s+((?:--[a-z-]+=\S+\s+)*)(\S+)(?:\s+AS\s+(\S+))?`)
	imageKeyRE       = regexp.MustCompile(`(?m)^[\s-]*["']?image["']?\s*:\s*["']?([^\s"'#]+)`)
	pyArrayKeyRE     = regexp.MustCompile(`^\s*["']?(requires|dependencies|install_requires|setup_requires|tests_require|build-requires|dev-dependencies|[A-Za-z0-9_-]+)["']?\s*=\s*\[`)
	quotedItemLineRE = regexp.MustCompile(`^["'][^"']*["']\s*,?\s*$`)
	gemDepRE         = regexp.MustCompile(`dependency\s*\(?\s*["']([A-Za-z0-9._-]+)["']`)
	cargoVersionRE   = regexp.MustCompile(`^["'][\^~=<>*]?[0-9]`)
	imageRefRE       = regexp.MustCompile(`^[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$`)
	imageFileRE      = regexp.MustCompile(`(?i)\.(png|jpe?g|gif|svg|webp|ico|bmp|avif)$`)
	npmDepKeys       = set("dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "bundleDependencies", "overrides", "resolutions")
	cargoPkgKeys     = set("name", "version", "edition", "authors", "description", "license", "license-file", "readme", "repository",
		"homepage", "documentation", "keywords", "categories", "rust-version", "publish", "build", "resolver", "members", "exclude",
		"include", "default-run", "workspace", "links", "autobins", "autoexamples", "autotests", "autobenches", "metadata")
)

// manifestDep is a dependency name and the registry it is taken from.
type manifestDep struct{ reg, name string }

// manifestKind: which manifest grammar reads clean, "" for none.
func manifestKind(clean string) string {
	base := strings.ToLower(path.Base(clean))
	switch {
	case strings.HasPrefix(base, "requirements") && (strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".in")),
		strings.HasPrefix(base, "constraints") && strings.HasSuffix(base, ".txt"),
		strings.Contains(clean, "/requirements/") && (strings.HasSuffix(base, ".txt") || strings.HasSuffix(base, ".in")):
		return "pyreq"
	case base == "pyproject.toml", base == "pipfile":
		return "pytoml"
	case base == "setup.cfg":
		return "setupcfg"
	case base == "package.json":
		return "npm"
	case base == "go.mod":
		return "gomod"
	case base == "cargo.toml":
		return "cargo"
	case base == "gemfile" || strings.HasSuffix(base, ".gemspec"):
		return "gem"
	case base == "dockerfile" || base == "containerfile" || strings.HasSuffix(base, ".dockerfile") || strings.HasPrefix(base, "dockerfile."):
		return "docker"
	case strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml"):
		return "yaml"
	}
	return ""
}

// manifestEffects judges text written to clean when clean is a dependency manifest or a
// container definition.
func (s *state) manifestEffects(clean, text string) {
	kind := manifestKind(clean)
	if kind == "" || strings.TrimSpace(text) == "" {
		return
	}
	if len(text) > maxAutorunContent {
		text = text[:maxAutorunContent]
	}
	prog := "write:" + clean
	switch kind {
	case "docker", "yaml":
		for _, ref := range writtenImages(kind, text) {
			s.addToolEffect(Effect{Kind: EffectInstall, Target: strings.ToLower(ref), Program: prog, Detail: "container_image"})
		}
		return
	}
	if kind == "pytoml" && strings.EqualFold(path.Base(clean), "pyproject.toml") {
		for _, n := range buildRequires(text) {
			s.addToolEffect(Effect{Kind: EffectInstall, Target: n, Program: prog, Detail: "build_requirement"})
		}
	}
	popularOnce.Do(loadPopular)
	for _, d := range manifestDeps(kind, text) {
		if p := lookalikeOf(d.reg, d.name); p != "" {
			s.addToolEffect(Effect{Kind: EffectInstall, Target: d.name, Program: prog, Detail: "lookalike:" + p})
		}
	}
}

// manifestDeps reads the dependency names a fragment of a manifest names.
func manifestDeps(kind, text string) []manifestDep {
	var out []manifestDep
	seen := map[manifestDep]bool{}
	add := func(reg, n string) {
		d := manifestDep{reg, n}
		if n != "" && !seen[d] && len(out) < maxManifestNames {
			seen[d] = true
			out = append(out, d)
		}
	}
	lines := strings.Split(text, "\n")
	switch kind {
	case "pyreq":
		for _, l := range lines {
			l = strings.TrimSpace(strings.SplitN(l, " #", 2)[0])
			if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "-") || strings.Contains(l, "://") {
				continue
			}
			if m := pyReqLineRE.FindStringSubmatch(l); m != nil {
				add("pypi", m[1])
			}
		}
	case "pytoml", "setupcfg":
		section, inArray, inCfgList := "", false, false
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if m := tomlHeaderRE.FindStringSubmatch(t); m != nil && !strings.Contains(t, "=") {
				section, inArray, inCfgList = strings.ToLower(m[1]), false, false
				continue
			}
			if kind == "setupcfg" {
				if k, v, ok := strings.Cut(t, "="); ok && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t") {
					k = strings.TrimSpace(k)
					inCfgList = k == "install_requires" || k == "setup_requires" || k == "tests_require" || section == "options.extras_require"
					t = strings.TrimSpace(v)
				}
				if inCfgList && t != "" {
					if m := pyReqLineRE.FindStringSubmatch(t); m != nil {
						add("pypi", m[1])
					}
				}
				continue
			}
			if m := pyArrayKeyRE.FindStringSubmatch(t); m != nil {
				key := strings.ToLower(m[1])
				inArray = key == "requires" || strings.Contains(key, "dependencies") || strings.HasSuffix(key, "requires") || section == "project.optional-dependencies" || section == "dependency-groups"
			}
			// Poetry and Pipfile tables: the keys are the names.
			if strings.HasSuffix(section, "dependencies") && strings.HasPrefix(section, "tool.poetry") || section == "packages" || section == "dev-packages" {
				if m := tomlKeyRE.FindStringSubmatch(t); m != nil && strings.ToLower(m[1]) != "python" {
					add("pypi", m[1])
				}
				continue
			}
			if inArray || strings.HasPrefix(t, `"`) || strings.HasPrefix(t, "'") {
				// an array of requirement strings, or its continuation lines in an edit
				if inArray || quotedItemLineRE.MatchString(t) {
					for _, m := range quotedReqRE.FindAllStringSubmatch(t, 16) {
						add("pypi", m[1])
					}
				}
			}
			if strings.Contains(t, "]") {
				inArray = false
			}
		}
	case "npm":
		var doc map[string]any
		if json.Unmarshal([]byte(text), &doc) == nil {
			for _, k := range sortedKeys(doc) {
				if m, ok := doc[k].(map[string]any); ok && npmDepKeys[k] {
					for _, n := range sortedKeys(m) {
						add("npm", n)
					}
				}
			}
			return out
		}
		// A fragment: "name": "version-range" pairs.
		for _, m := range npmDepPairRE.FindAllStringSubmatch(text, maxManifestNames) {
			add("npm", m[1])
		}
	case "gomod":
		for _, l := range lines {
			l = strings.SplitN(l, "//", 2)[0]
			if m := goReqLineRE.FindStringSubmatch(l); m != nil {
				add("go", m[1])
			}
			if m := goReplRE.FindStringSubmatch(l); m != nil {
				add("go", m[1])
			}
		}
	case "cargo":
		section := ""
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if m := tomlHeaderRE.FindStringSubmatch(t); m != nil && !strings.Contains(t, "=") {
				section = strings.ToLower(m[1])
				if i := strings.Index(section, "dependencies."); i >= 0 {
					add("crates", section[i+len("dependencies."):])
				}
				continue
			}
			m := tomlKeyRE.FindStringSubmatch(t)
			if m == nil {
				continue
			}
			if strings.HasSuffix(section, "dependencies") || section == "" && !cargoPkgKeys[strings.ToLower(m[1])] && cargoVersionValue(t) {
				add("crates", m[1])
			}
		}
	case "gem":
		for _, l := range lines {
			if m := gemLineRE.FindStringSubmatch(l); m != nil {
				add("rubygems", m[1])
			}
			if i := strings.Index(l, "add_dependency"); i >= 0 || strings.Contains(l, "add_runtime_dependency") || strings.Contains(l, "add_development_dependency") {
				if m := gemDepRE.FindStringSubmatch(l); m != nil {
					add("rubygems", m[1])
				}
			}
		}
	}
	return out
}

// npmDepPairRE: a "name": "range" pair whose value reads as a version range or tag.
var npmDepPairRE = regexp.MustCompile(`"(@?[a-z0-9][a-z0-9._~/-]*)"\s*:\s*"(?:[\^~<>=*]|[0-9]|latest|next|npm:|workspace:)[^"]*"`)

// cargoVersionValue: a key = value line whose value is a version string or a table with one.
func cargoVersionValue(t string) bool {
	_, v, _ := strings.Cut(t, "=")
	v = strings.TrimSpace(v)
	return cargoVersionRE.MatchString(v) || strings.HasPrefix(v, "{") && strings.Contains(v, "version")
}

// writtenImages reads the image references of a Dockerfile's FROM lines (not an earlier
// stage's name, not scratch, not a build argument) or of "image:" keys in YAML.
func writtenImages(kind, text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(r string) {
		r = strings.Trim(r, `"'`)
		if r == "" || seen[r] || len(out) >= maxManifestNames || strings.EqualFold(r, "scratch") || !imageRefRE.MatchString(strings.ToLower(r)) || imageFileRE.MatchString(r) {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	if kind == "docker" {
		stages := map[string]bool{}
		for _, m := range fromLineRE.FindAllStringSubmatch(text, maxManifestNames) {
			if !stages[strings.ToLower(m[2])] {
				add(m[2])
			}
			if m[3] != "" {
				stages[strings.ToLower(m[3])] = true
			}
		}
		sort.Strings(out)
		return out
	}
	for _, m := range imageKeyRE.FindAllStringSubmatch(text, maxManifestNames) {
		add(m[1])
	}
	return out
}

// buildRequires reads the names of a pyproject.toml's [build-system] requires array (in a
// fragment without a section header, a requires = [ … ] key): the packages every build
// installs and runs before any lock file applies (rego/build_requires.rego).
func buildRequires(text string) []string {
	var out []string
	section, in := "", false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if m := tomlHeaderRE.FindStringSubmatch(t); m != nil && !strings.Contains(t, "=") {
			section, in = strings.ToLower(m[1]), false
			continue
		}
		if section != "" && section != "build-system" {
			continue
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.Trim(strings.TrimSpace(k), `"'`) == "requires" {
			in = true
		}
		if !in {
			continue
		}
		for _, m := range quotedReqRE.FindAllStringSubmatch(t, 16) {
			if len(out) < maxManifestNames {
				out = append(out, strings.ToLower(m[1]))
			}
		}
		if strings.Contains(t, "]") {
			in = false
		}
	}
	return out
}
