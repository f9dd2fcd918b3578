package normalize

import (
	"strings"
	"unicode"
)

// Positive security for tools classed by their name alone. A catalog glob that classes a tool as a
// read-only query (get_*, *_list, describe_*, …) only says what the name looks like; the name is
// taken for a query only when every word of it reads as one: no word is a verb that changes,
// runs, sends or publishes something (update_deployment_status, add_to_allow_list,
// describe_and_delete_stack, purge_cache_list), and no word names something sensitive to read
// (get_secret, read_secret, list_api_keys, get_user_permissions). A name that fails is matched by
// the next glob, or by none: then the tool is unknown and escalated. Exact catalog names are not
// affected: a name listed on purpose is classed as listed.

// nameWriteVerbs are words of a tool name that make it more than a lookup.
var nameWriteVerbs = wordSet(`add set put post patch update upsert insert create new make write save store
	delete del remove rm purge drop truncate destroy terminate kill stop start restart reboot shutdown halt
	run exec execute invoke trigger call dispatch deploy undeploy publish unpublish release promote rollback
	revert reset restore rotate revoke grant assign unassign invite approve reject merge push send email
	notify upload apply install uninstall enable disable toggle mark lock unlock archive unarchive close
	cancel clear flush wipe erase empty replace move rename copy transfer pay charge refund submit commit
	tag sign login logout authorize register subscribe unsubscribe share import export sync scale cordon
	drain evict attach detach mount unmount provision allocate block unblock allow deny ban suspend resume
	change modify edit configure migrate seed schedule force override bypass elevate impersonate escalate
	decrypt unseal mint renew generate reveal expose dump`)

// nameSensitiveNouns are words of a tool name whose object is itself sensitive to read or list.
var nameSensitiveNouns = wordSet(`secret secrets credential credentials cred creds token tokens password
	passwords passwd passphrase key keys apikey apikeys privkey private permission permissions perm perms
	allowlist whitelist denylist blocklist policy policies role roles rolebinding rolebindings users
	acl acls iam auth oauth session sessions cookie cookies cert certs certificate certificates otp totp
	mfa ssh kms vault keychain keyring env environ dotenv wallet mnemonic signing jwt bearer sudo sudoers
	admin admins shadow principal principals grant grants access serviceaccount serviceaccounts`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// nameWords splits a tool name into lower-case words at every non-letter-or-digit and at each
// lower-to-upper case change (getSecretValue → get secret value).
func nameWords(tool string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range tool {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// readOnlyToolName reports whether a tool name reads as a lookup of nothing sensitive.
func readOnlyToolName(tool string) bool {
	ws := nameWords(tool)
	if len(ws) == 0 || len(ws) > 16 {
		return false
	}
	for _, w := range ws {
		if nameWriteVerbs[w] || nameSensitiveNouns[w] {
			return false
		}
	}
	return true
}
