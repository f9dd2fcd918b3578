package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/shieldsec/shield/cmd/shield/appliance"
	"github.com/shieldsec/shield/engine/exec"
)

func init() {
	register(&command{name: "internal-engine", hidden: true, run: runEngine})
	register(&command{name: exec.ReaperCommand, hidden: true, run: func(_ context.Context, _ *cmdEnv, args []string) error {
		if code := exec.Reaper(args); code != 0 {
			return exitError{code: code}
		}
		return nil
	}})
}

// StartConfig is the file `shield start --config` reads (strict YAML): the serve keys, and the
// keys of the one engine it runs (workspace, llm, egress, allow_unsandboxed) inline.
type StartConfig struct {
	appliance.Config       `yaml:",inline"`
	appliance.EngineConfig `yaml:",inline"`
}

// Appliance is the configuration of the appliance that hosts the file's engine: its serve keys
// with that engine added to engines. Call it after WithDefaults.
func (c *StartConfig) Appliance() *appliance.Config {
	cfg := c.Config
	cfg.Engines = append(append([]appliance.EngineConfig(nil), c.Config.Engines...), c.EngineConfig)
	cfg.WithDefaults()
	return &cfg
}

// Validate reports every problem of the file at once, as serve would for the same appliance.
func (c *StartConfig) Validate() error { return c.Appliance().Validate() }

func loadEngineConfig(path string) (*StartConfig, error) {
	c := &StartConfig{}
	return c, appliance.DecodeStrict(path, c)
}

// runEngine is the process `shield start` keeps running. Without --socket it is the appliance
// for its state directory, hosting the one engine; with --socket it is the engine alone,
// consulting the appliance that serves that socket. It prints the start-up lines once its
// ClientService listens.
func runEngine(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "internal-engine", "--config FILE [--socket PATH]")
	cfgPath := fs.String("config", "", "engine config (written by shield start)")
	socket := fs.String("socket", "", "unix socket of the running appliance to consult (default: host the appliance)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sc, err := loadEngineConfig(*cfgPath)
	if err != nil {
		return err
	}
	if sc.Workspace == "" {
		return usageError{"the config must name a workspace"}
	}
	if sc.Workspace, err = filepath.Abs(sc.Workspace); err != nil {
		return err
	}
	cfg := sc.Appliance()
	log := newLogger(env, cfg.Log)
	appliance.Version = version
	if *socket != "" {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("invalid configuration:\n%w", err)
		}
		e, closeEngine, err := appliance.RemoteEngine(cfg, sc.EngineConfig, *socket, log)
		if err != nil {
			return err
		}
		defer closeEngine()
		fmt.Fprintf(env.stdout, "PORT:%d\n", e.Port())
		fmt.Fprintln(env.stdout, "WEB_DISABLED")
		return e.Run(ctx)
	}
	a, err := appliance.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	engines := a.Engines()
	if len(engines) == 0 {
		a.Close()
		return errors.New("no engine configured")
	}
	fmt.Fprintf(env.stdout, "PORT:%d\n", engines[len(engines)-1].Port())
	fmt.Fprintln(env.stdout, "WEB_DISABLED")
	return a.Run(ctx)
}
