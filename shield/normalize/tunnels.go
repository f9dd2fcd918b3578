package normalize

import "strings"

// SSH tunnels by kind (issue 11, wave 8). A forward is a listener that carries traffic between
// this host and another; its direction decides what it is, whatever spelling asked for it:
//
//	-R / RemoteForward      a port on the remote host reaches a service of this host (or of its
//	                        network): this host exposed to an outside host
//	-w / Tunnel=yes|…       a tun/tap device joining the two hosts' networks: the same, both ways
//	-D / DynamicForward     a SOCKS proxy on this host into the remote's network: egress beyond
//	                        the allowed list for every program that uses it
//	-L / LocalForward       a port of this host reaches one service through the remote
//
// Each becomes a listen effect with Detail "tunnel -R", "tunnel -w", "tunnel -D" or "tunnel -L"
// (the flag spelling's detail, so the rules judge one thing); -o spellings, "-oKey=value" and
// "-o 'Key value'" alike, and autossh (same handler) are read here. Rules: rego/tunnels.rego.

// sshOptionForwards maps an ssh_config forwarding keyword to the flag it spells.
var sshOptionForwards = map[string]string{"remoteforward": "-R", "dynamicforward": "-D", "localforward": "-L", "tunnel": "-w"}

// sshTunnels records the forwards asked for with -o and -w (the flags -R/-L/-D are read in ssh()).
func (w *walker) sshTunnels(pa parsedArgs, name string) {
	s := w.s
	for _, v := range pa.vals {
		switch v.opt {
		case "-w":
			s.addEffect(Effect{Kind: EffectListen, Target: v.val, Program: name, Detail: "tunnel -w", Unresolved: v.dyn && isUnresolvedText(v.val)})
		case "-o":
			k, val, ok := strings.Cut(v.val, "=")
			if !ok {
				k, val, _ = strings.Cut(strings.TrimSpace(v.val), " ")
			}
			flag, known := sshOptionForwards[strings.ToLower(strings.TrimSpace(k))]
			val = strings.TrimSpace(val)
			if !known || val == "" {
				continue
			}
			if flag == "-w" && (strings.EqualFold(val, "no") || strings.EqualFold(val, "none")) {
				continue
			}
			s.addEffect(Effect{Kind: EffectListen, Target: strings.Join(strings.Fields(val), ":"), Program: name, Detail: "tunnel " + flag, Unresolved: v.dyn && isUnresolvedText(val)})
		}
	}
}
