package normalize

import "strings"

// Credential handles in the environment. A Kerberos ticket cache, a keytab or an SSH agent's
// socket is a credential a program uses, not reads: pointing a command at one
// (`KRB5CCNAME=/tmp/krb5cc_0 smbclient -k …`, `SSH_AUTH_SOCK=/tmp/ssh-X/agent.9 ssh -A host`,
// `export KRB5_CLIENT_KTNAME=/etc/krb5.keytab`) acts with whoever owns it. The agent inherits its
// own handles; naming one explicitly is a secret effect (Detail "credential_handle") when the
// value is a credential path (sensitive_state.go lists ticket caches and agent sockets).
// Variables that name configuration (KUBECONFIG, GOOGLE_APPLICATION_CREDENTIALS) are the
// ordinary way to choose a context and are not judged here. FPR cost: none measured.

// credentialHandleVars: variables whose value is a credential a program acts with.
var credentialHandleVars = set("KRB5CCNAME", "KRB5_KTNAME", "KRB5_CLIENT_KTNAME", "SSH_AUTH_SOCK", "GPG_AGENT_INFO")

// credentialHandleEnv adds the secret effect of a credential handle assignment (see above).
func (w *walker) credentialHandleEnv(name, val string) {
	if !credentialHandleVars[name] {
		return
	}
	val = unquoteValue(val)
	for _, p := range []string{"FILE:", "DIR:", "WRFILE:", "MEMORY:"} {
		val = strings.TrimPrefix(val, p)
	}
	if i := strings.IndexByte(val, ':'); i > 0 && name == "GPG_AGENT_INFO" {
		val = val[:i]
	}
	if val == "" || len(val) > 4096 || isUnresolvedText(val) {
		return
	}
	s := w.s
	clean, ok := resolvePath(val, s.cwd, s.n.opt.Home)
	if !ok {
		return
	}
	if k := s.n.sens.classify(clean); k != "" && derivativeKinds[k] {
		s.addEffect(Effect{Kind: EffectSecret, Target: clean, Program: "env " + name, Detail: "credential_handle", Sensitive: true})
	}
}
