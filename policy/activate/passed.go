package activate

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"github.com/shieldsec/shield/policy"
)

// passed remembers the bundles whose own tests and evaluation gate passed in this process, so
// that activating the same content again (a SIGHUP with no change, every pipeline a test
// builds from the embedded bundle) does not run a thousand labelled cases again. The key is
// the digest of the bundle's files (every file but the signature) and the base catalog the tests ran with;
// the tests use a fixed reference workspace, so nothing else changes their outcome. Failures
// are not remembered: a bundle that failed is tested again.
var passed struct {
	sync.Mutex
	keys map[string]bool
}

// maxPassed bounds the memory of passed bundles; past it the memory starts over.
const maxPassed = 64

func passedKey(b *policy.Bundle, opt Options) string {
	h := sha256.New()
	// Digest the files again rather than trust b.Digest: a caller may have built or changed
	// the Bundle by hand (a few milliseconds for the default bundle).
	h.Write([]byte(policy.Digest(b.Files)))
	if opt.NoBaseCatalog {
		h.Write([]byte{0})
	} else {
		h.Write([]byte{1})
		h.Write(opt.BaseCatalog) // nil: the embedded catalog, fixed for the binary
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hasPassed(key string) bool {
	passed.Lock()
	defer passed.Unlock()
	return passed.keys[key]
}

func rememberPassed(key string) {
	passed.Lock()
	defer passed.Unlock()
	if passed.keys == nil || len(passed.keys) >= maxPassed {
		passed.keys = map[string]bool{}
	}
	passed.keys[key] = true
}
