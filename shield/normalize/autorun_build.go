package normalize

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Files that run later, continued (autorun_code.go): build-tool wrappers and the options build
// tools start the JVM with, edits as well as whole-file writes, and files written to a forge.
//
//   - Wrapper properties (gradle/wrapper/gradle-wrapper.properties, .mvn/wrapper/
//     maven-wrapper.properties): distributionUrl and wrapperUrl are a distribution the wrapper
//     downloads and runs on the next build: "fetch-exec" from the host over plain HTTP, else
//     "fetch-run" (the rules allow the configured egress: services.gradle.org, Maven Central).
//   - JVM options (.mvn/jvm.config, .jvmopts, gradle.properties org.gradle.jvmargs and
//     kotlin.daemon.jvmargs) are read as JAVA_TOOL_OPTIONS: -javaagent/-agentpath/-Xbootclasspath
//     load code; org.gradle.java.home names the JDK the build runs; .mvn/maven.config's
//     -Dmaven.ext.class.path loads extensions into Maven. Code from a file outside the workspace
//     and the build tools' own caches is "exec-foreign".
//   - Edits (Edit, MultiEdit, Cline replace_in_file SEARCH/REPLACE, Codex apply_patch Update
//     File) are judged on the text they put in the file: the new strings, the REPLACE sections,
//     a hunk's added and context lines. Shield does not read the file on the decision path, so
//     what the edit leaves unchanged is not seen; what it adds is.
//   - A forge tool that commits a file (GitHub MCP create_or_update_file and push_files, GitLab
//     commit actions) writes that file in the repository: it is a write of that path, and its
//     content is judged as any file that runs later.

// Autorun kinds of this file.
const (
	autorunWrapper = "wrapper" // build-tool wrapper properties: the distribution URL
	autorunJVM     = "jvm"     // a file of JVM options
	autorunGradle  = "gradle"  // gradle.properties: JVM options and the JDK in properties
	autorunMvnCfg  = "mvncfg"  // .mvn/maven.config: Maven's own options
	autorunPyProj  = "pyproj"  // pyproject.toml: the build backend's own code path
	autorunJust    = "just"    // justfile: indented recipe lines and backticks are shell
)

// autorunBuildKind: the kinds of this file, "" for none.
func autorunBuildKind(clean string) string {
	base := strings.ToLower(path.Base(clean))
	switch {
	case base == "gradle-wrapper.properties" || base == "maven-wrapper.properties":
		return autorunWrapper
	case strings.HasSuffix(clean, "/.mvn/jvm.config") || base == ".jvmopts" || base == ".sbtopts":
		return autorunJVM
	case strings.HasSuffix(clean, "/.mvn/maven.config"):
		return autorunMvnCfg
	case base == "gradle.properties":
		return autorunGradle
	case base == "gradlew" || base == "mvnw":
		return autorunShell
	case base == "pyproject.toml":
		return autorunPyProj
	case base == "justfile" || base == ".justfile" || strings.HasSuffix(base, ".just"):
		return autorunJust
	case base == "taskfile.yml" || base == "taskfile.yaml" || base == "taskfile.dist.yml" || base == "taskfile.dist.yaml":
		return autorunCI // go-task: cmds: lists are shell, read as CI steps are
	}
	return ""
}

// propertyLines reads Java properties: key[=: ]value per line, "#"/"!" comments, "\:" "\="
// unescaped, a trailing backslash continuing the value.
func propertyLines(content string) [][2]string {
	var out [][2]string
	lines := strings.Split(content, "\n")
	for i := 0; i < len(lines) && len(out) < 256; i++ {
		l := strings.TrimSpace(strings.TrimSuffix(lines[i], "\r"))
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + strings.TrimSpace(lines[i])
		}
		if l == "" || l[0] == '#' || l[0] == '!' {
			continue
		}
		k, v := l, ""
		if j := strings.IndexAny(l, "=: \t"); j >= 0 {
			k, v = l[:j], strings.TrimLeft(l[j+1:], " \t=:")
		}
		v = strings.NewReplacer(`\:`, ":", `\=`, "=", `\ `, " ", `\\`, `\`).Replace(v)
		out = append(out, [2]string{strings.TrimSpace(k), v})
	}
	return out
}

// jvmOptionsCommand: a command that sets opts as the JVM's options, walked for what they load.
func jvmOptionsCommand(opts string) string {
	opts = strings.TrimSpace(opts)
	if opts == "" {
		return ""
	}
	return "JAVA_TOOL_OPTIONS=" + shellQuoteArg(opts) + " true"
}

// autorunBuildCommands: the shell the build kinds run, to walk.
func autorunBuildCommands(kind, content string) []string {
	var out []string
	switch kind {
	case autorunJVM:
		var opts []string
		for _, l := range strings.Split(content, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				opts = append(opts, t)
			}
		}
		out = append(out, jvmOptionsCommand(strings.Join(opts, " ")))
	case autorunGradle:
		for _, kv := range propertyLines(content) {
			switch strings.ToLower(kv[0]) {
			case "org.gradle.jvmargs", "kotlin.daemon.jvmargs", "org.gradle.java.home.jvmargs":
				out = append(out, jvmOptionsCommand(kv[1]))
			case "org.gradle.java.home":
				if kv[1] != "" {
					out = append(out, shellQuoteArg(strings.TrimRight(kv[1], "/")+"/bin/java")+" -version")
				}
			}
		}
	case autorunPyProj:
		// [build-system] backend-path: directories the build frontend imports the backend from
		// (PEP 517: inside the source tree; elsewhere, code from there runs on every build).
		for _, m := range backendPathRE.FindAllStringSubmatch(content, 4) {
			for _, q := range quotedRE.FindAllStringSubmatch(m[1], 8) {
				out = append(out, "python3 "+shellQuoteArg(strings.TrimRight(q[1], "/")+"/__init__.py"))
			}
		}
	case autorunJust:
		var recipe []string
		for _, l := range strings.Split(content, "\n") {
			if t := strings.TrimLeft(l, " \t"); t != l && t != "" && !strings.HasPrefix(t, "#") {
				recipe = append(recipe, strings.TrimLeft(t, "@-"))
			}
			for _, m := range justBacktickRE.FindAllStringSubmatch(l, 4) {
				recipe = append(recipe, m[1])
			}
		}
		out = append(out, strings.Join(joinContinued(recipe), "\n"))
	case autorunMvnCfg:
		var opts []string
		for _, w := range strings.Fields(content) {
			if v, ok := strings.CutPrefix(w, "-Dmaven.ext.class.path="); ok {
				for _, p := range strings.Split(v, ":") {
					opts = append(opts, "-javaagent:"+p) // extension jars Maven loads: code
				}
			}
		}
		out = append(out, jvmOptionsCommand(strings.Join(opts, " ")))
	}
	return out
}

var (
	justBacktickRE = regexp.MustCompile("^[A-Za-z_][A-Za-z0-9_-]*\\s*:=\\s*`([^`]+)`")
	backendPathRE  = regexp.MustCompile(`(?m)^\s*backend-path\s*=\s*\[([^\]]*)\]`)
	quotedRE       = regexp.MustCompile(`["']([^"']+)["']`)
)

// autorunBuildFindings: what the build kinds do that is read from their data, not walked.
func autorunBuildFindings(kind, content string) []Effect {
	var out []Effect
	if kind != autorunWrapper {
		return nil
	}
	keyed := false
	for _, kv := range propertyLines(content) {
		k := strings.ToLower(kv[0])
		if k != "distributionurl" && k != "wrapperurl" {
			continue
		}
		keyed = true
		u, err := url.Parse(strings.TrimSpace(kv[1]))
		if err != nil || u.Host == "" {
			// A distribution the wrapper cannot be seen to fetch from a host (a file: URL, a
			// path): code from wherever that is.
			out = append(out, Effect{Kind: EffectAutorun, Target: "(unresolved)", Detail: "fetch-run", Unresolved: true})
			continue
		}
		detail := "fetch-run"
		if strings.EqualFold(u.Scheme, "http") {
			detail = "fetch-exec" // plain HTTP: anyone on the path replaces the build tool
		}
		out = append(out, Effect{Kind: EffectAutorun, Target: strings.ToLower(u.Hostname()), Detail: detail})
	}
	if !keyed {
		// A fragment (sed's replacement, an edit of part of a line): the hosts it names are
		// where the distribution now comes from.
		for _, m := range fragmentHostRE.FindAllStringSubmatch(content, 8) {
			detail, h := "fetch-run", m[2]
			if h == "" {
				h = m[4]
			}
			if strings.EqualFold(m[1], "http") {
				detail = "fetch-exec"
			}
			out = append(out, Effect{Kind: EffectAutorun, Target: strings.ToLower(h), Detail: detail})
		}
	}
	return out
}

// fragmentHostRE: a URL's scheme and host (backslash-escaped colons of properties allowed), or a
// bare IPv4 address.
var fragmentHostRE = regexp.MustCompile(`(?i)\b(https?|ftp)\\?://([a-z0-9.-]+)|\b()([0-9]{1,3}(?:\.[0-9]{1,3}){3})\b`)

// buildToolCaches: directories under the home where build tools keep what they downloaded from
// their registries (a JaCoCo agent in ~/.m2/repository is the build's own).
var buildToolCaches = []string{"/.m2/repository/", "/.gradle/caches/", "/.gradle/wrapper/dists/", "/.ivy2/", "/.sbt/", "/.cache/coursier/"}

// foreignCodeFile reports whether a file run or loaded as code is neither the workspace's, the
// system's nor a build tool's cache.
func (s *state) foreignCodeFile(p string) bool {
	if !strings.HasPrefix(p, "/") || inDir(p, s.n.opt.Workspace) {
		return false
	}
	for _, d := range systemCodeDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return false
		}
	}
	if strings.HasPrefix(p, s.n.opt.Home+"/") {
		rest := strings.TrimPrefix(p, s.n.opt.Home)
		for _, c := range buildToolCaches {
			if strings.HasPrefix(rest, c) {
				return false
			}
		}
	}
	return true
}

// scratchDirs: directories anyone on the host can write to.
var scratchDirs = []string{"/tmp/", "/var/tmp/", "/dev/shm/", "/run/shm/"}

func inScratch(p string) bool {
	for _, d := range scratchDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// editedText: the text an edit puts in the file at clean. doc is the call's content: an
// apply_patch document (the added and context lines of the file's hunks, or an added file's
// lines), a SEARCH/REPLACE diff (the REPLACE sections), else the text itself (a write's content,
// an edit's new strings).
func (s *state) editedText(doc, clean string) string {
	switch {
	case strings.Contains(doc, "*** Begin Patch"):
		return s.patchText(doc, clean)
	case searchReplaceRE.MatchString(doc):
		return replaceSections(doc)
	}
	return doc
}

// patchText: the added and context lines of the apply_patch sections for clean.
func (s *state) patchText(doc, clean string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if kind, p := patchHeader(l); kind != "" {
			c, ok := resolvePath(p, s.cwd, s.n.opt.Home)
			in = ok && c == clean && kind != patchDelete
			continue
		}
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "*** Move to: ") {
			c, ok := resolvePath(strings.TrimPrefix(t, "*** Move to: "), s.cwd, s.n.opt.Home)
			in = ok && c == clean
			continue
		}
		if !in || l == "" {
			continue
		}
		if l[0] == '+' || l[0] == ' ' {
			b.WriteString(l[1:])
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// searchReplaceRE: Cline's and Aider's SEARCH/REPLACE markers.
var searchReplaceRE = regexp.MustCompile(`(?m)^(?:-{3,}|<{3,})\s*SEARCH\s*$`)

// replaceSections: the REPLACE parts of a SEARCH/REPLACE diff (between "=======" and the
// REPLACE marker).
func replaceSections(doc string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		switch {
		case strings.HasPrefix(t, "=======") && strings.Trim(t, "=") == "":
			in = true
			continue
		case strings.HasSuffix(t, "REPLACE") && (strings.HasPrefix(t, "+++") || strings.HasPrefix(t, ">>>")):
			in = false
			continue
		case strings.HasSuffix(t, "SEARCH") && (strings.HasPrefix(t, "---") || strings.HasPrefix(t, "<<<")):
			in = false
			continue
		}
		if in {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// forgeFileWrites: files a forge tool commits (path and content at the top level of the
// arguments, or in files[]/actions[] items): a write of the path, judged for what it runs later.
func (s *state) forgeFileWrites() {
	a := s.act
	if a.Class != ClassVCSPush && a.Class != ClassVCS {
		return
	}
	var pairs [][2]string
	add := func(m map[string]any) {
		p, _ := firstString(m, "path", "file_path", "filePath", "filename")
		c, ok := firstString(m, "content", "contents", "new_content")
		if p != "" && ok && len(pairs) < 64 {
			pairs = append(pairs, [2]string{p, c})
		}
	}
	add(a.Args)
	for _, k := range []string{"files", "actions", "changes"} {
		if items, ok := a.Args[k].([]any); ok {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					add(m)
				}
			}
		}
	}
	for _, pc := range pairs {
		clean, ok := resolvePath(pc[0], s.cwd, s.n.opt.Home)
		if !ok {
			continue
		}
		s.addToolEffect(Effect{Kind: EffectWrite, Target: clean, Program: a.Tool, Detail: "forge", InWorkspace: inDir(clean, s.n.opt.Workspace)})
		s.autorunEffects(clean, pc[1])
	}
}

func firstString(m map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			return v, true
		}
	}
	return "", false
}
