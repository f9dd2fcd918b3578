package server

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/shieldsec/shield/audit"
	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

func auditTestClient(t *testing.T) (*audit.Log, shieldv1.AuditServiceClient) {
	t.Helper()
	l, err := audit.Open(audit.Config{Dir: t.TempDir(), CheckpointEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i := range 12 {
		d := &audit.Decision{CallID: "c", Tool: "Bash", ActionClass: "exec", Decision: "ALLOW", Tier: i % 2,
			SessionID: []string{"s1", "s2"}[i%2], Arguments: json.RawMessage(`{"command":"ls"}`)}
		if i == 7 {
			d.Decision, d.Rules = "BLOCK", []string{"cel:destructive.rm-root"}
		}
		if _, err := l.Append(context.Background(), audit.TypeDecision, d); err != nil {
			t.Fatal(err)
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	shieldv1.RegisterAuditServiceServer(srv, NewAuditService(l))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return l, shieldv1.NewAuditServiceClient(conn)
}

func auditSeqs(rs []*shieldv1.AuditRecord) []uint64 {
	var out []uint64
	for _, r := range rs {
		out = append(out, r.Seq)
	}
	return out
}

func TestAuditServiceQuery(t *testing.T) {
	_, c := auditTestClient(t)
	ctx := context.Background()
	tests := []struct {
		name string
		req  *shieldv1.QueryAuditRequest
		want []uint64
	}{
		// Each decision i is record 2i, followed by its commit's checkpoint record.
		{"rule", &shieldv1.QueryAuditRequest{Rule: "cel:destructive.rm-root"}, []uint64{14}},
		{"decision lower case", &shieldv1.QueryAuditRequest{Decision: "block"}, []uint64{14}},
		{"tier and session", &shieldv1.QueryAuditRequest{Tier: proto.Int32(1), SessionId: "s2", PageSize: 2}, []uint64{2, 6}},
		{"checkpoints", &shieldv1.QueryAuditRequest{Types: []string{"checkpoint"}, PageSize: 3}, []uint64{1, 3, 5}},
		{"cel filter", &shieldv1.QueryAuditRequest{Filter: `record.type == "decision" && record.seq > 10 && record.payload.tier == 1`}, []uint64{14, 18, 22}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Query(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, auditSeqs(res.Records)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []*shieldv1.QueryAuditRequest{
		{Filter: `record.seq +`}, {Filter: `1 + 2`}, {PageToken: "zz"}, {PageSize: 5000},
		// The filters audit.Query.Validate refuses, as the CLI and the HTTP API do.
		{Decision: "maybe"}, {Tier: proto.Int32(4)}, {Tier: proto.Int32(-1)}, {Types: []string{"decisions"}},
	} {
		if _, err := c.Query(ctx, bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("Query(%v) = %v, want InvalidArgument", bad, err)
		}
	}
	// Paging newest first.
	var got []uint64
	req := &shieldv1.QueryAuditRequest{NewestFirst: true, PageSize: 5, Types: []string{"decision"}}
	for {
		res, err := c.Query(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, auditSeqs(res.Records)...)
		if res.NextPageToken == "" {
			break
		}
		req.PageToken = res.NextPageToken
	}
	if len(got) != 12 || got[0] != 22 || got[11] != 0 {
		t.Fatalf("paged newest first: %v", got)
	}
}

func TestAuditServiceProofs(t *testing.T) {
	l, c := auditTestClient(t)
	ctx := context.Background()
	ck, err := c.GetCheckpoint(ctx, &shieldv1.GetAuditCheckpointRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The client verifies the note with the key it trusts (here, the log's).
	cp, err := audit.OpenCheckpoint([]byte(ck.SignedNote), l.PublicKey())
	if err != nil || cp.Size != ck.TreeSize {
		t.Fatalf("checkpoint: %v %+v", err, cp)
	}
	rec, err := c.Get(ctx, &shieldv1.GetAuditRecordRequest{Seq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.DecodeRecord([]byte(rec.Line)); err != nil {
		t.Fatalf("record line does not re-verify: %v", err)
	}
	ip, err := c.InclusionProof(ctx, &shieldv1.AuditInclusionProofRequest{Seq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyInclusion(3, cp.Size, ip.LeafHash, ip.Hashes, cp.Root); err != nil {
		t.Fatalf("inclusion: %v", err)
	}
	if audit.HashHex(ip.LeafHash) != rec.Hash {
		t.Fatal("inclusion leaf is not the record's hash")
	}
	cons, err := c.ConsistencyProof(ctx, &shieldv1.AuditConsistencyProofRequest{OldSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := audit.VerifyConsistency(5, cp.Size, cons.Hashes, cons.OldRootHash, cp.Root); err != nil {
		t.Fatalf("consistency: %v", err)
	}
	if _, err := c.Get(ctx, &shieldv1.GetAuditRecordRequest{Seq: 999}); status.Code(err) != codes.NotFound {
		t.Fatalf("Get(999) = %v", err)
	}
}

func TestAuditServiceTail(t *testing.T) {
	l, c := auditTestClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Tail(ctx, &shieldv1.TailAuditRequest{FromSeq: proto.Uint64(12)})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		l.Append(context.Background(), audit.TypeServiceStop, map[string]string{"reason": "test"})
	}()
	var got []uint64
	for len(got) < 3 {
		r, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Seq)
	}
	if diff := cmp.Diff([]uint64{12, 13, 14}, got); diff != "" {
		t.Fatalf("tail (-want +got):\n%s", diff)
	}
}
