package normalize

import (
	"regexp"
	"strconv"
	"strings"
)

// HTTP DELETE from a command line. `curl -X DELETE URL`, `http DELETE URL`, `xh delete URL`,
// `wget --method=DELETE URL` remove state on the server the URL names: an index, a bucket, a
// database, a record. httpDeletes adds a delete effect, Target "http:HOST[:PORT]PATH", Detail
// "http DELETE", with ",bulk" when the path names everything at once (Elasticsearch's _all, a
// wildcard index pattern, "*"). A delete on this host (a test index of a local search engine) is
// the developer's own; elsewhere it changes shared state (policies/default/rego/http_deletes.rego).

// bulkPathRE: a path segment that names every index, database or object ("_all", "*", "logs-*").
var bulkPathRE = regexp.MustCompile(`(?i)(^|/)(_all|\*|[^/]*\*[^/]*|%2a[^/]*)(/|$|\?)`)

var httpMethodWords = set("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")

func (w *walker) httpDeletes(pa parsedArgs, name string, ops words) {
	method := ""
	argv := ops.argv
	switch name {
	case "curl", "curlie":
		method, _, _ = pa.val("-X", "--request")
	case "wget":
		method, _, _ = pa.val("--method")
	case "http", "https", "xh", "xhs":
		if len(argv) > 0 && httpMethodWords[strings.ToUpper(argv[0])] {
			method, argv = argv[0], argv[1:]
		}
	default:
		return
	}
	if !strings.EqualFold(strings.TrimSpace(method), "DELETE") {
		return
	}
	for i, a := range argv {
		if i >= 16 {
			break
		}
		if a == "" || strings.HasPrefix(a, "-") || isUnresolvedText(a) {
			continue
		}
		u := parseURL(a, URLConnect, true)
		if u.Host == "" {
			continue
		}
		target := "http:" + u.Host
		if u.Port != 0 {
			target += ":" + strconv.Itoa(u.Port)
		}
		target += u.Path
		detail := "http DELETE"
		if bulkPathRE.MatchString(u.Path) {
			detail += ",bulk"
		}
		if len(target) > 200 {
			target = target[:200]
		}
		w.s.addEffect(Effect{Kind: EffectDelete, Target: target, Program: name, Detail: detail})
		break // the first URL: curl's others are rarely deletes of other services
	}
}
