package normalize

import (
	"regexp"
	"strings"
)

// Names-only listings of secret stores: commands that list which secrets exist (their names,
// types, dates) and never print a value. They are no secret read (secretSources skips them); the
// commands next to them that print values (kubectl get secret -o yaml, aws secretsmanager
// get-secret-value, vault kv get, op item get) stay secret sources.
//
//   - kubectl/oc get secrets with no output option, -o name or wide, or custom-columns/jsonpath
//     whose every field is the object's name, namespace, labels, uid, dates, type or kind (not
//     data, stringData or annotations: kubectl's last-applied annotation carries the data);
//   - aws secretsmanager list-secrets (names, ARNs, tags; values only come with get-secret-value);
//   - vault list / vault kv list (key names);
//   - op item|vault|document list (titles and ids; fields only come with op item get).

// kubeNameFieldRE: a field path that shows no value of a Secret.
var kubeNameFieldRE = regexp.MustCompile(`^\.(metadata\.(name|namespace|uid|creationTimestamp|deletionTimestamp|resourceVersion|generation|labels(\.[A-Za-z0-9_./\\-]+)?)|type|kind|apiVersion|immutable)$`)

var jsonpathGroupRE = regexp.MustCompile(`\{([^{}]*)\}`)

// kubeFieldsNamesOnly: an output format value (after "-o") shows names only.
func kubeFieldsNamesOnly(v string) bool {
	f, spec, _ := strings.Cut(v, "=")
	switch f {
	case "name", "wide":
		return spec == ""
	case "custom-columns":
		if spec == "" {
			return false
		}
		for _, col := range strings.Split(spec, ",") {
			_, expr, ok := strings.Cut(col, ":")
			if !ok || !kubeNameFieldRE.MatchString(expr) {
				return false
			}
		}
		return true
	case "jsonpath":
		if spec == "" || strings.Count(spec, "{") != strings.Count(spec, "}") {
			return false
		}
		groups := jsonpathGroupRE.FindAllStringSubmatch(spec, 64)
		if len(groups) == 0 || strings.Count(spec, "{") != len(groups) {
			return false
		}
		for _, g := range groups {
			x := strings.TrimSpace(g[1])
			switch {
			case x == "end":
				continue
			case len(x) >= 2 && x[0] == '"' && x[len(x)-1] == '"' && !strings.ContainsAny(x[1:len(x)-1], `"{}`):
				continue
			}
			x = strings.TrimSpace(strings.TrimPrefix(x, "range "))
			x = strings.TrimPrefix(x, ".items[*]")
			if x == "" && strings.HasPrefix(strings.TrimSpace(g[1]), "range ") {
				continue
			}
			if !kubeNameFieldRE.MatchString(x) {
				return false
			}
		}
		return true
	}
	return false
}

// kubeOutputNamesOnly: every output option of a kubectl argv shows names only (none given is
// the default table: names, types, data counts).
func kubeOutputNamesOnly(argv []string) bool {
	for i, a := range argv {
		var v string
		switch {
		case a == "--":
			return true
		case a == "-o" || a == "--output":
			if i+1 >= len(argv) {
				return false
			}
			v = argv[i+1]
		case strings.HasPrefix(a, "--output="):
			v = a[len("--output="):]
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			v = strings.TrimPrefix(a[2:], "=")
		case strings.HasPrefix(a, "--template"), strings.HasPrefix(a, "--show-managed-fields"):
			return false
		default:
			continue
		}
		if isUnresolvedText(v) || !kubeFieldsNamesOnly(v) {
			return false
		}
	}
	return true
}

// secretListingNamesOnly: the command lists names in a secret store (see above).
func secretListingNamesOnly(name string, ws, argv []string) bool {
	first := func(words ...string) bool { // the words, in order, at the start of ws
		if len(ws) < len(words) {
			return false
		}
		for i, w := range words {
			if ws[i] != w {
				return false
			}
		}
		return true
	}
	switch name {
	case "kubectl", "oc":
		return len(ws) >= 2 && ws[0] == "get" && kubeOutputNamesOnly(argv) &&
			(ws[1] == "secret" || ws[1] == "secrets" || strings.HasPrefix(ws[1], "secret/") || strings.HasPrefix(ws[1], "secrets/"))
	case "aws":
		return first("secretsmanager", "list-secrets") && !hasWord(argv, "--debug")
	case "vault":
		return first("list") || first("kv", "list")
	case "op":
		return len(ws) == 2 && (ws[0] == "item" || ws[0] == "vault" || ws[0] == "document") && (ws[1] == "list" || ws[1] == "ls")
	}
	return false
}
