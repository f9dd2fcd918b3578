package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

func init() {
	register(&command{name: "approvals", summary: "list, show, approve, deny or watch human approval requests", run: runApprovals})
}

const approvalsUsage = `list|show ID|approve ID|deny ID|revoke ID|watch [--addr ADDR] [--state-dir DIR] [--token-env VAR] [--comment TEXT] [--for DURATION] [--limit N] [--page-size N] [--all] [--json]`

// dialService connects to a running service: --addr (unix:///path or host:port), else the unix
// socket in the state dir. A bearer token is read from the environment variable named by tokenEnv.
func dialService(ctx context.Context, addr, stateDir, tokenEnv string) (*grpc.ClientConn, context.Context, error) {
	if addr == "" {
		// gRPC does not resolve a relative unix path (it waits for a connection that never
		// comes): make it absolute, as the default state directory may be.
		sock, err := filepath.Abs(filepath.Join(stateDir, "shield.sock"))
		if err != nil {
			return nil, ctx, err
		}
		addr = "unix://" + sock
	}
	if !strings.HasPrefix(addr, "unix://") && !strings.Contains(addr, "://") {
		addr = "passthrough:///" + addr
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, ctx, err
	}
	if tokenEnv != "" {
		if tok := lookupEnv(tokenEnv); tok != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
		}
	}
	return conn, ctx, nil
}

func runApprovals(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		return usageError{"missing subcommand\nUsage: shield approvals " + approvalsUsage}
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet(env, "approvals "+sub, approvalsUsage)
	addr := fs.String("addr", "", "service address (default: unix socket in --state-dir)")
	stateDir := fs.String("state-dir", defaultStateDir(), "state directory of the service")
	tokenEnv := fs.String("token-env", "SHIELD_TOKEN", "environment variable holding a bearer token (TCP)")
	comment := fs.String("comment", "", "comment recorded with approve/deny/revoke")
	grant := fs.Duration("for", 0, "with approve: a scoped grant, allowing the same call in the same session for this long (at most 24h) instead of once")
	asJSON := fs.Bool("json", false, "print JSON")
	limit := fs.Int("limit", 0, "with list: show at most this many requests (0: all)")
	pageSize := fs.Int("page-size", 100, "with list: requests asked for per page (at most 500); list follows the pages")
	listAll := fs.Bool("all", false, "with list: also resolved requests (kept for approvals.retention)")
	// Flags may come before or after the id.
	var pos []string
	for len(rest) > 0 {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	conn, cctx, err := dialService(ctx, *addr, *stateDir, *tokenEnv)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := shieldv1.NewApprovalServiceClient(conn)
	needID := func() (string, error) {
		if len(pos) != 1 {
			return "", usageError{"give exactly one approval id"}
		}
		return pos[0], nil
	}
	show := func(a *shieldv1.Approval) {
		if *asJSON {
			b, _ := protojson.Marshal(a)
			fmt.Fprintln(env.stdout, string(b))
			return
		}
		printApproval(env.stdout, a)
	}
	switch sub {
	case "list":
		if *limit < 0 || *pageSize < 1 || *pageSize > 500 {
			return usageError{"--limit must not be negative; --page-size must be in [1, 500]"}
		}
		var tw *tabwriter.Writer
		if !*asJSON {
			tw = tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tTOOL\tCLASS\tSESSION\tCALLER\tEXPIRES\tWHY")
		}
		// Pages are bounded by the service; follow them until the last or --limit.
		n, token := 0, ""
		for {
			size := *pageSize
			if *limit > 0 {
				size = min(size, *limit-n)
			}
			r, err := c.ListPending(cctx, &shieldv1.ListPendingApprovalsRequest{PageSize: int32(size), PageToken: token, IncludeResolved: *listAll})
			if err != nil {
				return err
			}
			for _, a := range r.GetApprovals() {
				if *limit > 0 && n == *limit {
					break
				}
				n++
				if *asJSON {
					show(a)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", approvalsSafe(a.GetId()), approvalsSafe(a.GetState()), approvalsSafe(a.GetTool()),
					approvalsSafe(a.GetActionClass()), approvalsSafe(a.GetSessionId()), approvalsSafe(a.GetCaller()),
					time.Until(a.GetExpires().AsTime()).Round(time.Second), approvalsSafe(strings.Join(a.GetRules(), ",")))
			}
			token = r.GetNextPageToken()
			if token == "" || (*limit > 0 && n >= *limit) || len(r.GetApprovals()) == 0 {
				break
			}
		}
		if tw != nil {
			return tw.Flush()
		}
	case "show":
		id, err := needID()
		if err != nil {
			return err
		}
		a, err := c.Get(cctx, &shieldv1.GetApprovalRequest{Id: id})
		if err != nil {
			return err
		}
		show(a)
	case "approve", "deny":
		id, err := needID()
		if err != nil {
			return err
		}
		if *grant < 0 || (*grant > 0 && sub != "approve") || *grant%time.Second != 0 {
			return usageError{"--for takes a whole number of seconds and only applies to approve"}
		}
		a, err := c.Resolve(cctx, &shieldv1.ResolveApprovalRequest{Id: id, Approve: sub == "approve", Comment: *comment,
			GrantSeconds: int64(*grant / time.Second)})
		if err != nil {
			return err
		}
		show(a)
	case "revoke":
		// Ends a granted scope (approve --for) before its time: the next identical call asks again.
		id, err := needID()
		if err != nil {
			return err
		}
		a, err := c.Revoke(cctx, &shieldv1.RevokeApprovalRequest{Id: id, Comment: *comment})
		if err != nil {
			return err
		}
		show(a)
	case "watch":
		st, err := c.Watch(cctx, &shieldv1.WatchApprovalsRequest{})
		if err != nil {
			return err
		}
		for {
			a, err := st.Recv()
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
			show(a)
		}
	default:
		return usageError{fmt.Sprintf("unknown subcommand %q\nUsage: shield approvals %s", sub, approvalsUsage)}
	}
	return nil
}

// approvalsSafe escapes control and format characters: every field of a request may come from
// the agent, and must not drive the approver's terminal (escape sequences, bidi overrides).
func approvalsSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			b.WriteString(strconv.QuoteRune(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// approvalsSafeLines is approvalsSafe keeping line breaks.
func approvalsSafeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = approvalsSafe(l)
	}
	return strings.Join(lines, "\n")
}

func printApproval(w io.Writer, a *shieldv1.Approval) {
	pretty := a.GetArgumentsJson()
	var args any
	if json.Unmarshal([]byte(pretty), &args) == nil {
		if b, err := json.MarshalIndent(args, "  ", "  "); err == nil {
			pretty = string(b)
		}
	}
	fmt.Fprintf(w, "%s  %s  (%d of %d approvals)\n  tool:     %s (%s)\n  session:  %s  agent: %s  caller: %s\n  why:      %s\n  rules:    %s\n  created:  %s  expires: %s\n  arguments:\n  %s\n",
		approvalsSafe(a.GetId()), strings.ToUpper(approvalsSafe(a.GetState())), len(a.GetApprovers()), a.GetNeedApprovers(),
		approvalsSafe(a.GetTool()), approvalsSafe(a.GetActionClass()),
		approvalsSafe(a.GetSessionId()), approvalsSafe(a.GetAgentId()), approvalsSafe(a.GetCaller()), approvalsSafe(a.GetReason()),
		approvalsSafe(strings.Join(a.GetRules(), ", ")),
		a.GetCreated().AsTime().Format(time.RFC3339), a.GetExpires().AsTime().Format(time.RFC3339), approvalsSafeLines(pretty))
	if len(a.GetRedacted()) > 0 {
		fmt.Fprintf(w, "  redacted: %s (secret-looking values are not kept; what they hid is not shown)\n", approvalsSafe(strings.Join(a.GetRedacted(), ", ")))
	}
	if a.GetArgumentsTruncated() {
		fmt.Fprintf(w, "  arguments (%d bytes) cut to a preview: shield approvals show %s\n", a.GetArgumentsBytes(), approvalsSafe(a.GetId()))
	}
	if a.GetGrantUntil() != nil {
		fmt.Fprintf(w, "  granted until: %s (same call, same session)\n", a.GetGrantUntil().AsTime().Format(time.RFC3339))
	}
	if a.GetResolver() != "" {
		fmt.Fprintf(w, "  resolved by %s: %s\n", approvalsSafe(a.GetResolver()), approvalsSafe(a.GetComment()))
	}
}
