package exec

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shieldsec/shield/sandbox"
)

// CheckProtected refuses a profile that grants any access to one of protected (the appliance's
// state directory, audit trail and keys) or to a directory holding one: a Landlock rule on a
// directory reaches everything beneath it. Paths are compared with their symbolic links resolved
// where they exist. The engine checks every profile it confines an agent or a tool with.
func CheckProtected(prof sandbox.Profile, protected []string) error {
	for _, p := range protected {
		if p == "" {
			continue
		}
		rp := resolve(p)
		for _, g := range [][]string{prof.ReadOnly, prof.ReadWrite, prof.Exec} {
			for _, granted := range g {
				if rg := resolve(granted); beneath(rp, rg) || beneath(rg, rp) {
					return fmt.Errorf("sandbox profile grants %s, which reaches the protected %s", granted, p)
				}
			}
		}
	}
	return nil
}

func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// beneath reports whether p is dir or lies beneath it.
func beneath(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
