package normalize

import (
	"path"
	"strings"
)

// resolvePath returns the cleaned absolute form of raw: "file://" removed, "~", "~user", "$HOME"
// and "${HOME}" expanded, relative paths joined to cwd, "." and ".." folded. ok is false for an empty
// path.
func resolvePath(raw, cwd, home string) (string, bool) {
	p := raw
	if strings.HasPrefix(p, "file://") {
		p = strings.TrimPrefix(p, "file://")
		if i := strings.IndexByte(p, '/'); i > 0 { // file://host/path
			p = p[i:]
		}
	}
	if p == "" {
		return "", false
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		p = home + p[1:]
	case strings.HasPrefix(p, "~"):
		user := p[1:]
		rest := ""
		if i := strings.IndexByte(user, '/'); i >= 0 {
			user, rest = user[:i], user[i:]
		}
		if user == "root" {
			p = "/root" + rest
		} else {
			p = "/home/" + user + rest
		}
	case p == "$HOME" || strings.HasPrefix(p, "$HOME/"):
		p = home + p[len("$HOME"):]
	case p == "${HOME}" || strings.HasPrefix(p, "${HOME}/"):
		p = home + p[len("${HOME}"):]
	}
	if !strings.HasPrefix(p, "/") {
		p = cwd + "/" + p
	}
	return path.Clean(p), true
}

// inDir reports whether p is dir or under it (both clean and absolute).
func inDir(p, dir string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// looksLikePathArg: a shell operand that names a path (contains '/', starts with '~' or '.').
func looksLikePathArg(s string) bool {
	if s == "" || strings.Contains(s, "://") || strings.ContainsAny(s, " \t\n\r;|&<>()'\"`") {
		return false
	}
	if i := strings.IndexAny(s, "/:"); i > 0 {
		if _, ok := parseHostAddr(s[:i]); ok {
			return false // 10.0.0.0/24, 192.0.2.1:80
		}
	}
	return strings.ContainsRune(s, '/') || s[0] == '~' || s[0] == '.'
}

// pathKeys are argument keys whose string values are read as paths by the generic extraction
// (lower-cased, '-' and '_' removed before the comparison; keys ending in "path", "file", "dir" or
// "directory" count too).
var pathKeys = set("path", "paths", "file", "files", "filename", "filenames", "filepath", "target", "source", "src",
	"destination", "dest", "dst", "dir", "directory", "folder", "cwd", "workdir", "workingdirectory", "root", "from", "to",
	"output", "input", "location", "notebookpath", "localfilepath", "remotefilepath", "dofilepath", "logfile")

// foldKey lower-cases a key and drops '_' and '-'.
func foldKey(k string) string {
	var b strings.Builder
	b.Grow(len(k))
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isPathKey(k string) bool {
	k = foldKey(k)
	if pathKeys[k] {
		return true
	}
	for _, suf := range []string{"path", "file", "filename", "dir", "directory", "folder"} {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// pathRoleForKey picks a role for a generic path key.
func pathRoleForKey(k string) string {
	k = strings.ToLower(k)
	switch {
	case strings.Contains(k, "source") || k == "src" || k == "from":
		return RoleSource
	case strings.Contains(k, "dest") || k == "dst" || k == "to" || strings.HasPrefix(k, "output"):
		return RoleDest
	}
	return RoleArg
}

// urlKeys are argument keys whose string values are read as request URLs by the generic extraction.
var urlKeys = set("url", "uri", "urls", "endpoint", "href", "link", "webhook", "webhookurl", "callback", "callbackurl",
	"redirect", "redirecturl", "redirecturi", "baseurl", "host", "hostname", "address", "server", "remote", "remoteurl", "target_url", "targeturl")

func isURLKey(k string) bool {
	k = foldKey(k)
	return urlKeys[k] || strings.HasSuffix(k, "url") || strings.HasSuffix(k, "uri")
}

// looksLikeHost: s could be host[:port][/path] without a scheme ("169.254.169.254/latest",
// "localhost:8080", "example.com/x").
func looksLikeHost(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\n@") || s[0] == '-' || s[0] == '/' || s[0] == '.' || s[0] == '~' {
		return false
	}
	h := s
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	if strings.HasPrefix(h, "[") {
		return strings.Contains(h, "]")
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	if h == "" {
		return false
	}
	if h == "localhost" || metadataHosts[strings.ToLower(h)] {
		return true
	}
	if _, ok := parseHostAddr(h); ok {
		return true
	}
	if !strings.Contains(h, ".") {
		return false
	}
	for _, r := range h {
		if !(r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
