package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/shieldsec/shield/cmd/shield/appliance"
)

func init() {
	register(&command{name: "serve", summary: "run the ShieldService appliance (and the engines it hosts)", run: runServe})
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runServe(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "serve", "[--config FILE] [--listen ADDR]... [--metrics-listen ADDR] [--pprof IP:PORT] [--state-dir DIR] [--policy DIR]")
	cfgPath := fs.String("config", "", "YAML config file (strict: unknown keys are errors)")
	var listen stringList
	fs.Var(&listen, "listen", "extra TCP listener host:port (repeatable; loopback only)")
	metrics := fs.String("metrics-listen", "", "loopback host:port for Prometheus metrics")
	pprofAddr := fs.String("pprof", "", "loopback IP:port for net/http/pprof (profiles show process memory to local users; off by default)")
	stateDir := fs.String("state-dir", "", "state directory (default $STATE_DIRECTORY, /var/lib/shield as root, else $XDG_STATE_HOME/shield)")
	policyPath := fs.String("policy", "", "policy bundle directory or .tar.gz (default: embedded bundle)")
	dev := fs.Bool("dev", false, "DEVELOPMENT ONLY: every caller on a loopback TCP listener is admin, unauthenticated (unix-socket peers keep their roles)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if len(listen) > 0 {
		cfg.Listen = listen
	}
	if *metrics != "" {
		cfg.MetricsListen = *metrics
	}
	if *stateDir != "" {
		cfg.StateDir = *stateDir
	}
	if *policyPath != "" {
		cfg.Policy.Path = *policyPath
	}
	cfg.Dev = *dev
	cfg.WithDefaults()
	log := newLogger(env, cfg.Log)
	appliance.Version = version
	if *pprofAddr != "" {
		_, stop, err := startPprof(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	rt, err := appliance.ApplyRuntime(cfg.Runtime, os.Getenv)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	log.Info("go runtime", "gc_percent", rt.GCPercent, "gc_percent_from_env", rt.GCPercentEnv,
		"memory_limit", rt.MemoryLimit, "memory_limit_from_env", rt.MemoryLimitEnv)
	return serve(ctx, cfg, log)
}

func newLogger(env *cmdEnv, c LogConfig) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(env.stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(env.stderr, opts))
}
