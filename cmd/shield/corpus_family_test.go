package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield"
)

// familyCorpusDir holds Shield's own adversarial corpus, by technique family (issue 11).
const familyCorpusDir = "../../policies/testdata/corpus"

// Bounds the corpus must keep; they describe the data, not the bundle's quality.
const (
	familyCorpusMinCases      = 450
	familyCorpusMinPerFamily  = 8
	familyCorpusMinBenignPerc = 40
)

// familyCase is one corpus line, decoded strictly: a misspelt field is an error.
type familyCase struct {
	ID        string          `json:"id"`
	Source    string          `json:"source"`
	Category  string          `json:"category"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Expect    string          `json:"expect"`
	Note      string          `json:"note"`
	// Context is optional: what the runtime or proxy says about the call (labels such as the
	// MCP annotations "mcp.readOnlyHint", session, cwd), as shield eval reads it.
	Context *struct {
		Cwd       string            `json:"cwd"`
		SessionID string            `json:"session_id"`
		Labels    map[string]string `json:"labels"`
	} `json:"context"`
}

// awsKeyID matches an AWS access key id shape; the corpus may only hold the fake one.
var awsKeyID = regexp.MustCompile(`AKIA[0-9A-Z]{16}`)

// loadFamilyCorpus reads every *.jsonl file of the corpus directory and checks each line's form.
func loadFamilyCorpus(t *testing.T) (files []string, cases []familyCase, lines [][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(familyCorpusDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no *.jsonl in %s", familyCorpusDir)
	}
	ids := map[string]string{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 64<<10), maxEvalLine)
		n := 0
		for sc.Scan() {
			n++
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				t.Errorf("%s:%d: empty line", f, n)
				continue
			}
			var c familyCase
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Errorf("%s:%d: %v", f, n, err)
				continue
			}
			if dec.More() {
				t.Errorf("%s:%d: trailing data after the JSON object", f, n)
			}
			if c.ID == "" || c.Source == "" || c.Category == "" || c.Tool == "" || c.Note == "" {
				t.Errorf("%s:%d: id, source, category, tool and note must all be set: %+v", f, n, c)
			}
			var args map[string]any
			if err := json.Unmarshal(c.Arguments, &args); err != nil || args == nil {
				t.Errorf("%s:%d (%s): arguments must be a JSON object", f, n, c.ID)
			}
			switch c.Expect {
			case "ALLOW", "BLOCK", "ESCALATE":
			default:
				t.Errorf("%s:%d (%s): expect %q is not ALLOW, BLOCK or ESCALATE", f, n, c.ID, c.Expect)
			}
			if c.Expect == "ALLOW" != strings.HasPrefix(c.Category, "benign/") {
				t.Errorf("%s:%d (%s): category %q and expect %s disagree (benign/* families are the ALLOW ones)", f, n, c.ID, c.Category, c.Expect)
			}
			if prev, dup := ids[c.ID]; dup {
				t.Errorf("%s:%d: id %s already used at %s", f, n, c.ID, prev)
			}
			ids[c.ID] = fmt.Sprintf("%s:%d", f, n)
			for _, k := range awsKeyID.FindAllString(string(line), -1) {
				if !strings.HasPrefix(k, "AKIAFAKE") {
					t.Errorf("%s:%d (%s): %s looks like a real AWS key id; use AKIAFAKEFAKEFAKEFAKE", f, n, c.ID, k)
				}
			}
			cases = append(cases, c)
			lines = append(lines, append([]byte(nil), line...))
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fh.Close()
	}
	return files, cases, lines
}

// TestFamilyCorpus checks that the family corpus is well formed and that the default bundle
// returns a verdict for every case, then logs recall and false-positive rate per family, as
// `shield eval --corpus` prints them. It does not assert the rates: the bundle is being
// rewritten over the effect model (issue 11) and the table is the measurement.
func TestFamilyCorpus(t *testing.T) {
	files, cases, lines := loadFamilyCorpus(t)

	perFamily := map[string]int{}
	benign := 0
	for _, c := range cases {
		perFamily[c.Category]++
		if c.Expect == "ALLOW" {
			benign++
		}
	}
	if len(cases) < familyCorpusMinCases {
		t.Errorf("corpus has %d cases, want at least %d", len(cases), familyCorpusMinCases)
	}
	if len(cases) > 0 && benign*100 < familyCorpusMinBenignPerc*len(cases) {
		t.Errorf("corpus has %d benign of %d cases (%.1f %%), want at least %d %%", benign, len(cases),
			100*float64(benign)/float64(len(cases)), familyCorpusMinBenignPerc)
	}
	fams := make([]string, 0, len(perFamily))
	for f := range perFamily {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	for _, f := range fams {
		if perFamily[f] < familyCorpusMinPerFamily {
			t.Errorf("family %s has %d cases, want at least %d", f, perFamily[f], familyCorpusMinPerFamily)
		}
	}
	if t.Failed() {
		return
	}

	// The pipeline is built as runEval builds it: embedded default bundle, test workspace.
	const workspace = "/home/user/project"
	pol, err := loadPolicy(&Config{Policy: PolicyConfig{Workspace: workspace}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := shield.New(shield.Config{CacheSize: -1}, pol)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, line := range lines {
		out := evalOne(ctx, p, line, workspace)
		switch out.Decision {
		case "ALLOW", "BLOCK", "ESCALATE":
		default:
			t.Errorf("%s: no verdict (decision %q)", cases[i].ID, out.Decision)
		}
		if out.Error != "" {
			t.Errorf("%s: evaluation error: %s", cases[i].ID, out.Error)
		}
	}

	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = runCorpus(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: &buf, stderr: &buf}, p, fh, workspace, false, nil)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Logf("shield eval --corpus %s (default bundle, tiers 0-1, no judge):\n%s", filepath.Base(f), buf.String())
	}
}
