package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Roles. A method needs one of them (see methodRoles); admin may call everything.
const (
	RoleAgent    = "agent"
	RoleApprover = "approver"
	RoleAuditor  = "auditor"
	RoleAdmin    = "admin"
)

// methodRoles is the authorisation table: full method name (or service prefix ending in "/")
// → the roles that may call it (admin may call everything). Methods not listed are denied to
// everyone but admin; an empty list means open to every caller, authenticated or not.
var methodRoles = map[string][]string{
	"/shield.v1.ShieldService/Evaluate":          {RoleAgent},
	"/shield.v1.ShieldService/Health":            {},
	"/shield.v1.ShieldService/GetStatus":         {RoleAdmin},
	"/shield.v1.ApprovalService/":                {RoleApprover},
	"/shield.v1.ApprovalService/AwaitDecision":   {RoleAgent, RoleApprover},
	"/shield.v1.AuditService/":                   {RoleAuditor},
	"/grpc.reflection.v1.ServerReflection/":      {},
	methodGRPCHealth:                             {},
	"/grpc.reflection.v1alpha.ServerReflection/": {},
}

// AuthConfig configures authentication (config key `auth`). The zero value gives root and the
// service's own user every role on the unix socket, and refuses TCP listeners.
type AuthConfig struct {
	// UnixRoles maps a uid (as a string) or "gid:N" of a unix-socket peer to its roles.
	UnixRoles map[string][]string `yaml:"unix_roles"`
	// TokensFile holds bearer tokens for TCP clients, one per line:
	// "sha256:<hex of the token>|<token> role[,role] name". Lines starting with # are comments.
	TokensFile string `yaml:"tokens_file"`
	// TLS serves TCP listeners over TLS and, with ClientCA, requires client certificates
	// (mTLS): the certificate's first URI SAN (e.g. spiffe://…), else its CN, is the identity.
	TLS TLSConfig `yaml:"tls"`
	// CertRoles maps a client-certificate identity to its roles.
	CertRoles map[string][]string `yaml:"cert_roles"`
	// Dev lets every TCP caller act as admin, unauthenticated (development and tests only; loud
	// at start). Unix-socket peers keep the roles of UnixRoles: dev mode does not make every
	// local user an admin.
	Dev bool `yaml:"-"`
}

// TLSConfig names the server's certificate and the CA its clients' certificates must chain to.
type TLSConfig struct {
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	ClientCA string `yaml:"client_ca"`
}

// Auth authenticates callers and authorises methods.
type Auth struct {
	cfg    AuthConfig
	tokens []authToken
	tls    credentials.TransportCredentials // nil: TCP is plain (loopback, tokens)
	tlsCfg *tls.Config                      // the same TLS configuration, for the HTTP listener
}

type authToken struct {
	sum   [32]byte
	roles []string
	name  string
}

// NewAuth loads the configuration (and the tokens file).
func NewAuth(cfg AuthConfig) (*Auth, error) {
	a := &Auth{cfg: cfg}
	if a.cfg.UnixRoles == nil {
		all := []string{RoleAgent, RoleApprover, RoleAuditor, RoleAdmin}
		a.cfg.UnixRoles = map[string][]string{"0": all, strconv.Itoa(os.Getuid()): all}
	}
	for k, roles := range a.cfg.UnixRoles {
		if err := checkRoles(roles); err != nil {
			return nil, fmt.Errorf("auth.unix_roles[%s]: %w", k, err)
		}
	}
	if cfg.TokensFile != "" {
		if err := a.loadTokens(cfg.TokensFile); err != nil {
			return nil, err
		}
	}
	for k, roles := range a.cfg.CertRoles {
		if err := checkRoles(roles); err != nil {
			return nil, fmt.Errorf("auth.cert_roles[%s]: %w", k, err)
		}
	}
	if t := cfg.TLS; t.CertFile != "" || t.KeyFile != "" || t.ClientCA != "" {
		if t.CertFile == "" || t.KeyFile == "" {
			return nil, errors.New("auth.tls: cert_file and key_file go together")
		}
		if err := CheckSecretFile(t.KeyFile); err != nil {
			return nil, fmt.Errorf("auth.tls.key_file: %w", err)
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth.tls: %w", err)
		}
		conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
		if t.ClientCA != "" {
			pem, err := os.ReadFile(t.ClientCA)
			if err != nil {
				return nil, fmt.Errorf("auth.tls.client_ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("auth.tls.client_ca %s: no PEM certificate", t.ClientCA)
			}
			conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
		}
		a.tls, a.tlsCfg = credentials.NewTLS(conf), conf
	}
	return a, nil
}

// MutualTLS reports whether TCP clients must present a certificate.
func (a *Auth) MutualTLS() bool { return a.tls != nil && a.cfg.TLS.ClientCA != "" }

// Credentials returns the server's transport credentials: peer credentials on unix sockets,
// TLS (mutual when a client CA is set) on TCP when configured, plain TCP otherwise.
func (a *Auth) Credentials() credentials.TransportCredentials { return peerCreds{tcp: a.tls} }

func checkRoles(roles []string) error {
	for _, r := range roles {
		switch r {
		case RoleAgent, RoleApprover, RoleAuditor, RoleAdmin:
		default:
			return fmt.Errorf("unknown role %q (use agent, approver, auditor, admin)", r)
		}
	}
	return nil
}

// CheckSecretFile checks the mode of a file holding secrets (the tokens file, a TLS key): it may be
// readable by its group (0640 root:shield, so the service's group can read it) but not writable
// by it, and others may have no access at all. serve and `shield config check` apply this rule.
func CheckSecretFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o027 != 0 {
		return fmt.Errorf("%s has mode %04o: group-writable or accessible to others; chmod 0640 (or 0600) it", path, perm)
	}
	return nil
}

func (a *Auth) loadTokens(path string) error {
	if err := CheckSecretFile(path); err != nil {
		return fmt.Errorf("auth tokens file: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			return fmt.Errorf("%s:%d: want \"TOKEN ROLE[,ROLE] NAME\"", path, n)
		}
		var t authToken
		if hx, ok := strings.CutPrefix(fields[0], "sha256:"); ok {
			b, err := hex.DecodeString(hx)
			if err != nil || len(b) != 32 {
				return fmt.Errorf("%s:%d: sha256: wants 64 hex digits", path, n)
			}
			copy(t.sum[:], b)
		} else {
			if len(fields[0]) < 16 {
				return fmt.Errorf("%s:%d: token shorter than 16 characters", path, n)
			}
			t.sum = sha256.Sum256([]byte(fields[0]))
		}
		t.roles = strings.Split(fields[1], ",")
		if err := checkRoles(t.roles); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		t.name = fields[2]
		a.tokens = append(a.tokens, t)
	}
	return sc.Err()
}

// HasTokens reports whether bearer tokens are configured (TCP listeners need them unless dev).
func (a *Auth) HasTokens() bool { return len(a.tokens) > 0 }

// PeerCred is the AuthInfo of a unix-socket connection: the peer's credentials from SO_PEERCRED.
type PeerCred struct {
	credentials.CommonAuthInfo
	UID, GID uint32
	PID      int32
}

// AuthType implements credentials.AuthInfo.
func (PeerCred) AuthType() string { return "peercred" }

// peerCreds is transport security that records SO_PEERCRED of unix connections and hands TCP
// connections to TLS when configured (else passes them through: their callers use tokens).
type peerCreds struct {
	tcp credentials.TransportCredentials
}

// PeerCredentials returns the transport credentials that identify unix-socket peers.
func PeerCredentials() credentials.TransportCredentials { return peerCreds{} }

func (p peerCreds) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	uc, ok := unwrapConn(c).(*net.UnixConn)
	if !ok {
		if p.tcp != nil {
			return p.tcp.ServerHandshake(c)
		}
		return c, nil, nil
	}
	cred, err := peerUcred(uc)
	if err != nil {
		return nil, nil, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	return c, PeerCred{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		UID: cred.Uid, GID: cred.Gid, PID: cred.Pid}, nil
}
func (peerCreds) ClientHandshake(ctx context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c, nil, nil
}
func (peerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}
func (p peerCreds) Clone() credentials.TransportCredentials { return peerCreds{tcp: p.tcp} }
func (peerCreds) OverrideServerName(string) error           { return nil }

type identityKey struct{}

type identity struct {
	name  string
	roles []string
}

// authenticate names the caller and its roles, or returns "" when it is anonymous.
func (a *Auth) authenticate(ctx context.Context) identity {
	var c credential
	if p, ok := peer.FromContext(ctx); ok {
		if pc, ok := p.AuthInfo.(PeerCred); ok {
			c.unix = &pc
		}
		c.unixAddr = p.Addr != nil && p.Addr.Network() == "unix"
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			c.chains = ti.State.VerifiedChains
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	c.authorization = md.Get("authorization")
	return a.identify(c)
}

// credential is what a request presents, whatever its protocol (gRPC or HTTP).
type credential struct {
	unix          *PeerCred // SO_PEERCRED of a unix-socket peer
	unixAddr      bool      // the connection is a unix socket (even without peer credentials)
	chains        [][]*x509.Certificate
	authorization []string // Authorization header values
}

// identify names the caller of a credential and its roles (name "" when anonymous). Unix peers
// are named by uid; else a verified client certificate; else a bearer token.
func (a *Auth) identify(c credential) identity {
	unixPeer := c.unix != nil || c.unixAddr
	if a.cfg.Dev && !unixPeer {
		return identity{name: "dev", roles: []string{RoleAdmin}}
	}
	if pc := c.unix; pc != nil {
		roles := append([]string(nil), a.cfg.UnixRoles[strconv.FormatUint(uint64(pc.UID), 10)]...)
		roles = append(roles, a.cfg.UnixRoles["gid:"+strconv.FormatUint(uint64(pc.GID), 10)]...)
		return identity{name: "uid:" + strconv.FormatUint(uint64(pc.UID), 10), roles: roles}
	}
	if len(c.chains) > 0 && len(c.chains[0]) > 0 {
		leaf := c.chains[0][0]
		id := leaf.Subject.CommonName
		if len(leaf.URIs) > 0 {
			id = leaf.URIs[0].String()
		}
		if id != "" {
			return identity{name: "cert:" + id, roles: a.cfg.CertRoles[id]}
		}
	}
	for _, v := range c.authorization {
		tok, ok := strings.CutPrefix(v, "Bearer ")
		if !ok {
			continue
		}
		sum := sha256.Sum256([]byte(tok))
		for _, t := range a.tokens {
			if subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1 {
				return identity{name: "token:" + t.name, roles: t.roles}
			}
		}
	}
	return identity{}
}

// authorize checks that id may call method.
func authorize(id identity, method string) error {
	need, ok := methodRoles[method]
	if !ok {
		need, ok = methodRoles[method[:strings.LastIndex(method, "/")+1]]
	}
	if ok && len(need) == 0 {
		return nil
	}
	if id.name == "" {
		return status.Error(codes.Unauthenticated, "authenticate: unix peer credentials or a bearer token")
	}
	if slices.Contains(id.roles, RoleAdmin) {
		return nil
	}
	for _, r := range need {
		if slices.Contains(id.roles, r) {
			return nil
		}
	}
	if !ok {
		return status.Errorf(codes.PermissionDenied, "%s may not call %s", id.name, method)
	}
	return status.Errorf(codes.PermissionDenied, "%s lacks the role (%s) needed for %s", id.name, strings.Join(need, " or "), method)
}

// UnaryInterceptor authenticates and authorises unary calls.
func (a *Auth) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		id := a.authenticate(ctx)
		if err := authorize(id, info.FullMethod); err != nil {
			return nil, err
		}
		return h(context.WithValue(ctx, identityKey{}, id), req)
	}
}

// StreamInterceptor authenticates and authorises streams.
func (a *Auth) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		id := a.authenticate(ss.Context())
		if err := authorize(id, info.FullMethod); err != nil {
			return err
		}
		return h(srv, &identityStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), identityKey{}, id)})
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

// Identity returns the authenticated caller of a request ("" when none), for the audit trail.
func Identity(ctx context.Context) string {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.name
}

// Roles returns the roles of the authenticated caller of a request (nil when none).
func Roles(ctx context.Context) []string {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.roles
}

// hasRole reports whether the authenticated caller of a request has role (admin has every
// role). A request that did not pass the auth interceptors has none.
func hasRole(ctx context.Context, role string) bool {
	id, _ := ctx.Value(identityKey{}).(identity)
	return id.name != "" && (slices.Contains(id.roles, role) || slices.Contains(id.roles, RoleAdmin))
}

// ErrInsecureTCP is returned for a TCP listener without tokens outside dev mode.
var ErrInsecureTCP = errors.New("a TCP listener needs mutual TLS (auth.tls with client_ca) or bearer tokens (auth.tokens_file), or --dev")
