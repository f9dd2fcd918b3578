package sandbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestProfileValidate(t *testing.T) {
	tests := []struct {
		name    string
		p       Profile
		wantErr string // substring; "" = valid
	}{
		{name: "zero value", p: Profile{}},
		{name: "full", p: Profile{ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}, Exec: []string{"/bin/true"},
			ConnectTCP: []uint16{443}, BindTCP: []uint16{0, 8080}, ConnectUDP: []uint16{53}, Unix: true, Spawn: true,
			Seccomp: SeccompPolicy{Deny: []string{"getpid"}}}},
		{name: "relative path", p: Profile{ReadOnly: []string{"etc"}}, wantErr: `read_only: path "etc" is not absolute`},
		{name: "unclean path", p: Profile{ReadWrite: []string{"/tmp/../etc"}}, wantErr: "not clean"},
		{name: "empty path", p: Profile{Exec: []string{""}}, wantErr: "exec: empty path"},
		{name: "connect port 0", p: Profile{ConnectTCP: []uint16{0}}, wantErr: "connect_tcp: port 0"},
		{name: "udp port 0", p: Profile{ConnectUDP: []uint16{0}}, wantErr: "connect_udp: port 0"},
		{name: "unknown syscall", p: Profile{Seccomp: SeccompPolicy{Deny: []string{"no_such_call"}}}, wantErr: `unknown syscall "no_such_call"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestProfileValidateCollectsAll(t *testing.T) {
	err := Profile{ReadOnly: []string{"a"}, ConnectTCP: []uint16{0}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "not absolute") || !strings.Contains(err.Error(), "port 0") {
		t.Fatalf("Validate: %v, want both problems", err)
	}
}

var profileSeeds = []string{
	`{}`,
	`{"read_only":["/usr"],"read_write":["/tmp"],"exec":["/bin/true"],"connect_tcp":[443],"bind_tcp":[0],"connect_udp":[53],"unix":true,"spawn":true,"metadata":true,"seccomp":{"deny":["getpid"]}}`,
	`{"read_only":["relative"]}`,
	`{"unknown":1}`,
	`{"seccomp":{"allow":["ptrace"]}}`,
	`{} {}`,
	`{"connect_tcp":[70000]}`,
	`[]`,
}

func TestDecodeProfile(t *testing.T) {
	tests := []struct {
		in      string
		want    Profile
		wantErr string
	}{
		{in: profileSeeds[0], want: Profile{}},
		{in: profileSeeds[1], want: Profile{ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}, Exec: []string{"/bin/true"},
			ConnectTCP: []uint16{443}, BindTCP: []uint16{0}, ConnectUDP: []uint16{53}, Unix: true, Spawn: true, Metadata: true,
			Seccomp: SeccompPolicy{Deny: []string{"getpid"}}}},
		{in: profileSeeds[2], wantErr: "not absolute"},
		{in: profileSeeds[3], wantErr: `unknown field "unknown"`},
		{in: profileSeeds[4], wantErr: `unknown field "allow"`},
		{in: profileSeeds[5], wantErr: "trailing data"},
		{in: profileSeeds[6], wantErr: "cannot unmarshal"},
		{in: profileSeeds[7], wantErr: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := DecodeProfile([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeProfile: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeProfile: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("profile (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeProfile: whatever decodes is valid and survives a round trip unchanged.
func FuzzDecodeProfile(f *testing.F) {
	for _, s := range profileSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeProfile(data)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("decoded profile is invalid: %v", err)
		}
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := DecodeProfile(js)
		if err != nil {
			t.Fatalf("round trip: %v (%s)", err, js)
		}
		// An empty list and an absent one mean the same (nothing allowed); the encoding omits both.
		if diff := cmp.Diff(p, q, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func TestDefaultAgentProfile(t *testing.T) {
	ws := t.TempDir()
	p := DefaultAgentProfile(ws+"/", AgentOptions{})
	want := Profile{ReadOnly: []string{ws}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("no network (-want +got):\n%s", diff)
	}
	p = DefaultAgentProfile(ws, AgentOptions{LLMPort: 443, DNS: true})
	if diff := cmp.Diff([]uint16{443}, p.ConnectTCP); diff != "" {
		t.Errorf("ConnectTCP (-want +got):\n%s", diff)
	}
	if p.Spawn || p.Unix || len(p.ReadWrite) != 0 || len(p.BindTCP) != 0 || len(p.Exec) != 0 {
		t.Errorf("default agent profile grants too much: %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
}

func TestWithProgram(t *testing.T) {
	p, err := Profile{}.WithProgram("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Exec) != 2 {
		t.Errorf("Exec = %q, want the program and its ELF interpreter", p.Exec)
	}
	if len(p.ReadOnly) == 0 {
		t.Errorf("ReadOnly = %q, want its libraries", p.ReadOnly)
	}
	if _, err := (Profile{}).WithProgram("/no/such/program"); err == nil {
		t.Error("WithProgram accepted a missing program")
	}
	if _, err := (Profile{}).WithProgram("no-such-program-in-path"); err == nil {
		t.Error("WithProgram accepted a missing program")
	}
}

func TestGate(t *testing.T) {
	tests := []struct {
		name    string
		r       *Report
		allow   bool
		wantErr error // nil: passes
	}{
		{"nil report", nil, true, ErrNotSandboxed},
		{"sandboxed", &Report{Status: StatusSandboxed}, false, nil},
		{"unavailable", &Report{Status: StatusUnavailable}, false, ErrUnavailable},
		{"unavailable allowed", &Report{Status: StatusUnavailable}, true, nil},
		{"partial", &Report{Status: StatusPartial}, true, ErrNotSandboxed},
		{"unsandboxed", &Report{Status: StatusUnsandboxed}, true, ErrNotSandboxed},
		{"empty status", &Report{}, true, ErrNotSandboxed},
		{"unknown status", &Report{Status: "fine"}, true, ErrNotSandboxed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Gate(tt.r, tt.allow)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Gate = %v, want %v", err, tt.wantErr)
			}
		})
	}
}
