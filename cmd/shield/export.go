package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/cmd/shield/appliance"
)

// auditExportSinkCmd is shield audit export --sink: ship the trail in --dir through a sink,
// once or following it.
func auditExportSinkCmd(ctx context.Context, env *cmdEnv, stateDir, dir string, c *ExportConfig, follow bool, from, to uint64) error {
	if err := c.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if follow && c.Cursor == "" {
		fmt.Fprintln(env.stderr, "warning: --follow without --cursor: a restart ships again from --from")
	}
	if c.Cursor != "" {
		if err := os.MkdirAll(filepath.Dir(c.Cursor), 0o700); err != nil {
			return fmt.Errorf("create export cursor dir: %w", err)
		}
	}
	_, d := auditDirs(stateDir, dir)
	src, err := audit.NewDirSource(d)
	if err != nil {
		return err
	}
	defer src.Close()
	sink, err := appliance.NewExportSink(c, env.stdout)
	if err != nil {
		return err
	}
	defer sink.Close()
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ec := c.ShipperConfig(c.Cursor, log)
	ec.From, ec.To = from, to
	sh, err := audit.NewShipper(ec, src, sink)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := sh.Run(ctx, follow); err != nil {
		return err
	}
	if st := sh.Stats(); c.Sink != "jsonl" || (c.Path != "" && c.Path != "-") {
		fmt.Fprintf(env.stderr, "shipped %d records; next seq %d\n", st.Shipped, st.Next)
	}
	return nil
}

// addExportFlags adds the --sink flags to fs and returns a function giving the section they
// fill (nil without --sink). out is the jsonl file (--out).
func addExportFlags(fs *flag.FlagSet) func(out string) (*ExportConfig, error) {
	sink := fs.String("sink", "", "ship through a sink: jsonl, syslog or http (without --sink: the stored lines, verbatim)")
	format := fs.String("format", "ocsf", "with --sink: ocsf (OCSF 1.1 events) or record (the stored lines)")
	cursor := fs.String("cursor", "", "with --sink: position file (resume after a restart; fsynced after each acknowledged batch)")
	batch := fs.Int("batch", 500, "with --sink: records per send")
	var types, headers stringList
	fs.Var(&types, "type", "with --sink: ship only this record type (repeatable; default every type but checkpoint)")
	address := fs.String("address", "", "syslog: receiver host:port")
	useTLS := fs.Bool("tls", false, "syslog: speak TLS")
	ca := fs.String("ca", "", "syslog/http: CA certificates (PEM) replacing the system roots")
	cert := fs.String("cert", "", "syslog/http: client certificate (PEM)")
	key := fs.String("key", "", "syslog/http: client key (PEM)")
	serverName := fs.String("server-name", "", "syslog: TLS server name (default the address's host)")
	facility := fs.Int("facility", 13, "syslog: facility 0..23")
	url := fs.String("url", "", "http: receiver URL")
	tokenEnv := fs.String("token-env", "", "http: environment variable with a bearer token")
	fs.Var(&headers, "header", "http: extra header 'Name: value' (repeatable)")
	return func(out string) (*ExportConfig, error) {
		if *sink == "" {
			return nil, nil
		}
		c := &ExportConfig{Sink: *sink, Format: *format, Cursor: *cursor, Batch: *batch, Types: types, Path: out,
			Syslog: SyslogExportConfig{Address: *address, TLS: *useTLS, CAFile: *ca, CertFile: *cert, KeyFile: *key, ServerName: *serverName, Facility: facility},
			HTTP:   HTTPExportConfig{URL: *url, TokenEnv: *tokenEnv, CAFile: *ca, CertFile: *cert, KeyFile: *key}}
		if *sink != "syslog" {
			c.Syslog = SyslogExportConfig{}
		}
		if *sink != "http" {
			c.HTTP = HTTPExportConfig{}
		}
		if len(headers) > 0 {
			c.HTTP.Headers = map[string]string{}
			for _, h := range headers {
				k, v, ok := strings.Cut(h, ":")
				if !ok {
					return nil, usageError{fmt.Sprintf("--header %q: want 'Name: value'", h)}
				}
				c.HTTP.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		return c, nil
	}
}
