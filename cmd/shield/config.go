package main

import (
	"context"
	"log/slog"

	"github.com/shieldsec/shield/cmd/shield/appliance"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
)

// The configuration and its rules live in the composition root (package appliance); these names
// keep the subcommands short.
type (
	Config          = appliance.Config
	PolicyConfig    = appliance.PolicyConfig
	PipelineConfig  = appliance.PipelineConfig
	AuditConfig     = appliance.AuditConfig
	ApprovalsConfig = appliance.ApprovalsConfig
	LogConfig       = appliance.LogConfig
	RekorConfig     = appliance.RekorConfig
	EngineConfig    = appliance.EngineConfig
)

func loadConfig(path string) (*Config, error) { return appliance.LoadConfig(path) }

func defaultStateDir() string { return appliance.DefaultStateDir() }

func loadPolicy(cfg *Config) (*shield.Policy, error) { return appliance.LoadPolicy(cfg) }

func homeFor(p PolicyConfig) string { return appliance.HomeFor(p) }

// serve builds the appliance from cfg (defaults filled) and runs it until ctx ends.
func serve(ctx context.Context, cfg *Config, log *slog.Logger) error {
	a, err := appliance.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

func openAuditLog(cfg *Config, log *slog.Logger) (appliance.AuditLog, error) {
	return appliance.OpenAuditLog(cfg, log)
}

func sdNotify(state string) error { return appliance.SdNotify(state) }

func loadBundle(cfg *Config) (*policy.Bundle, *shield.Policy, error) {
	return appliance.LoadBundle(cfg)
}
