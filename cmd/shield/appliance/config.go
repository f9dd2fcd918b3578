package appliance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/shieldsec/shield/shield"
	"github.com/shieldsec/shield/shield/judge"
	"github.com/shieldsec/shield/shield/proxy/client"
	"github.com/shieldsec/shield/shield/server"
)

// Config is the service configuration (shield.yaml). Every key is optional; the zero value of
// each field is documented and safe. Unknown keys are errors.
type Config struct {
	// StateDir holds everything the appliance keeps: audit/, keys/, approvals/, shield.sock.
	// Default: $STATE_DIRECTORY (set by systemd), else /var/lib/shield when run as root, else
	// $XDG_STATE_HOME/shield (~/.local/state/shield). It must lie outside every workspace, and
	// no workspace inside it: an agent that reaches it can read the audit key and erase the trail.
	StateDir string `yaml:"state_dir"`
	// Listen lists extra TCP listeners (host:port). The unix socket <state_dir>/shield.sock is
	// always served. Default: none.
	Listen []string `yaml:"listen"`
	// Socket overrides the unix socket path. Default: <state_dir>/shield.sock.
	Socket string `yaml:"socket"`
	// MetricsListen is the loopback host:port of the Prometheus endpoint. Default: off.
	MetricsListen string `yaml:"metrics_listen"`
	// Policy selects the bundle.
	Policy PolicyConfig `yaml:"policy"`
	// Pipeline bounds evaluation.
	Pipeline PipelineConfig `yaml:"pipeline"`
	// Audit configures the audit trail.
	Audit AuditConfig `yaml:"audit"`
	// Log configures structured logging.
	Log LogConfig `yaml:"log"`
	// Judge enables tier 2 (an LLM judge) for calls tiers 0–1 leave at ESCALATE. Default: off.
	Judge *judge.Config `yaml:"judge"`
	// Approvals configures tier 3 (human approval). Default: on, 15 minute timeout.
	Approvals ApprovalsConfig `yaml:"approvals"`
	// Auth configures who may call what. Default: root and the service's user have every role on
	// the unix socket; TCP listeners need bearer tokens.
	Auth server.AuthConfig `yaml:"auth"`
	// Limits bounds connections, streams and concurrent calls (see server.Limits). Default: the
	// safe caps documented in deploy/shield.yaml, sized below RLIMIT_NOFILE.
	Limits server.Limits `yaml:"limits"`
	// Export ships the audit trail to a SIEM (jsonl, syslog, http; see ExportConfig). Default: off.
	Export *ExportConfig `yaml:"export"`
	// HTTP serves the HTTP/JSON API and the web console (see server.HTTPConfig). Default: off.
	HTTP server.HTTPConfig `yaml:"http"`
	// Engines are the agent engines the appliance hosts, one per workspace: each runs a sandboxed
	// agent and consults this appliance's ShieldService in process. Default: none.
	Engines []EngineConfig `yaml:"engines"`
	// Runtime tunes the Go runtime of serve: GC percent and soft memory limit (RuntimeConfig).
	// Default: gc_percent 400, memory_limit 1GiB; GOGC and GOMEMLIMIT in the environment win.
	Runtime RuntimeConfig `yaml:"runtime"`
	// Dev lets a loopback TCP listener act with every role (never in production). Flag only.
	Dev bool `yaml:"-"`
}

// EngineConfig is one hosted engine: the workspace its agent works in and the model it uses.
type EngineConfig struct {
	// Workspace the agent works in (absolute after WithDefaults). Required.
	Workspace string `yaml:"workspace"`
	// LLM is the agent's model endpoint. Required.
	LLM LLMConfig `yaml:"llm"`
	// Egress lists the hosts the http_request tool may reach (default: none, tool off).
	Egress []string `yaml:"egress"`
	// AllowUnsandboxed starts the agent on kernels without Landlock (never when partial).
	AllowUnsandboxed bool `yaml:"allow_unsandboxed"`
}

// LLMConfig is an agent's model endpoint.
type LLMConfig struct {
	Provider  string `yaml:"provider"`    // openai | anthropic
	BaseURL   string `yaml:"base_url"`    // e.g. https://api.openai.com/v1
	Model     string `yaml:"model"`       //
	APIKeyEnv string `yaml:"api_key_env"` // name of the environment variable holding the key
}

// ApprovalsConfig configures tier 3.
type ApprovalsConfig struct {
	// Disabled turns tier 3 off: escalated calls are answered ESCALATE with no request created.
	Disabled bool `yaml:"disabled"`
	// Timeout after which an unanswered request is denied. Default 15m.
	Timeout time.Duration `yaml:"timeout"`
	// TwoPersonClasses need two distinct approvers (e.g. [file_delete, vcs_push]).
	TwoPersonClasses []string `yaml:"two_person_classes"`
	// WebhookURL receives an HMAC-SHA256-signed JSON notice of each new request.
	WebhookURL string `yaml:"webhook_url"`
	// WebhookSecretEnv names the environment variable holding the HMAC secret.
	WebhookSecretEnv string `yaml:"webhook_secret_env"`
	// WebhookFormat is the notice's body: shield (default, JSON), slack (a Slack incoming webhook
	// message) or chat (a {"text": …} message for Mattermost, Rocket.Chat, Google Chat, Teams
	// workflows). Every format is HMAC-signed.
	WebhookFormat string `yaml:"webhook_format"`
	// ConsoleURL is the web console's base URL, linked from chat notices. Default: none.
	ConsoleURL string `yaml:"console_url"`
	// Retention is how long resolved requests (denied, used, expired) stay in the approval store;
	// the audit trail keeps their records. Default 720h (30 days); negative keeps them forever.
	Retention time.Duration `yaml:"retention"`
}

// PolicyConfig selects and checks the policy bundle.
type PolicyConfig struct {
	// Path is a bundle directory or .tar.gz. Default: the embedded default bundle.
	Path string `yaml:"path"`
	// PublicKey is an Ed25519 public key file; when set, a bundle must carry a valid signature.
	PublicKey string `yaml:"public_key"`
	// Workspace is the directory agents work in (paths inside it are "in workspace").
	Workspace string `yaml:"workspace"`
	// Home is the agents' home directory, which "~" in paths expands to. Default: /home/USER when
	// the workspace lies under /home/USER.
	Home string `yaml:"home"`
	// Watch reloads the bundle when its files change (SIGHUP always reloads). Default: true.
	Watch *bool `yaml:"watch"`
	// ResolveLinks classifies workspace paths that exist on this host where their symbolic links
	// lead (a link to ~/.ssh read through the workspace is a secret read). Set it only when the
	// service shares the workspace's file system. Default: false.
	ResolveLinks bool `yaml:"resolve_links"`
	// Shadow is a candidate bundle (directory or .tar.gz) that serve evaluates beside the live
	// one, off the decision path (shield/shadow): loaded at start like the live bundle (signature,
	// tests, gate); differences are counted in metrics and audited as shadow records. Default: ""
	// (off).
	Shadow string `yaml:"shadow"`
}

// PipelineConfig bounds evaluation.
type PipelineConfig struct {
	// CacheSize is the number of cached verdicts; 0 means 10000, -1 disables the cache.
	CacheSize int `yaml:"cache_size"`
	// Timeout bounds tiers 0–1 for one call. Default: 500ms.
	Timeout time.Duration `yaml:"timeout"`
	// MaxArgumentBytes caps arguments_json. Default: 1 MiB.
	MaxArgumentBytes int `yaml:"max_argument_bytes"`
}

// AuditConfig configures the audit trail under <state_dir>/audit.
type AuditConfig struct {
	// Dir overrides the audit directory. Default: <state_dir>/audit.
	Dir string `yaml:"dir"`
	// CheckpointEvery rewrites the signed checkpoint file (the one Rekor anchors) every N records.
	// Every group commit already ends with a signed checkpoint record. Default: 1000.
	CheckpointEvery int `yaml:"checkpoint_every"`
	// CheckpointInterval rewrites the checkpoint file at least this often when records were added.
	// Default: 10s.
	CheckpointInterval time.Duration `yaml:"checkpoint_interval"`
	// SegmentMaxBytes rotates the active segment at this size. Default: 64 MiB.
	SegmentMaxBytes int64 `yaml:"segment_max_bytes"`
	// SegmentMaxAge rotates the active segment at this age. Default: 24h.
	SegmentMaxAge time.Duration `yaml:"segment_max_age"`
	// KeyFile is the Ed25519 checkpoint signing key (note format). Default: <state_dir>/keys/audit.key,
	// generated at first start with mode 0600.
	KeyFile string `yaml:"key_file"`
	// RedactKeys are extra regular expressions over argument keys whose values are redacted.
	RedactKeys []string `yaml:"redact_keys"`
	// RedactValues are extra regular expressions over string values; matches are redacted.
	RedactValues []string `yaml:"redact_values"`
	// Rekor anchors signed checkpoints in a Rekor transparency log. Default: off.
	Rekor RekorConfig `yaml:"rekor"`
}

// RekorConfig configures anchoring (audit/rekor). Anchoring never runs on the decision path.
type RekorConfig struct {
	// URL of the Rekor server; empty turns anchoring off.
	URL string `yaml:"url"`
	// API is "v2" (rekor-tiles, default) or "v1".
	API string `yaml:"api"`
	// Interval between anchoring rounds. Default 15m; a last round runs at shutdown.
	Interval time.Duration `yaml:"interval"`
	// Timeout bounds one upload. Default 30s.
	Timeout time.Duration `yaml:"timeout"`
	// KeyFile is the ECDSA P-256 key entries are signed with (generated, 0600). Default
	// <audit dir>/anchors/rekor.key.
	KeyFile string `yaml:"key_file"`
}

// LogConfig configures log/slog output on stderr.
type LogConfig struct {
	// Level: debug, info, warn, error. Default: info.
	Level string `yaml:"level"`
	// Format: json or text. Default: json.
	Format string `yaml:"format"`
}

// LoadConfig reads a config file strictly: an unknown key is an error.
func LoadConfig(path string) (*Config, error) {
	c := &Config{}
	return c, DecodeStrict(path, c)
}

// DecodeStrict decodes a YAML file into v, refusing unknown keys. An empty path or file leaves
// v as it is.
func DecodeStrict(path string, v any) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// NewJudge builds the tier-2 judge when the configuration has one (nil otherwise).
func NewJudge(cfg *Config, opts ...judge.Option) (shield.Tier, error) {
	if cfg.Judge == nil {
		return nil, nil
	}
	j, err := judge.New(*cfg.Judge, opts...)
	if err != nil {
		return nil, fmt.Errorf("judge: %w", err)
	}
	return j, nil
}

// WithDefaults fills defaults that depend on the environment: the state directory and what lies
// in it, log settings, absolute engine workspaces, and policy.workspace (the first engine's
// workspace when unset).
func (c *Config) WithDefaults() {
	for i := range c.Engines {
		if w := c.Engines[i].Workspace; w != "" {
			if abs, err := filepath.Abs(w); err == nil {
				c.Engines[i].Workspace = abs
			}
		}
	}
	if c.Policy.Workspace == "" && len(c.Engines) > 0 {
		c.Policy.Workspace = c.Engines[0].Workspace
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir()
	}
	if c.Socket == "" {
		c.Socket = filepath.Join(c.StateDir, "shield.sock")
	}
	if c.Audit.Dir == "" {
		c.Audit.Dir = filepath.Join(c.StateDir, "audit")
	}
	if c.Audit.KeyFile == "" {
		c.Audit.KeyFile = filepath.Join(c.StateDir, "keys", "audit.key")
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
}

// Geteuid is os.Geteuid (a variable for tests of DefaultStateDir).
var Geteuid = os.Geteuid

// DefaultStateDir is the state directory when none is configured: $STATE_DIRECTORY (systemd's
// StateDirectory=), else /var/lib/shield for root, else $XDG_STATE_HOME/shield, else
// ~/.local/state/shield. Never the working directory: run from a project, that would put the
// audit trail and its signing key inside the agent's workspace.
func DefaultStateDir() string { return client.StateDirFor(Geteuid()) }

// resolvePath returns p absolute with the symbolic links of its longest existing prefix
// resolved (filepath.EvalSymlinks), so a link cannot hide that one path lies inside another.
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p is parent or lies beneath it (both clean and absolute).
func within(p, parent string) bool {
	rel, err := filepath.Rel(parent, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// CheckStateOutside refuses a state directory (or an audit dir, key file or socket placed
// elsewhere) inside a workspace, and a workspace inside the state directory: either way the agent
// could read the audit signing key and the client tokens, or erase the trail. Paths are compared
// after symbolic links are resolved. serve, start and `shield config check` apply it.
func CheckStateOutside(c *Config, workspaces ...string) error {
	if c.StateDir == "" {
		return nil
	}
	state, err := resolvePath(c.StateDir)
	if err != nil {
		return fmt.Errorf("state_dir %s: %w", c.StateDir, err)
	}
	var errs []error
	seen := map[string]bool{}
	for _, w := range workspaces {
		if w == "" {
			continue
		}
		ws, err := resolvePath(w)
		if err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: %w", w, err))
			continue
		}
		if seen[ws] {
			continue
		}
		seen[ws] = true
		switch {
		case within(state, ws):
			errs = append(errs, fmt.Errorf("state_dir %s is inside the workspace %s: the agent could read the audit key and erase the trail; "+
				"use a state directory outside every workspace (default %s)", state, ws, DefaultStateDir()))
			continue
		case within(ws, state):
			errs = append(errs, fmt.Errorf("workspace %s is inside the state_dir %s: the agent could read the audit key and erase the trail; "+
				"use a state directory outside every workspace", ws, state))
			continue
		}
		for _, f := range []struct{ key, path string }{{"audit.dir", c.Audit.Dir}, {"audit.key_file", c.Audit.KeyFile}, {"socket", c.Socket}} {
			if f.path == "" {
				continue
			}
			p, err := resolvePath(f.path)
			if err == nil && within(p, ws) {
				errs = append(errs, fmt.Errorf("%s %s is inside the workspace %s: keep the appliance's state out of the agent's reach", f.key, p, ws))
			}
		}
	}
	return errors.Join(errs...)
}

// CheckStateDir refuses a state directory that its group or others may write: they could swap
// the audit trail, the keys or the socket. serve and `shield config check` apply this rule.
func CheckStateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state_dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state_dir %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("state_dir %s has mode %04o: writable by group or others; chmod 0750 (or 0700) it", dir, perm)
	}
	return nil
}

// CheckFiles checks what serve checks of the files the configuration names before it uses them:
// the state directory's mode (when it exists; serve creates it 0700), and the modes of the
// tokens file and the TLS key (server.CheckSecretFile).
func (c *Config) CheckFiles() error {
	var errs []error
	if _, err := os.Stat(c.StateDir); err == nil {
		if err := CheckStateDir(c.StateDir); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Auth.TokensFile != "" {
		if err := server.CheckSecretFile(c.Auth.TokensFile); err != nil {
			errs = append(errs, fmt.Errorf("auth.tokens_file: %w", err))
		}
	}
	if c.Auth.TLS.KeyFile != "" {
		if err := server.CheckSecretFile(c.Auth.TLS.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("auth.tls.key_file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Validate reports every problem of the configuration's keys and of the files it names at once:
// each component's own validation (limits, judge, auth files), the state directory outside every
// workspace, the descriptor arithmetic against the hard RLIMIT_NOFILE, and the hosted engines.
// It touches nothing. Check adds what only loading can tell (the bundle, keys, secrets); serve,
// start, eval and `shield config check` all go through it.
func (c *Config) Validate() error {
	var errs []error
	ws := []string{c.Policy.Workspace}
	for _, e := range c.Engines {
		ws = append(ws, e.Workspace)
	}
	if err := CheckStateOutside(c, ws...); err != nil {
		errs = append(errs, err)
	}
	if err := c.CheckFiles(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Limits.Validate(); err == nil {
		// The descriptor arithmetic serve applies at start, against the hard limit it raises to.
		if nofile, err := HardNofile(); err != nil {
			errs = append(errs, err)
		} else if _, err := c.Limits.Fit(nofile, 1+len(c.Listen)+len(c.HTTP.Listen)); err != nil {
			errs = append(errs, fmt.Errorf("limits: %w", err))
		}
	}
	seen := map[string]bool{}
	for i := range c.Engines {
		e := &c.Engines[i]
		if e.Workspace != "" && seen[filepath.Clean(e.Workspace)] {
			errs = append(errs, fmt.Errorf("engines[%d]: workspace %s is hosted twice", i, e.Workspace))
		}
		seen[filepath.Clean(e.Workspace)] = true
		if err := e.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("engines[%d]: %w", i, err))
			continue
		}
		if c.Policy.Workspace != "" && !within(filepath.Clean(e.Workspace), filepath.Clean(c.Policy.Workspace)) {
			errs = append(errs, fmt.Errorf("engines[%d]: workspace %s lies outside policy.workspace %s: the policy would judge its files as outside the workspace",
				i, e.Workspace, c.Policy.Workspace))
		}
	}
	for _, l := range c.Listen {
		host, _, err := net.SplitHostPort(l)
		if err != nil {
			errs = append(errs, fmt.Errorf("listen %q: want host:port: %w", l, err))
			continue
		}
		mtls := c.Auth.TLS.CertFile != "" && c.Auth.TLS.ClientCA != ""
		if ip := net.ParseIP(host); !mtls && (ip == nil || !ip.IsLoopback()) {
			errs = append(errs, fmt.Errorf("listen %q: without mutual TLS (auth.tls with client_ca) only loopback TCP listeners are allowed", l))
		}
		if !c.Dev && c.Auth.TokensFile == "" && !mtls {
			errs = append(errs, fmt.Errorf("listen %q: %w", l, server.ErrInsecureTCP))
		}
	}
	if c.MetricsListen != "" {
		host, _, err := net.SplitHostPort(c.MetricsListen)
		if err != nil {
			errs = append(errs, fmt.Errorf("metrics_listen %q: want host:port: %w", c.MetricsListen, err))
		} else if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			errs = append(errs, fmt.Errorf("metrics_listen %q: the metrics endpoint must listen on loopback", c.MetricsListen))
		}
	}
	if c.Pipeline.CacheSize < -1 {
		errs = append(errs, fmt.Errorf("pipeline.cache_size %d: use -1 (off), 0 (default) or a positive size", c.Pipeline.CacheSize))
	}
	if c.Pipeline.Timeout < 0 {
		errs = append(errs, errors.New("pipeline.timeout must not be negative"))
	}
	if c.Pipeline.MaxArgumentBytes < 0 || c.Pipeline.MaxArgumentBytes > 64<<20 {
		errs = append(errs, fmt.Errorf("pipeline.max_argument_bytes %d: use 0 (1 MiB) up to 64 MiB", c.Pipeline.MaxArgumentBytes))
	}
	if c.Audit.CheckpointEvery < 0 || c.Audit.CheckpointInterval < 0 || c.Audit.SegmentMaxBytes < 0 || c.Audit.SegmentMaxAge < 0 {
		errs = append(errs, errors.New("audit: counts, sizes and intervals must not be negative"))
	}
	if c.Audit.Rekor.URL != "" {
		if u, err := url.Parse(c.Audit.Rekor.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("audit.rekor.url %q: want an http(s) URL", c.Audit.Rekor.URL))
		}
		switch c.Audit.Rekor.API {
		case "", "v1", "v2":
		default:
			errs = append(errs, fmt.Errorf("audit.rekor.api %q: use v1 or v2", c.Audit.Rekor.API))
		}
		if c.Audit.Rekor.Interval < 0 || c.Audit.Rekor.Timeout < 0 {
			errs = append(errs, errors.New("audit.rekor: interval and timeout must not be negative"))
		}
	}
	if c.Approvals.Timeout < 0 {
		errs = append(errs, errors.New("approvals.timeout must not be negative"))
	}
	if c.Approvals.WebhookURL != "" && c.Approvals.WebhookSecretEnv == "" {
		errs = append(errs, errors.New("approvals.webhook_url needs approvals.webhook_secret_env: notices are always signed"))
	}
	if err := c.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Judge != nil {
		if err := c.Judge.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	switch c.Approvals.WebhookFormat {
	case "", "shield", "slack", "chat":
	default:
		errs = append(errs, fmt.Errorf("approvals.webhook_format %q: use shield, slack or chat", c.Approvals.WebhookFormat))
	}
	if err := c.HTTP.Validate(c.Auth, c.Dev); err != nil {
		errs = append(errs, err)
	}
	if c.Export != nil {
		if err := c.Export.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Runtime.Validate(); err != nil {
		errs = append(errs, err)
	}
	switch c.Log.Level {
	case "", "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level %q: use debug, info, warn or error", c.Log.Level))
	}
	switch c.Log.Format {
	case "", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log.format %q: use json or text", c.Log.Format))
	}
	return errors.Join(errs...)
}

// Validate reports every problem of one engine at once: the workspace, and the llm section the
// agent cannot start without (a missing one is a configuration error, not an agent that
// crash-loops).
func (e *EngineConfig) Validate() error {
	var errs []error
	if e.Workspace == "" {
		errs = append(errs, errors.New("workspace is required"))
	} else if fi, err := os.Stat(e.Workspace); err != nil || !fi.IsDir() {
		errs = append(errs, fmt.Errorf("workspace %s is not a directory", e.Workspace))
	}
	l := e.LLM
	switch {
	case l.Provider == "" && l.BaseURL == "" && l.Model == "":
		errs = append(errs, errors.New("llm: missing: the agent needs a model (llm.provider, llm.base_url, llm.model; see README)"))
	default:
		switch l.Provider {
		case "openai", "anthropic":
		default:
			errs = append(errs, fmt.Errorf("llm.provider %q: use openai or anthropic", l.Provider))
		}
		if u, err := url.Parse(l.BaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, fmt.Errorf("llm.base_url %q: want an http(s) URL", l.BaseURL))
		}
		if l.Model == "" {
			errs = append(errs, errors.New("llm.model is required"))
		}
		if strings.ContainsAny(l.APIKeyEnv, "=\x00") {
			errs = append(errs, fmt.Errorf("llm.api_key_env %q: not a variable name", l.APIKeyEnv))
		}
	}
	return errors.Join(errs...)
}
