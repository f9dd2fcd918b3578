// Package policy owns policy bundles: loading them from a directory, a .tar.gz archive or an
// embedded file system with hard bounds, the manifest, the content digest, the optional ed25519
// signature, the per-class defaults, and the Watcher that reloads a bundle on SIGHUP or on change.
//
// A bundle is data. policy does not compile CEL or Rego: the tier engines (policy/celrules,
// policy/regoeval) read the files a Bundle carries, and policy/policytest runs their tests.
//
// policy imports nothing of this module. Anything may import it.
//
// # Layout
//
// A bundle is a directory tree laid out as an OPA bundle, so that `opa test -b DIR` runs its Rego
// tests:
//
//	.manifest        JSON {"revision": "...", "roots": ["shield"], "metadata": {...}} (required)
//	catalog.yaml     the tool catalog (read by shield/normalize; carried here as bytes)
//	defaults.yaml    the decision per action class when no rule speaks (see Defaults)
//	commands/*.spec  command specs: what each program does with its operands (read by
//	                 shield/normalize; a program specified here replaces the default spec of it)
//	inline.yaml      the allow list of inline interpreter code (read by shield/normalize
//	                 inline_code.go; the bundle's own replaces the default bundle's)
//	prose.yaml       the intent lexicon of free text (read by shield/normalize
//	                 tools_prose_intent.go; the bundle's own replaces the default bundle's)
//	rules/*.yaml     CEL rules (policy/celrules)
//	**/*.rego        Rego modules; *_test.rego are Rego tests (policy/regoeval)
//	**/data.json, **/data.yaml   Rego data, mounted at the directory's path under data
//	.signature       optional detached ed25519 signature (see Verify)
//
// # Digest
//
// Bundle.Digest is "sha256:" followed by the hex SHA-256 of the canonical listing: one line per
// file, sorted by path (byte order), each line
//
//	<hex sha256 of the content> <two spaces> <slash-separated path relative to the root> "\n"
//
// which is the output of `find . -type f ! -name .signature | sed 's|^\./||' | LC_ALL=C sort |
// xargs sha256sum | sha256sum` run in the bundle root. The .signature file is not part of the
// digest (it signs it). The digest does not depend on file modes, times or archive order.
//
// # Signature
//
// When LoadOptions.PublicKey is set, the bundle must carry a signature (the .signature file in
// the bundle, or LoadOptions.Signature for a detached one): the standard base64 encoding of the
// ed25519 signature over the message SigningMessage(digest). A missing or bad signature is an
// error; without a public key signatures are not checked.
package policy
