package normalize

import (
	"path"
	"strings"
)

// Programs that use a credential by option. A store, key or archive opened with its password
// on the command line (`keytool -list -keystore release.keystore -storepass …`, `openssl pkcs12
// -in id.p12 -nodes -passin pass:…`, `gpg --batch --passphrase … -d backup.gpg`, `unzip -P …
// keys.zip`, `7z x -p… vault.7z`) is read *unlocked*: what the program prints is no longer the
// public part. The spec grammar marks such options with the role "cred" (commands/*.spec);
// a command with a literal credential value (not `env:VAR`, `file:PATH`, `fd:N`, `stdin`, an
// empty string or an expansion):
//
//   - loses the public-inspection exemption of metadata_only.go (keytool -list with -storepass
//     reads the store; without a password it prints certificates only and stays a count);
//   - turns each read it makes outside the workspace that is not already a credential into a
//     secret read (Detail "unlocked"): the material it opened is protected by the credential
//     the agent supplied, whatever the file is called.
//
// Credentials that authenticate to a service (mysql -p, redis-cli -a, curl -u) open no local
// material: their connections are judged where they go. Output passwords (-passout,
// -deststorepass, zip -P) protect what is written and are no role here.
//
// Well-known public passwords are not credentials (publicPasswords): the Android debug
// keystore's "android" (`keytool -list -v -keystore ~/.android/debug.keystore -storepass
// android`, the documented way to read the debug SHA-1), Java's "changeit" on a cacerts
// store. FPR cost: none measured; an ordinary signing or decryption with a literal password
// outside the workspace escalates.

// publicPasswords: per program, store base names (path.Match patterns) and the public
// passwords they ship with.
var publicPasswords = map[string][]struct{ store, pass string }{
	"keytool": {{"debug.keystore", "android"}, {"cacerts", "changeit"}, {"cacerts", "changeme"}},
}

// credentialUnlock: the parsed argv carries a literal credential in a "cred" option that is not
// a public password for every store the command names.
func (w *walker) credentialUnlock(pa parsedArgs, name string, args words) bool {
	var creds []string
	for _, v := range pa.vals {
		if v.role != "cred" || v.dyn {
			continue
		}
		val := v.val
		if p, ok := strings.CutPrefix(val, "pass:"); ok { // openssl, apksigner
			val = p
		} else if credIndirect(val) {
			continue
		}
		if val != "" {
			creds = append(creds, val)
		}
	}
	if len(creds) == 0 {
		return false
	}
	pub := publicPasswords[name]
	if len(pub) == 0 {
		return true
	}
	// Public only when every store named is one whose shipped password every credential is.
	stores := 0
	for _, v := range pa.vals {
		if v.role != "read" && v.role != "write" || v.dyn {
			continue
		}
		stores++
		base := path.Base(v.val)
		for _, c := range creds {
			if !isPublicPassword(pub, base, c) {
				return true
			}
		}
	}
	return stores == 0
}

func isPublicPassword(pub []struct{ store, pass string }, base, cred string) bool {
	for _, p := range pub {
		if ok, _ := path.Match(p.store, base); ok && cred == p.pass {
			return true
		}
	}
	return false
}

// credIndirect: a credential option value that names where the password is, not the password.
func credIndirect(v string) bool {
	for _, p := range []string{"env:", "file:", "fd:", "stdin", "keychain:", "pkcs11:"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// markUnlocked adds a secret effect for each read prog made (effects from start on) outside the
// workspace that is not already a credential, when the command was unlocked.
func (w *walker) markUnlocked(start int, prog string, unlock bool) {
	if !unlock {
		return
	}
	s := w.s
	end := len(s.act.Effects)
	for i := start; i < end && i < start+64; i++ {
		e := s.act.Effects[i]
		if e.Program != prog || e.Kind != EffectRead || e.InWorkspace || e.Sensitive || e.Unresolved {
			continue
		}
		s.addEffect(Effect{Kind: EffectSecret, Target: e.Target, Program: prog, Detail: "unlocked", Sensitive: true})
	}
}
