package normalize

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The default bundle's command specs, for the tests of this package (the bundle loader passes
// them in Options.Commands in production).
var (
	testSpecsOnce sync.Once
	testSpecs     *CommandSpecs
	testSpecsErr  error
)

const defaultSpecsDir = "../../policies/default/commands"

func defaultTestSpecs(tb testing.TB) *CommandSpecs {
	tb.Helper()
	testSpecsOnce.Do(func() {
		files := map[string][]byte{}
		names, err := filepath.Glob(filepath.Join(defaultSpecsDir, "*.spec"))
		if err != nil {
			testSpecsErr = err
			return
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				testSpecsErr = err
				return
			}
			files["commands/"+filepath.Base(n)] = b
		}
		testSpecs, testSpecsErr = ParseCommandSpecs(files)
	})
	if testSpecsErr != nil {
		tb.Fatal(testSpecsErr)
	}
	return testSpecs
}

// specOpts returns opt with the default bundle's command specs.
func specOpts(tb testing.TB, opt Options) Options {
	opt.Commands = defaultTestSpecs(tb)
	opt.Prose, opt.InstructionFiles = defaultTestProse(tb)
	return opt
}

// The default bundle's intent lexicon and agent instruction files.
var (
	testProseOnce  sync.Once
	testProse      *ProseLexicon
	testInstrFiles []string
	testProseErr   error
)

func defaultTestProse(tb testing.TB) (*ProseLexicon, []string) {
	tb.Helper()
	testProseOnce.Do(func() {
		b, err := os.ReadFile("../../policies/default/prose.yaml")
		if err != nil {
			testProseErr = err
			return
		}
		if testProse, testProseErr = ParseProseLexicon("prose.yaml", b); testProseErr != nil {
			return
		}
		d, err := os.ReadFile("../../policies/default/data.json")
		if err != nil {
			testProseErr = err
			return
		}
		var doc struct {
			Shield struct {
				Lists struct {
					Files []string `json:"agent_instruction_files"`
				} `json:"lists"`
			} `json:"shield"`
		}
		testProseErr = json.Unmarshal(d, &doc)
		testInstrFiles = doc.Shield.Lists.Files
	})
	if testProseErr != nil {
		tb.Fatal(testProseErr)
	}
	return testProse, testInstrFiles
}
