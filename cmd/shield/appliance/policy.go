package appliance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/shield"
)

// LoadOptions are the bundle load options of the configuration (the signing key).
func LoadOptions(cfg *Config) (policy.LoadOptions, error) {
	opt := policy.LoadOptions{}
	if cfg.Policy.PublicKey != "" {
		text, err := os.ReadFile(cfg.Policy.PublicKey)
		if err != nil {
			return opt, fmt.Errorf("read policy public key: %w", err)
		}
		pub, err := policy.ParsePublicKey(text)
		if err != nil {
			return opt, fmt.Errorf("policy public key %s: %w", cfg.Policy.PublicKey, err)
		}
		opt.PublicKey = pub
	}
	return opt, nil
}

// LoadPolicy loads and activates the configured bundle.
func LoadPolicy(cfg *Config) (*shield.Policy, error) {
	_, pol, err := LoadBundle(cfg)
	return pol, err
}

// LoadBundle loads the configured bundle (or the embedded one) and activates it.
func LoadBundle(cfg *Config) (*policy.Bundle, *shield.Policy, error) {
	opt, err := LoadOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	var b *policy.Bundle
	if cfg.Policy.Path == "" {
		b, err = policy.LoadFS(policies.Default, "default", opt)
	} else {
		b, err = policy.Load(cfg.Policy.Path, opt)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load policy bundle: %w", err)
	}
	pol, err := Activate(cfg, b)
	return b, pol, err
}

// Activate turns a loaded bundle into the policy the pipeline serves, with the configuration's
// workspace, home and judge review classes.
func Activate(cfg *Config, b *policy.Bundle) (*shield.Policy, error) {
	b, err := protectOwnPaths(b, cfg.OwnPaths())
	if err != nil {
		return nil, err
	}
	pol, err := activate.Activate(b, activate.Options{Workspace: cfg.Policy.Workspace, Home: HomeFor(cfg.Policy), ResolveLinks: cfg.Policy.ResolveLinks})
	if err != nil {
		return nil, fmt.Errorf("activate policy bundle %s: %w", b.Source, err)
	}
	// Classes the judge configuration sends to review join those the bundle names.
	if cfg.Judge != nil && len(cfg.Judge.ReviewClasses) > 0 {
		if pol.ReviewClasses == nil {
			pol.ReviewClasses = map[string]bool{}
		}
		for _, c := range cfg.Judge.ReviewClasses {
			pol.ReviewClasses[c] = true
		}
	}
	return pol, nil
}

// HomeFor is the home directory "~" expands to: policy.home, else /home/USER when the workspace
// lies under /home/USER, else empty (the normaliser's default).
func HomeFor(p PolicyConfig) string {
	if p.Home != "" {
		return p.Home
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p.Workspace), "/"), "/")
	if len(parts) >= 2 && parts[0] == "home" {
		return "/home/" + parts[1]
	}
	return ""
}

// OwnPaths are the appliance's own files, which no agent may read or change: the state directory,
// audit trail, keys, socket, tokens and TLS key, the policy bundle and its signing key (each also
// with its symbolic links resolved).
func (c *Config) OwnPaths() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range []string{c.StateDir, c.Audit.Dir, c.Audit.KeyFile, c.Socket, c.Auth.TokensFile, c.Auth.TLS.KeyFile,
		c.Policy.Path, c.Policy.PublicKey, c.Audit.Rekor.KeyFile} {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		for _, q := range []string{abs, resolvedOr(abs)} {
			if !seen[q] && q != "/" {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	return out
}

func resolvedOr(p string) string {
	if r, err := resolvePath(p); err == nil {
		return r
	}
	return p
}

// protectOwnPaths adds paths to the bundle's data shield.effects.protected_paths (in data.json),
// so that the policy BLOCKs a read or change of the appliance's own files (the default bundle's
// effects.protected-path rule) wherever this host keeps them, not only at the packaged
// locations. A bundle without that list is returned as it is. The bundle's digest is unchanged:
// like the workspace, these paths are the host's configuration, not the policy.
func protectOwnPaths(b *policy.Bundle, paths []string) (*policy.Bundle, error) {
	const file = "data.json"
	raw, ok := b.Files[file]
	if !ok || len(paths) == 0 {
		return b, nil
	}
	var data map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return b, nil // the bundle's own activation reports it
	}
	sh, _ := data["shield"].(map[string]any)
	eff, _ := sh["effects"].(map[string]any)
	list, ok := eff["protected_paths"].([]any)
	if !ok {
		return b, nil
	}
	have := map[string]bool{}
	for _, p := range list {
		if s, ok := p.(string); ok {
			have[s] = true
		}
	}
	for _, p := range paths {
		if !have[p] {
			list = append(list, p)
			have[p] = true
		}
	}
	eff["protected_paths"] = list
	out, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("protect the appliance's paths in %s: %w", file, err)
	}
	nb := *b
	nb.Files = make(map[string][]byte, len(b.Files))
	for k, v := range b.Files {
		nb.Files[k] = v
	}
	nb.Files[file] = out
	return &nb, nil
}
