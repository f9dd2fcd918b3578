package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

func init() {
	register(&command{name: "config", summary: "check a service configuration file", run: runConfig})
}

// runConfig is "shield config check FILE": it decodes FILE strictly (unknown keys are errors),
// fills the defaults and validates it, then prints "ok", or every problem found and exits 1.
func runConfig(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprintln(env.stderr, "Usage: shield config check FILE")
			return nil
		}
		return usageError{msg: "usage: shield config check FILE"}
	}
	fs := newFlagSet(env, "config check", "FILE")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{msg: "usage: shield config check FILE"}
	}
	path := fs.Arg(0)
	problems := checkConfigFile(path)
	if len(problems) == 0 {
		fmt.Fprintln(env.stdout, "ok")
		return nil
	}
	for _, p := range problems {
		fmt.Fprintf(env.stdout, "%s: %s\n", path, p)
	}
	return exitError{code: 1}
}

// checkConfigFile returns every problem in the configuration file at path, one per line of
// output; none means serve would accept it.
func checkConfigFile(path string) []string {
	cfg, err := loadConfig(path)
	if err != nil {
		return splitProblems(err)
	}
	cfg.withDefaults()
	var problems []string
	if err := cfg.Validate(); err != nil {
		problems = append(problems, splitProblems(err)...)
	}
	if err := cfg.checkFiles(); err != nil {
		problems = append(problems, splitProblems(err)...)
	}
	// The descriptor arithmetic serve applies at start, against the hard limit it raises to.
	if nofile, err := hardNofile(); err != nil {
		problems = append(problems, err.Error())
	} else if _, err := cfg.Limits.Fit(nofile, 1+len(cfg.Listen)+len(cfg.HTTP.Listen)); err != nil && cfg.Limits.Validate() == nil {
		problems = append(problems, "limits: "+err.Error())
	}
	return problems
}

// splitProblems flattens joined errors, and the multi-line errors the YAML decoder returns (one
// line per unknown key or bad value), into one problem per entry.
func splitProblems(err error) []string {
	var out []string
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) && errors.Unwrap(err) == nil {
		for _, e := range j.Unwrap() {
			out = append(out, splitProblems(e)...)
		}
		return out
	}
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
