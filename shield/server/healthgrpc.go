package server

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	shieldv1 "github.com/shieldsec/shield/proto/shield/v1"
)

// methodGRPCHealth prefixes the standard health service's methods (open to every caller, never
// shed, like ShieldService.Health).
const methodGRPCHealth = "/grpc.health.v1.Health/"

// healthWatchEvery is how often Watch re-reads the service's health.
var healthWatchEvery = time.Second

// StandardHealth serves grpc.health.v1 (load balancers, Kubernetes probes) from the service's
// own Health: SERVING exactly when ShieldService.Health is SERVING (audit log writable, bundle
// loaded). The service name "" and "shield.v1.ShieldService" are known; others are NOT_FOUND.
type StandardHealth struct {
	healthpb.UnimplementedHealthServer
	svc *ShieldService
}

// RegisterStandardHealth registers grpc.health.v1 on gs, answering from svc.
func RegisterStandardHealth(gs *grpc.Server, svc *ShieldService) {
	healthpb.RegisterHealthServer(gs, &StandardHealth{svc: svc})
}

func (h *StandardHealth) status(ctx context.Context, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	if service != "" && service != shieldv1.ShieldService_ServiceDesc.ServiceName {
		return healthpb.HealthCheckResponse_SERVICE_UNKNOWN, status.Errorf(codes.NotFound, "unknown service %q", service)
	}
	r, err := h.svc.Health(ctx, &shieldv1.HealthRequest{})
	if err != nil || r.GetStatus() != shieldv1.HealthResponse_SERVING {
		return healthpb.HealthCheckResponse_NOT_SERVING, nil
	}
	return healthpb.HealthCheckResponse_SERVING, nil
}

// Check implements grpc.health.v1.Health/Check.
func (h *StandardHealth) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st, err := h.status(ctx, req.GetService())
	if err != nil {
		return nil, err
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

// List implements grpc.health.v1.Health/List.
func (h *StandardHealth) List(ctx context.Context, _ *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	st, _ := h.status(ctx, "")
	r := &healthpb.HealthCheckResponse{Status: st}
	return &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{
		"": r, shieldv1.ShieldService_ServiceDesc.ServiceName: r,
	}}, nil
}

// Watch implements grpc.health.v1.Health/Watch: the status now, then each change.
func (h *StandardHealth) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx := stream.Context()
	last := healthpb.HealthCheckResponse_ServingStatus(-1)
	t := time.NewTicker(healthWatchEvery)
	defer t.Stop()
	for {
		st, err := h.status(ctx, req.GetService())
		if err != nil {
			st = healthpb.HealthCheckResponse_SERVICE_UNKNOWN
		}
		if st != last {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
	}
}
