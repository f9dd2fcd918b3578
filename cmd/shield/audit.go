package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/shieldsec/shield/audit"
	"github.com/shieldsec/shield/audit/rekor"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

func init() {
	register(&command{name: "audit", summary: "verify, query, tail and export the audit trail", run: runAudit})
}

const auditUsage = `verify|query|get|tail|export [FLAGS]

  verify [--dir DIR] [--pubkey FILE]       check the log offline; exit 0 only when intact
  query  [--since T] [--until T] [--session S] [--agent A] [--tool T] [--class C]
         [--decision D] [--tier N] [--rule R] [--type T]... [--filter CEL] [--newest] [--limit N]
  get    SEQ [--proof]                     one record (and its inclusion proof)
  tail   [-n N] [--follow]                 the last records (--follow needs --addr)
  export [--from SEQ] [--to SEQ] [--out F] the stored lines, verbatim (JSON lines)
  export --sink jsonl|syslog|http [--follow] [--cursor F] [--format ocsf|record] [--type T]...
         jsonl: [--out F]   syslog: --address H:P [--tls --ca F --cert F --key F] [--facility N]
         http: --url U [--token-env VAR] [--header 'K: V']... [--ca F]
                                           ship to a SIEM, at least once, resuming from --cursor

query, get, tail and export read the files in --dir, or ask a running service with --addr.`

func runAudit(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.stderr, "Usage: shield audit %s\n", auditUsage)
		if len(args) == 0 {
			return usageError{"missing subcommand"}
		}
		return flag.ErrHelp
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "verify":
		return runAuditVerify(env, rest)
	case "query", "get", "tail", "export":
		return runAuditRead(ctx, env, sub, rest)
	}
	return usageError{fmt.Sprintf("unknown audit subcommand %q (verify, query, get, tail, export)", sub)}
}

// auditDirs resolves --state-dir and --dir.
func auditDirs(stateDir, dir string) (string, string) {
	if stateDir == "" {
		cfg := &Config{}
		cfg.WithDefaults()
		stateDir = cfg.StateDir
	}
	if dir == "" {
		dir = filepath.Join(stateDir, "audit")
	}
	return stateDir, dir
}

func runAuditVerify(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "audit verify", "[--dir DIR] [--state-dir DIR] [--pubkey FILE] [--rekor-pubkey FILE] [--json]")
	stateDir := fs.String("state-dir", "", "state directory (default $STATE_DIRECTORY, /var/lib/shield as root, else $XDG_STATE_HOME/shield)")
	dir := fs.String("dir", "", "audit log directory (default <state-dir>/audit)")
	pubFile := fs.String("pubkey", "", "checkpoint verifier key file (note key \"name+hash+key\"); default the key the service wrote, with a warning")
	rekorPub := fs.String("rekor-pubkey", "", "Rekor log public key, to verify the anchors of checkpoints")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"verify takes no arguments"}
	}
	sd, d := auditDirs(*stateDir, *dir)
	keyFile := *pubFile
	if keyFile == "" {
		for _, c := range []string{filepath.Join(sd, "keys", "audit.key.pub"), filepath.Join(d, "signing.key.pub")} {
			if _, err := os.Stat(c); err == nil {
				keyFile = c
				break
			}
		}
		if keyFile == "" {
			return usageError{"no --pubkey given and no public key found beside the log"}
		}
		fmt.Fprintf(env.stderr, "warning: using %s, the key stored beside the log; whoever can rewrite the log may have replaced it too. Pass --pubkey with a copy kept elsewhere.\n", keyFile)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("read public key: %w", err)
	}
	rep, err := audit.Verify(d, strings.TrimSpace(string(key)))
	var ve *audit.VerifyError
	if errors.As(err, &ve) {
		if *asJSON {
			json.NewEncoder(env.stdout).Encode(map[string]any{"intact": false, "seq": ve.Seq, "file": ve.File, "reason": ve.Reason})
		} else {
			fmt.Fprintf(env.stdout, "NOT INTACT: first bad seq %d (%s): %s\n", ve.Seq, ve.File, ve.Reason)
		}
		return exitError{code: 1}
	}
	if err != nil {
		return err
	}
	// Anchors: every checkpoint anchored in Rekor must be in the log, and its Rekor entry must
	// verify against the Rekor log's key.
	var anchors []rekor.Anchor
	anchorDir := filepath.Join(d, "anchors")
	if *rekorPub != "" {
		rk, err := os.ReadFile(*rekorPub)
		if err != nil {
			return fmt.Errorf("read rekor public key: %w", err)
		}
		if anchors, err = rekor.VerifyAnchors(anchorDir, []string{strings.TrimSpace(string(key))}, rep.Notes, rk); err != nil {
			if *asJSON {
				json.NewEncoder(env.stdout).Encode(map[string]any{"intact": false, "reason": err.Error()})
			} else {
				fmt.Fprintf(env.stdout, "NOT INTACT: %v\n", err)
			}
			return exitError{code: 1}
		}
		if len(anchors) == 0 {
			rep.Warnings = append(rep.Warnings, "no Rekor anchors in "+anchorDir)
		}
	} else if ents, _ := os.ReadDir(anchorDir); len(ents) > 0 {
		rep.Warnings = append(rep.Warnings, "Rekor anchors present but not verified (pass --rekor-pubkey)")
	}
	if *asJSON {
		return json.NewEncoder(env.stdout).Encode(map[string]any{"intact": true, "records": rep.Records, "rekor_anchors": len(anchors),
			"segments": rep.Segments, "checkpoints": rep.Checkpoints, "checkpoint_size": rep.LastCheckpoint.Size,
			"checkpoint_root": rep.LastCheckpoint.Root, "root": rep.Root, "unsigned": rep.Uncovered, "warnings": rep.Warnings})
	}
	fmt.Fprintf(env.stdout, "intact: %d records in %d segments, %d checkpoints verified\n", rep.Records, rep.Segments, rep.Checkpoints)
	if rep.LastCheckpoint.Size > 0 {
		fmt.Fprintf(env.stdout, "last checkpoint: %s, %d records, root %s\n", rep.LastCheckpoint.Origin, rep.LastCheckpoint.Size, audit.HashHex(rep.LastCheckpoint.Root))
	}
	for _, an := range anchors {
		fmt.Fprintf(env.stdout, "rekor: checkpoint of %d records anchored at log index %d\n", an.Size, an.LogIndex)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.stdout, "note: %s\n", w)
	}
	return nil
}

// auditReadFlags are the flags of query, get, tail and export.
type auditReadFlags struct {
	stateDir, dir, addr                                                    *string
	asJSON                                                                 *bool
	since, until, session, agent, tool, class, decision, rule, filter, out *string
	tier                                                                   *int
	types                                                                  stringList
	newest, follow, proof                                                  *bool
	limit                                                                  *int
	from, to                                                               *uint64
}

func runAuditRead(ctx context.Context, env *cmdEnv, sub string, args []string) error {
	fs := newFlagSet(env, "audit "+sub, "[FLAGS]")
	var sinkFlags func(string) (*ExportConfig, error)
	f := auditReadFlags{
		stateDir: fs.String("state-dir", "", "state directory (default $STATE_DIRECTORY, /var/lib/shield as root, else $XDG_STATE_HOME/shield)"),
		dir:      fs.String("dir", "", "audit log directory (default <state-dir>/audit)"),
		addr:     fs.String("addr", "", "ask the service's AuditService at this address (unix:///path or host:port) instead of reading files"),
		asJSON:   fs.Bool("json", false, "print records as stored (canonical JSON lines)"),
	}
	switch sub {
	case "query":
		f.since = fs.String("since", "", "records at or after: RFC 3339 time or a duration ago (e.g. 1h)")
		f.until = fs.String("until", "", "records before: RFC 3339 time or a duration ago")
		f.session = fs.String("session", "", "session id")
		f.agent = fs.String("agent", "", "agent id")
		f.tool = fs.String("tool", "", "tool name")
		f.class = fs.String("class", "", "action class")
		f.decision = fs.String("decision", "", "ALLOW, BLOCK or ESCALATE")
		f.tier = fs.Int("tier", -1, "deciding tier (0..3; -1: any)")
		f.rule = fs.String("rule", "", "a rule id that fired")
		fs.Var(&f.types, "type", "record type (repeatable)")
		f.filter = fs.String("filter", "", "CEL expression over `record` (needs --addr)")
		f.newest = fs.Bool("newest", false, "newest first")
		f.limit = fs.Int("limit", 50, "records to print (1..100000)")
	case "get":
		f.proof = fs.Bool("proof", false, "also print the inclusion proof against the latest checkpoint")
	case "tail":
		f.limit = fs.Int("n", 20, "records to print")
		f.follow = fs.Bool("follow", false, "keep printing new records (needs --addr)")
	case "export":
		f.from = fs.Uint64("from", 0, "first seq (with --sink and --cursor: only when the cursor file does not exist yet)")
		f.to = fs.Uint64("to", 0, "stop before this seq (0: the end)")
		f.out = fs.String("out", "", "write to this file (default stdout); with --sink jsonl: appended, fsynced per batch")
		f.follow = fs.Bool("follow", false, "with --sink: keep shipping new records until interrupted")
		sinkFlags = addExportFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if sinkFlags != nil {
		c, err := sinkFlags(*f.out)
		if err != nil {
			return err
		}
		if c != nil {
			if *f.addr != "" {
				return usageError{"--sink reads the files in --dir (inside serve, use the export: section of the config)"}
			}
			if fs.NArg() != 0 {
				return usageError{"export takes no arguments"}
			}
			return auditExportSinkCmd(ctx, env, *f.stateDir, *f.dir, c, *f.follow, *f.from, *f.to)
		}
		if *f.follow {
			return usageError{"--follow needs --sink"}
		}
	}
	src, err := openAuditSource(*f.stateDir, *f.dir, *f.addr)
	if err != nil {
		return err
	}
	defer src.Close()
	switch sub {
	case "query":
		return auditQueryCmd(ctx, env, src, &f, fs.Args())
	case "get":
		return auditGetCmd(ctx, env, src, &f, fs.Args())
	case "tail":
		return auditTailCmd(ctx, env, src, &f, fs.Args())
	default:
		return auditExportCmd(ctx, env, src, &f, fs.Args())
	}
}

// auditSource is the audit log, read from files or through the AuditService.
type auditSource struct {
	log    *audit.Log
	conn   *grpc.ClientConn
	client shieldv1.AuditServiceClient
}

func openAuditSource(stateDir, dir, addr string) (*auditSource, error) {
	if addr != "" {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", addr, err)
		}
		return &auditSource{conn: conn, client: shieldv1.NewAuditServiceClient(conn)}, nil
	}
	_, d := auditDirs(stateDir, dir)
	l, err := audit.OpenReadOnly(d)
	if err != nil {
		return nil, err
	}
	return &auditSource{log: l}, nil
}

func (s *auditSource) Close() {
	if s.log != nil {
		s.log.Close()
	}
	if s.conn != nil {
		s.conn.Close()
	}
}

// query runs one page of q, whose filter fields audit.ParseFilter validated (paging in
// q.Newest and q.Limit); filter is a CEL expression the service evaluates, token the position
// the previous page returned ("" at the start).
func (s *auditSource) query(ctx context.Context, q audit.Query, filter, token string) ([]*audit.Record, string, error) {
	if s.client != nil {
		req := &shieldv1.QueryAuditRequest{SessionId: q.SessionID, AgentId: q.AgentID, Tool: q.Tool, ActionClass: q.ActionClass,
			Decision: q.Decision, Rule: q.Rule, Filter: filter, NewestFirst: q.Newest, PageSize: int32(q.Limit), PageToken: token}
		if !q.Since.IsZero() {
			req.Since = timestamppb.New(q.Since)
		}
		if !q.Until.IsZero() {
			req.Until = timestamppb.New(q.Until)
		}
		if q.Tier != nil {
			req.Tier = proto.Int32(int32(*q.Tier))
		}
		for _, t := range q.Types {
			req.Types = append(req.Types, string(t))
		}
		res, err := s.client.Query(ctx, req)
		if err != nil {
			return nil, "", err
		}
		recs, err := auditFromProto(res.Records)
		return recs, res.NextPageToken, err
	}
	if filter != "" {
		return nil, "", usageError{"--filter needs --addr (CEL filters run in the service)"}
	}
	if token != "" {
		n, err := strconv.ParseUint(token, 10, 64)
		if err != nil {
			return nil, "", err
		}
		if q.Newest {
			q.ToSeq = n
		} else {
			q.FromSeq = n
		}
	}
	res, err := s.log.Query(ctx, q)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if res.More {
		next = strconv.FormatUint(res.Next, 10)
	}
	return res.Records, next, nil
}

func auditFromProto(rs []*shieldv1.AuditRecord) ([]*audit.Record, error) {
	out := make([]*audit.Record, 0, len(rs))
	for _, r := range rs {
		rec, err := audit.DecodeRecord([]byte(r.Line))
		if err != nil {
			return nil, fmt.Errorf("record %d from the service does not verify: %w", r.Seq, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

func auditQueryCmd(ctx context.Context, env *cmdEnv, src *auditSource, f *auditReadFlags, args []string) error {
	if len(args) != 0 {
		return usageError{"query takes no arguments"}
	}
	if *f.limit < 1 || *f.limit > 100_000 {
		return usageError{"--limit must be 1..100000"}
	}
	// A filter value no record can hold would silently print nothing: audit.ParseFilter refuses
	// it (the service applies the same checks).
	tier := ""
	if *f.tier != -1 {
		tier = strconv.Itoa(*f.tier)
	}
	q, err := audit.ParseFilter(audit.FilterArgs{Since: *f.since, Until: *f.until, SessionID: *f.session,
		AgentID: *f.agent, Tool: *f.tool, ActionClass: *f.class, Rule: *f.rule, Decision: *f.decision,
		Tier: tier, Types: f.types}, time.Now())
	if err != nil {
		return usageError{strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	q.Newest = *f.newest
	var all []*audit.Record
	token := ""
	for len(all) < *f.limit {
		q.Limit = min(*f.limit-len(all), 1000)
		recs, next, err := src.query(ctx, q, *f.filter, token)
		if err != nil {
			return err
		}
		all = append(all, recs...)
		if next == "" {
			break
		}
		token = next
	}
	return printAuditRecords(env.stdout, all, *f.asJSON)
}

func auditGetCmd(ctx context.Context, env *cmdEnv, src *auditSource, f *auditReadFlags, args []string) error {
	if len(args) != 1 {
		return usageError{"get takes one sequence number"}
	}
	seq, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return usageError{fmt.Sprintf("bad sequence number %q", args[0])}
	}
	var rec *audit.Record
	var proof *shieldv1.AuditInclusionProof
	if src.client != nil {
		r, err := src.client.Get(ctx, &shieldv1.GetAuditRecordRequest{Seq: seq})
		if err != nil {
			return err
		}
		recs, err := auditFromProto([]*shieldv1.AuditRecord{r})
		if err != nil {
			return err
		}
		rec = recs[0]
		if *f.proof {
			if proof, err = src.client.InclusionProof(ctx, &shieldv1.AuditInclusionProofRequest{Seq: seq}); err != nil {
				return err
			}
		}
	} else {
		if rec, err = src.log.Get(seq); err != nil {
			return err
		}
		if *f.proof {
			_, c, err := src.log.SignedCheckpoint()
			if err != nil {
				return err
			}
			leaf, p, err := src.log.InclusionProof(seq, c.Size)
			if err != nil {
				return err
			}
			proof = &shieldv1.AuditInclusionProof{Seq: seq, TreeSize: c.Size, LeafHash: leaf, Hashes: p, RootHash: c.Root}
		}
	}
	if err := printAuditRecords(env.stdout, []*audit.Record{rec}, true); err != nil {
		return err
	}
	if proof != nil {
		if err := audit.VerifyInclusion(seq, proof.TreeSize, proof.LeafHash, proof.Hashes, proof.RootHash); err != nil {
			return fmt.Errorf("inclusion proof does not verify: %w", err)
		}
		hashes := make([]string, len(proof.Hashes))
		for i, h := range proof.Hashes {
			hashes[i] = audit.HashHex(h)
		}
		return json.NewEncoder(env.stdout).Encode(map[string]any{"inclusion_proof": map[string]any{
			"seq": seq, "tree_size": proof.TreeSize, "leaf_hash": audit.HashHex(proof.LeafHash),
			"root_hash": audit.HashHex(proof.RootHash), "hashes": hashes, "verified": true}})
	}
	return nil
}

func auditTailCmd(ctx context.Context, env *cmdEnv, src *auditSource, f *auditReadFlags, args []string) error {
	if len(args) != 0 {
		return usageError{"tail takes no arguments"}
	}
	if *f.limit < 0 || *f.limit > 10_000 {
		return usageError{"-n must be 0..10000"}
	}
	if *f.follow && src.client == nil {
		return usageError{"--follow needs --addr"}
	}
	var recs []*audit.Record
	if *f.limit > 0 {
		var err error
		recs, _, err = src.query(ctx, audit.Query{Newest: true, Limit: *f.limit}, "", "")
		if err != nil {
			return err
		}
	}
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	if err := printAuditRecords(env.stdout, recs, *f.asJSON); err != nil {
		return err
	}
	if !*f.follow {
		return nil
	}
	req := &shieldv1.TailAuditRequest{}
	if len(recs) > 0 {
		req.FromSeq = proto.Uint64(recs[len(recs)-1].Seq + 1)
	}
	st, err := src.client.Tail(ctx, req)
	if err != nil {
		return err
	}
	for {
		r, err := st.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		rs, err := auditFromProto([]*shieldv1.AuditRecord{r})
		if err != nil {
			return err
		}
		if err := printAuditRecords(env.stdout, rs, *f.asJSON); err != nil {
			return err
		}
	}
}

func auditExportCmd(ctx context.Context, env *cmdEnv, src *auditSource, f *auditReadFlags, args []string) error {
	if len(args) != 0 {
		return usageError{"export takes no arguments"}
	}
	w := env.stdout
	if *f.out != "" {
		file, err := os.OpenFile(*f.out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	token := strconv.FormatUint(*f.from, 10)
	if src.client != nil {
		token = "s" + token
	}
	n := 0
	for {
		recs, next, err := src.query(ctx, audit.Query{Limit: 1000}, "", token)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if *f.to != 0 && r.Seq >= *f.to {
				next = ""
				break
			}
			line, _ := r.MarshalJSON()
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
			n++
		}
		if next == "" {
			break
		}
		token = next
	}
	if *f.out != "" {
		fmt.Fprintf(env.stderr, "exported %d records to %s\n", n, *f.out)
	}
	return nil
}

// auditRow is the union of the payload members the table shows, over every record type.
type auditRow struct {
	// decision
	Decision    string   `json:"decision"`
	Tier        *int     `json:"tier"`
	Tool        string   `json:"tool"`
	ActionClass string   `json:"action_class"`
	SessionID   string   `json:"session_id"`
	Rules       []string `json:"rules"`
	Reason      string   `json:"reason"`
	// approval_requested, approval_resolved
	ID       string `json:"id"`
	State    string `json:"state"`
	Resolver string `json:"resolver"`
	Comment  string `json:"comment"`
	// service_start/stop, bundle_activated, agent_event, checkpoint, recovered, anchored
	Version        string  `json:"version"`
	BundleRevision string  `json:"bundle_revision"`
	Event          string  `json:"event"`
	Detail         any     `json:"detail"`
	Size           *uint64 `json:"size"`
}

// cells returns the DECISION, TIER and REASON cells of a record of any type.
func (p *auditRow) cells(t audit.Type) (decision, tier, reason string) {
	if p.Tier != nil && t == audit.TypeDecision {
		tier = strconv.Itoa(*p.Tier)
	}
	switch t {
	case audit.TypeDecision:
		return p.Decision, tier, p.Reason
	case audit.TypeApprovalRequested, audit.TypeApprovalResolved:
		decision = strings.ToUpper(p.State)
		reason = p.Reason
		if p.Resolver != "" {
			reason = "by " + p.Resolver
			if p.Comment != "" {
				reason += ": " + p.Comment
			}
		}
		return decision, "", strings.TrimSpace(p.ID + " " + reason)
	case audit.TypeServiceStart, audit.TypeServiceStop, audit.TypeBundleActivated:
		return "", "", strings.TrimSpace(strings.TrimSpace("version "+p.Version) + " " + p.BundleRevision)
	case audit.TypeAgentEvent:
		d := ""
		if p.Detail != nil {
			b, _ := json.Marshal(p.Detail)
			d = string(b)
		}
		return "", "", strings.TrimSpace(p.Event + " " + d)
	case audit.TypeCheckpoint:
		if p.Size != nil {
			return "", "", fmt.Sprintf("covers %d records", *p.Size)
		}
	case audit.TypeRecovered:
		return "", "", p.Reason
	}
	return "", tier, p.Reason
}

// printAuditRecords writes records as a table, or as stored lines.
func printAuditRecords(w io.Writer, recs []*audit.Record, asJSON bool) error {
	if asJSON {
		for _, r := range recs {
			line, _ := r.MarshalJSON()
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tTYPE\tDECISION\tTIER\tTOOL\tCLASS\tSESSION\tRULES\tREASON")
	for _, r := range recs {
		var p auditRow
		_ = json.Unmarshal(r.Payload, &p) // a payload of another shape prints its known cells only
		dec, tier, reason := p.cells(r.Type)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Format(time.RFC3339Nano), r.Type,
			auditCell(dec), tier, auditCell(p.Tool), auditCell(p.ActionClass), auditCell(p.SessionID),
			auditCell(strings.Join(p.Rules, ",")), auditCell(reason))
	}
	return tw.Flush()
}

// auditCell keeps a table cell on one line, free of terminal control characters, and bounded.
func auditCell(s string) string {
	rs := []rune(strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s))
	if len(rs) > 80 {
		return string(rs[:77]) + "..."
	}
	return string(rs)
}
