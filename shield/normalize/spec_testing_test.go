package normalize

import (
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
	return opt
}
