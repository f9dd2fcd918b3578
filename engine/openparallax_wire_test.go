package engine

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	opv1 "github.com/shieldsec/shield/proto/openparallax/v1"
)

// shieldOnly are messages Shield adds to openparallax.v1 (their numbering is Shield's own).
var shieldOnly = map[string]bool{"LogEntry": true, "SubAgentEvent": true, "WatchSessionRequest": true}

// seedNumbers lists every field, enum value and method of the openparallax.v1 definitions below
// Shield's range (100 and up), by full name: the seed's wire contract.
func seedNumbers() []string {
	var out []string
	for _, fd := range []protoreflect.FileDescriptor{opv1.File_openparallax_v1_pipeline_proto, opv1.File_openparallax_v1_types_proto} {
		var walkMsg func(protoreflect.MessageDescriptors)
		walkEnum := func(es protoreflect.EnumDescriptors) {
			for i := 0; i < es.Len(); i++ {
				vs := es.Get(i).Values()
				for j := 0; j < vs.Len(); j++ {
					if v := vs.Get(j); v.Number() < 100 || es.Get(i).Name() == "ActionType" {
						out = append(out, fmt.Sprintf("enum %s %d", v.FullName(), v.Number()))
					}
				}
			}
		}
		walkMsg = func(ms protoreflect.MessageDescriptors) {
			for i := 0; i < ms.Len(); i++ {
				m := ms.Get(i)
				if m.IsMapEntry() || shieldOnly[string(m.Name())] {
					continue
				}
				fs := m.Fields()
				for j := 0; j < fs.Len(); j++ {
					if f := fs.Get(j); f.Number() < 100 {
						out = append(out, fmt.Sprintf("field %s %d %s", f.FullName(), f.Number(), f.Kind()))
					}
				}
				walkEnum(m.Enums())
				walkMsg(m.Messages())
			}
		}
		walkEnum(fd.Enums())
		walkMsg(fd.Messages())
		ss := fd.Services()
		for i := 0; i < ss.Len(); i++ {
			ms := ss.Get(i).Methods()
			for j := 0; j < ms.Len(); j++ {
				m := ms.Get(j)
				if m.Name() == "WatchSession" { // Shield's addition
					continue
				}
				out = append(out, fmt.Sprintf("rpc %s %s %s", m.FullName(), m.Input().FullName(), m.Output().FullName()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenParallaxWireContract pins the seed's part of openparallax.v1 (names, numbers, kinds,
// methods) to testdata/openparallax_seed.txt, checked against the seed's published
// pipeline.proto and types.proto: a renumbered or renamed field, or an addition below 100, fails.
func TestOpenParallaxWireContract(t *testing.T) {
	f, err := os.Open("testdata/openparallax_seed.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	sort.Strings(want)
	got := seedNumbers()
	if os.Getenv("SHIELD_UPDATE_GOLDEN") != "" {
		os.WriteFile("testdata/openparallax_seed.txt", []byte("# openparallax.v1 below field number 100: the seed's wire contract (seed 000): its\n# pipeline.proto and types.proto (OpenParallax repository history), plus\n# EngineDirective.initial_tool_defs from its gRPC docs. One line per field, enum value, method.\n"+strings.Join(got, "\n")+"\n"), 0o644)
		return
	}
	g, w := map[string]bool{}, map[string]bool{}
	for _, l := range got {
		g[l] = true
	}
	for _, l := range want {
		w[l] = true
		if !g[l] {
			t.Errorf("missing or changed: %s", l)
		}
	}
	for _, l := range got {
		if !w[l] {
			t.Errorf("not in the seed: %s", l)
		}
	}
}
