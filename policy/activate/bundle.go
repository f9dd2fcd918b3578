// Package activate activates a policy bundle: it builds the normaliser from the bundle's tool
// catalog, compiles the CEL (tier 0) and Rego (tier 1) engines, runs the bundle's own tests (CEL
// examples and *_test.rego), and returns the shield.Policy the pipeline serves. A bundle that
// fails any step is rejected as a whole with every problem found.
//
// activate is the one package that imports both tier engines; only the composition root
// (cmd/shield/appliance) and cmd/shield import it.
package activate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/celrules"
	"github.com/shieldsec/shield/policy/policytest"
	"github.com/shieldsec/shield/policy/regoeval"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/normalize"
)

// Options configure activation. The zero value is valid.
type Options struct {
	// Workspace is the directory calls are expected to work in; paths inside it are classified
	// InWorkspace. Empty means no path is inside a workspace.
	Workspace string
	// Home is the home directory used to expand "~". Empty means /root for uid 0, else $HOME
	// is not consulted: the normaliser's own default applies.
	Home string
	// BaseCatalog, when non-nil, is merged under the bundle's catalog (the default bundle's
	// catalog, so authors only add their own tools). nil uses the embedded default catalog.
	BaseCatalog []byte
	// NoBaseCatalog uses the bundle's catalog alone.
	NoBaseCatalog bool
	// ResolveLinks: the normaliser follows symbolic links of workspace paths on disk
	// (normalize.Options.ResolveLinks).
	ResolveLinks bool
}

// The reference workspace and home directory of rule examples.
const (
	ExampleWorkspace = "/home/user/project"
	ExampleHome      = "/home/user"
)

// Activate turns a loaded bundle into a policy ready to serve: it compiles the bundle, runs its
// own tests (CEL examples, *_test.rego) and its evaluation gate (labelled cases in tests/*.jsonl
// against the manifest's thresholds), and refuses it with every problem if any fails.
func Activate(b *policy.Bundle, opt Options) (*shield.Policy, error) {
	pol, err := Build(b, opt)
	if err != nil {
		return nil, err
	}
	key := passedKey(b, opt)
	if hasPassed(key) {
		return pol, nil
	}
	ref, exNorm, err := Reference(b, pol, opt)
	if err != nil {
		return nil, err
	}
	// The bundle's own tests (CEL examples and *_test.rego) and its gate must pass before it
	// may serve.
	if rep := policytest.Run(context.Background(), b, exNorm.Normalize, policytest.Options{Policy: ref}); !rep.OK() {
		return nil, fmt.Errorf("bundle tests failed: %w", rep.Err())
	}
	rememberPassed(key)
	return pol, nil
}

// Reference returns pol with the normaliser of the reference workspace (ExampleWorkspace), in
// which rule examples and the labelled cases of the evaluation gate are written, so a bundle's
// own tests mean the same thing on every host whatever workspace the service is configured with.
func Reference(b *policy.Bundle, pol *shield.Policy, opt Options) (*shield.Policy, *normalize.Normalizer, error) {
	exNorm, err := Normalizer(b, Options{Workspace: ExampleWorkspace, Home: ExampleHome,
		BaseCatalog: opt.BaseCatalog, NoBaseCatalog: opt.NoBaseCatalog})
	if err != nil {
		return nil, nil, err
	}
	ref := *pol
	ref.Normalizer = exNorm
	return &ref, exNorm, nil
}

// Build compiles a bundle into a policy without running its Rego tests or its gate (a failing
// CEL example is still a compile error). Activate is Build plus the tests; `shield policy test`
// uses Build to report the tests itself.
func Build(b *policy.Bundle, opt Options) (*shield.Policy, error) {
	norm, err := Normalizer(b, opt)
	if err != nil {
		return nil, err
	}
	exNorm, err := Normalizer(b, Options{Workspace: ExampleWorkspace, Home: ExampleHome,
		BaseCatalog: opt.BaseCatalog, NoBaseCatalog: opt.NoBaseCatalog})
	if err != nil {
		return nil, err
	}
	var errs []error
	cel, err := celrules.Compile(b, exNorm.Normalize)
	if err != nil {
		errs = append(errs, err)
	}
	rg, err := regoeval.Compile(b)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	defaults := map[string]shield.Decision{}
	for class, d := range b.Defaults.Classes {
		dec, ok := shield.ParseDecision(d)
		if !ok {
			return nil, fmt.Errorf("defaults.yaml: class %s: bad decision %q", class, d)
		}
		defaults[class] = dec
	}
	if b.Defaults.Default != "" {
		dec, ok := shield.ParseDecision(b.Defaults.Default)
		if !ok {
			return nil, fmt.Errorf("defaults.yaml: bad default decision %q", b.Defaults.Default)
		}
		defaults["*"] = dec
	}
	if defaults[normalize.ClassUnknown] == shield.Allow || (defaults[normalize.ClassUnknown] == 0 && defaults["*"] == shield.Allow) {
		defaults[normalize.ClassUnknown] = shield.Escalate
	}
	return &shield.Policy{
		Revision:   b.Revision,
		Digest:     b.Digest,
		LoadedAt:   time.Now().UTC(),
		Normalizer: norm,
		Tiers:      []shield.Tier{cel, rg},
		Defaults:   defaults,
		ReviewClasses: func() map[string]bool {
			m := map[string]bool{}
			for _, c := range b.Defaults.Review {
				m[c] = true
			}
			return m
		}(),
		RuleCounts: map[string]int{cel.Name(): cel.RuleCount(), rg.Name(): rg.RuleCount()},
	}, nil
}

// Normalizer builds the normaliser of a bundle: the default catalog (unless disabled) extended by
// the bundle's own.
func Normalizer(b *policy.Bundle, opt Options) (*normalize.Normalizer, error) {
	var cat *normalize.Catalog
	if !opt.NoBaseCatalog {
		base := opt.BaseCatalog
		if base == nil {
			var err error
			base, err = policies.Default.ReadFile("default/" + policy.CatalogFile)
			if err != nil {
				return nil, fmt.Errorf("read the embedded default catalog: %w", err)
			}
		}
		c, err := normalize.ParseCatalog("default/"+policy.CatalogFile, base)
		if err != nil {
			return nil, err
		}
		cat = c
	}
	if data := b.Catalog(); data != nil {
		c, err := normalize.ParseCatalog(policy.CatalogFile, data)
		if err != nil {
			return nil, err
		}
		if cat == nil {
			cat = c
		} else {
			cat.Merge(c)
		}
	}
	if cat == nil {
		return nil, errors.New("bundle has no catalog.yaml and the default catalog is disabled")
	}
	specs, err := commandSpecs(b, opt)
	if err != nil {
		return nil, err
	}
	inline, err := inlineAllowList(b, opt)
	if err != nil {
		return nil, err
	}
	prose, err := proseLexicon(b, opt) // prose.go
	if err != nil {
		return nil, err
	}
	files, err := instructionFiles(b, opt)
	if err != nil {
		return nil, err
	}
	return normalize.New(cat, normalize.Options{Workspace: opt.Workspace, Home: opt.Home, Commands: specs, Inline: inline,
		Prose: prose, InstructionFiles: files, ResolveLinks: opt.ResolveLinks}), nil
}

// InlineFile is the bundle's allow list of inline interpreter code (shield/normalize
// inline_code.go): the bundle's own replaces the default bundle's; without either, inline code
// is judged by the bundle's rules alone.
const InlineFile = "inline.yaml"

func inlineAllowList(b *policy.Bundle, opt Options) (*normalize.InlineAllowList, error) {
	if data, ok := b.Files[InlineFile]; ok {
		return normalize.ParseInlineAllowList(InlineFile, data)
	}
	if opt.NoBaseCatalog {
		return nil, nil
	}
	data, err := policies.Default.ReadFile("default/" + InlineFile)
	if err != nil {
		return nil, fmt.Errorf("read the embedded inline allow list: %w", err)
	}
	return normalize.ParseInlineAllowList("default/"+InlineFile, data)
}

// commandSpecs parses the command specs of a bundle: the default bundle's commands/*.spec (unless
// the base catalog is disabled) with the bundle's own on top, program by program.
func commandSpecs(b *policy.Bundle, opt Options) (*normalize.CommandSpecs, error) {
	var specs *normalize.CommandSpecs
	if !opt.NoBaseCatalog {
		files := map[string][]byte{}
		names, err := fs.Glob(policies.Default, "default/"+policy.CommandsDir+"/*.spec")
		if err != nil {
			return nil, fmt.Errorf("list the embedded command specs: %w", err)
		}
		for _, n := range names {
			data, err := policies.Default.ReadFile(n)
			if err != nil {
				return nil, fmt.Errorf("read the embedded command specs: %w", err)
			}
			files[n] = data
		}
		if specs, err = normalize.ParseCommandSpecs(files); err != nil {
			return nil, err
		}
	}
	if own := b.Commands(); len(own) > 0 {
		s, err := normalize.ParseCommandSpecs(own)
		if err != nil {
			return nil, err
		}
		specs = specs.Merge(s)
	}
	return specs, nil
}
