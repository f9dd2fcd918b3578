package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
)

func init() {
	register(&command{name: "version", summary: "print the version, Go version and embedded bundle digest", run: runVersion})
}

func runVersion(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	fmt.Fprintf(env.stdout, "shield %s", version)
	if rev != "" {
		fmt.Fprintf(env.stdout, " (%s)", rev)
	}
	fmt.Fprintf(env.stdout, " %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if b, err := policy.LoadFS(policies.Default, "default", policy.LoadOptions{}); err == nil {
		fmt.Fprintf(env.stdout, "embedded bundle revision %s digest %s\n", b.Revision, b.Digest)
	}
	return nil
}
