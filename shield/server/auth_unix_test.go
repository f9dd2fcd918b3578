package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

type authFakeShield struct {
	shieldv1.UnimplementedShieldServiceServer
}

// TestUnixPeerCredentials serves over a real unix socket and maps (or not) this process's uid.
func TestUnixPeerCredentials(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	tests := []struct {
		name     string
		roles    map[string][]string
		method   string
		wantCode codes.Code
		dev      bool
	}{
		{"agent may evaluate", map[string][]string{uid: {RoleAgent}}, "/shield.v1.ShieldService/Evaluate", codes.Unimplemented, false},
		{"agent may not get status", map[string][]string{uid: {RoleAgent}}, "/shield.v1.ShieldService/GetStatus", codes.PermissionDenied, false},
		{"auditor may not evaluate", map[string][]string{uid: {RoleAuditor}}, "/shield.v1.ShieldService/Evaluate", codes.PermissionDenied, false},
		{"unmapped uid denied", map[string][]string{"4242": {RoleAdmin}}, "/shield.v1.ShieldService/Evaluate", codes.PermissionDenied, false},
		{"health open", map[string][]string{"4242": {RoleAdmin}}, "/shield.v1.ShieldService/Health", codes.Unimplemented, false},
		// --dev opens TCP listeners; it does not make every local user an admin.
		{"dev: unmapped uid still denied", map[string][]string{"4242": {RoleAdmin}}, "/shield.v1.ShieldService/Evaluate", codes.PermissionDenied, true},
		{"dev: agent still may not get status", map[string][]string{uid: {RoleAgent}}, "/shield.v1.ShieldService/GetStatus", codes.PermissionDenied, true},
		{"dev: mapped roles still apply", map[string][]string{uid: {RoleAgent}}, "/shield.v1.ShieldService/Evaluate", codes.Unimplemented, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAuth(AuthConfig{UnixRoles: tc.roles, Dev: tc.dev})
			if err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(t.TempDir(), "s.sock")
			lis, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer(grpc.Creds(a.Credentials()),
				grpc.ChainUnaryInterceptor(a.UnaryInterceptor()), grpc.ChainStreamInterceptor(a.StreamInterceptor()))
			shieldv1.RegisterShieldServiceServer(srv, authFakeShield{})
			go srv.Serve(lis)
			defer srv.Stop()
			conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var out shieldv1.HealthResponse
			err = conn.Invoke(context.Background(), tc.method, &shieldv1.HealthRequest{}, &out)
			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.wantCode)
			}
		})
	}
}
