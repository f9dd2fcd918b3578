package normalize

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Structured tools that are a CLI in disguise: MCP servers and runtimes whose tools take the
// parts of a command line as fields (Amazon Q's use_aws {service_name, operation_name,
// parameters}, the Kubernetes MCP servers' kubectl_delete {resourceType, name, namespace}, helm
// installs, a kubectl tool taking the arguments without the program name). Each is normalised as
// the command line it stands for, walked by the same command specs as a shell call, so the same
// effects come out (a delete-table is a delete, a get of Secrets a secret read, a chart from an IP
// an install off the registry). A call whose fields cannot be read as that command line (a missing
// required field, a value that is no scalar) gets no equivalent and stays what the catalog says
// (unknown when it says nothing: ESCALATE).

// maxEquivalentBytes bounds a synthesised command line.
const maxEquivalentBytes = 64 << 10

// cliEquivalent returns the shell command line a structured tool call stands for, or "".
func cliEquivalent(tool string, args map[string]any) string {
	b := cliBuilders[strings.ToLower(tool)]
	if b == nil {
		b = gitToolBuilders[strings.ToLower(tool)] // reach_tools.go
	}
	if b == nil {
		b = forgeToolBuilders[strings.ToLower(tool)] // cli_equivalent_forge.go
	}
	if b == nil {
		return ""
	}
	w := &cliWords{args: args}
	b(w)
	if w.bad || len(w.words) == 0 || w.n > maxEquivalentBytes {
		return ""
	}
	return strings.Join(w.words, " ")
}

// cliWords accumulates the words of a command line, each shell-quoted.
type cliWords struct {
	args  map[string]any
	words []string
	n     int
	bad   bool
}

func (w *cliWords) lit(s ...string) {
	for _, x := range s {
		w.words = append(w.words, x)
		w.n += len(x) + 1
	}
}

func (w *cliWords) word(s string) {
	q := cliQuote(s)
	w.words = append(w.words, q)
	w.n += len(q) + 1
}

// str is the first key present as a scalar string (numbers and booleans spelled out); "" when
// none. A present key holding an object or list makes the call unreadable as a command line.
func (w *cliWords) str(keys ...string) string {
	for _, k := range keys {
		v, ok := w.args[k]
		if !ok || v == nil {
			continue
		}
		switch x := v.(type) {
		case string:
			return x
		case bool, float64, int, int64, json.Number:
			return fmt.Sprint(x)
		default:
			w.bad = true
			return ""
		}
	}
	return ""
}

func (w *cliWords) truthy(keys ...string) bool {
	for _, k := range keys {
		switch x := w.args[k].(type) {
		case bool:
			if x {
				return true
			}
		case string:
			if x != "" && !strings.EqualFold(x, "false") {
				return true
			}
		}
	}
	return false
}

// need adds the value of the first key present as one word; a call without it is unreadable.
func (w *cliWords) need(keys ...string) string {
	s := w.str(keys...)
	if s == "" {
		w.bad = true
		return ""
	}
	w.word(s)
	return s
}

// opt adds flag and value when a key is present.
func (w *cliWords) opt(flag string, keys ...string) {
	if s := w.str(keys...); s != "" {
		w.lit(flag)
		w.word(s)
	}
}

// argv adds a command given as a list of words or as one string (then parsed as shell text, which
// is what the server runs it as: `sh -c` or its argv).
func (w *cliWords) argv(keys ...string) {
	for _, k := range keys {
		switch x := w.args[k].(type) {
		case nil:
			continue
		case string:
			if x == "" {
				continue
			}
			w.lit(x)
			w.n += len(x)
			return
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					w.bad = true
					return
				}
				w.word(s)
			}
			if len(x) > 0 {
				return
			}
		default:
			w.bad = true
			return
		}
	}
	w.bad = true
}

func cliQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:=@,+%", r)))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// kebab spells a parameter name as the CLI's option: TableName and table_name become table-name.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_':
			b.WriteByte('-')
		case unicode.IsUpper(r):
			if i > 0 && s[i-1] != '-' && s[i-1] != '_' {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// kubeTarget adds "<resourceType> [name]", the namespace and the selectors of the Kubernetes MCP
// servers' tools (Flux159 mcp-server-kubernetes: resourceType, name, namespace, allNamespaces,
// labelSelector; containers/kubernetes-mcp-server: kind, name, namespace).
func (w *cliWords) kubeTarget() {
	w.need("resourceType", "resource_type", "kind", "resource")
	if s := w.str("name", "resourceName"); s != "" {
		w.word(s)
	}
	w.kubeScope()
}

func (w *cliWords) kubeScope() {
	w.opt("-n", "namespace")
	if w.truthy("allNamespaces", "all_namespaces") {
		w.lit("-A")
	}
	w.opt("-l", "labelSelector", "label_selector")
	w.opt("--context", "context")
}

var cliBuilders = map[string]func(*cliWords){
	// Amazon Q Developer CLI use_aws {service_name, operation_name, parameters, region, profile_name}.
	"use_aws": func(w *cliWords) {
		w.lit("aws")
		w.need("service_name")
		w.need("operation_name")
		if p, ok := w.args["parameters"].(map[string]any); ok {
			keys := sortedKeys(p)
			for _, k := range keys {
				w.lit("--" + cliQuote(kebab(k)))
				switch x := p[k].(type) {
				case bool:
					if !x {
						w.words[len(w.words)-1] = "--no-" + cliQuote(kebab(k))
					}
				case string:
					w.word(x)
				default:
					j, err := json.Marshal(x)
					if err != nil {
						w.bad = true
						return
					}
					w.word(string(j))
				}
			}
		} else if w.args["parameters"] != nil {
			w.bad = true
		}
		w.opt("--region", "region")
		w.opt("--profile", "profile_name")
	},
	// A kubectl tool given the arguments without the program name ({command: "get pods -A"}).
	"kubectl": func(w *cliWords) {
		s := strings.TrimSpace(w.str("command", "args"))
		if s == "" {
			w.bad = true
			return
		}
		if f := strings.Fields(s); f[0] != "kubectl" {
			w.lit("kubectl")
		}
		w.lit(s)
	},
	// Flux159 mcp-server-kubernetes. kubectl_get answers JSON (whole objects) unless told otherwise.
	"kubectl_get":      func(w *cliWords) { w.lit("kubectl", "get"); w.kubeTarget(); w.kubeOutput("json") },
	"kubectl_list":     func(w *cliWords) { w.lit("kubectl", "get"); w.kubeTarget(); w.kubeOutput("json") },
	"kubectl_describe": func(w *cliWords) { w.lit("kubectl", "describe"); w.kubeTarget() },
	"kubectl_delete": func(w *cliWords) {
		w.lit("kubectl", "delete")
		w.kubeTarget()
		if w.truthy("force") {
			w.lit("--force", "--grace-period=0")
		}
	},
	"kubectl_logs": func(w *cliWords) {
		w.lit("kubectl", "logs")
		w.need("name")
		w.opt("-c", "container")
		w.kubeScope()
	},
	"kubectl_scale": func(w *cliWords) {
		w.lit("kubectl", "scale")
		w.word(w.strOr("deployment", "resourceType") + "/" + w.str("name"))
		w.opt("--replicas", "replicas")
		w.kubeScope()
	},
	"kubectl_rollout": func(w *cliWords) {
		w.lit("kubectl", "rollout")
		w.need("subCommand")
		w.word(w.strOr("deployment", "resourceType") + "/" + w.str("name"))
		w.kubeScope()
	},
	"kubectl_generic": func(w *cliWords) {
		w.lit("kubectl")
		w.need("command")
		for _, k := range []string{"subCommand", "resourceType", "name"} {
			if s := w.str(k); s != "" {
				w.word(s)
			}
		}
		w.kubeScope()
		w.opt("-o", "outputFormat")
		w.rest("flags", "args")
	},
	"exec_in_pod": func(w *cliWords) {
		w.lit("kubectl", "exec")
		w.need("name", "pod")
		w.opt("-c", "container")
		w.kubeScope()
		w.lit("--")
		w.argv("command")
	},
	"port_forward": func(w *cliWords) {
		w.lit("kubectl", "port-forward")
		w.word(w.strOr("pod", "resourceType") + "/" + w.str("resourceName", "name"))
		w.word(w.str("localPort") + ":" + w.str("targetPort"))
		w.kubeScope()
	},
	"install_helm_chart": func(w *cliWords) { w.helm("install") },
	"upgrade_helm_chart": func(w *cliWords) { w.helm("upgrade") },
	"uninstall_helm_chart": func(w *cliWords) {
		w.lit("helm", "uninstall")
		w.need("name")
		w.opt("-n", "namespace")
	},
	// containers/kubernetes-mcp-server.
	"pods_get":               func(w *cliWords) { w.lit("kubectl", "get", "pod"); w.need("name"); w.kubeScope(); w.kubeOutput("yaml") },
	"pods_list":              func(w *cliWords) { w.lit("kubectl", "get", "pods", "-A") },
	"pods_list_in_namespace": func(w *cliWords) { w.lit("kubectl", "get", "pods"); w.kubeScope() },
	"pods_delete":            func(w *cliWords) { w.lit("kubectl", "delete", "pod"); w.need("name"); w.kubeScope() },
	"pods_log":               func(w *cliWords) { w.lit("kubectl", "logs"); w.need("name"); w.opt("-c", "container"); w.kubeScope() },
	"pods_top":               func(w *cliWords) { w.lit("kubectl", "top", "pods"); w.kubeScope() },
	"pods_exec": func(w *cliWords) {
		w.lit("kubectl", "exec")
		w.need("name")
		w.opt("-c", "container")
		w.kubeScope()
		w.lit("--")
		w.argv("command")
	},
	"pods_run": func(w *cliWords) {
		w.lit("kubectl", "run")
		w.word(w.strOr("shield-pod", "name"))
		w.opt("--image", "image")
		w.opt("--port", "port")
		w.kubeScope()
	},
	"resources_get": func(w *cliWords) {
		w.lit("kubectl", "get")
		w.need("kind")
		w.need("name")
		w.kubeScope()
		w.kubeOutput("yaml")
	},
	"resources_list":             func(w *cliWords) { w.lit("kubectl", "get"); w.need("kind"); w.kubeScope(); w.kubeOutput("yaml") },
	"resources_delete":           func(w *cliWords) { w.lit("kubectl", "delete"); w.need("kind"); w.need("name"); w.kubeScope() },
	"namespaces_list":            func(w *cliWords) { w.lit("kubectl", "get", "namespaces") },
	"events_list":                func(w *cliWords) { w.lit("kubectl", "get", "events"); w.kubeScope() },
	"helm_install":               func(w *cliWords) { w.helm("install") },
	"helm_uninstall":             func(w *cliWords) { w.lit("helm", "uninstall"); w.need("name"); w.opt("-n", "namespace") },
	"helm_list":                  func(w *cliWords) { w.lit("helm", "list"); w.opt("-n", "namespace") },
	"configuration_view":         func(w *cliWords) { w.lit("kubectl", "config", "view", "--minify") },
	"kubectl_context":            func(w *cliWords) { w.lit("kubectl", "config", "current-context") },
	"list_api_resources":         func(w *cliWords) { w.lit("kubectl", "api-resources") },
	"explain_resource":           func(w *cliWords) { w.lit("kubectl", "explain"); w.need("resource") },
	"kubectl_explain":            func(w *cliWords) { w.lit("kubectl", "explain"); w.need("resource") },
	"kubectl_api_resources":      func(w *cliWords) { w.lit("kubectl", "api-resources") },
	"kubectl_get_pods":           func(w *cliWords) { w.lit("kubectl", "get", "pods"); w.kubeScope() },
	"kubectl_config_get_context": func(w *cliWords) { w.lit("kubectl", "config", "current-context") },
}

func (w *cliWords) strOr(def string, keys ...string) string {
	if s := w.str(keys...); s != "" {
		return s
	}
	return def
}

// kubeOutput adds -o: the call's own output format, else what the server answers with.
func (w *cliWords) kubeOutput(def string) {
	w.lit("-o")
	w.word(w.strOr(def, "output", "outputFormat"))
}

// rest adds list or string fields word by word.
func (w *cliWords) rest(keys ...string) {
	for _, k := range keys {
		switch x := w.args[k].(type) {
		case nil:
		case string:
			for _, f := range strings.Fields(x) {
				w.word(f)
			}
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					w.bad = true
					return
				}
				w.word(s)
			}
		case map[string]any:
			keys := sortedKeys(x)
			for _, k := range keys {
				w.word(k)
				if s, ok := x[k].(string); ok {
					w.word(s)
				}
			}
		default:
			w.bad = true
		}
	}
}

// helm: helm install|upgrade NAME CHART [--repo URL] [-n NS] [--version V].
func (w *cliWords) helm(verb string) {
	w.lit("helm", verb)
	w.need("name")
	w.need("chart")
	w.opt("--repo", "repo")
	w.opt("-n", "namespace")
	w.opt("--version", "version")
}

// cliEquivalentTool is the catalog's shell tool the equivalent command line is normalised as.
const cliEquivalentTool = "execute_command"

// IPython and Jupyter cells: `!cmd`, `x = !cmd`, %%bash/%%sh cells and the %sx/%system, %pip,
// %conda and %run magics are shell; the rest is Python, run as `python3 -c`. An unknown magic is
// left in the Python text, where it does not parse (and so is no known effect).
var ipyAssignBangRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_, ]*=\s*!(.*)$`)

func ipythonCell(w *cliWords, keys ...string) {
	code := w.str(keys...)
	if strings.TrimSpace(code) == "" {
		w.bad = true
		return
	}
	var py, sh []string
	lines := strings.Split(code, "\n")
	if first := strings.TrimSpace(lines[0]); first == "%%bash" || first == "%%sh" || first == "%%script bash" || first == "%%script sh" || first == "%%system" {
		sh = lines[1:]
		lines = nil
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "!"):
			sh = append(sh, strings.TrimPrefix(t, "!"))
		case ipyAssignBangRE.MatchString(t):
			sh = append(sh, ipyAssignBangRE.FindStringSubmatch(t)[1])
		case strings.HasPrefix(t, "%"):
			name, rest, _ := strings.Cut(strings.TrimLeft(t, "%"), " ")
			switch name {
			case "sx", "system", "sc":
				sh = append(sh, rest)
			case "pip", "conda", "cd":
				sh = append(sh, name+" "+rest)
			case "run":
				sh = append(sh, "python3 "+rest)
			case "matplotlib", "load_ext", "reload_ext", "autoreload", "config", "precision", "pwd", "who", "whos", "time", "timeit":
				if name == "time" || name == "timeit" {
					py = append(py, rest)
				}
			default:
				py = append(py, l) // does not parse as Python: no known effect
			}
		default:
			py = append(py, l)
		}
	}
	if strings.TrimSpace(strings.Join(py, "")) != "" {
		w.lit("python3", "-c")
		w.word(strings.Join(py, "\n"))
	}
	for _, l := range sh {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(w.words) > 0 {
			w.lit("\n")
		}
		w.lit(l)
		w.n += len(l)
	}
}

// processInput: text typed into a running process (Desktop Commander interact_with_process), an
// interpreter or a shell the call does not say. It is read as Python, and also as shell when it
// has no call parentheses (a line like `reboot` is a harmless name in Python and a command in a
// shell); text that is neither ordinary Python nor known shell is no known effect.
func processInput(w *cliWords, keys ...string) {
	in := w.str(keys...)
	if strings.TrimSpace(in) == "" {
		w.bad = true
		return
	}
	w.lit("python3", "-c")
	w.word(in)
	if !strings.Contains(in, "(") {
		w.lit("\n")
		w.lit(in)
		w.n += len(in)
	}
}

// computerTyping: a computer-use `type` action whose text presses Enter types command lines into
// the focused window, which may be a terminal: each line is judged as the shell command it would
// run there. Text without a line end runs nothing and is left to the browser class.
func computerTyping(w *cliWords) {
	act := strings.ToLower(w.str("action"))
	if act != "type" && act != "type_text" {
		w.bad = true
		return
	}
	text := w.str("text")
	if !strings.ContainsAny(text, "\r\n") {
		w.bad = true
		return
	}
	w.lit(strings.ReplaceAll(text, "\r", "\n"))
	w.n += len(text)
}

func init() {
	for _, t := range []string{"execute_ipython_cell", "execute_ipython", "ipython", "run_ipython", "jupyter_execute",
		"append_execute_code_cell", "insert_execute_code_cell", "execute_jupyter_cell", "run_cell"} {
		cliBuilders[t] = func(w *cliWords) { ipythonCell(w, "code", "cell_source", "source", "cell") }
	}
	cliBuilders["interact_with_process"] = func(w *cliWords) { processInput(w, "input") }
	cliBuilders["computer"] = computerTyping
}

// gooseAutomation: Goose computercontroller__automation_script {language, script} runs the script
// with the language's interpreter.
func gooseAutomation(w *cliWords) {
	script := w.str("script")
	if strings.TrimSpace(script) == "" {
		w.bad = true
		return
	}
	switch strings.ToLower(w.str("language")) {
	case "shell", "bash", "sh", "zsh":
		w.lit(script)
		w.n += len(script)
	case "ruby":
		w.lit("ruby", "-e")
		w.word(script)
	case "powershell", "pwsh":
		w.lit("pwsh", "-Command")
		w.word(script)
	case "applescript":
		w.lit("osascript", "-e")
		w.word(script)
	case "python", "python3":
		w.lit("python3", "-c")
		w.word(script)
	default:
		w.bad = true
	}
}

func init() { cliBuilders["computercontroller__automation_script"] = gooseAutomation }
