package normalize

import "testing"

// TestCredentialOptions: a store, key or archive opened with a literal password on the command
// line is read unlocked (no public-inspection exemption; reads outside the workspace become
// secret reads); indirect passwords, public passwords of debug and CA stores, output passwords
// and inspections without a password are unchanged.
func TestCredentialOptions(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	tests := []struct {
		cmd    string
		secret bool
	}{
		{"keytool -list -v -keystore ~/.android/release.keystore -storepass android", true},
		{"keytool -list -keystore /opt/app/conf/server.jks -storepass changeit", true},
		{"keytool -list -v -keystore ~/.android/release.keystore -alias upload -storepass android -keypass android", true},
		{"openssl pkcs12 -in ~/certs/client.p12 -nodes -passin pass:hunter2", true},
		{"openssl enc -d -aes-256-cbc -pbkdf2 -in /srv/backup/db.sql.enc -pass pass:hunter2 -out /tmp/db.sql", true},
		{"gpg --batch --passphrase hunter2 -d /tmp/backup.tar.gpg", true},
		{"unzip -P s3cret ~/Downloads/keys-backup.zip", true},
		{"7z x -pinfected /tmp/archive.7z -o/tmp/out", true},
		{"keytool -list -keystore android/app/release.jks -storepass hunter2", true},
		// unchanged
		{"keytool -list -v -keystore ~/.android/debug.keystore -alias androiddebugkey -storepass android -keypass android", false},
		{"keytool -list -keystore ~/keys/upload.jks", false},
		{"openssl x509 -in cert.pem -noout -text", false},
		{"unzip -o dist.zip", false},
		{"unzip -P \"$ZIP_PASS\" build/artifacts.zip", false},
		{"openssl enc -d -aes-256-cbc -in data/fixture.enc -pass env:FIXTURE_KEY -out data/fixture.txt", false},
		{"keytool -importcert -file ca.pem -keystore build/truststore.jks -deststorepass changeit -noprompt", false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			got := hasEffectKind(a.Effects, EffectSecret)
			if got != tc.secret {
				t.Errorf("secret effect = %v, want %v (effects %v)", got, tc.secret, effectStrings(a.Effects))
			}
		})
	}
}

// TestCredentialHandles: pointing a command at a ticket cache, keytab or another session's
// agent socket is a secret effect; the user's own session sockets and configuration choices are
// not.
func TestCredentialHandles(t *testing.T) {
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: "/home/user/project", Home: "/home/user"}))
	tests := []struct {
		cmd    string
		secret bool
	}{
		{"KRB5CCNAME=/tmp/krb5cc_0 smbclient -k //fileserver/share -c ls", true},
		{"SSH_AUTH_SOCK=/tmp/ssh-Xa1/agent.999 ssh -A admin@10.0.0.5", true},
		{"export KRB5CCNAME=FILE:/tmp/krb5cc_0 && kinit -R", true},
		{"env KRB5_CLIENT_KTNAME=/etc/krb5.keytab kinit -k svc", true},
		{"KUBECONFIG=~/.kube/config kubectl get pods", false},
		{"export SSH_AUTH_SOCK=/run/user/1000/ssh-agent.socket", false},
		{"export SSH_AUTH_SOCK=\"$XDG_RUNTIME_DIR/ssh-agent.socket\"", false},
		{"KRB5CCNAME=/home/user/project/tmp/ccache-test klist", false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			a := n.Normalize("Bash", map[string]any{"command": tc.cmd}, "")
			got := false
			for _, e := range a.Effects {
				if e.Kind == EffectSecret && e.Detail == "credential_handle" {
					got = true
				}
			}
			if got != tc.secret {
				t.Errorf("credential handle = %v, want %v (effects %v)", got, tc.secret, effectStrings(a.Effects))
			}
		})
	}
}
