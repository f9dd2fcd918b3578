package normalize

import (
	"path"
	"strings"
)

// Settings that change what runs or how packages are fetched later are persistence and
// supply-chain writes. A package manager's or tool's config setter (npm/pnpm/yarn config set,
// pip config set, go env -w, bundle config) whose key names a program every later run starts
// (script-shell, shell, node-options, editor, GOFLAGS with -toolexec) or a trust setting (TLS
// verification off, checksum database off, a registry or index) changes every later command of
// the project, not this one. The normaliser records a write of "tool_setting:CLASS" (Detail: the
// key and value): CLASS "code_path_outside" (a program outside the workspace), "code_path" (one
// inside it or not a path), "trust_off" (TLS or checksum verification off), "registry" (a source
// other than the ecosystem's default). Installing a plugin from a manifest URL (kubectl krew
// install --manifest-url) is "remote_manifest". rego/tool_settings.rego decides.

const targetToolSetting = "tool_setting:"

var codePathKeys = map[string]bool{
	"script-shell": true, "shell": true, "node-options": true, "editor": true, "init-module": true,
	"git": true, "browser": true, "viewer": true, "global.editor": true, "core.editor": true,
}

var trustOffKeys = map[string]bool{
	"strict-ssl": true, "global.trusted-host": true, "trusted-host": true, "install.trusted-host": true,
	"gonosumdb": true, "gonosumcheck": true, "goinsecure": true, "gosumdb": true, "ssl_verify_mode": true,
	"enable-strict-ssl": true, "network.ssl-verify": true,
}

var registryKeys = map[string]bool{
	"registry": true, "global.index-url": true, "global.extra-index-url": true, "index-url": true,
	"extra-index-url": true, "install.index-url": true, "goproxy": true, "npmregistryserver": true,
	"mirror": true, "source": true,
}

var defaultRegistries = []string{"registry.npmjs.org", "registry.yarnpkg.com", "pypi.org", "proxy.golang.org", "rubygems.org", "sum.golang.org"}

func (w *walker) toolSettingEffects(name string, args words) {
	a := args.argv
	var pairs [][2]string
	switch {
	case (name == "npm" || name == "pnpm" || name == "yarn" || name == "pip" || name == "pip3" || name == "bundle") && len(a) >= 2 && a[0] == "config" && a[1] == "set":
		pairs = settingPairs(a[2:])
	case name == "bundle" && len(a) >= 1 && a[0] == "config":
		pairs = settingPairs(a[1:])
	case name == "go" && len(a) >= 2 && a[0] == "env":
		for i := 1; i < len(a); i++ {
			if a[i] == "-w" && i+1 < len(a) {
				i++
				if k, v, ok := strings.Cut(a[i], "="); ok {
					pairs = append(pairs, [2]string{k, v})
				}
			} else if k, v, ok := strings.Cut(strings.TrimPrefix(a[i], "-w="), "="); ok && strings.HasPrefix(a[i], "-w=") {
				pairs = append(pairs, [2]string{k, v})
			}
		}
	case name == "kubectl" && len(a) >= 2 && a[0] == "krew" || name == "kubectl-krew":
		for _, x := range a {
			if strings.HasPrefix(x, "--manifest-url") {
				w.s.addEffect(Effect{Kind: EffectWrite, Target: targetToolSetting + "remote_manifest", Program: name, Detail: x})
			}
		}
	}
	for _, p := range pairs {
		if cls := w.settingClass(p[0], p[1]); cls != "" {
			w.s.addEffect(Effect{Kind: EffectWrite, Target: targetToolSetting + cls, Program: name, Detail: p[0] + "=" + p[1]})
		}
	}
}

// settingPairs reads KEY VALUE or KEY=VALUE words, skipping options (--location=user, --global).
func settingPairs(a []string) [][2]string {
	var ops []string
	for _, x := range a {
		if !strings.HasPrefix(x, "-") {
			ops = append(ops, x)
		}
	}
	var out [][2]string
	for i := 0; i < len(ops) && i < 32; i++ {
		if k, v, ok := strings.Cut(ops[i], "="); ok {
			out = append(out, [2]string{k, v})
			continue
		}
		v := ""
		if i+1 < len(ops) {
			v = ops[i+1]
			i++
		}
		out = append(out, [2]string{ops[i-1+boolInt(v == "")], v})
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (w *walker) settingClass(key, val string) string {
	k := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(key, "BUNDLE_"), "npm_config_"))
	v := strings.ToLower(strings.Trim(val, `"'`))
	switch {
	case codePathKeys[k] || k == "goflags" && strings.Contains(v, "-toolexec"):
		p := strings.Trim(val, `"'`)
		if strings.HasPrefix(p, "~") {
			return "code_path_outside"
		}
		if path.IsAbs(p) && !inDir(path.Clean(p), w.s.n.opt.Workspace) {
			return "code_path_outside"
		}
		if k != "node-options" && k != "goflags" && !strings.Contains(p, "/") {
			return "" // a program found on PATH (editor vim, code --wait): the developer's choice
		}
		return "code_path"
	case k == "strict-ssl" || k == "enable-strict-ssl" || k == "network.ssl-verify":
		if v == "false" || v == "0" || v == "no" {
			return "trust_off"
		}
	case trustOffKeys[k] || k == "goflags" && strings.Contains(v, "-insecure"):
		if k == "gosumdb" && v != "off" {
			return "registry"
		}
		return "trust_off"
	case registryKeys[k] || strings.HasSuffix(k, ":registry"):
		for _, d := range defaultRegistries {
			if strings.Contains(v, "://"+d) || v == d || strings.HasPrefix(v, d) {
				return ""
			}
		}
		return "registry"
	}
	return ""
}
