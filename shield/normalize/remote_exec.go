package normalize

import (
	"encoding/json"
	"strings"
)

// Remote execution: commands whose payload is code run on another machine (a fleet of
// instances, a VM, a cluster node, a container host). The payload is walked as shell code run at
// that place (Effect.Remote set, as for ssh HOST CMD), so a harmful payload is judged like the same
// command run here; the remote exec itself is an exec effect with Remote set, never inside the
// envelope. A payload the engine cannot read (a document that is no shell script, a parameters
// file, PowerShell) is unresolved; an interactive session without payload is an exec of
// "interactive shell" at the remote place.
//
// Families: aws ssm send-command / start-session, aws ecs execute-command, aws ec2-instance-connect
// ssh; az vm|vmss run-command invoke|create, az vm extension set (CustomScript commandToExecute);
// gcloud compute ssh --command / -- CMD, gcloud compute instances add-metadata|create
// --metadata startup-script=…; machinectl shell|login; salt / salt-ssh TARGET cmd.run; ansible
// PATTERN -m shell|command|raw -a; pdsh, pssh/parallel-ssh, clush, dsh; fab -H … -- CMD;
// multipass exec, lxc/incus exec; docker|podman -H/--host REMOTE (the daemon acts elsewhere).

// remoteExec recognises a remote-execution command (args: the words after the program).
func (w *walker) remoteExec(f frame, name string, args words) {
	a := args.argv
	if len(a) == 0 {
		return
	}
	ops := nonOptionWords(args)
	switch name {
	case "aws":
		switch {
		case hasSeq(ops.argv, []string{"ssm", "send-command"}), hasSeq(ops.argv, []string{"ssm", "create-association"}), hasSeq(ops.argv, []string{"ssm", "update-association"}):
			w.ssmSendCommand(f, name, args)
		case hasSeq(ops.argv, []string{"ec2", "run-instances"}), hasSeq(ops.argv, []string{"ec2", "modify-instance-attribute"}):
			// --user-data: a script cloud-init runs as root at the instance's boot.
			if ud, dyn := optValue(args, "--user-data"); ud != "" {
				remote := "ec2:" + firstVal(args, "--instance-id", "--image-id")
				if strings.HasPrefix(ud, "file://") || strings.HasPrefix(ud, "fileb://") {
					w.pathEffect(EffectRead, name, strings.TrimPrefix(strings.TrimPrefix(ud, "fileb://"), "file://"), dyn)
					w.remotePayload(f, name, remote, "", false, true)
				} else {
					w.remotePayload(f, name, remote, ud, dyn, false)
				}
			}
		case hasSeq(ops.argv, []string{"ssm", "start-session"}):
			w.remotePayload(f, name, "ssm:"+firstVal(args, "--target"), "", false, false)
		case hasSeq(ops.argv, []string{"ecs", "execute-command"}):
			cmd, _ := optValue(args, "--command")
			w.remotePayload(f, name, "ecs:"+firstVal(args, "--cluster")+"/"+firstVal(args, "--task"), cmd, false, false)
		case hasSeq(ops.argv, []string{"ec2-instance-connect", "ssh"}):
			w.remotePayload(f, name, "ec2:"+firstVal(args, "--instance-id"), "", false, false)
		}
	case "az":
		w.azRemote(f, name, args, ops)
	case "gcloud":
		w.gcloudRemote(f, name, args, ops)
	case "machinectl":
		w.machinectl(f, name, ops)
	case "salt", "salt-ssh":
		// salt [OPTS] TARGET FUNCTION [ARGS…]
		if len(ops.argv) >= 2 {
			remote := "salt:" + ops.argv[0]
			fn := ops.argv[1]
			switch fn {
			case "cmd.run", "cmd.shell", "cmd.run_all", "cmd.run_stdout", "cmd.run_stderr", "cmd.retcode", "cmd.exec_code", "cmd.powershell":
				w.remotePayload(f, name, remote, strings.Join(ops.argv[2:], " "), false, fn == "cmd.powershell" || fn == "cmd.exec_code")
			default:
				w.remotePayload(f, name, remote, "", false, false)
				w.s.act.Effects[len(w.s.act.Effects)-1].Detail = "module " + fn
			}
		}
	case "ansible":
		// ansible PATTERN [-m MODULE] [-a ARGS]: the command module when -m is not given.
		if len(ops.argv) == 0 {
			return
		}
		mod, _ := optValue(args, "-m", "--module-name")
		arg, _ := optValue(args, "-a", "--args")
		remote := "ansible:" + ops.argv[0]
		switch strings.TrimPrefix(strings.TrimPrefix(mod, "ansible.builtin."), "ansible.legacy.") {
		case "", "command", "shell", "raw":
			w.remotePayload(f, name, remote, arg, false, false)
		case "script":
			w.pathEffect(EffectRead, name, strings.Fields(arg + " x")[0], false)
			w.remotePayload(f, name, remote, "", false, true)
		default:
			w.remotePayload(f, name, remote, "", false, false)
			w.s.act.Effects[len(w.s.act.Effects)-1].Detail = "module " + mod
		}
	case "ansible-playbook":
		if hasWord(a, "--check") || hasWord(a, "-C") || hasWord(a, "--syntax-check") || hasWord(a, "--list-tasks") || hasWord(a, "--list-hosts") {
			return // a dry run: nothing changes on the hosts
		}
		w.remotePayload(f, name, "ansible:"+firstVal(args, "-i", "--inventory"), "", false, false)
		w.s.act.Effects[len(w.s.act.Effects)-1].Detail = "playbook"
	case "ansible-pull":
		// ansible-pull -U URL [PLAYBOOK]: a playbook fetched from URL runs on this host.
		if u, dyn := optValue(args, "-U", "--url"); u != "" {
			w.urlEffect(name, u, dyn)
			w.s.addUnresolved("playbook fetched from " + u + " (" + name + ")")
			w.s.addEffect(Effect{Kind: EffectExec, Target: name, Program: name, Detail: "download " + u, Unresolved: true})
		}
	case "pdsh", "pssh", "parallel-ssh", "clush", "dsh", "mussh":
		w.fanoutShell(f, name, args)
	case "fab":
		if i := indexOf(a, "--"); i >= 0 {
			w.remotePayload(f, name, "fabric:"+firstVal(args, "-H", "--hosts"), strings.Join(a[i+1:], " "), false, false)
		} else {
			w.remotePayload(f, name, "fabric:"+firstVal(args, "-H", "--hosts"), "", false, false)
			w.s.act.Effects[len(w.s.act.Effects)-1].Detail = "fabfile tasks"
		}
	case "heroku":
		// heroku run [--app APP] CMD…: a one-off dyno of the app runs CMD.
		if len(ops.argv) > 0 && (ops.argv[0] == "run" || ops.argv[0] == "run:detached" || ops.argv[0] == "run:inside") {
			var cmd []string
			heroValue := set("-a", "--app", "-r", "--remote", "-e", "--env", "-s", "--size", "-t", "--type")
			dashdash := false // heroku reads its own flags anywhere before "--" (heroku run bash -a APP)
			for i := indexOf(a, ops.argv[0]) + 1; i < len(a); i++ {
				o, _, eq := strings.Cut(a[i], "=")
				switch {
				case !dashdash && a[i] == "--":
					dashdash = true
				case !dashdash && heroValue[o]:
					if !eq {
						i++
					}
				case !dashdash && len(cmd) == 0 && strings.HasPrefix(a[i], "-"):
				default:
					cmd = append(cmd, a[i])
				}
			}
			w.remotePayload(f, name, "heroku:"+firstVal(args, "-a", "--app"), strings.Join(cmd, " "), false, false)
		}
	case "fly", "flyctl":
		if hasSeq(ops.argv, []string{"ssh", "console"}) {
			cmd, dyn := optValue(args, "-C", "--command")
			w.remotePayload(f, name, "fly:"+firstVal(args, "-a", "--app"), cmd, dyn, false)
		}
	case "vagrant":
		if len(ops.argv) > 0 && ops.argv[0] == "ssh" {
			cmd, dyn := optValue(args, "-c", "--command")
			w.remotePayload(f, name, "vm:vagrant", cmd, dyn, false)
		}
	case "code", "code-insiders", "cursor", "code-server":
		// code tunnel: this host's shell and files reachable through the editor vendor's relay by
		// whoever signs in; code serve-web / code-server bind a web IDE (a shell) to an address.
		if name != "code-server" && len(ops.argv) > 0 && ops.argv[0] == "tunnel" && (len(ops.argv) == 1 || ops.argv[1] == "service" && len(ops.argv) > 2 && ops.argv[2] == "install") {
			w.s.addEffect(Effect{Kind: EffectListen, Target: name + " tunnel", Program: name, Detail: DetailRemoteAccess})
		}
		if name == "code-server" || len(ops.argv) > 0 && ops.argv[0] == "serve-web" {
			if v, dyn := optValue(args, "--host", "--bind-addr"); v != "" {
				w.bindValue(name, DetailBind, v, dyn)
			}
		}
	case "multipass", "lxc", "incus":
		if len(ops.argv) >= 2 && ops.argv[0] == "exec" {
			if i := indexOf(a, "--"); i >= 0 {
				w.remotePayload(f, name, "vm:"+ops.argv[1], strings.Join(a[i+1:], " "), false, false)
			}
		}
	case "docker", "podman":
		// docker -H tcp://HOST:2375 … / --host ssh://user@host: the daemon that acts is elsewhere.
		for i := 0; i < len(a); i++ {
			o, v, eq := strings.Cut(a[i], "=")
			if o != "-H" && o != "--host" && o != "--url" {
				if !strings.HasPrefix(a[i], "-") {
					break // the sub-command: its own -H (docker run -h) is not the daemon
				}
				continue
			}
			dyn := false
			if !eq {
				if i+1 >= len(a) {
					break
				}
				i++
				v, dyn = a[i], args.dyn[i]
			}
			w.remoteDaemon(name, v, dyn)
		}
	}
}

// remotePayload records remote code: an exec at remote, walked when it is shell text. powershell:
// the payload is code in a language the walker does not read (unresolved).
func (w *walker) remotePayload(f frame, name, remote, payload string, dyn, opaqueCode bool) {
	s := w.s
	payload = strings.TrimSpace(payload)
	detail := payload
	if payload == "" {
		detail = "interactive shell"
		if opaqueCode {
			detail = "script"
		}
	}
	s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: detail, Remote: remote,
		Unresolved: dyn && isUnresolvedText(payload)})
	switch {
	case payload == "":
	case opaqueCode:
		s.addUnresolved("remote code at " + remote + " (" + name + ")")
	default:
		w.remoteScript(remote, payload, f.depth+1, name)
	}
}

// ssmSendCommand: aws ssm send-command --document-name AWS-RunShellScript --parameters
// commands=[…] (shorthand, JSON, or file://) --instance-ids … | --targets Key=…,Values=….
func (w *walker) ssmSendCommand(f frame, name string, args words) {
	doc, _ := optValue(args, "--document-name", "--name")
	remote := "ssm:" + firstVal(args, "--instance-ids", "--targets")
	params, pdyn := optValue(args, "--parameters")
	if strings.HasPrefix(params, "file://") || strings.HasPrefix(params, "fileb://") {
		w.pathEffect(EffectRead, name, strings.TrimPrefix(strings.TrimPrefix(params, "fileb://"), "file://"), pdyn)
		w.remotePayload(f, name, remote, "", false, true)
		return
	}
	cmds := ssmCommands(params)
	shellDoc := doc == "" || strings.EqualFold(doc, "AWS-RunShellScript")
	if len(cmds) == 0 || !shellDoc {
		// Another document (AWS-RunPowerShellScript, AWS-RunRemoteScript, a custom one): code not read.
		w.remotePayload(f, name, remote, strings.Join(cmds, "\n"), pdyn, true)
		return
	}
	w.remotePayload(f, name, remote, strings.Join(cmds, "\n"), pdyn, false)
}

// ssmCommands reads the commands of --parameters: JSON {"commands":[…]}, shorthand
// commands=["a","b"] or commands=a,b (other keys ignored).
func ssmCommands(p string) []string {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(p), &m) == nil {
			return stringsOf(m["commands"])
		}
		return []string{p}
	}
	i := strings.Index(p, "commands=")
	if i < 0 {
		return nil
	}
	v := p[i+len("commands="):]
	if strings.HasPrefix(v, "[") {
		var xs []string
		if end := matchingBracket(v); end > 0 && json.Unmarshal([]byte(v[:end+1]), &xs) == nil {
			return xs
		}
		return []string{strings.Trim(v, "[]\"")} // unreadable: walked as text (fail closed)
	}
	return strings.Split(v, ",")
}

// matchingBracket: the index of the ']' closing v[0] == '[', outside JSON strings; -1 if none.
func matchingBracket(v string) int {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// azRemote: az vm|vmss run-command invoke|create --scripts … | --script …, az vm extension set
// --settings/--protected-settings {"commandToExecute": …}.
func (w *walker) azRemote(f frame, name string, args words, ops words) {
	o := ops.argv
	switch {
	case hasSeq(o, []string{"ssh", "vm"}) || hasSeq(o, []string{"ssh", "arc"}):
		cmd := ""
		if i := indexOf(args.argv, "--"); i >= 0 {
			cmd = strings.Join(args.argv[i+1:], " ")
		}
		w.remotePayload(f, name, "azvm:"+firstVal(args, "-n", "--name", "--vm-name", "--ip"), cmd, false, false)
		return
	case hasSeq(o, []string{"container", "exec"}):
		cmd, dyn := optValue(args, "--exec-command")
		w.remotePayload(f, name, "aci:"+firstVal(args, "-n", "--name"), cmd, dyn, false)
		return
	case hasSeq(o, []string{"webapp", "ssh"}), hasSeq(o, []string{"containerapp", "exec"}):
		cmd, dyn := optValue(args, "--command")
		w.remotePayload(f, name, "azapp:"+firstVal(args, "-n", "--name"), cmd, dyn, false)
		return
	}
	if len(o) < 3 || (o[0] != "vm" && o[0] != "vmss" && o[0] != "connectedmachine") {
		return
	}
	remote := "azvm:" + firstVal(args, "-n", "--name", "--vm-name", "--machine-name")
	switch {
	case o[1] == "run-command" && (o[2] == "invoke" || o[2] == "create" || o[2] == "update"):
		cid, _ := optValue(args, "--command-id")
		ps := strings.Contains(strings.ToLower(cid), "powershell")
		scripts, dyn := optValues(args, "--scripts", "--script")
		if uri, _ := optValue(args, "--script-uri"); uri != "" {
			w.urlEffect(name, uri, false)
			w.remotePayload(f, name, remote, "", false, true)
			return
		}
		var lines []string
		for _, sc := range scripts {
			if strings.HasPrefix(sc, "@") {
				w.pathEffect(EffectRead, name, sc[1:], dyn)
				ps = true // a file: read here, its text not walked
				continue
			}
			lines = append(lines, sc)
		}
		w.remotePayload(f, name, remote, strings.Join(lines, "\n"), dyn, ps)
	case o[1] == "extension" && o[2] == "set":
		for _, opt := range []string{"--settings", "--protected-settings"} {
			v, dyn := optValue(args, opt)
			var m map[string]any
			if json.Unmarshal([]byte(v), &m) == nil {
				if c, ok := m["commandToExecute"].(string); ok {
					w.remotePayload(f, name, remote, c, dyn, false)
				}
			}
		}
	}
}

// gcloudRemote: gcloud compute ssh INSTANCE [--command CMD] [-- CMD…], gcloud compute tpus tpu-vm
// ssh, gcloud cloud-shell ssh; startup scripts set in instance metadata run as root at boot.
func (w *walker) gcloudRemote(f frame, name string, args words, ops words) {
	o := ops.argv
	a := args.argv
	isSSH := false
	target := ""
	for i, x := range o {
		if x == "ssh" && i > 0 && (o[i-1] == "compute" || o[i-1] == "tpu-vm" || o[i-1] == "cloud-shell") {
			isSSH = true
			if i+1 < len(o) {
				target = o[i+1]
			}
		}
	}
	if v, dyn := optValue(args, "--local-host-port"); v != "" && hasWord(o, "start-iap-tunnel") {
		w.bindValue(name, DetailRelay, v, dyn) // listen.go: the tunnel's local end
	}
	if isSSH {
		cmd, dyn := optValue(args, "--command")
		if i := indexOf(a, "--"); i >= 0 {
			cmd = strings.TrimSpace(cmd + " " + strings.Join(a[i+1:], " "))
		}
		w.remotePayload(f, name, "gce:"+target, cmd, dyn, false)
		return
	}
	if len(o) >= 3 && o[0] == "compute" && o[1] == "instances" && (o[2] == "add-metadata" || o[2] == "create") {
		for _, opt := range []string{"--metadata", "--metadata-from-file"} {
			v, dyn := optValue(args, opt)
			key, val, ok := strings.Cut(v, "=")
			if !ok || !strings.Contains(strings.ToLower(key), "startup-script") && !strings.Contains(strings.ToLower(key), "shutdown-script") {
				continue
			}
			remote := "gce:" + firstOperandAfter(o, o[2])
			if opt == "--metadata-from-file" || strings.HasSuffix(strings.ToLower(key), "-url") {
				w.pathEffect(EffectRead, name, val, dyn)
				w.remotePayload(f, name, remote, "", false, true)
				continue
			}
			w.remotePayload(f, name, remote, val, dyn, false)
		}
	}
}

// machinectl shell|login [USER@]MACHINE [CMD…]: ".host" (or no machine) is this host, root the
// default user: a root shell here. Another machine is a remote place.
func (w *walker) machinectl(f frame, name string, ops words) {
	o := ops.argv
	if len(o) == 0 || (o[0] != "shell" && o[0] != "login") {
		return
	}
	user, machine := "root", ".host"
	if len(o) > 1 {
		machine = o[1]
		if u, m, ok := strings.Cut(machine, "@"); ok {
			user, machine = u, m
		}
		if machine == "" {
			machine = ".host"
		}
	}
	cmd := ""
	if len(o) > 2 {
		cmd = strings.Join(o[2:], " ")
	}
	if machine == ".host" {
		if user == "root" || user == "0" {
			w.s.addEffect(Effect{Kind: EffectPrivilege, Target: "root", Program: name, Detail: "machinectl " + o[0]})
		}
		w.remotePayload(f, name, "host:"+user, cmd, false, false)
		return
	}
	w.remotePayload(f, name, "machine:"+machine, cmd, false, false)
}

// fanoutShell: pdsh -w HOSTS CMD…, pssh -h FILE|-H HOST CMD…, clush -w NODES|-a|-g GROUP CMD…:
// the command runs on every host of the set.
func (w *walker) fanoutShell(f frame, name string, args words) {
	valueOpts := set("-w", "-x", "-g", "-X", "-l", "-R", "-f", "-t", "-u", "-h", "-H", "-p", "-o", "-e", "-O", "-x", "--hosts", "--host",
		"--user", "--par", "--timeout", "--outdir", "--errdir", "--extra-args", "--nodes", "--group", "--exclude", "--fanout", "-c", "-m")
	a := args.argv
	i := 0
	for ; i < len(a); i++ {
		o, _, eq := strings.Cut(a[i], "=")
		if a[i] == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a[i], "-") {
			break
		}
		if valueOpts[o] && !eq {
			i++
		}
	}
	if i > len(a) {
		i = len(a)
	}
	hosts := firstVal(args, "-w", "-H", "-h", "--hosts", "--host", "-g", "-m")
	w.remotePayload(f, name, name+":"+hosts, strings.Join(a[i:], " "), false, false)
}

// remoteDaemon: a container daemon address (tcp://HOST:PORT, ssh://USER@HOST, unix://PATH).
func (w *walker) remoteDaemon(name, v string, dyn bool) {
	lv := strings.ToLower(v)
	switch {
	case strings.HasPrefix(lv, "unix://"), strings.HasPrefix(lv, "npipe://"), strings.HasPrefix(lv, "fd://"):
		return
	case strings.HasPrefix(lv, "ssh://"):
		w.hostEffect(name, v[len("ssh://"):], "", "ssh", dyn)
	default:
		h := v
		if i := strings.Index(h, "://"); i >= 0 {
			h = h[i+3:]
		}
		h = strings.TrimSuffix(h, "/")
		port := ""
		if j := strings.LastIndexByte(h, ':'); j > 0 && !strings.Contains(h[:j], ":") {
			h, port = h[:j], h[j+1:]
		}
		w.hostEffect(name, h, port, "docker", dyn)
		if h == "" || loopbackName(h) {
			return // this host's own daemon over TCP: the loopback service rules judge it
		}
	}
	// Whatever the daemon runs, it runs as root on that host.
	remote := "daemon:" + v
	w.s.addEffect(Effect{Kind: EffectExec, Target: remote, Program: name, Detail: "container daemon", Remote: remote, Unresolved: dyn && isUnresolvedText(v)})
}

// nonOptionWords: the words that are not options nor (for --opt value pairs of the cloud CLIs)
// option values. A word after "--opt" is taken as its value unless it starts with "-"; "--"
// ends the scan.
func nonOptionWords(args words) words {
	out := words{}
	for i := 0; i < len(args.argv); i++ {
		x := args.argv[i]
		if x == "--" {
			break
		}
		if strings.HasPrefix(x, "-") && len(x) > 1 {
			if !strings.Contains(x, "=") && i+1 < len(args.argv) && !strings.HasPrefix(args.argv[i+1], "-") && takesValue(x) {
				i++
			}
			continue
		}
		out.argv = append(out.argv, x)
		out.dyn = append(out.dyn, args.dyn[i])
	}
	return out
}

// takesValue: options of the remote-exec CLIs that are flags (no value); every other option
// is taken to have one.
func takesValue(o string) bool {
	switch o {
	case "--no-wait", "--dry-run", "--interactive", "--debug", "--verbose", "--no-cli-pager", "-b", "--become", "-K", "-k",
		"--ask-pass", "--ask-become-pass", "-v", "-vv", "-vvv", "--check", "-C", "--diff", "-D", "--async", "-i", "--inline",
		"--tunnel-through-iap", "--internal-ip", "--strict-host-key-checking", "--quiet", "-q", "--yes", "-y", "--static", "-a", "-L", "-G", "-E", "-N":
		return false
	}
	return true
}

// optValue: the value of the first of the options (separate or --opt=value).
func optValue(args words, opts ...string) (string, bool) {
	for i, x := range args.argv {
		if x == "--" {
			break
		}
		for _, o := range opts {
			if x == o && i+1 < len(args.argv) {
				return args.argv[i+1], args.dyn[i+1]
			}
			if v, ok := strings.CutPrefix(x, o+"="); ok && strings.HasPrefix(o, "--") {
				return v, args.dyn[i]
			}
		}
	}
	return "", false
}

// optValues: the values of a list option (az --scripts A B C: the words up to the next option).
func optValues(args words, opts ...string) ([]string, bool) {
	var out []string
	dyn := false
	for i := 0; i < len(args.argv); i++ {
		x := args.argv[i]
		for _, o := range opts {
			if v, ok := strings.CutPrefix(x, o+"="); ok {
				out = append(out, v)
				dyn = dyn || args.dyn[i]
			}
			if x != o {
				continue
			}
			for j := i + 1; j < len(args.argv) && !(strings.HasPrefix(args.argv[j], "--") || args.argv[j] == "-g" || args.argv[j] == "-n"); j++ {
				out = append(out, args.argv[j])
				dyn = dyn || args.dyn[j]
				i = j
			}
		}
	}
	return out, dyn
}

func firstVal(args words, opts ...string) string {
	v, _ := optValue(args, opts...)
	return v
}

func firstOperandAfter(o []string, word string) string {
	if i := indexOf(o, word); i >= 0 && i+1 < len(o) {
		return o[i+1]
	}
	return ""
}
