package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

func init() {
	register(&command{name: "approvals", summary: "list, show, approve, deny or watch human approval requests", run: runApprovals})
}

const approvalsUsage = `list|show ID|approve ID|deny ID|watch [--addr ADDR] [--state-dir DIR] [--token-env VAR] [--comment TEXT] [--json]`

// dialService connects to a running service: --addr (unix:///path or host:port), else the unix
// socket in the state dir. A bearer token is read from the environment variable named by tokenEnv.
func dialService(ctx context.Context, addr, stateDir, tokenEnv string) (*grpc.ClientConn, context.Context, error) {
	if addr == "" {
		addr = "unix://" + filepath.Join(stateDir, "shield.sock")
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
	stateDir := fs.String("state-dir", "./var", "state directory of the service")
	tokenEnv := fs.String("token-env", "SHIELD_TOKEN", "environment variable holding a bearer token (TCP)")
	comment := fs.String("comment", "", "comment recorded with approve/deny")
	asJSON := fs.Bool("json", false, "print JSON")
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
		r, err := c.ListPending(cctx, &shieldv1.ListPendingApprovalsRequest{})
		if err != nil {
			return err
		}
		if *asJSON {
			for _, a := range r.GetApprovals() {
				show(a)
			}
			return nil
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOOL\tCLASS\tSESSION\tCALLER\tEXPIRES\tWHY")
		for _, a := range r.GetApprovals() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.GetId(), a.GetTool(), a.GetActionClass(), a.GetSessionId(), a.GetCaller(),
				time.Until(a.GetExpires().AsTime()).Round(time.Second), strings.Join(a.GetRules(), ","))
		}
		return tw.Flush()
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
		a, err := c.Resolve(cctx, &shieldv1.ResolveApprovalRequest{Id: id, Approve: sub == "approve", Comment: *comment})
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

func printApproval(w io.Writer, a *shieldv1.Approval) {
	var args any
	_ = json.Unmarshal([]byte(a.GetArgumentsJson()), &args)
	pretty, _ := json.MarshalIndent(args, "  ", "  ")
	fmt.Fprintf(w, "%s  %s  (%d of %d approvals)\n  tool:     %s (%s)\n  session:  %s  agent: %s  caller: %s\n  why:      %s\n  rules:    %s\n  created:  %s  expires: %s\n  arguments:\n  %s\n",
		a.GetId(), strings.ToUpper(a.GetState()), len(a.GetApprovers()), a.GetNeedApprovers(), a.GetTool(), a.GetActionClass(),
		a.GetSessionId(), a.GetAgentId(), a.GetCaller(), a.GetReason(), strings.Join(a.GetRules(), ", "),
		a.GetCreated().AsTime().Format(time.RFC3339), a.GetExpires().AsTime().Format(time.RFC3339), pretty)
	if a.GetResolver() != "" {
		fmt.Fprintf(w, "  resolved by %s: %s\n", a.GetResolver(), a.GetComment())
	}
}
