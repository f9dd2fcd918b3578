package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"cel.dev/cel-go/cel"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// AuditService implements shieldv1.AuditServiceServer, read-only, on an audit log.
type AuditService struct {
	shieldv1.UnimplementedAuditServiceServer
	log    *audit.Log
	celEnv *cel.Env
}

var _ shieldv1.AuditServiceServer = (*AuditService)(nil)

// NewAuditService returns the AuditService over l.
func NewAuditService(l *audit.Log) shieldv1.AuditServiceServer {
	env, err := cel.NewEnv(cel.Variable("record", cel.MapType(cel.StringType, cel.DynType)))
	if err != nil {
		panic(fmt.Sprintf("audit service: CEL environment: %v", err)) // static declarations
	}
	return &AuditService{log: l, celEnv: env}
}

const (
	auditMaxPage      = 1000
	auditFilterMaxLen = 4096
	auditCELCostLimit = 100_000
	// auditTailPage records are read at a time by Tail and released as they are sent: with the
	// stream cap and the send timeout this bounds what unread Tail streams hold.
	auditTailPage = 32
)

func auditRecordToProto(r *audit.Record) *shieldv1.AuditRecord {
	line, _ := r.MarshalJSON()
	return &shieldv1.AuditRecord{Seq: r.Seq, Time: timestamppb.New(r.Time), Type: string(r.Type),
		PayloadJson: string(r.Payload), PrevHash: r.Prev, Hash: r.Hash, Line: string(line)}
}

// Query implements shieldv1.AuditServiceServer.
func (s *AuditService) Query(ctx context.Context, req *shieldv1.QueryAuditRequest) (*shieldv1.QueryAuditResponse, error) {
	q, err := s.auditQuery(req)
	if err != nil {
		return nil, Status(err)
	}
	return s.runQuery(ctx, q)
}

// runQuery runs q, complete and validated, and returns one page.
func (s *AuditService) runQuery(ctx context.Context, q audit.Query) (*shieldv1.QueryAuditResponse, error) {
	res, err := s.log.Query(ctx, q)
	if err != nil {
		return nil, Status(err)
	}
	out := &shieldv1.QueryAuditResponse{}
	for _, r := range res.Records {
		out.Records = append(out.Records, auditRecordToProto(r))
	}
	if res.More {
		out.NextPageToken = "s" + strconv.FormatUint(res.Next, 10)
	}
	return out, nil
}

func (s *AuditService) auditQuery(req *shieldv1.QueryAuditRequest) (audit.Query, error) {
	q := audit.Query{SessionID: req.GetSessionId(), AgentID: req.GetAgentId(), Tool: req.GetTool(),
		ActionClass: req.GetActionClass(), Decision: req.GetDecision(), Rule: req.GetRule()}
	if req.Since != nil {
		if err := req.Since.CheckValid(); err != nil {
			return q, badRequest{"since: " + err.Error()}
		}
		q.Since = req.Since.AsTime()
	}
	if req.Until != nil {
		if err := req.Until.CheckValid(); err != nil {
			return q, badRequest{"until: " + err.Error()}
		}
		q.Until = req.Until.AsTime()
	}
	if req.Tier != nil {
		t := int(req.GetTier())
		q.Tier = &t
	}
	for _, t := range req.GetTypes() {
		q.Types = append(q.Types, audit.Type(t))
	}
	if err := q.Validate(); err != nil {
		return q, err
	}
	return s.pagedQuery(q, req.GetNewestFirst(), int(req.GetPageSize()), req.GetPageToken(), req.GetFilter())
}

// pagedQuery adds paging and the CEL filter to q, whose filter fields are validated.
func (s *AuditService) pagedQuery(q audit.Query, newest bool, pageSize int, pageToken, filter string) (audit.Query, error) {
	q.Newest, q.Limit = newest, pageSize
	if q.Limit < 0 || q.Limit > auditMaxPage {
		return q, badRequest{fmt.Sprintf("page_size must be 0..%d", auditMaxPage)}
	}
	if tok := pageToken; tok != "" {
		n, err := strconv.ParseUint(strings.TrimPrefix(tok, "s"), 10, 64)
		if err != nil || !strings.HasPrefix(tok, "s") {
			return q, badRequest{"invalid page_token"}
		}
		if q.Newest {
			q.ToSeq = n
		} else {
			q.FromSeq = n
		}
	}
	if f := filter; f != "" {
		m, err := s.auditFilter(f)
		if err != nil {
			return q, err
		}
		q.Match = m
	}
	return q, nil
}

// auditFilter compiles a CEL filter over `record`, bounded in cost.
func (s *AuditService) auditFilter(expr string) (func(*audit.Record) (bool, error), error) {
	if len(expr) > auditFilterMaxLen {
		return nil, badRequest{fmt.Sprintf("filter longer than %d bytes", auditFilterMaxLen)}
	}
	ast, iss := s.celEnv.Compile(expr)
	if iss.Err() != nil {
		return nil, badRequest{"filter: " + iss.Err().Error()}
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, badRequest{"filter must be a boolean expression"}
	}
	prg, err := s.celEnv.Program(ast, cel.CostLimit(auditCELCostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, badRequest{"filter: " + err.Error()}
	}
	return func(r *audit.Record) (bool, error) {
		var payload map[string]any
		if err := json.Unmarshal(r.Payload, &payload); err != nil {
			return false, err
		}
		out, _, err := prg.Eval(map[string]any{"record": map[string]any{
			"seq": int64(r.Seq), "time": r.Time, "type": string(r.Type), "payload": payload, "hash": r.Hash, "prev": r.Prev,
		}})
		if err != nil {
			// A filter that fails on a record (e.g. a missing payload field) does not match it.
			return false, nil
		}
		b, ok := out.Value().(bool)
		return ok && b, nil
	}, nil
}

// Get implements shieldv1.AuditServiceServer.
func (s *AuditService) Get(ctx context.Context, req *shieldv1.GetAuditRecordRequest) (*shieldv1.AuditRecord, error) {
	r, err := s.log.Get(req.GetSeq())
	if err != nil {
		return nil, Status(err)
	}
	return auditRecordToProto(r), nil
}

// Tail implements shieldv1.AuditServiceServer.
func (s *AuditService) Tail(req *shieldv1.TailAuditRequest, stream shieldv1.AuditService_TailServer) error {
	ctx := stream.Context()
	next := s.log.Size()
	if req.FromSeq != nil {
		next = req.GetFromSeq()
	}
	for {
		if err := s.log.Wait(ctx, next); err != nil {
			return Status(err)
		}
		res, err := s.log.Query(ctx, audit.Query{FromSeq: next, Limit: auditTailPage})
		if err != nil {
			return Status(err)
		}
		for i, r := range res.Records {
			res.Records[i] = nil
			if err := stream.Send(auditRecordToProto(r)); err != nil {
				return err
			}
			next = r.Seq + 1
		}
	}
}

// GetCheckpoint implements shieldv1.AuditServiceServer.
func (s *AuditService) GetCheckpoint(ctx context.Context, _ *shieldv1.GetAuditCheckpointRequest) (*shieldv1.AuditCheckpoint, error) {
	note, c, err := s.log.SignedCheckpoint()
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, "no checkpoint has been written yet")
	}
	return &shieldv1.AuditCheckpoint{Origin: c.Origin, TreeSize: c.Size, RootHash: c.Root, SignedNote: string(note),
		PublicKey: s.log.PublicKey()}, nil
}

// auditLatestSize returns the latest checkpoint's size.
func (s *AuditService) auditLatestSize() (uint64, error) {
	_, c, err := s.log.SignedCheckpoint()
	if err != nil {
		return 0, status.Error(codes.FailedPrecondition, "no checkpoint has been written yet")
	}
	return c.Size, nil
}

// InclusionProof implements shieldv1.AuditServiceServer.
func (s *AuditService) InclusionProof(ctx context.Context, req *shieldv1.AuditInclusionProofRequest) (*shieldv1.AuditInclusionProof, error) {
	size := req.GetTreeSize()
	if size == 0 {
		var err error
		if size, err = s.auditLatestSize(); err != nil {
			return nil, err
		}
	}
	if req.GetSeq() >= size || size > s.log.Size() {
		return nil, status.Errorf(codes.InvalidArgument, "need seq < tree_size <= %d", s.log.Size())
	}
	leaf, proof, err := s.log.InclusionProof(req.GetSeq(), size)
	if err != nil {
		return nil, Status(err)
	}
	root, err := s.log.Root(size)
	if err != nil {
		return nil, Status(err)
	}
	return &shieldv1.AuditInclusionProof{Seq: req.GetSeq(), TreeSize: size, LeafHash: leaf, Hashes: proof, RootHash: root}, nil
}

// ConsistencyProof implements shieldv1.AuditServiceServer.
func (s *AuditService) ConsistencyProof(ctx context.Context, req *shieldv1.AuditConsistencyProofRequest) (*shieldv1.AuditConsistencyProof, error) {
	newSize := req.GetNewSize()
	if newSize == 0 {
		var err error
		if newSize, err = s.auditLatestSize(); err != nil {
			return nil, err
		}
	}
	if req.GetOldSize() == 0 || req.GetOldSize() > newSize || newSize > s.log.Size() {
		return nil, status.Errorf(codes.InvalidArgument, "need 0 < old_size <= new_size <= %d", s.log.Size())
	}
	proof, err := s.log.ConsistencyProof(req.GetOldSize(), newSize)
	if err != nil {
		return nil, Status(err)
	}
	oldRoot, err := s.log.Root(req.GetOldSize())
	if err != nil {
		return nil, Status(err)
	}
	newRoot, err := s.log.Root(newSize)
	if err != nil {
		return nil, Status(err)
	}
	return &shieldv1.AuditConsistencyProof{OldSize: req.GetOldSize(), NewSize: newSize, Hashes: proof,
		OldRootHash: oldRoot, NewRootHash: newRoot}, nil
}
