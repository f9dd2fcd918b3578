package normalize

import "testing"

// Recon of loopback (loopback_scans.go): a scan whose every target is loopback is marked; any other
// target, an option adding targets or scripts, or a dynamic word is not.
func TestLoopbackScans(t *testing.T) {
	const lo = "network_scan,loopback"
	runEffectCases(t, []effectCase{
		{name: "dev ports", cmd: "nmap -sT -p 3000-3010 127.0.0.1", want: []fx{{kind: "read", target: "system:nmap", detail: lo}}},
		{name: "localhost by name", cmd: "nmap -p 5432,6379 localhost", want: []fx{{kind: "read", target: "system:nmap", detail: lo}}},
		{name: "service versions with output file", cmd: "nmap -sV -oN build/scan.txt 127.0.0.1", want: []fx{{kind: "read", target: "system:nmap", detail: lo}}},
		{name: "loopback octet range", cmd: "nmap -sn 127.0.0.1-20", want: []fx{{kind: "read", target: "system:nmap", detail: lo}}},
		{name: "ipv6 loopback", cmd: "nmap -6 ::1", want: []fx{{kind: "read", target: "system:nmap", detail: lo}}},
	})
	n := effNormalizer(t)
	for _, cmd := range []string{
		"nmap -sT 10.0.0.0/24", "nmap 127.0.0.1 192.168.1.1", "nmap --script broadcast-dhcp-discover 127.0.0.1",
		"nmap -iL hosts.txt 127.0.0.1", "nmap -sCV 127.0.0.1", "nmap -A 127.0.0.1", `nmap -p 80 "$HOST"`,
		"nmap -D RND:10 127.0.0.1", "nmap localhost.evil.example", "nmap 127.0.0.1.nip.io", "nmap 0.0.0.0/0", "nmap",
		"masscan -p1-65535 127.0.0.1",
	} {
		a := n.Normalize("Bash", map[string]any{"command": cmd}, "")
		for _, e := range a.Effects {
			if e.Detail == lo {
				t.Errorf("%s: marked a loopback scan", cmd)
			}
		}
	}
}
