package appliance

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/shield/approval"
)

// webhookSecret reads the approval webhook's HMAC secret from the environment variable the
// configuration names (an empty one is refused: notices are always signed).
func webhookSecret(cfg *Config) ([]byte, error) {
	if cfg.Approvals.WebhookSecretEnv == "" {
		return nil, nil
	}
	secret := []byte(os.Getenv(cfg.Approvals.WebhookSecretEnv))
	if len(secret) == 0 {
		return nil, fmt.Errorf("approvals: environment variable %s (the webhook secret) is empty", cfg.Approvals.WebhookSecretEnv)
	}
	return secret, nil
}

// openApprovals opens the tier-3 store under <state-dir>/approvals: the one store of the
// appliance, for every engine and runtime.
func openApprovals(cfg *Config, al AuditLog, log *slog.Logger) (*approval.Service, error) {
	dir := filepath.Join(cfg.StateDir, "approvals")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create approvals dir: %w", err)
	}
	secret, err := webhookSecret(cfg)
	if err != nil {
		return nil, err
	}
	s, err := approval.Open(approval.Config{Path: filepath.Join(dir, "approvals.db"), Timeout: cfg.Approvals.Timeout,
		TwoPersonClasses: cfg.Approvals.TwoPersonClasses, Recorder: approvalRecorder{l: al.Log()},
		WebhookURL: cfg.Approvals.WebhookURL, WebhookSecret: secret, Log: log, Retention: cfg.Approvals.Retention,
		WebhookFormat: cfg.Approvals.WebhookFormat, ConsoleURL: cfg.Approvals.ConsoleURL,
		Redact: audit.Redaction{Keys: cfg.Audit.RedactKeys, Values: cfg.Audit.RedactValues}})
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	return s, nil
}

// approvalRecorder writes approval events to the audit trail.
type approvalRecorder struct{ l *audit.Log }

func (r approvalRecorder) Record(ctx context.Context, ev approval.Event, payload *approval.Approval) error {
	t := ev.Type()
	if t == "" {
		return fmt.Errorf("approval event %d has no audit record type", ev)
	}
	_, err := r.l.Append(ctx, t, payload)
	return err
}
