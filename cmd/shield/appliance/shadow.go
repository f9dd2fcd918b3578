package appliance

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/shadow"
)

// startShadow loads the candidate bundle of policy.shadow like the live one (signature, tests,
// gate) and starts its evaluator; nil when shadow mode is off. live returns the serving policy.
func startShadow(ctx context.Context, cfg *Config, al AuditLog, live func() *shield.Policy, reg prometheus.Registerer, log *slog.Logger) (*shadow.Evaluator, error) {
	if cfg.Policy.Shadow == "" {
		return nil, nil
	}
	opt, err := LoadOptions(cfg)
	if err != nil {
		return nil, err
	}
	pol, err := loadShadow(cfg, opt)
	if err != nil {
		return nil, err
	}
	var appendRecord func(context.Context, audit.Type, any) error
	if al != nil && al.Log() != nil {
		l := al.Log()
		appendRecord = func(ctx context.Context, typ audit.Type, payload any) error {
			_, err := l.Append(ctx, typ, payload)
			return err
		}
	}
	e, err := shadow.New(shadow.Config{Candidate: pol, Live: live, Append: appendRecord, Registerer: reg, Logger: log})
	if err != nil {
		return nil, err
	}
	e.Start(ctx)
	log.Info("shadow bundle evaluated beside the live one", "shadow_revision", pol.Revision, "shadow_digest", pol.Digest, "path", cfg.Policy.Shadow)
	return e, nil
}

// loadShadow loads and activates the shadow bundle (signature, tests, gate).
func loadShadow(cfg *Config, opt policy.LoadOptions) (*shield.Policy, error) {
	b, err := policy.Load(cfg.Policy.Shadow, opt)
	if err != nil {
		return nil, fmt.Errorf("load shadow bundle: %w", err)
	}
	pol, err := Activate(cfg, b)
	if err != nil {
		return nil, fmt.Errorf("shadow bundle: %w", err)
	}
	return pol, nil
}

// reloadShadow loads the shadow bundle again (on SIGHUP) and makes it the candidate when it
// changed; a bundle that fails is logged and the previous candidate stays. Nothing happens when
// shadow mode is off.
func reloadShadow(cfg *Config, e *shadow.Evaluator, log *slog.Logger, reason string) error {
	if e == nil {
		return nil
	}
	opt, err := LoadOptions(cfg)
	if err == nil {
		var pol *shield.Policy
		if pol, err = loadShadow(cfg, opt); err == nil {
			if pol.Digest == e.Candidate().Digest {
				log.Info(reason+": shadow bundle unchanged", "shadow_digest", pol.Digest)
				return nil
			}
			if err = e.SetCandidate(pol); err == nil {
				log.Info(reason+": shadow bundle replaced", "shadow_revision", pol.Revision, "shadow_digest", pol.Digest)
				return nil
			}
		}
	}
	log.Error(reason+": shadow bundle not reloaded; the previous candidate stays", "error", err.Error())
	return err
}
