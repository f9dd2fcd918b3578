package main

import (
	"context"
	"fmt"
)

func init() {
	register(&command{name: "config", summary: "check a configuration file", run: runConfig})
}

func runConfig(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) != 2 || args[0] != "check" {
		return usageError{"Usage: shield config check FILE"}
	}
	cfg, err := loadConfig(args[1])
	if err != nil {
		return err
	}
	cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(env.stderr, "%s: invalid:\n%v\n", args[1], err)
		return exitError{code: 1}
	}
	fmt.Fprintf(env.stdout, "%s: ok\n", args[1])
	return nil
}
