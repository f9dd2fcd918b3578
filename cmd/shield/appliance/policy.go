package appliance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/bundle"
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
	pol, err := bundle.Activate(b, bundle.Options{Workspace: cfg.Policy.Workspace, Home: HomeFor(cfg.Policy)})
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
