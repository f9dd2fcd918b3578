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
	b, err := policy.Load(cfg.Policy.Shadow, opt)
	if err != nil {
		return nil, fmt.Errorf("load shadow bundle: %w", err)
	}
	pol, err := Activate(cfg, b)
	if err != nil {
		return nil, fmt.Errorf("shadow bundle: %w", err)
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
