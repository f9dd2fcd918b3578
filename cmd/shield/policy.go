package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/policy/activate"
	"github.com/shieldsec/shield/policy/policytest"
	"github.com/shieldsec/shield/policy/regoeval"
)

func init() {
	register(&command{name: "policy", summary: "test, lint, digest and sign policy bundles", run: runPolicy})
}

const policyUsage = `SUBCOMMAND [FLAGS] BUNDLE

Subcommands:
  test   [--workspace DIR] [--home DIR] [-v] [--json] [--coverage] [--coverage-min PCT] BUNDLE
                                                               run every CEL example and Rego test and the evaluation
                                                               gate (tests/*.jsonl against the manifest's thresholds,
                                                               per category); exit 1 on failure
  lint   [--strict] BUNDLE                                     compile problems, duplicate ids, unknown classes,
                                                               rules without examples; exit 1 on errors; notes
                                                               the rules the rule gate cannot index
  digest BUNDLE                                                print the revision and the canonical digest
  data   BUNDLE                                                print the Rego data document the engine evaluates
                                                               against (data files merged, with the derived forms
                                                               of data.shield_derived), to run the Rego under OPA
  sign   --key FILE [--out FILE] BUNDLE                        sign the digest (writes BUNDLE/.signature for a
                                                               directory, else --out or stdout)
  keygen --out PREFIX                                          write PREFIX.key (private, 0600) and PREFIX.pub
  replay --bundle NEW [--config FILE] [--baseline DIR] (--corpus FILE | --audit DIR) [--json] [--limit N]
                                                               re-evaluate calls under NEW and the baseline
                                                               (default: the config's policy.path, else the
                                                               embedded bundle); print the decision diff
  shadow status [--config FILE | --audit DIR] [--limit N] [--json]
                                                               what the shadow bundle (policy.shadow) decided
                                                               differently, from the audit trail

BUNDLE is a directory or a .tar.gz.`

func runPolicy(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(env.stderr, "Usage: shield policy %s\n", policyUsage)
		return usageError{msg: "missing subcommand"}
	}
	switch args[0] {
	case "test":
		return runPolicyTest(ctx, env, args[1:])
	case "lint":
		return runPolicyLint(env, args[1:])
	case "digest":
		return runPolicyDigest(env, args[1:])
	case "data":
		return runPolicyData(env, args[1:])
	case "sign":
		return runPolicySign(env, args[1:])
	case "keygen":
		return runPolicyKeygen(env, args[1:])
	case "replay":
		return runPolicyReplay(ctx, env, args[1:])
	case "shadow":
		return runPolicyShadow(ctx, env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(env.stdout, "Usage: shield policy %s\n", policyUsage)
		return nil
	}
	return usageError{msg: fmt.Sprintf("unknown subcommand %q (test, lint, digest, data, sign, keygen, replay, shadow)", args[0])}
}

// oneBundleArg returns the single positional argument.
func oneBundleArg(fs interface{ Args() []string }) (string, error) {
	if len(fs.Args()) != 1 {
		return "", usageError{msg: fmt.Sprintf("want exactly one bundle argument, got %d", len(fs.Args()))}
	}
	return fs.Args()[0], nil
}

func runPolicyTest(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy test", "[--workspace DIR] [--home DIR] [-v] [--json] [--coverage] [--coverage-min PCT] BUNDLE")
	workspace := fs.String("workspace", "/home/user/project", "workspace directory the normaliser classifies paths against")
	home := fs.String("home", "", "home directory \"~\" expands to (default: derived from the workspace)")
	verbose := fs.Bool("v", false, "list passing tests too")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	coverage := fs.Bool("coverage", false, "report Rego line coverage (OPA's, over the Rego tests and the labelled cases) and which CEL rules fired on the rule examples and labelled cases")
	coverageMin := fs.Float64("coverage-min", 0, "with --coverage (implied): exit 1 when Rego line coverage or the share of CEL rules that fired is below this percentage")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *coverageMin < 0 || *coverageMin > 100 {
		return usageError{msg: fmt.Sprintf("--coverage-min %v: want a percentage in [0, 100]", *coverageMin)}
	}
	if *coverageMin > 0 {
		*coverage = true
	}
	dir, err := oneBundleArg(fs)
	if err != nil {
		return err
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		return err
	}
	h := *home
	if h == "" {
		h = homeFor(PolicyConfig{Workspace: *workspace})
	}
	norm, err := activate.Normalizer(b, activate.Options{Workspace: *workspace, Home: h})
	if err != nil {
		return fmt.Errorf("build the normaliser from the bundle catalog: %w", err)
	}
	// The compiled policy runs the evaluation gate; when the bundle does not compile, the report
	// lists the problems and counts the gate's cases as not run.
	pol, _ := activate.Build(b, activate.Options{Workspace: *workspace, Home: h})
	rep := policytest.Run(ctx, b, norm.Normalize, policytest.Options{Policy: pol, Coverage: *coverage})
	var below []string
	if rep.Coverage != nil {
		below = rep.Coverage.Below(*coverageMin)
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.Write(env.stdout, *verbose)
		for _, m := range below {
			fmt.Fprintf(env.stdout, "FAIL  coverage: %s (--coverage-min)\n", m)
		}
	}
	if !rep.OK() || len(below) > 0 {
		return exitError{code: 1}
	}
	return nil
}

func runPolicyLint(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy lint", "[--strict] BUNDLE")
	strict := fs.Bool("strict", false, "warnings fail too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := oneBundleArg(fs)
	if err != nil {
		return err
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		return err
	}
	rep := policytest.Lint(b)
	policytest.WriteGateNotes(env.stdout, b) // rules the gate cannot index (not problems)
	rep.Write(env.stdout)
	if rep.Errors() > 0 || (*strict && len(rep.Findings) > 0) {
		return exitError{code: 1}
	}
	return nil
}

func runPolicyDigest(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy digest", "BUNDLE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := oneBundleArg(fs)
	if err != nil {
		return err
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "revision %s\ndigest %s\nfiles %d\n", b.Revision, b.Digest, len(b.Files))
	return nil
}

// runPolicyData prints the bundle's Rego data as the engine loads it (regoeval.Parse), so that
// plain OPA (`opa run`, `opa eval`) evaluates the bundle's modules on the same data, derived
// forms included.
func runPolicyData(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy data", "BUNDLE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := oneBundleArg(fs)
	if err != nil {
		return err
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		return err
	}
	p, err := regoeval.Parse(b)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", " ")
	return enc.Encode(p.Data)
}

func runPolicySign(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy sign", "--key FILE [--out FILE] BUNDLE")
	keyFile := fs.String("key", "", "private key file (base64 ed25519 seed, as written by keygen)")
	out := fs.String("out", "", "where to write the signature (default: BUNDLE/.signature for a directory, else stdout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := oneBundleArg(fs)
	if err != nil {
		return err
	}
	if *keyFile == "" {
		return usageError{msg: "--key is required"}
	}
	text, err := os.ReadFile(*keyFile)
	if err != nil {
		return fmt.Errorf("read key: %w", err)
	}
	priv, err := policy.ParsePrivateKey(text)
	if err != nil {
		return err
	}
	b, err := policy.Load(dir, policy.LoadOptions{})
	if err != nil {
		return err
	}
	sig := policy.Sign(priv, b.Digest)
	dest := *out
	if dest == "" {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			dest = filepath.Join(dir, policy.SignatureFile)
		}
	}
	if dest == "" {
		_, err := env.stdout.Write(sig)
		return err
	}
	if err := os.WriteFile(dest, sig, 0o644); err != nil {
		return fmt.Errorf("write signature: %w", err)
	}
	fmt.Fprintf(env.stdout, "signed %s (revision %s) into %s\n", b.Digest, b.Revision, dest)
	return nil
}

func runPolicyKeygen(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "policy keygen", "--out PREFIX")
	prefix := fs.String("out", "", "write PREFIX.key and PREFIX.pub")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *prefix == "" || len(fs.Args()) != 0 {
		return usageError{msg: "want --out PREFIX and no arguments"}
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	keyPath, pubPath := *prefix+".key", *prefix+".pub"
	f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create private key: %w", err)
	}
	if _, err := f.Write(policy.EncodeKey(priv.Seed())); err != nil {
		f.Close()
		return fmt.Errorf("write private key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write private key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write private key: %w", err)
	}
	if err := os.WriteFile(pubPath, policy.EncodeKey(pub), 0o644); err != nil {
		return fmt.Errorf("write public key: %w", err)
	}
	fmt.Fprintf(env.stdout, "wrote %s (keep secret) and %s (configure as policy.public_key)\n", keyPath, pubPath)
	return nil
}
