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
	Config             = appliance.Config
	PolicyConfig       = appliance.PolicyConfig
	PipelineConfig     = appliance.PipelineConfig
	AuditConfig        = appliance.AuditConfig
	ApprovalsConfig    = appliance.ApprovalsConfig
	LogConfig          = appliance.LogConfig
	RekorConfig        = appliance.RekorConfig
	EngineConfig       = appliance.EngineConfig
	ExportConfig       = appliance.ExportConfig
	SyslogExportConfig = appliance.SyslogExportConfig
	HTTPExportConfig   = appliance.HTTPExportConfig
)

func loadConfig(path string) (*Config, error) { return appliance.LoadConfig(path) }

func defaultStateDir() string { return appliance.DefaultStateDir() }

func loadPolicy(cfg *Config) (*shield.Policy, error) { return appliance.LoadPolicy(cfg) }

func homeFor(p PolicyConfig) string { return appliance.HomeFor(p) }

// serveMounts add HTTP handlers to the appliance's HTTP listener (metrics_listen, loopback)
// beside /metrics: the place where HTTP APIs (the hook endpoints, an HTTP ShieldService) are
// mounted. A file adds its own in init; each handler authenticates its callers itself.
var serveMounts []func(a *appliance.Appliance)

// serve builds the appliance from cfg (defaults filled), mounts the HTTP handlers and runs it
// until ctx ends.
func serve(ctx context.Context, cfg *Config, log *slog.Logger) error {
	a, err := appliance.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	for _, mount := range serveMounts {
		mount(a)
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
