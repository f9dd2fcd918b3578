package normalize

import (
	"net"
	"regexp"
	"strings"
)

// Recon of loopback. A port scan or service discovery confined to this host (nmap -sT -p
// 3000-3010 127.0.0.1: which dev servers are up) maps the developer's own machine, which the agent
// already runs on; a scan of anything else maps someone's network. A scanner's run is confined to
// loopback when every target operand is a loopback name or address (localhost, ::1, 127.x.y.z,
// a 127.0.0.0/8 CIDR or an octet range inside 127.*), there is at least one, nothing is dynamic,
// and no option adds targets or traffic the operands do not show: a target list (-iL), random
// targets (-iR), NSE scripts (--script: broadcast-* scripts probe the LAN), decoys and spoofing
// (-D, -S, -e, --spoof-mac), masscan/zmap (raw packets at rate, whatever the target). The
// scanner's network_scan read is then marked Detail "network_scan,loopback"; rego
// recon.network-scan judges by it. The workspace's compose network is not recognised (its
// service names do not tell what they resolve to): escalated as before.
// FPR cost: none. Recall cost: a loopback port may forward elsewhere (ssh -L): a scan of the
// forwarded port reaches one remote service, as curl to it would.
const detailLoopbackScan = "loopback"

// loopbackScanners: the scanners judged by their targets.
var loopbackScanners = set("nmap")

// loopbackScanBlockedOpts: options that add targets or traffic the operands do not show, matched
// as the word or, for those taking a value, as its prefix (-DRND:10, --script=vuln).
var (
	loopbackScanBlocked  = set("-A", "-b", "-e")
	loopbackScanPrefixes = []string{"-iL", "-iR", "--script", "-D", "-S", "--spoof-mac", "--proxies", "--excludefile", "--resume", "--datadir", "--servicedb"}
)

var loopbackRangeRE = regexp.MustCompile(`^127(\.([0-9]{1,3}|[0-9]{1,3}-[0-9]{1,3}|\*)){3}$`)

// loopbackTarget: one scanner operand names only loopback addresses.
func loopbackTarget(a string) bool {
	if loopbackName(a) {
		return true
	}
	if _, n, err := net.ParseCIDR(a); err == nil {
		ones, bits := n.Mask.Size()
		return n.IP.IsLoopback() && (bits == 32 && ones >= 8 || bits == 128 && ones == 128)
	}
	return loopbackRangeRE.MatchString(a)
}

// loopbackScan: the scan of this run is confined to loopback (see above).
func loopbackScan(pa parsedArgs, name string, args words) bool {
	if !loopbackScanners[name] {
		return false
	}
	for k, a := range args.argv {
		if args.dyn[k] {
			return false
		}
		if loopbackScanBlocked[a] || strings.HasPrefix(a, "-s") && strings.Contains(a, "C") {
			return false // -sC, -sCV: the default scripts
		}
		for _, o := range loopbackScanPrefixes {
			if strings.HasPrefix(a, o) {
				return false
			}
		}
	}
	ops := pa.words(args)
	if len(ops.argv) == 0 {
		return false
	}
	for _, a := range ops.argv {
		if !loopbackTarget(a) {
			return false
		}
	}
	return true
}

// markLoopbackScan marks the network_scan reads added from index start on.
func (w *walker) markLoopbackScan(start int) {
	for i := start; i < len(w.s.act.Effects); i++ {
		e := &w.s.act.Effects[i]
		if e.Kind == EffectRead && e.Detail == "network_scan" {
			e.Detail += "," + detailLoopbackScan
		}
	}
}
